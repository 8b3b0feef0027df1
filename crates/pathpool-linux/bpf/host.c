/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * The coupled arithmetic compiled for the host, so that src/arith.rs can test the very
 * header the BPF programs include against pathpool-cc's controllers.
 */
#include <stdint.h>

typedef uint32_t __u32;
typedef int32_t __s32;
typedef uint64_t __u64;
typedef int64_t __s64;

#include "pp_coupled.h"

double pp_host_fp_value(pp_fp a)
{
	double v = (double)pp_fp_m(a);
	int e = pp_fp_e(a);

	for (; e > 0; e--)
		v *= 2.0;
	for (; e < 0; e++)
		v /= 2.0;
	return v;
}

double pp_host_lia_increase(const struct pp_group *v, int i, double *alpha)
{
	pp_fp a = pp_fp_from_u64(0);
	double r = pp_host_fp_value(pp_lia_increase(v, i, &a));

	*alpha = pp_host_fp_value(a);
	return r;
}

double pp_host_olia_increase(const struct pp_group *v, int i, double *epsilon)
{
	int negative = 0;
	__s32 num = 0;
	__u32 den = 1;
	double r = pp_host_fp_value(pp_olia_increase(v, i, &negative, &num, &den));

	*epsilon = (double)num / (double)den;
	return negative ? -r : r;
}

double pp_host_balia_increase(const struct pp_group *v, int i, double *alpha)
{
	pp_fp a = 0;
	double r = pp_host_fp_value(pp_balia_increase(v, i, &a));

	*alpha = pp_host_fp_value(a);
	return r;
}

uint64_t pp_host_balia_ssthresh(const struct pp_group *v, int i)
{
	return pp_balia_loss_ssthresh(v, i);
}

static pp_fp pp_host_fp(double x)
{
	/* Only for the tests' inputs (m² between 1 and 8): 2^-40 resolution. */
	return pp_fp_norm((__u64)(x * 1099511627776.0), -40);
}

double pp_host_nmcc_m2(const struct pp_group *v, double prev, uint32_t flags)
{
	return pp_host_fp_value(pp_nmcc_m2(v, pp_host_fp(prev), flags));
}

double pp_host_nmcc_mt(const struct pp_group *v, double m2, uint32_t flags)
{
	return pp_host_fp_value(pp_nmcc_mt(v, pp_host_fp(m2), flags));
}

double pp_host_nmcc_ca_increase(const struct pp_group *v, int i, double m2)
{
	return pp_host_fp_value(pp_nmcc_ca_increase(&v->v[i & 7], pp_host_fp(m2)));
}

uint64_t pp_host_nmcc_ssthresh(const struct pp_group *v, int i, double m2,
			       uint64_t group_losses, uint32_t flags, uint32_t floor)
{
	return pp_nmcc_loss_ssthresh(v, i, pp_host_fp(m2), group_losses > 1,
				     PP_NMCC_OPTIONS(flags, floor));
}

double pp_host_fp_roundtrip(uint64_t a, uint64_t b, int op)
{
	pp_fp x = pp_fp_from_u64(a), y = pp_fp_from_u64(b);

	switch (op) {
	case 0:
		return pp_host_fp_value(pp_fp_add(x, y));
	case 1:
		return pp_host_fp_value(pp_fp_sub(x, y));
	case 2:
		return pp_host_fp_value(pp_fp_mul(x, y));
	default:
		return pp_host_fp_value(pp_fp_div(x, y));
	}
}
