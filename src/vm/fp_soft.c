/* Single-precision soft-float, bit-exact to the ARM ARM pseudocode: see
 * fp_soft.h. Function names follow the pseudocode (FPUnpack -> unpack,
 * FPRound -> round_bits, ...).
 *
 * An unpacked finite value is m * 2^e with an integer m; intermediate results
 * keep enough extra bits that the bits shifted out only matter as "sticky",
 * which is ORed ("jammed") into the lowest kept bit. With at least two guard
 * bits above it, jamming preserves round-to-nearest-even and the directed
 * modes exactly. */
#include "fp_soft.h"

enum ftype { FT_ZERO, FT_NONZERO, FT_INF, FT_QNAN, FT_SNAN };

struct unp {
  enum ftype type;
  bool sign;
  int e;      /* value = m * 2^e for FT_NONZERO */
  uint64_t m;
};

#define DEFAULT_NAN 0x7fc00000u

static inline int clz64(uint64_t x)
{
  return __builtin_clzll(x);
}

static inline void fp_raise(uint32_t *fpscr, uint32_t flag)
{
  *fpscr |= flag;
}

static inline bool is_nan_type(enum ftype t)
{
  return t == FT_QNAN || t == FT_SNAN;
}

/* FPUnpack for 32-bit values: FZ flushes denormal inputs (IDC). */
static struct unp unpack(uint32_t a, uint32_t *fpscr)
{
  struct unp u;
  u.sign = a >> 31;
  uint32_t exp = (a >> 23) & 0xff, frac = a & 0x7fffff;
  u.e = 0;
  u.m = 0;
  if (exp == 0) {
    if (frac == 0 || (*fpscr & VM_FPSCR_FZ)) {
      u.type = FT_ZERO;
      if (frac)
        fp_raise(fpscr, VM_FPSCR_IDC);
    } else {
      u.type = FT_NONZERO;
      u.m = frac;
      u.e = -149;
    }
  } else if (exp == 0xff) {
    u.type = frac == 0 ? FT_INF : (frac & 0x400000) ? FT_QNAN : FT_SNAN;
  } else {
    u.type = FT_NONZERO;
    u.m = frac | 0x800000u;
    u.e = (int)exp - 150;
  }
  return u;
}

/* Output formats of FPRound. */
struct fmt {
  int fbits;   /* F: fraction bits */
  int min_exp; /* minimum normal exponent */
  int emax;    /* 2^E - 1: all-ones biased exponent */
  bool half;
};

static const struct fmt F32 = {23, -126, 255, false};
static const struct fmt F16 = {10, -14, 31, true};

static uint32_t zero_bits(bool sign, const struct fmt *f)
{
  return (uint32_t)sign << (f->half ? 15 : 31);
}

/* FPRound of the nonzero value (-1)^sign * m * 2^e under `rmode`. */
static uint32_t round_bits(bool sign, int e, uint64_t m, enum vm_fp_rmode rmode, uint32_t *fpscr,
                           const struct fmt *f)
{
  int n = 63 - clz64(m);
  int exponent = e + n; /* floor(log2(|value|)) */
  if (!f->half && (*fpscr & VM_FPSCR_FZ) && exponent < f->min_exp) {
    fp_raise(fpscr, VM_FPSCR_UFC);
    return zero_bits(sign, f);
  }
  int biased = exponent - f->min_exp + 1;
  if (biased < 0)
    biased = 0;
  int drop = (exponent > f->min_exp ? exponent : f->min_exp) - f->fbits - e;
  uint64_t mant;
  bool rbit, sticky;
  if (drop <= 0) {
    mant = m << -drop;
    rbit = sticky = false;
  } else if (drop > 64) {
    mant = 0;
    rbit = false;
    sticky = true;
  } else if (drop == 64) {
    mant = 0;
    rbit = m >> 63;
    sticky = (m << 1) != 0;
  } else {
    mant = m >> drop;
    rbit = (m >> (drop - 1)) & 1;
    sticky = drop > 1 && (m << (65 - drop)) != 0;
  }
  bool inexact = rbit || sticky;
  if (biased == 0 && inexact)
    fp_raise(fpscr, VM_FPSCR_UFC);
  bool up, to_inf;
  switch (rmode) {
  case VM_FP_RN:
    up = rbit && (sticky || (mant & 1));
    to_inf = true;
    break;
  case VM_FP_RP:
    up = inexact && !sign;
    to_inf = !sign;
    break;
  case VM_FP_RM:
    up = inexact && sign;
    to_inf = sign;
    break;
  case VM_FP_RA:
    up = rbit;
    to_inf = true;
    break;
  default:
    up = false;
    to_inf = false;
    break;
  }
  if (up) {
    mant++;
    if (mant == (1ull << f->fbits))
      biased = 1;
    if (mant == (2ull << f->fbits)) {
      biased++;
      mant >>= 1;
    }
  }
  uint32_t signbit = zero_bits(sign, f);
  uint32_t fracmask = (1u << f->fbits) - 1;
  if (f->half && (*fpscr & VM_FPSCR_AHP)) {
    /* Alternative half precision: no infinities, exponent 31 is normal. */
    if (biased >= f->emax + 1) {
      fp_raise(fpscr, VM_FPSCR_IOC);
      return signbit | 0x7fff;
    }
  } else if (biased >= f->emax) {
    fp_raise(fpscr, VM_FPSCR_OFC | VM_FPSCR_IXC);
    uint32_t inf = (uint32_t)f->emax << f->fbits;
    return signbit | (to_inf ? inf : inf - 1);
  }
  if (inexact)
    fp_raise(fpscr, VM_FPSCR_IXC);
  return signbit | (uint32_t)biased << f->fbits | ((uint32_t)mant & fracmask);
}

static inline uint32_t fpround(bool sign, int e, uint64_t m, uint32_t *fpscr)
{
  return round_bits(sign, e, m, vm_fp_rmode(*fpscr), fpscr, &F32);
}

/* FPProcessNaN: quiet it (IOC for a signalling one), or the default NaN. */
static uint32_t process_nan(enum ftype t, uint32_t a, uint32_t *fpscr)
{
  if (t == FT_SNAN)
    fp_raise(fpscr, VM_FPSCR_IOC);
  return (*fpscr & VM_FPSCR_DN) ? DEFAULT_NAN : a | 0x400000u;
}

/* FPProcessNaNs / FPProcessNaNs3: signalling NaNs first, then quiet ones,
 * each in operand order. Returns true with *r set if a NaN was found. */
static bool process_nans3(const struct unp *u, const uint32_t *op, int n, uint32_t *fpscr,
                          uint32_t *r)
{
  for (int i = 0; i < n; i++)
    if (u[i].type == FT_SNAN) {
      *r = process_nan(FT_SNAN, op[i], fpscr);
      return true;
    }
  for (int i = 0; i < n; i++)
    if (u[i].type == FT_QNAN) {
      *r = process_nan(FT_QNAN, op[i], fpscr);
      return true;
    }
  return false;
}

static inline uint32_t inf_bits(bool sign)
{
  return (uint32_t)sign << 31 | 0x7f800000u;
}

/* Exact sum of two finite values as a 128-bit magnitude, then FPRound.
 * Used by FPAdd (64-bit m) and FPMulAdd (product m up to 48 bits). */
static uint32_t add_finite(bool s1, int e1, uint64_t m1, bool s2, int e2, uint64_t m2,
                           uint32_t *fpscr)
{
  typedef unsigned __int128 u128;
  if (m1 == 0 && m2 == 0) /* both zero: handled by callers */
    return 0;
  /* Put each at bit 100 or below, then align to the larger exponent. */
  u128 a = m1, b = m2;
  int ea = e1, eb = e2;
  if (m1) {
    int sh = 100 - (63 - clz64(m1));
    a <<= sh;
    ea -= sh;
  }
  if (m2) {
    int sh = 100 - (63 - clz64(m2));
    b <<= sh;
    eb -= sh;
  }
  if (!m1)
    ea = eb;
  if (!m2)
    eb = ea;
  if (ea < eb) {
    u128 t = a;
    a = b;
    b = t;
    int te = ea;
    ea = eb;
    eb = te;
    bool ts = s1;
    s1 = s2;
    s2 = ts;
  }
  int d = ea - eb;
  if (d > 0) {
    if (d >= 120)
      b = b ? 1 : 0;
    else
      b = (b >> d) | (((b << (128 - d)) != 0) ? 1 : 0);
  }
  bool sign;
  u128 r;
  if (s1 == s2) {
    r = a + b;
    sign = s1;
  } else if (a >= b) {
    r = a - b;
    sign = s1;
  } else {
    r = b - a;
    sign = s2;
  }
  if (r == 0) /* exact zero: sign from the rounding mode */
    return vm_fp_rmode(*fpscr) == VM_FP_RM ? 0x80000000u : 0;
  /* Reduce to 64 bits with the sticky jammed. */
  int e = ea;
  uint64_t hi = (uint64_t)(r >> 64);
  if (hi) {
    int k = 64 - clz64(hi);
    bool sticky = (r & (((u128)1 << k) - 1)) != 0;
    r = (r >> k) | sticky;
    e += k;
  }
  return fpround(sign, e, (uint64_t)r, fpscr);
}

static uint32_t fp_add(uint32_t a, uint32_t b, bool negate_b, uint32_t *fpscr)
{
  struct unp u[2] = {unpack(a, fpscr), unpack(b, fpscr)};
  uint32_t op[2] = {a, b}, r;
  if (process_nans3(u, op, 2, fpscr, &r))
    return r;
  bool s1 = u[0].sign, s2 = u[1].sign ^ negate_b;
  bool inf1 = u[0].type == FT_INF, inf2 = u[1].type == FT_INF;
  if (inf1 && inf2 && s1 != s2) {
    fp_raise(fpscr, VM_FPSCR_IOC);
    return DEFAULT_NAN;
  }
  if (inf1)
    return inf_bits(s1);
  if (inf2)
    return inf_bits(s2);
  bool z1 = u[0].type == FT_ZERO, z2 = u[1].type == FT_ZERO;
  if (z1 && z2 && s1 == s2)
    return (uint32_t)s1 << 31;
  if (z1 && z2)
    return vm_fp_rmode(*fpscr) == VM_FP_RM ? 0x80000000u : 0;
  return add_finite(s1, u[0].e, u[0].m, s2, u[1].e, u[1].m, fpscr);
}

uint32_t vm_fp32_add(uint32_t a, uint32_t b, uint32_t *fpscr)
{
  return fp_add(a, b, false, fpscr);
}

uint32_t vm_fp32_sub(uint32_t a, uint32_t b, uint32_t *fpscr)
{
  return fp_add(a, b, true, fpscr);
}

uint32_t vm_fp32_mul(uint32_t a, uint32_t b, uint32_t *fpscr)
{
  struct unp u[2] = {unpack(a, fpscr), unpack(b, fpscr)};
  uint32_t op[2] = {a, b}, r;
  if (process_nans3(u, op, 2, fpscr, &r))
    return r;
  bool sign = u[0].sign ^ u[1].sign;
  bool inf1 = u[0].type == FT_INF, inf2 = u[1].type == FT_INF;
  bool z1 = u[0].type == FT_ZERO, z2 = u[1].type == FT_ZERO;
  if ((inf1 && z2) || (z1 && inf2)) {
    fp_raise(fpscr, VM_FPSCR_IOC);
    return DEFAULT_NAN;
  }
  if (inf1 || inf2)
    return inf_bits(sign);
  if (z1 || z2)
    return (uint32_t)sign << 31;
  return fpround(sign, u[0].e + u[1].e, u[0].m * u[1].m, fpscr);
}

uint32_t vm_fp32_div(uint32_t a, uint32_t b, uint32_t *fpscr)
{
  struct unp u[2] = {unpack(a, fpscr), unpack(b, fpscr)};
  uint32_t op[2] = {a, b}, r;
  if (process_nans3(u, op, 2, fpscr, &r))
    return r;
  bool sign = u[0].sign ^ u[1].sign;
  bool inf1 = u[0].type == FT_INF, inf2 = u[1].type == FT_INF;
  bool z1 = u[0].type == FT_ZERO, z2 = u[1].type == FT_ZERO;
  if ((inf1 && inf2) || (z1 && z2)) {
    fp_raise(fpscr, VM_FPSCR_IOC);
    return DEFAULT_NAN;
  }
  if (inf1 || z2) {
    if (!inf1)
      fp_raise(fpscr, VM_FPSCR_DZC);
    return inf_bits(sign);
  }
  if (z1 || inf2)
    return (uint32_t)sign << 31;
  /* Normalise both mantissas to bit 23, then a 64/24-bit quotient gives
   * 40+ significant bits; the remainder is the sticky bit. */
  uint64_t m1 = u[0].m, m2 = u[1].m;
  int e1 = u[0].e, e2 = u[1].e;
  int s1 = clz64(m1) - 40, s2 = clz64(m2) - 40;
  m1 <<= s1, e1 -= s1;
  m2 <<= s2, e2 -= s2;
  uint64_t num = m1 << 40;
  uint64_t q = num / m2, rem = num % m2;
  return fpround(sign, e1 - e2 - 40, q | (rem != 0), fpscr);
}

/* floor(sqrt(x)) for a 64-bit x, bit by bit. */
static uint64_t isqrt64(uint64_t x, bool *exact)
{
  uint64_t r = 0, bit = 1ull << 62;
  uint64_t v = x;
  while (bit > v)
    bit >>= 2;
  while (bit) {
    if (v >= r + bit) {
      v -= r + bit;
      r = (r >> 1) + bit;
    } else {
      r >>= 1;
    }
    bit >>= 2;
  }
  *exact = v == 0;
  return r;
}

uint32_t vm_fp32_sqrt(uint32_t a, uint32_t *fpscr)
{
  struct unp u = unpack(a, fpscr);
  if (is_nan_type(u.type))
    return process_nan(u.type, a, fpscr);
  if (u.type == FT_ZERO)
    return (uint32_t)u.sign << 31;
  if (u.type == FT_INF && !u.sign)
    return a;
  if (u.sign) {
    fp_raise(fpscr, VM_FPSCR_IOC);
    return DEFAULT_NAN;
  }
  /* m * 2^e with m shifted to bit 61 or 62 so that e is even. */
  int sh = 62 - (63 - clz64(u.m));
  uint64_t m = u.m << sh;
  int e = u.e - sh;
  if (e & 1) {
    m >>= 1; /* m had bit 0 clear: shifted left by >= 39 */
    e++;
  }
  bool exact;
  uint64_t r = isqrt64(m, &exact);
  return fpround(false, e / 2, r | !exact, fpscr);
}

uint32_t vm_fp32_muladd(uint32_t addend, uint32_t op1, uint32_t op2, uint32_t *fpscr)
{
  struct unp u[3] = {unpack(addend, fpscr), unpack(op1, fpscr), unpack(op2, fpscr)};
  uint32_t op[3] = {addend, op1, op2}, r;
  bool inf1 = u[1].type == FT_INF, inf2 = u[2].type == FT_INF;
  bool z1 = u[1].type == FT_ZERO, z2 = u[2].type == FT_ZERO;
  bool done = process_nans3(u, op, 3, fpscr, &r);
  /* A quiet NaN addend does not hide the invalid 0 * inf. */
  if (u[0].type == FT_QNAN && ((inf1 && z2) || (z1 && inf2))) {
    fp_raise(fpscr, VM_FPSCR_IOC);
    return DEFAULT_NAN;
  }
  if (done)
    return r;
  bool sa = u[0].sign, sp = u[1].sign ^ u[2].sign;
  bool infa = u[0].type == FT_INF, infp = inf1 || inf2;
  bool za = u[0].type == FT_ZERO, zp = z1 || z2;
  if ((inf1 && z2) || (z1 && inf2) || (infa && infp && sa != sp)) {
    fp_raise(fpscr, VM_FPSCR_IOC);
    return DEFAULT_NAN;
  }
  if (infa)
    return inf_bits(sa);
  if (infp)
    return inf_bits(sp);
  if (za && zp && sa == sp)
    return (uint32_t)sa << 31;
  if (za && zp)
    return vm_fp_rmode(*fpscr) == VM_FP_RM ? 0x80000000u : 0;
  uint64_t mp = zp ? 0 : u[1].m * u[2].m;
  return add_finite(sa, u[0].e, u[0].m, sp, u[1].e + u[2].e, mp, fpscr);
}

/* Compare magnitudes/signs of two non-NaN unpacked values: -1, 0, 1. */
static int cmp_values(const struct unp *a, const struct unp *b)
{
  /* Zeros of either sign are equal; finite nonzero values compare by
   * m * 2^e, normalised to bit 63. */
  int mag_cmp;
  bool az = a->type == FT_ZERO, bz = b->type == FT_ZERO;
  if (az && bz)
    return 0;
  if (az)
    return b->sign ? 1 : -1;
  if (bz)
    return a->sign ? -1 : 1;
  bool sa = a->sign, sb = b->sign;
  if (sa != sb)
    return sa ? -1 : 1;
  if (a->type == FT_INF || b->type == FT_INF) {
    mag_cmp = (a->type == FT_INF) - (b->type == FT_INF);
  } else {
    int ea = a->e + 63 - clz64(a->m), eb = b->e + 63 - clz64(b->m);
    if (ea != eb) {
      mag_cmp = ea < eb ? -1 : 1;
    } else {
      uint64_t ma = a->m << clz64(a->m), mb = b->m << clz64(b->m);
      mag_cmp = ma < mb ? -1 : ma > mb;
    }
  }
  return sa ? -mag_cmp : mag_cmp;
}

unsigned vm_fp32_compare(uint32_t a, uint32_t b, bool quiet_nan_exc, uint32_t *fpscr)
{
  struct unp ua = unpack(a, fpscr), ub = unpack(b, fpscr);
  if (is_nan_type(ua.type) || is_nan_type(ub.type)) {
    if (ua.type == FT_SNAN || ub.type == FT_SNAN || quiet_nan_exc)
      fp_raise(fpscr, VM_FPSCR_IOC);
    return 0x3; /* unordered: C V */
  }
  int c = cmp_values(&ua, &ub);
  return c == 0 ? 0x6 : c < 0 ? 0x8 : 0x2;
}

uint32_t vm_fp32_to_fixed(uint32_t a, unsigned size, unsigned fbits, bool uns,
                          enum vm_fp_rmode rmode, uint32_t *fpscr)
{
  typedef __int128 s128;
  struct unp u = unpack(a, fpscr);
  bool invalid = false;
  s128 v = 0; /* value * 2^fbits as fixed point with 32 fraction bits */
  if (is_nan_type(u.type)) {
    fp_raise(fpscr, VM_FPSCR_IOC);
  } else if (u.type == FT_INF) {
    invalid = true;
  } else if (u.type == FT_NONZERO) {
    int sh = u.e + (int)fbits + 32;
    unsigned __int128 mag;
    if (sh >= 80) {
      invalid = true; /* >= 2^55: out of any range */
      mag = 0;
    } else if (sh >= 0) {
      mag = (unsigned __int128)u.m << sh;
    } else if (sh > -64) {
      mag = (u.m >> -sh) | ((u.m << (64 + sh)) != 0);
    } else {
      mag = 1;
    }
    v = u.sign ? -(s128)mag : (s128)mag;
  }
  int64_t ires = 0;
  bool inexact = false;
  if (!invalid) {
    s128 ip = v >> 32; /* floor */
    uint32_t err = (uint32_t)v;
    bool up;
    switch (rmode) {
    case VM_FP_RN:
      up = err > 0x80000000u || (err == 0x80000000u && (ip & 1));
      break;
    case VM_FP_RP:
      up = err != 0;
      break;
    case VM_FP_RM:
      up = false;
      break;
    case VM_FP_RA:
      up = err > 0x80000000u || (err == 0x80000000u && ip >= 0);
      break;
    default:
      up = err != 0 && ip < 0;
      break;
    }
    ip += up;
    inexact = err != 0;
    int64_t lo = uns ? 0 : -((int64_t)1 << (size - 1));
    int64_t hi = uns ? ((int64_t)1 << size) - 1 : ((int64_t)1 << (size - 1)) - 1;
    if (ip < lo) {
      invalid = true;
      ires = lo;
    } else if (ip > hi) {
      invalid = true;
      ires = hi;
    } else {
      ires = (int64_t)ip;
    }
  } else {
    bool neg = u.sign;
    if (uns)
      ires = neg ? 0 : ((int64_t)1 << size) - 1;
    else
      ires = neg ? -((int64_t)1 << (size - 1)) : ((int64_t)1 << (size - 1)) - 1;
  }
  if (invalid)
    fp_raise(fpscr, VM_FPSCR_IOC);
  else if (inexact)
    fp_raise(fpscr, VM_FPSCR_IXC);
  return (uint32_t)ires; /* two's complement: sign-extended for signed */
}

uint32_t vm_fp32_from_fixed(uint32_t v, unsigned size, unsigned fbits, bool uns,
                            enum vm_fp_rmode rmode, uint32_t *fpscr)
{
  int64_t x;
  if (size == 16)
    x = uns ? (int64_t)(v & 0xffff) : (int64_t)(int16_t)v;
  else
    x = uns ? (int64_t)v : (int64_t)(int32_t)v;
  if (x == 0)
    return 0;
  bool sign = x < 0;
  uint64_t m = (uint64_t)(sign ? -x : x);
  return round_bits(sign, -(int)fbits, m, rmode, fpscr, &F32);
}

uint16_t vm_fp32_to_f16(uint32_t a, uint32_t *fpscr)
{
  struct unp u = unpack(a, fpscr);
  bool ahp = *fpscr & VM_FPSCR_AHP;
  uint16_t sign = (uint16_t)(u.sign << 15);
  if (is_nan_type(u.type)) {
    uint16_t r;
    if (ahp)
      r = sign;
    else if (*fpscr & VM_FPSCR_DN)
      r = 0x7e00;
    else
      r = (uint16_t)(sign | 0x7e00 | ((a >> 13) & 0x1ff));
    if (u.type == FT_SNAN || ahp)
      fp_raise(fpscr, VM_FPSCR_IOC);
    return r;
  }
  if (u.type == FT_INF) {
    if (ahp) {
      fp_raise(fpscr, VM_FPSCR_IOC);
      return (uint16_t)(sign | 0x7fff);
    }
    return (uint16_t)(sign | 0x7c00);
  }
  if (u.type == FT_ZERO)
    return sign;
  return (uint16_t)round_bits(u.sign, u.e, u.m, vm_fp_rmode(*fpscr), fpscr, &F16);
}

uint32_t vm_fp16_to_f32(uint16_t h, uint32_t *fpscr)
{
  bool sign = h >> 15;
  uint32_t exp = (h >> 10) & 0x1f, frac = h & 0x3ff;
  uint32_t sbit = (uint32_t)sign << 31;
  if (exp == 0x1f && !(*fpscr & VM_FPSCR_AHP)) {
    if (frac == 0)
      return inf_bits(sign);
    if (!(frac & 0x200))
      fp_raise(fpscr, VM_FPSCR_IOC);
    if (*fpscr & VM_FPSCR_DN)
      return DEFAULT_NAN;
    return sbit | 0x7fc00000u | (frac & 0x1ff) << 13;
  }
  if (exp == 0 && frac == 0) /* half inputs are never flushed */
    return sbit;
  uint64_t m = exp ? (frac | 0x400u) : frac;
  int e = exp ? (int)exp - 25 : -24;
  return fpround(sign, e, m, fpscr); /* always exact and normal */
}

uint32_t vm_fp32_round_int(uint32_t a, enum vm_fp_rmode rmode, bool exact, uint32_t *fpscr)
{
  struct unp u = unpack(a, fpscr);
  if (is_nan_type(u.type))
    return process_nan(u.type, a, fpscr);
  if (u.type == FT_INF)
    return inf_bits(u.sign);
  if (u.type == FT_ZERO)
    return (uint32_t)u.sign << 31;
  if (u.e >= 0) /* already an integer */
    return a;
  /* Integer part and the fraction as round/sticky bits (|value| < 2^24). */
  int sh = -u.e;
  uint64_t ip = sh >= 64 ? 0 : u.m >> sh;
  uint64_t frac = sh >= 64 ? u.m : u.m & ((1ull << sh) - 1);
  bool err = frac != 0;
  bool half = false, above = false;
  if (sh <= 63 && sh >= 1) {
    uint64_t h = 1ull << (sh - 1);
    half = frac == h;
    above = frac > h;
  }
  /* Round the magnitude; the directed modes depend on the sign. */
  bool up;
  switch (rmode) {
  case VM_FP_RN:
    up = above || (half && (ip & 1));
    break;
  case VM_FP_RA:
    up = above || half;
    break;
  case VM_FP_RP:
    up = err && !u.sign;
    break;
  case VM_FP_RM:
    up = err && u.sign;
    break;
  default:
    up = false;
    break;
  }
  ip += up;
  if (err && exact)
    fp_raise(fpscr, VM_FPSCR_IXC);
  if (ip == 0)
    return (uint32_t)u.sign << 31;
  uint32_t keep = *fpscr;
  uint32_t r = fpround(u.sign, 0, ip, fpscr);
  *fpscr = keep; /* an integer < 2^25 is exact: FPRound raises nothing */
  return r;
}

/* FPMax/FPMin after FPMaxNum/FPMinNum's quiet-NaN substitution. */
static uint32_t fp_maxmin(uint32_t a, uint32_t b, bool max, uint32_t *fpscr)
{
  struct unp u[2] = {unpack(a, fpscr), unpack(b, fpscr)};
  /* FPMaxNum/FPMinNum: a single quiet NaN is replaced by the infinity that
   * loses the comparison. */
  if (u[0].type == FT_QNAN && !is_nan_type(u[1].type)) {
    a = max ? 0xff800000u : 0x7f800000u;
    u[0] = unpack(a, fpscr);
  } else if (u[1].type == FT_QNAN && !is_nan_type(u[0].type)) {
    b = max ? 0xff800000u : 0x7f800000u;
    u[1] = unpack(b, fpscr);
  }
  uint32_t op[2] = {a, b}, r;
  if (process_nans3(u, op, 2, fpscr, &r))
    return r;
  int c = cmp_values(&u[0], &u[1]);
  const struct unp *w;
  if (u[0].type == FT_ZERO && u[1].type == FT_ZERO) {
    bool sign = max ? (u[0].sign && u[1].sign) : (u[0].sign || u[1].sign);
    return (uint32_t)sign << 31;
  }
  w = (max ? c > 0 : c < 0) ? &u[0] : &u[1];
  if (w->type == FT_INF)
    return inf_bits(w->sign);
  if (w->type == FT_ZERO)
    return (uint32_t)w->sign << 31;
  return fpround(w->sign, w->e, w->m, fpscr);
}

uint32_t vm_fp32_maxnum(uint32_t a, uint32_t b, uint32_t *fpscr)
{
  return fp_maxmin(a, b, true, fpscr);
}

uint32_t vm_fp32_minnum(uint32_t a, uint32_t b, uint32_t *fpscr)
{
  return fp_maxmin(a, b, false, fpscr);
}
