/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * The coupled controllers' arithmetic, in segments, over one connection's subflows.
 *
 * Each function mirrors a pathpool-cc controller (crates/pathpool-cc/src/{lia,olia,balia,
 * nmcc}.rs) rule for rule, with windows in segments and RTTs in microseconds instead of
 * bytes and seconds: every formula is homogeneous of degree 0 in both, so the values are
 * the same. The BPF programs (pp_cc.bpf.c) and the host tests (src/arith.rs, through
 * host.c) compile this one header.
 *
 * A view holds every slot of the connection; `member` marks the slots in the group of the
 * subflow being served that take part (the simulator's `active && group == g`; for NMCC
 * also not marked inactive by a timeout, paper §4.2). Increases are per acknowledged
 * segment, in segments.
 */
#ifndef PP_COUPLED_H
#define PP_COUPLED_H

#include "pp_fixed.h"

#ifndef PP_MAX_SUBFLOWS
#define PP_MAX_SUBFLOWS 8
#endif

struct pp_view {
	__u32 cwnd;	/* segments */
	__u32 rtt_us;	/* smoothed RTT; 0 = no sample yet */
	__u32 ssthresh; /* segments */
	__u32 member;
	__u64 interval; /* OLIA's and NMCC's inter-loss interval, segments (pp_interval) */
};

/* A connection's slots, passed whole to the global functions (their pointer arguments
 * must name a type of the size they read). */
struct pp_group {
	struct pp_view v[PP_MAX_SUBFLOWS];
};

/* max(acknowledged since the last loss, between the last two), in segments. */
PP_INLINE __u64 pp_interval(__u64 acked, __u64 loss1, __u64 loss2)
{
	__u64 since = acked - loss2;
	__u64 between = loss2 - loss1;

	return since > between ? since : between;
}

PP_INLINE pp_fp pp_reno_increase(const struct pp_view *v)
{
	return pp_fp_div(pp_fp_from_u64(1), pp_fp_from_u64(v->cwnd));
}

/*
 * LIA (RFC 6356 §3; pathpool-cc lia.rs, per-ACK alpha): min(alpha/total, 1/w_i) per
 * segment, alpha = total·max(w/r²)/(Σ w/r)². Reno's 1/w_i while a member has no RTT.
 * *alpha is set when defined, else left alone.
 */
PP_FUNC pp_fp pp_lia_increase(const struct pp_group *g, int i, pp_fp *alpha)
{
	const struct pp_view *v;
	pp_fp total = 0, best = 0, sum = 0;
	pp_fp reno, a;
	int j;

	if (!g || !alpha)
		return 0;
	v = g->v;
	i &= PP_MAX_SUBFLOWS - 1;
	reno = pp_reno_increase(&v[i]);

	PP_NO_UNROLL
	for (j = 0; j < PP_MAX_SUBFLOWS; j++) {
		pp_fp w, r, x;

		if (!v[j].member)
			continue;
		if (!v[j].rtt_us)
			return reno;
		w = pp_fp_from_u64(v[j].cwnd);
		r = pp_fp_from_u64(v[j].rtt_us);
		x = pp_fp_div(w, r);
		best = pp_fp_max(best, pp_fp_div(x, r));
		sum = pp_fp_add(sum, x);
		total = pp_fp_add(total, w);
	}
	if (pp_fp_is_zero(sum))
		return reno;
	a = pp_fp_div(pp_fp_mul(total, best), pp_fp_mul(sum, sum));
	*alpha = a;
	return pp_fp_min(pp_fp_div(a, total), reno);
}

/* OLIA's path quality: inter-loss interval / r² (zero without an RTT sample). */
PP_INLINE pp_fp pp_olia_quality(const struct pp_view *v)
{
	pp_fp r = pp_fp_from_u64(v->rtt_us);

	return pp_fp_div(pp_fp_from_u64(v->interval), pp_fp_mul(r, r));
}

/*
 * OLIA (Khalili et al.; pathpool-cc olia.rs): (w_i/r_i²)/(Σ w/r)² + ε_i/w_i per segment
 * over the members with an RTT sample; ε_i from the sets M (largest windows) and B (best
 * inter-loss interval per r²). The result can be negative: its magnitude is returned and
 * *negative set. The pair (*epsilon_num, *epsilon_den) gives ε_i = ±num/den for the status display.
 */
PP_FUNC pp_fp pp_olia_increase(const struct pp_group *g, int i, int *negative,
			       __s32 *epsilon_num, __u32 *epsilon_den)
{
	const struct pp_view *v;
	pp_fp sum = 0, best_q = 0;
	pp_fp wi, ri, term, eps;
	__u64 max_cwnd = 0;
	__u32 n = 0, in_m = 0, b_not_m = 0;
	int j, i_in_b, i_in_m;

	if (!g || !negative || !epsilon_num || !epsilon_den)
		return 0;
	v = g->v;
	i &= PP_MAX_SUBFLOWS - 1;
	*negative = 0;
	*epsilon_num = 0;
	*epsilon_den = 1;
	if (!v[i].rtt_us)
		return pp_reno_increase(&v[i]);
	PP_NO_UNROLL
	for (j = 0; j < PP_MAX_SUBFLOWS; j++) {
		pp_fp r;

		if (!v[j].member || !v[j].rtt_us)
			continue;
		n++;
		r = pp_fp_from_u64(v[j].rtt_us);
		sum = pp_fp_add(sum, pp_fp_div(pp_fp_from_u64(v[j].cwnd), r));
		if (v[j].cwnd > max_cwnd)
			max_cwnd = v[j].cwnd;
		best_q = pp_fp_max(best_q, pp_olia_quality(&v[j]));
	}
	PP_NO_UNROLL
	for (j = 0; j < PP_MAX_SUBFLOWS; j++) {
		int m, b;

		if (!v[j].member || !v[j].rtt_us)
			continue;
		m = v[j].cwnd == max_cwnd;
		b = !pp_fp_lt(pp_olia_quality(&v[j]), best_q);
		in_m += m;
		b_not_m += b && !m;
	}
	wi = pp_fp_from_u64(v[i].cwnd);
	ri = pp_fp_from_u64(v[i].rtt_us);
	term = pp_fp_div(pp_fp_div(wi, pp_fp_mul(ri, ri)), pp_fp_mul(sum, sum));
	i_in_m = v[i].cwnd == max_cwnd;
	i_in_b = !pp_fp_lt(pp_olia_quality(&v[i]), best_q);
	if (!b_not_m || !n)
		return term;
	if (i_in_b && !i_in_m) {
		*epsilon_num = 1;
		*epsilon_den = n * b_not_m;
		eps = pp_fp_div(pp_fp_from_u64(1), pp_fp_from_u64((__u64)n * b_not_m));
		return pp_fp_add(term, pp_fp_div(eps, wi));
	}
	if (i_in_m) {
		*epsilon_num = -1;
		*epsilon_den = n * in_m;
		eps = pp_fp_div(pp_fp_div(pp_fp_from_u64(1), pp_fp_from_u64((__u64)n * in_m)), wi);
		if (pp_fp_lt(term, eps)) {
			*negative = 1;
			return pp_fp_sub(eps, term);
		}
		return pp_fp_sub(term, eps);
	}
	return term;
}

/*
 * BALIA (Peng et al.; pathpool-cc balia.rs): the rates x_j = w_j/r_j of the members with
 * an RTT; with fewer than two, path i is Reno (returns 0 in *coupled).
 */
PP_FUNC int pp_balia_rates(const struct pp_group *g, int i, pp_fp *x, pp_fp *max, pp_fp *sum)
{
	const struct pp_view *v;
	__u32 n = 0;
	int j;

	if (!g || !x || !max || !sum)
		return 0;
	v = g->v;
	i &= PP_MAX_SUBFLOWS - 1;

	if (!v[i].rtt_us)
		return 0;
	*x = pp_fp_div(pp_fp_from_u64(v[i].cwnd), pp_fp_from_u64(v[i].rtt_us));
	*max = 0;
	*sum = 0;
	PP_NO_UNROLL
	for (j = 0; j < PP_MAX_SUBFLOWS; j++) {
		pp_fp r;

		if (!v[j].member || !v[j].rtt_us)
			continue;
		r = pp_fp_div(pp_fp_from_u64(v[j].cwnd), pp_fp_from_u64(v[j].rtt_us));
		*max = pp_fp_max(*max, r);
		*sum = pp_fp_add(*sum, r);
		n++;
	}
	return n > 1;
}

/* (x + max)(4x + max) / (10·w·sum²) per segment; *alpha = max/x (1 alone). */
PP_FUNC pp_fp pp_balia_increase(const struct pp_group *g, int i, pp_fp *alpha)
{
	const struct pp_view *v;
	pp_fp x, max, sum, num, den;

	if (!g || !alpha)
		return 0;
	v = g->v;
	i &= PP_MAX_SUBFLOWS - 1;
	*alpha = pp_fp_from_u64(1);
	if (!pp_balia_rates(g, i, &x, &max, &sum))
		return pp_reno_increase(&v[i]);
	*alpha = pp_fp_div(max, x);
	num = pp_fp_mul(pp_fp_add(x, max), pp_fp_add(pp_fp_mul(pp_fp_from_u64(4), x), max));
	den = pp_fp_mul(pp_fp_mul(pp_fp_from_u64(10), pp_fp_from_u64(v[i].cwnd)),
			pp_fp_mul(sum, sum));
	return pp_fp_div(num, den);
}

/* BALIA's ssthresh: w − (w/2)·min(max/x, 1.5), at least 1; Reno's alone. */
PP_FUNC __u64 pp_balia_loss_ssthresh(const struct pp_group *g, int i)
{
	const struct pp_view *v;
	pp_fp x, max, sum, w, cut, ratio, three_halves;
	__u64 left;

	if (!g)
		return 2;
	v = g->v;
	i &= PP_MAX_SUBFLOWS - 1;
	if (!pp_balia_rates(g, i, &x, &max, &sum)) {
		left = v[i].cwnd >> 1;
		return left > 2 ? left : 2;
	}
	w = pp_fp_from_u64(v[i].cwnd);
	three_halves = pp_fp_div(pp_fp_from_u64(3), pp_fp_from_u64(2));
	ratio = pp_fp_min(pp_fp_div(max, x), three_halves);
	cut = pp_fp_mul(pp_fp_div(w, pp_fp_from_u64(2)), ratio);
	left = pp_fp_to_fixed(pp_fp_sub(w, cut), 0);
	return left > 1 ? left : 1;
}

/*
 * NMCC (thesis Alg. 2; pathpool-cc nmcc.rs). Its named choices (NmccConfig) as flags, zero
 * being the simulator's defaults.
 */
#define PP_NMCC_UNFRIENDLY_SS 1u /* friendly_slow_start = false */
#define PP_NMCC_NO_MT 2u	 /* loss_time_factor = false */
#define PP_NMCC_NO_CLAMP 4u	 /* clamp_mt = false */
#define PP_NMCC_M_IS_N 8u	 /* initial_m = "m-is-n" */

/* In slow start: cwnd < ssthresh/m² when friendly (Alg. 1 l.2), else cwnd < ssthresh. */
PP_INLINE int pp_nmcc_in_ss(const struct pp_view *v, pp_fp m2, __u32 flags)
{
	if (flags & PP_NMCC_UNFRIENDLY_SS)
		return v->cwnd < v->ssthresh;
	return pp_fp_lt(pp_fp_from_u64(v->cwnd), pp_fp_div(pp_fp_from_u64(v->ssthresh), m2));
}

/* Ω_j: cwnd/r² in slow start, 1/r² (one segment) in congestion avoidance (eq. 4.5/4.7). */
PP_INLINE pp_fp pp_nmcc_omega(const struct pp_view *v, pp_fp m2, __u32 flags)
{
	pp_fp r = pp_fp_from_u64(v->rtt_us);
	__u64 x = pp_nmcc_in_ss(v, m2, flags) ? v->cwnd : 1;

	return pp_fp_div(pp_fp_from_u64(x), pp_fp_mul(r, r));
}

/* ESTIMATE_M: m² = ΣΩ/Ω_max over the members, the phase test using prev (eq. 4.9). */
PP_FUNC pp_fp pp_nmcc_m2(const struct pp_group *g, pp_fp prev, __u32 flags)
{
	const struct pp_view *v;
	pp_fp total = 0, max = 0;
	int any = 0, j;

	if (!g)
		return prev;
	v = g->v;

	PP_NO_UNROLL
	for (j = 0; j < PP_MAX_SUBFLOWS; j++) {
		pp_fp o;

		if (!v[j].member)
			continue;
		any = 1;
		if (!v[j].rtt_us)
			return prev;
		o = pp_nmcc_omega(&v[j], prev, flags);
		total = pp_fp_add(total, o);
		max = pp_fp_max(max, o);
	}
	if (!any || pp_fp_is_zero(max))
		return pp_fp_from_u64(1);
	return pp_fp_div(total, max);
}

/*
 * m_t (thesis eq. 4.17): p_max (Σ w/r)² / Σ p w²/r², p_j = 1/interval_j, p_max that of the
 * member with the largest Ω; clamped to [1, n]. 1 where undefined.
 */
PP_FUNC pp_fp pp_nmcc_mt(const struct pp_group *g, pp_fp m2, __u32 flags)
{
	const struct pp_view *v;
	pp_fp one = pp_fp_from_u64(1);
	pp_fp sum_rate = 0, sum_weighted = 0, best_o = 0;
	pp_fp p_max = 0, mt, n_fp;
	int have_best = 0, best_has_p = 0;
	__u64 n = 0;
	int j;

	if (!g)
		return one;
	v = g->v;

	PP_NO_UNROLL
	for (j = 0; j < PP_MAX_SUBFLOWS; j++) {
		pp_fp r, w, o, rate, p;
		__u64 l;

		if (!v[j].member)
			continue;
		n++;
		if (!v[j].rtt_us)
			return one;
		r = pp_fp_from_u64(v[j].rtt_us);
		w = pp_fp_from_u64(v[j].cwnd);
		o = pp_nmcc_omega(&v[j], m2, flags);
		rate = pp_fp_div(w, r);
		sum_rate = pp_fp_add(sum_rate, rate);
		l = v[j].interval;
		p = pp_fp_div(one, pp_fp_from_u64(l));
		if (l)
			sum_weighted = pp_fp_add(sum_weighted, pp_fp_mul(p, pp_fp_mul(rate, rate)));
		if (!have_best || pp_fp_lt(best_o, o)) {
			have_best = 1;
			best_o = o;
			best_has_p = l != 0;
			p_max = p;
		}
	}
	if (!have_best || !best_has_p || pp_fp_is_zero(sum_weighted))
		return one;
	mt = pp_fp_div(pp_fp_mul(p_max, pp_fp_mul(sum_rate, sum_rate)), sum_weighted);
	n_fp = pp_fp_from_u64(n ? n : 1);
	if (flags & PP_NMCC_NO_CLAMP)
		return mt;
	if (pp_fp_lt(mt, one))
		return one;
	if (pp_fp_lt(n_fp, mt))
		return n_fp;
	return mt;
}

/* Congestion avoidance: 1/(w·m²) per segment (Alg. 1 l.5). */
PP_INLINE pp_fp pp_nmcc_ca_increase(const struct pp_view *v, pp_fp m2)
{
	return pp_fp_div(pp_fp_from_u64(1), pp_fp_mul(pp_fp_from_u64(v->cwnd), m2));
}

/* Friendly slow start: shadow/(w·m²) per segment (Alg. 2 l.3); the caller caps the total. */
PP_INLINE pp_fp pp_nmcc_ss_increase(const struct pp_view *v, pp_fp shadow, pp_fp m2)
{
	return pp_fp_div(shadow, pp_fp_mul(pp_fp_from_u64(v->cwnd), m2));
}

/* NMCC's options packed for pp_nmcc_loss_ssthresh: PP_NMCC_* flags, the floor above them. */
#define PP_NMCC_OPTIONS(flags, floor) ((flags) | ((floor) << 8))

/*
 * ssthresh after a loss: w − (w/2)·m_t once the group has lost before (`lost_before`; m_t = 1
 * without the loss-time factor), at least the window floor (segments; 0 means 2). A subflow
 * alone in its group halves, at least 2. (BPF functions take at most five arguments.)
 */
PP_FUNC __u64 pp_nmcc_loss_ssthresh(const struct pp_group *g, int i, pp_fp m2, int lost_before,
				   __u32 options)
{
	const struct pp_view *v;
	pp_fp w, mt = pp_fp_from_u64(1);
	__u32 flags = options & 0xff, floor = options >> 8;
	__u64 left;
	int members = 0, j;

	if (!g)
		return 2;
	v = g->v;
	i &= PP_MAX_SUBFLOWS - 1;
	w = pp_fp_from_u64(v[i].cwnd);
	PP_NO_UNROLL
	for (j = 0; j < PP_MAX_SUBFLOWS; j++)
		members += v[j].member != 0;
	if (members <= 1) {
		left = v[i].cwnd >> 1;
		return left > 2 ? left : 2;
	}
	if (lost_before && !(flags & PP_NMCC_NO_MT))
		mt = pp_nmcc_mt(g, m2, flags);
	if (!floor)
		floor = 2;
	left = pp_fp_to_fixed(pp_fp_sub(w, pp_fp_mul(pp_fp_div(w, pp_fp_from_u64(2)), mt)), 0);
	return left > floor ? left : floor;
}

#endif /* PP_COUPLED_H */
