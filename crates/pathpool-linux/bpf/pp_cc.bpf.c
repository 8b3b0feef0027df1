/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * Coupled congestion control for the subflows of Linux's own MPTCP (issue 23, part A):
 * NMCC, LIA, OLIA and BALIA as BPF struct_ops `tcp_congestion_ops`, registered as pp_nmcc,
 * pp_lia, pp_olia and pp_balia.
 *
 * Coupling. A subflow's socket has `is_mptcp` set and its `icsk_ulp_data` is the
 * `mptcp_subflow_context`, which holds the connection's local token and the subflow's id
 * (`bpf_skc_to_mptcp_sock` is refused to struct_ops programs; docs/linux.md). The
 * connection's subflows meet in the pp_conns map under that token, one slot each; a subflow
 * writes only its own slot and reads the others', as the out-of-tree MPTCP kernel's
 * coupled controllers read their siblings' tcp_sock without a lock.
 *
 * Groups (the thesis's path-overlap information, §9): pp_groups_sub (token, subflow id) and
 * pp_groups_addr (source, destination address), filled by `pathpool linux groups`. Without
 * an entry every subflow of a connection is in group 0: one group, fully friendly.
 *
 * Window arithmetic in segments (the kernel's unit), with the thesis's two kernel remedies
 * (§9.3): the per-ACK increase, a fraction of a segment, accumulates in a 2^-32-segment
 * counter, and whole segments move into snd_cwnd; slow start's fractional NMCC increase uses
 * the same counter. A socket that is not an MPTCP subflow runs the kernel's Reno.
 */
#include "pp_vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>

#define PP_INLINE static __always_inline
#include "pp_maps.h"
#include "pp_coupled.h"

char _license[] SEC("license") = "Dual MIT/GPL";

/* include/net/tcp.h: any user may select the algorithm, and a network namespace may make it
 * its default (otherwise only algorithms in tcp_allowed_congestion_control can be). */
#define PP_TCP_CONG_NON_RESTRICTED 1u
#define AF_INET 2
#define AF_INET6 10
#define PP_Q32 (1ULL << 32)

extern void tcp_reno_cong_avoid(struct sock *sk, __u32 ack, __u32 acked) __ksym;
extern __u32 tcp_reno_ssthresh(struct sock *sk) __ksym;
extern __u32 tcp_reno_undo_cwnd(struct sock *sk) __ksym;
extern __u32 tcp_slow_start(struct tcp_sock *tp, __u32 acked) __ksym;
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct pp_conn);
} pp_conns SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pp_config);
} pp_config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct pp_sub_key);
	__type(value, __u32);
} pp_groups_sub SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct pp_addr_key);
	__type(value, __u32);
} pp_groups_addr SEC(".maps");

/* An empty connection, the value a new token is inserted with (too large for the stack). */
static const struct pp_conn pp_zero_conn;

/* Per-subflow private state, in the socket's icsk_ca_priv (104 bytes, zeroed by the kernel). */
struct pp_priv {
	__u32 token;
	__u32 slot;		/* slot index + 1; 0 while not registered */
	__s64 cnt_q32;		/* growth not yet a whole segment, 2^-32 segments */
	pp_fp shadow;		/* NMCC's shadow single-path window, segments */
	__u32 reset_shadow;	/* NMCC: set the shadow to cwnd at the next ACK */
	__u32 subflow_id;
};

_Static_assert(sizeof(struct pp_priv) <= 104, "icsk_ca_priv holds 104 bytes");
_Static_assert(sizeof(struct pp_slot) == 112, "src/maps.rs SLOT_BYTES");
_Static_assert(sizeof(struct pp_addr_key) == 36, "src/maps.rs ADDR_KEY_BYTES");

/* The options `load` wrote (zero: the defaults). */
PP_INLINE struct pp_config pp_options(void)
{
	struct pp_config none = {};
	__u32 zero = 0;
	struct pp_config *c = bpf_map_lookup_elem(&pp_config, &zero);

	return c ? *c : none;
}

PP_INLINE struct tcp_sock *pp_tcp(struct sock *sk)
{
	return (struct tcp_sock *)sk;
}

PP_INLINE struct pp_priv *pp_priv(struct sock *sk)
{
	return (struct pp_priv *)((struct inet_connection_sock *)sk)->icsk_ca_priv;
}

/* tcp_is_cwnd_limited (include/net/tcp.h): the kernel's rule, not exported as a kfunc. */
PP_INLINE int pp_cwnd_limited(struct sock *sk)
{
	struct tcp_sock *tp = pp_tcp(sk);

	if (tp->snd_cwnd < tp->snd_ssthresh)
		return tp->snd_cwnd < 2 * tp->max_packets_out;
	return BPF_CORE_READ_BITFIELD(tp, is_cwnd_limited);
}

PP_INLINE void pp_addresses(struct sock *sk, struct pp_slot *s)
{
	struct sock_common *c = &sk->__sk_common;
	int k;

	s->family = c->skc_family;
	s->sport = c->skc_num;
	s->dport = bpf_ntohs(c->skc_dport);
	if (s->family == AF_INET6) {
#pragma clang loop unroll(full)
		for (k = 0; k < 16; k++) {
			s->saddr[k] = c->skc_v6_rcv_saddr.in6_u.u6_addr8[k];
			s->daddr[k] = c->skc_v6_daddr.in6_u.u6_addr8[k];
		}
	} else {
		__builtin_memcpy(s->saddr, &c->skc_rcv_saddr, 4);
		__builtin_memcpy(s->daddr, &c->skc_daddr, 4);
	}
}

/* The group of a subflow: its own entry, then its address pair's, else 0. */
PP_INLINE __u32 pp_group_of(struct pp_priv *p, struct pp_slot *s)
{
	struct pp_sub_key sk = { .token = p->token, .subflow_id = p->subflow_id };
	struct pp_addr_key ak = {};
	__u32 *g;
	int k;

	g = bpf_map_lookup_elem(&pp_groups_sub, &sk);
	if (g)
		return *g;
	ak.family = s->family;
#pragma clang loop unroll(full)
	for (k = 0; k < 16; k++) {
		ak.saddr[k] = s->saddr[k];
		ak.daddr[k] = s->daddr[k];
	}
	g = bpf_map_lookup_elem(&pp_groups_addr, &ak);
	if (g)
		return *g;
	return 0;
}

/*
 * The connection and this subflow's slot, registering the subflow on first use (its token
 * is known once the MPTCP handshake has begun). NULL for a plain TCP socket.
 */
PP_INLINE struct pp_conn *pp_connection(struct sock *sk, __u32 algorithm, struct pp_slot **slot)
{
	struct tcp_sock *tp = pp_tcp(sk);
	struct pp_priv *p = pp_priv(sk);
	struct mptcp_subflow_context *ctx;
	struct pp_conn *conn;
	__u32 token;
	void *ulp;
	int k;

	/* Map keys must live on the stack, not in the socket. */
	token = p->token;
	if (p->slot) {
		conn = bpf_map_lookup_elem(&pp_conns, &token);
		if (!conn)
			return 0;
		*slot = &conn->slot[(p->slot - 1) & (PP_MAX_SUBFLOWS - 1)];
		return conn;
	}
	if (!tp->is_mptcp)
		return 0;
	ulp = ((struct inet_connection_sock *)sk)->icsk_ulp_data;
	if (!ulp)
		return 0;
	ctx = bpf_rdonly_cast(ulp, bpf_core_type_id_kernel(struct mptcp_subflow_context));
	if (!ctx->token || !ctx->subflow_id)
		return 0;
	token = ctx->token;
	p->token = token;
	p->subflow_id = ctx->subflow_id;
	conn = bpf_map_lookup_elem(&pp_conns, &token);
	if (!conn) {
		bpf_map_update_elem(&pp_conns, &token, &pp_zero_conn, BPF_NOEXIST);
		conn = bpf_map_lookup_elem(&pp_conns, &token);
		if (!conn)
			return 0;
	}
#pragma clang loop unroll(full)
	for (k = 0; k < PP_MAX_SUBFLOWS; k++) {
		if (__sync_val_compare_and_swap(&conn->slot[k].subflow_id, 0, p->subflow_id) == 0) {
			struct pp_slot *s = &conn->slot[k];

			p->slot = k + 1;
			s->algorithm = algorithm;
			s->flags = 0;
			s->acked = 0;
			s->loss1 = 0;
			s->loss2 = 0;
			s->losses = 0;
			s->value_q32 = 0;
			pp_addresses(sk, s);
			*slot = s;
			return conn;
		}
	}
	/* More than PP_MAX_SUBFLOWS subflows: this one runs uncoupled Reno. */
	return 0;
}

/* Refresh the slot from the socket; the slot is the only shared state this subflow writes. */
PP_INLINE void pp_publish(struct sock *sk, struct pp_slot *s)
{
	struct tcp_sock *tp = pp_tcp(sk);
	struct pp_priv *p = pp_priv(sk);
	__u32 g = pp_group_of(p, s);

	s->cwnd = tp->snd_cwnd;
	s->ssthresh = tp->snd_ssthresh;
	s->srtt_us = tp->srtt_us >> 3;
	s->mss = tp->mss_cache;
	s->group = g;
}

/*
 * The connection as the arithmetic sees it: the members share `group` (and, for NMCC, are
 * not inactive). Returns how many; *group_losses sums their congestion events. A global
 * function, so that the verifier walks its loop once instead of at every call site.
 */
__attribute__((noinline)) int pp_view_of(const struct pp_conn *conn, __u32 group, int nmcc,
					 struct pp_group *g, __u64 *group_losses)
{
	int k, members = 0;

	if (!conn || !g || !group_losses)
		return 0;
	*group_losses = 0;
	PP_NO_UNROLL
	for (k = 0; k < PP_MAX_SUBFLOWS; k++) {
		const struct pp_slot *s = &conn->slot[k];
		struct pp_view *v = &g->v[k];
		int member = s->subflow_id && s->group == group;

		v->cwnd = s->cwnd ? s->cwnd : 1;
		v->rtt_us = s->srtt_us;
		v->ssthresh = s->ssthresh;
		v->interval = pp_interval(s->acked, s->loss1, s->loss2);
		if (member) {
			*group_losses += s->losses;
			if (nmcc && (s->flags & PP_SLOT_INACTIVE))
				member = 0;
		}
		members += member;
		v->member = member;
	}
	return members;
}

PP_INLINE int pp_index(struct pp_priv *p)
{
	return (p->slot - 1) & (PP_MAX_SUBFLOWS - 1);
}

/* Add inc·acked segments through the counter; whole segments go into snd_cwnd. */
PP_INLINE void pp_grow(struct sock *sk, pp_fp inc, __u32 acked, int negative, __u32 cap)
{
	struct tcp_sock *tp = pp_tcp(sk);
	struct pp_priv *p = pp_priv(sk);
	__u64 q = pp_fp_to_fixed(pp_fp_mul(inc, pp_fp_from_u64(acked)), 32);
	__s64 whole;
	__u32 cwnd = tp->snd_cwnd;

	if (q > (1ULL << 40))
		q = 1ULL << 40;
	p->cnt_q32 += negative ? -(__s64)q : (__s64)q;
	/* Whole segments, rounded towards zero (BPF has no signed division before v4). */
	if (p->cnt_q32 >= 0)
		whole = (__s64)((__u64)p->cnt_q32 >> 32);
	else
		whole = -(__s64)((__u64)(-p->cnt_q32) >> 32);
	if (!whole)
		return;
	p->cnt_q32 -= whole * (__s64)PP_Q32;
	if (whole > 0) {
		if ((__u64)whole > cap)
			whole = cap;
		cwnd += whole;
		if (cwnd > tp->snd_cwnd_clamp)
			cwnd = tp->snd_cwnd_clamp;
	} else {
		cwnd = (__u64)(-whole) >= cwnd ? 1 : cwnd + whole;
	}
	tp->snd_cwnd = cwnd;
}

/* Every NMCC member of `group` gets the group's m² (nmcc.rs keeps one per group). */
__attribute__((noinline)) int pp_store_m2(struct pp_conn *conn, __u32 group, pp_fp m2)
{
	__s64 q = pp_fp_to_fixed(m2, 32);
	int k;

	if (!conn)
		return 0;
	PP_NO_UNROLL
	for (k = 0; k < PP_MAX_SUBFLOWS; k++)
		if (conn->slot[k].subflow_id && conn->slot[k].group == group &&
		    conn->slot[k].algorithm == PP_ALG_NMCC)
			conn->slot[k].value_q32 = q;
	return 0;
}

PP_INLINE pp_fp pp_m2_of(struct pp_slot *s, int members, __u32 flags)
{
	__u64 n = members > 0 ? members : 1;

	if (!s->value_q32)
		/* m² = N before RTT samples (paper footnote 6), or m = N (the thesis). */
		return pp_fp_from_u64(flags & PP_NMCC_M_IS_N ? n * n : n);
	return pp_fp_norm(s->value_q32, -32);
}

PP_INLINE void pp_init(struct sock *sk, __u32 algorithm)
{
	struct pp_slot *s;

	if (pp_connection(sk, algorithm, &s))
		pp_publish(sk, s);
}

PP_INLINE void pp_release(struct sock *sk)
{
	struct pp_priv *p = pp_priv(sk);
	struct pp_conn *conn;
	__u32 token = p->token;
	int k, used = 0;

	if (!p->slot)
		return;
	conn = bpf_map_lookup_elem(&pp_conns, &token);
	if (!conn)
		return;
	conn->slot[pp_index(p)].subflow_id = 0;
	p->slot = 0;
#pragma clang loop unroll(full)
	for (k = 0; k < PP_MAX_SUBFLOWS; k++)
		used += conn->slot[k].subflow_id != 0;
	if (!used)
		bpf_map_delete_elem(&pp_conns, &token);
}

/* Every ACK that acknowledges data (tcp_clean_rtx_queue), in recovery too. */
PP_INLINE void pp_pkts_acked(struct sock *sk, const struct ack_sample *sample, __u32 algorithm)
{
	struct pp_group g;
	struct pp_priv *p = pp_priv(sk);
	struct pp_conn *conn;
	struct pp_slot *s;
	__u64 group_losses;
	__u32 flags;
	int members;

	conn = pp_connection(sk, algorithm, &s);
	if (!conn)
		return;
	s->acked += sample->pkts_acked;
	s->flags &= ~PP_SLOT_INACTIVE;
	pp_publish(sk, s);
	if (algorithm != PP_ALG_NMCC)
		return;
	if (p->reset_shadow || pp_fp_is_zero(p->shadow)) {
		p->shadow = pp_fp_from_u64(pp_tcp(sk)->snd_cwnd);
		p->reset_shadow = 0;
	}
	/* ESTIMATE_M on every ACK (nmcc.rs on_ack). */
	flags = pp_options().nmcc_flags;
	members = pp_view_of(conn, s->group, 1, &g, &group_losses);
	pp_store_m2(conn, s->group, pp_nmcc_m2(&g, pp_m2_of(s, members, flags), flags));
}

PP_INLINE void pp_nmcc_grow(struct sock *sk, struct pp_conn *conn, struct pp_slot *s,
				  __u32 acked)
{
	struct tcp_sock *tp = pp_tcp(sk);
	struct pp_priv *p = pp_priv(sk);
	struct pp_group g;
	__u64 group_losses;
	int members, i = pp_index(p);
	__u32 flags = pp_options().nmcc_flags;
	pp_fp m2, inc, w;

	members = pp_view_of(conn, s->group, 1, &g, &group_losses);
	m2 = pp_m2_of(s, members, flags);
	w = pp_fp_from_u64(tp->snd_cwnd);
	if (members <= 1 || (flags & PP_NMCC_UNFRIENDLY_SS && tp->snd_cwnd < tp->snd_ssthresh)) {
		/* Alone in its group: Reno (paper §4.2, hybrid dispatch), the shadow following;
		 * without friendly slow start, the kernel's slow start (nmcc.rs slow_start). */
		int ss = tp->snd_cwnd < tp->snd_ssthresh;

		p->shadow = pp_fp_add(p->shadow, pp_fp_div(pp_fp_mul(ss ? p->shadow : pp_fp_from_u64(1),
								     pp_fp_from_u64(acked)), w));
		tcp_reno_cong_avoid(sk, 0, acked);
		return;
	}
	if (pp_nmcc_in_ss(&g.v[i], m2, flags)) {
		/* Friendly slow start, towards the shadow window (Alg. 2 l.3), at most acked
		 * segments per ACK (the kernel's slow start) and not past ssthresh. */
		__u32 room = tp->snd_ssthresh > tp->snd_cwnd ? tp->snd_ssthresh - tp->snd_cwnd : 1;

		s->flags |= PP_SLOT_SLOW_START;
		inc = pp_nmcc_ss_increase(&g.v[i], p->shadow, m2);
		p->shadow = pp_fp_add(p->shadow, pp_fp_div(pp_fp_mul(p->shadow, pp_fp_from_u64(acked)), w));
		pp_grow(sk, inc, acked, 0, room < acked ? room : acked);
		return;
	}
	s->flags &= ~PP_SLOT_SLOW_START;
	p->shadow = pp_fp_add(p->shadow, pp_fp_div(pp_fp_from_u64(acked), w));
	pp_grow(sk, pp_nmcc_ca_increase(&g.v[i], m2), acked, 0, acked);
}

PP_INLINE void pp_cong_avoid(struct sock *sk, __u32 ack, __u32 acked, __u32 algorithm)
{
	struct tcp_sock *tp = pp_tcp(sk);
	struct pp_priv *p = pp_priv(sk);
	struct pp_group g;
	struct pp_conn *conn;
	struct pp_slot *s;
	__u64 group_losses;
	int negative = 0, i;
	pp_fp inc, alpha = pp_fp_from_u64(1);
	__s32 eps_num;
	__u32 eps_den;

	conn = pp_connection(sk, algorithm, &s);
	if (!conn) {
		tcp_reno_cong_avoid(sk, ack, acked);
		return;
	}
	pp_publish(sk, s);
	if (!pp_cwnd_limited(sk))
		return;
	if (algorithm == PP_ALG_NMCC) {
		pp_nmcc_grow(sk, conn, s, acked);
		return;
	}
	if (tp->snd_cwnd < tp->snd_ssthresh) {
		s->flags |= PP_SLOT_SLOW_START;
		acked = tcp_slow_start(tp, acked);
		if (!acked)
			return;
	}
	s->flags &= ~PP_SLOT_SLOW_START;
	i = pp_index(p);
	pp_view_of(conn, s->group, 0, &g, &group_losses);
	g.v[i].cwnd = tp->snd_cwnd;
	if (algorithm == PP_ALG_LIA) {
		inc = pp_lia_increase(&g, i, &alpha);
		s->value_q32 = pp_fp_to_fixed(alpha, 32);
	} else if (algorithm == PP_ALG_OLIA) {
		inc = pp_olia_increase(&g, i, &negative, &eps_num, &eps_den);
		s->value_q32 = eps_num * (__s64)(PP_Q32 / (eps_den ? eps_den : 1));
	} else {
		inc = pp_balia_increase(&g, i, &alpha);
		s->value_q32 = pp_fp_to_fixed(alpha, 32);
	}
	pp_grow(sk, inc, acked, negative, acked);
}

/* A loss (fast retransmit or timeout, tcp_enter_recovery/tcp_enter_loss). */
PP_INLINE __u32 pp_ssthresh(struct sock *sk, __u32 algorithm)
{
	struct pp_priv *p = pp_priv(sk);
	struct pp_group g;
	struct pp_conn *conn;
	struct pp_slot *s;
	__u64 group_losses;
	int members, i;

	conn = pp_connection(sk, algorithm, &s);
	if (!conn)
		return tcp_reno_ssthresh(sk);
	pp_publish(sk, s);
	/* The loss markers move only after progress (olia.rs, nmcc.rs on_loss). */
	s->losses++;
	if (s->acked != s->loss2) {
		s->loss1 = s->loss2;
		s->loss2 = s->acked;
	}
	p->cnt_q32 = 0;
	if (algorithm == PP_ALG_BALIA) {
		i = pp_index(p);
		members = pp_view_of(conn, s->group, 0, &g, &group_losses);
		return pp_balia_loss_ssthresh(&g, i);
	}
	if (algorithm == PP_ALG_NMCC) {
		i = pp_index(p);
		p->reset_shadow = 1;
		struct pp_config o = pp_options();

		members = pp_view_of(conn, s->group, 1, &g, &group_losses);
		return pp_nmcc_loss_ssthresh(&g, i, pp_m2_of(s, members, o.nmcc_flags),
					     group_losses > 1,
					     PP_NMCC_OPTIONS(o.nmcc_flags, o.nmcc_window_floor));
	}
	return tcp_reno_ssthresh(sk);
}

PP_INLINE void pp_cwnd_event(struct sock *sk, enum tcp_ca_event ev, __u32 algorithm)
{
	struct pp_conn *conn;
	struct pp_slot *s;

	if (ev != CA_EVENT_LOSS)
		return;
	conn = pp_connection(sk, algorithm, &s);
	if (conn)
		s->flags |= PP_SLOT_INACTIVE;
}

#define PP_ALGORITHM(NAME, ALG)                                                          \
	SEC("struct_ops")                                                                \
	void BPF_PROG(NAME##_init, struct sock *sk)                                      \
	{                                                                                \
		pp_init(sk, ALG);                                                        \
	}                                                                                \
	SEC("struct_ops")                                                                \
	void BPF_PROG(NAME##_release, struct sock *sk)                                   \
	{                                                                                \
		pp_release(sk);                                                          \
	}                                                                                \
	SEC("struct_ops")                                                                \
	__u32 BPF_PROG(NAME##_ssthresh, struct sock *sk)                                 \
	{                                                                                \
		return pp_ssthresh(sk, ALG);                                             \
	}                                                                                \
	SEC("struct_ops")                                                                \
	void BPF_PROG(NAME##_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)        \
	{                                                                                \
		pp_cong_avoid(sk, ack, acked, ALG);                                      \
	}                                                                                \
	SEC("struct_ops")                                                                \
	void BPF_PROG(NAME##_pkts_acked, struct sock *sk, const struct ack_sample *s)    \
	{                                                                                \
		pp_pkts_acked(sk, s, ALG);                                               \
	}                                                                                \
	SEC("struct_ops")                                                                \
	void BPF_PROG(NAME##_cwnd_event, struct sock *sk, enum tcp_ca_event ev)          \
	{                                                                                \
		pp_cwnd_event(sk, ev, ALG);                                              \
	}                                                                                \
	SEC("struct_ops")                                                                \
	__u32 BPF_PROG(NAME##_undo_cwnd, struct sock *sk)                                \
	{                                                                                \
		return tcp_reno_undo_cwnd(sk);                                           \
	}                                                                                \
	SEC(".struct_ops.link")                                                          \
	struct tcp_congestion_ops NAME = {                                               \
		.init = (void *)NAME##_init,                                             \
		.release = (void *)NAME##_release,                                       \
		.ssthresh = (void *)NAME##_ssthresh,                                     \
		.cong_avoid = (void *)NAME##_cong_avoid,                                 \
		.pkts_acked = (void *)NAME##_pkts_acked,                                 \
		.cwnd_event = (void *)NAME##_cwnd_event,                                 \
		.undo_cwnd = (void *)NAME##_undo_cwnd,                                   \
		.name = #NAME,                                                           \
		.flags = PP_TCP_CONG_NON_RESTRICTED,                                     \
	};

PP_ALGORITHM(pp_nmcc, PP_ALG_NMCC)
PP_ALGORITHM(pp_lia, PP_ALG_LIA)
PP_ALGORITHM(pp_olia, PP_ALG_OLIA)
PP_ALGORITHM(pp_balia, PP_ALG_BALIA)
