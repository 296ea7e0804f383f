/* Floating point: single precision (FPv4 instructions on the M4F build, the
 * soft-float library elsewhere) and double (always the library): + - * /,
 * sqrt, conversions, comparisons, special values. Results are printed as bit
 * patterns, since every operation used is correctly rounded by IEEE 754. */
#include <math.h>

#include "fwtest.h"

static uint32_t fbits(float f)
{
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

static uint64_t dbits(double d)
{
  uint64_t u;
  memcpy(&u, &d, 8);
  return u;
}

int main(void)
{
  uint32_t s = 42;
  uint32_t fh = 0;
  uint64_t dh = 0;
  for (int i = 0; i < 200; i++) {
    float x = (float)(int32_t)fw_rand(&s) / (float)(fw_rand(&s) % 1000 + 1);
    float y = (float)(fw_rand(&s) % 100000) * 0.001f - 50.0f;
    float r[6] = {x + y, x - y, x * y, y != 0.0f ? x / y : 0.0f, sqrtf(fabsf(x)),
                  (float)(int32_t)(y * 1000.0f)};
    for (int k = 0; k < 6; k++)
      fh = (fh ^ fbits(r[k])) * 16777619u;
    double dx = (double)x * 1.0000001, dy = (double)y - 0.25;
    double q[5] = {dx + dy, dx - dy, dx * dy, dy != 0.0 ? dx / dy : 0.0, sqrt(fabs(dx))};
    for (int k = 0; k < 5; k++)
      dh = (dh ^ dbits(q[k])) * 0x100000001B3ull;
    if (i % 50 == 0) {
      printf("f %08" PRIx32 " %08" PRIx32 " %08" PRIx32 " %08" PRIx32 " %08" PRIx32 "\n",
             fbits(r[0]), fbits(r[1]), fbits(r[2]), fbits(r[3]), fbits(r[4]));
      fw_print_u64("d", dbits(q[3]));
    }
  }
  printf("float digest %08" PRIx32 "\n", fh);
  fw_print_u64("double digest", dh);
  /* conversions and specials */
  volatile float big = 3.4e38f, tiny = 1e-40f, neg = -2.5f, half = 0.5f;
  printf("mul overflow %08" PRIx32 "\n", fbits(big * 10.0f));
  printf("denormal %08" PRIx32 " %08" PRIx32 "\n", fbits(tiny), fbits(tiny * half));
  printf("f2i %d %d %u\n", (int)neg, (int)(neg * half), (unsigned)(big > 1e9f ? 4e9f : 0.0f));
  printf("i2f %08" PRIx32 " %08" PRIx32 "\n", fbits((float)16777217), fbits((float)-123456789));
  volatile double dd = 1.0 / 3.0;
  printf("d2f %08" PRIx32 "\n", fbits((float)dd));
  fw_print_u64("f2d", dbits((double)FW_OPAQUE(neg)));
  printf("cmp %d %d %d\n", FW_OPAQUE(neg) < FW_OPAQUE(half), dd > 0.3333, FW_OPAQUE(tiny) == 0.0f);
  return 0;
}
