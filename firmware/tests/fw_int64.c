/* 64-bit integer arithmetic (on Cortex-M: the compiler's long-long helpers,
 * __aeabi_lmul/ldivmod/uldivmod/llsl/llsr/lasr) and 32-bit divide, multiply
 * long (UMULL/SMULL/UMLAL) on generated operands. */
#include "fwtest.h"

int main(void)
{
  uint32_t s = 0xC0FFEE;
  uint64_t acc = 0;
  for (int i = 0; i < 64; i++) {
    uint64_t x = (uint64_t)fw_rand(&s) << 32 | fw_rand(&s);
    uint64_t y = (uint64_t)fw_rand(&s) << (fw_rand(&s) % 32) | fw_rand(&s);
    int64_t sx = (int64_t)x, sy = (int64_t)(y | 1) >> (i % 40);
    if (sy == 0 || sy == -1) /* no division by zero, no INT64_MIN / -1 */
      sy = 7;
    unsigned sh = fw_rand(&s) % 64;
    uint64_t r[8] = {
        x * y, x / (y ? y : 1), x % (y ? y : 1), (uint64_t)(sx / sy), (uint64_t)(sx % sy),
        x << sh, x >> sh, (uint64_t)(sx >> sh),
    };
    for (int k = 0; k < 8; k++)
      acc = (acc ^ r[k]) * 0x100000001B3ull;
    if (i % 16 == 0) {
      fw_print_u64("mul", r[0]);
      fw_print_u64("udiv", r[1]);
      fw_print_u64("umod", r[2]);
      fw_print_u64("sdiv", r[3]);
      fw_print_u64("smod", r[4]);
      fw_print_u64("shifts", r[5] ^ r[6] ^ r[7]);
    }
  }
  fw_print_u64("acc", acc);
  /* 32x32->64 multiplies and 32-bit divide by operand size */
  uint32_t a = 0xFFFFFFFFu, b = 0xFFFFFFFEu;
  int32_t c = -123456789, d = 98765;
  fw_print_u64("umull", (uint64_t)FW_OPAQUE(a) * FW_OPAQUE(b));
  fw_print_u64("smull", (uint64_t)((int64_t)FW_OPAQUE(c) * FW_OPAQUE(d)));
  fw_print_u64("umlal", (uint64_t)FW_OPAQUE(a) * FW_OPAQUE(b) + acc);
  printf("udiv32 %" PRIu32 " %" PRIu32 "\n", FW_OPAQUE(a) / 7u, FW_OPAQUE(b) % 1000u);
  printf("sdiv32 %" PRId32 " %" PRId32 "\n", FW_OPAQUE(c) / FW_OPAQUE(d), FW_OPAQUE(c) % 1000);
  int64_t min = INT64_MIN, m3 = -3;
  fw_print_u64("minneg", (uint64_t)(FW_OPAQUE(min) / 2));
  fw_print_u64("mindiv", (uint64_t)(FW_OPAQUE(min) / FW_OPAQUE(m3)));
  return 0;
}
