/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * The maps' keys and values, read and written by user space too: src/maps.rs mirrors each
 * struct with #[repr(C)] and a size test. Change both together.
 */
#ifndef PP_MAPS_H
#define PP_MAPS_H

#define PP_MAX_SUBFLOWS 8

enum pp_algorithm {
	PP_ALG_NMCC = 1,
	PP_ALG_LIA = 2,
	PP_ALG_OLIA = 3,
	PP_ALG_BALIA = 4,
};

/* pp_slot.flags */
#define PP_SLOT_INACTIVE 1u   /* NMCC's is-active rule: a timeout until the next ACK */
#define PP_SLOT_SLOW_START 2u /* in (friendly) slow start at the last ACK */
#define PP_SLOT_GROUPED 4u    /* the group came from a pp_groups_* entry */

/* One subflow of a connection, written only by that subflow's programs. */
struct pp_slot {
	__u32 subflow_id; /* the kernel's MPTCP subflow id; 0: free */
	__u32 group;	  /* coupling group; 0 unless an entry says otherwise */
	__u32 algorithm;  /* enum pp_algorithm */
	__u32 flags;
	__u32 cwnd;	  /* segments */
	__u32 ssthresh;	  /* segments */
	__u32 srtt_us;
	__u32 mss;
	__u64 acked;	  /* segments acknowledged */
	__u64 loss1;	  /* `acked` at the loss before the last */
	__u64 loss2;	  /* `acked` at the last loss */
	__u64 losses;	  /* congestion events (ssthresh calls) */
	__s64 value_q32;  /* LIA alpha, OLIA epsilon, BALIA alpha, NMCC m², ×2^32 */
	__u16 family;	  /* AF_INET or AF_INET6 */
	__u16 sport;	  /* host order */
	__u16 dport;	  /* host order */
	__u16 pad;
	__u8 saddr[16];	  /* IPv4 in the first four bytes */
	__u8 daddr[16];
};

/* pp_config[0]: options fixed by `load`; all zero gives the simulator's defaults. */
struct pp_config {
	__u32 nmcc_flags;	 /* PP_NMCC_* of pp_coupled.h */
	__u32 nmcc_window_floor; /* segments; 0 means 2 */
};

/* pp_conns: token -> connection. */
struct pp_conn {
	struct pp_slot slot[PP_MAX_SUBFLOWS];
};

/* pp_groups_sub: one subflow of one connection -> group. */
struct pp_sub_key {
	__u32 token;
	__u32 subflow_id;
};

/* pp_groups_addr: every subflow from saddr to daddr -> group (the path-overlap rule). */
struct pp_addr_key {
	__u32 family;
	__u8 saddr[16];
	__u8 daddr[16];
};

#endif /* PP_MAPS_H */
