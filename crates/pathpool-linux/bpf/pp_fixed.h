/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * A small software floating point for the coupled controllers' arithmetic.
 *
 * BPF has no floating point, and the coupled increases (LIA's alpha, OLIA's and BALIA's
 * rate terms, NMCC's m² and m_t) are ratios of sums of cwnd/RTT and cwnd/RTT² whose range
 * is far too wide for one fixed-point format. A value here is m·2^e with a 32-bit mantissa
 * (m in [2^31, 2^32), or m = 0 for zero), packed into one 64-bit word: every product of two mantissas fits in 64 bits,
 * so multiplication and division are one 64-bit operation each, with a relative error
 * below 2^-31 per operation. Values are never negative; callers carry signs themselves.
 *
 * No loops and no division by zero (a zero divisor gives zero): the verifier walks each
 * function once. The same header is compiled for the host, where the tests compare it
 * with pathpool-cc's f64 controllers (crates/pathpool-linux/src/arith.rs).
 */
#ifndef PP_FIXED_H
#define PP_FIXED_H

#ifndef PP_INLINE
#define PP_INLINE static inline __attribute__((always_inline))
#endif

/* Keep loops rolled in BPF: unrolled, their software-float temporaries overflow the 512-byte
 * stack; the verifier walks bounded loops itself. */
#ifdef __clang__
#define PP_NO_UNROLL _Pragma("clang loop unroll(disable)")
#else
#define PP_NO_UNROLL
#endif

/*
 * Functions the verifier should check once rather than at every call site: global
 * (non-inlined) BPF subprograms, whose arguments and results are scalars or checked
 * pointers. On the host they are ordinary inline functions.
 */
#ifdef __bpf__
#define PP_FUNC __attribute__((noinline))
#else
#define PP_FUNC static inline
#endif

/* m·2^e packed in 64 bits: the mantissa in the low half, the exponent in the high half. */
typedef __u64 pp_fp;

PP_INLINE __u64 pp_fp_m(pp_fp a)
{
	return a & 0xffffffffULL;
}

PP_INLINE __s32 pp_fp_e(pp_fp a)
{
	return (__s32)(__u32)(a >> 32);
}

PP_INLINE pp_fp pp_fp_pack(__u64 m, __s32 e)
{
	return ((__u64)(__u32)e << 32) | m;
}

/* 1-based index of the highest set bit, 0 for 0 (a binary search: BPF has no clz). */
PP_INLINE int pp_fls64(__u64 x)
{
	int n = 0;

	if (!x)
		return 0;
	if (x >> 32) {
		n += 32;
		x >>= 32;
	}
	if (x >> 16) {
		n += 16;
		x >>= 16;
	}
	if (x >> 8) {
		n += 8;
		x >>= 8;
	}
	if (x >> 4) {
		n += 4;
		x >>= 4;
	}
	if (x >> 2) {
		n += 2;
		x >>= 2;
	}
	if (x >> 1) {
		n += 1;
		x >>= 1;
	}
	return n + 1;
}

/* m·2^e with m brought into [2^31, 2^32) (truncating the bits shifted out). */
PP_FUNC pp_fp pp_fp_norm(__u64 m, __s32 e)
{
	int shift;

	if (!m)
		return 0;
	shift = pp_fls64(m) - 32;
	if (shift > 0)
		return pp_fp_pack(m >> (shift & 63), e + shift);
	return pp_fp_pack(m << ((-shift) & 63), e + shift);
}

PP_INLINE pp_fp pp_fp_from_u64(__u64 x)
{
	return pp_fp_norm(x, 0);
}

PP_INLINE int pp_fp_is_zero(pp_fp a)
{
	return pp_fp_m(a) == 0;
}

PP_FUNC pp_fp pp_fp_mul(pp_fp a, pp_fp b)
{
	if (!pp_fp_m(a) || !pp_fp_m(b))
		return 0;
	return pp_fp_norm(pp_fp_m(a) * pp_fp_m(b), pp_fp_e(a) + pp_fp_e(b));
}

/* a / b; zero when b is zero (callers test the cases where that matters). */
PP_FUNC pp_fp pp_fp_div(pp_fp a, pp_fp b)
{
	if (!pp_fp_m(a) || !pp_fp_m(b))
		return 0;
	/* a's mantissa is below 2^32, so shifted by 32 it fits; the quotient lies in
	 * (2^31, 2^33). */
	return pp_fp_norm((pp_fp_m(a) << 32) / pp_fp_m(b), pp_fp_e(a) - pp_fp_e(b) - 32);
}

/* a < b */
PP_FUNC int pp_fp_lt(pp_fp a, pp_fp b)
{
	if (!pp_fp_m(b))
		return 0;
	if (!pp_fp_m(a))
		return 1;
	if (pp_fp_e(a) != pp_fp_e(b))
		return pp_fp_e(a) < pp_fp_e(b);
	return pp_fp_m(a) < pp_fp_m(b);
}

PP_INLINE pp_fp pp_fp_max(pp_fp a, pp_fp b)
{
	return pp_fp_lt(a, b) ? b : a;
}

PP_INLINE pp_fp pp_fp_min(pp_fp a, pp_fp b)
{
	return pp_fp_lt(a, b) ? a : b;
}

PP_FUNC pp_fp pp_fp_add(pp_fp a, pp_fp b)
{
	pp_fp t;
	__s32 d;

	if (!pp_fp_m(a))
		return b;
	if (!pp_fp_m(b))
		return a;
	if (pp_fp_e(a) < pp_fp_e(b)) {
		t = a;
		a = b;
		b = t;
	}
	d = pp_fp_e(a) - pp_fp_e(b);
	if (d >= 32)
		return a;
	/* Both mantissas below 2^32: shifted up by 31 the sum stays below 2^64. */
	return pp_fp_norm((pp_fp_m(a) << 31) + ((pp_fp_m(b) << 31) >> (d & 63)), pp_fp_e(a) - 31);
}

/* a − b when a > b, else zero. */
PP_FUNC pp_fp pp_fp_sub(pp_fp a, pp_fp b)
{
	__s32 d;

	if (!pp_fp_lt(b, a))
		return 0;
	if (!pp_fp_m(b))
		return a;
	d = pp_fp_e(a) - pp_fp_e(b);
	if (d >= 32)
		return a;
	return pp_fp_norm((pp_fp_m(a) << 31) - ((pp_fp_m(b) << 31) >> (d & 63)), pp_fp_e(a) - 31);
}

/* floor(a·2^frac_bits), saturating at 2^63 − 1. */
PP_FUNC __u64 pp_fp_to_fixed(pp_fp a, int frac_bits)
{
	__s32 shift;

	if (!pp_fp_m(a))
		return 0;
	shift = pp_fp_e(a) + frac_bits;
	if (shift > 31)
		return 0x7fffffffffffffffULL;
	if (shift >= 0)
		return pp_fp_m(a) << (shift & 63);
	if (shift <= -64)
		return 0;
	return pp_fp_m(a) >> ((-shift) & 63);
}

#endif /* PP_FIXED_H */
