/* Per ITM header byte, what the x86-64 sw32 loop (src/itm/itm.c, sw_walk)
 * takes from a table: it decodes only 4-byte instrumentation writes
 * (AAAAA011) and LTS1 with one payload byte (11TC0000), and has already
 * checked that the packet at each position it visits is one of them.
 * Derived from the packet formats as itm_fast.h (checked against it entry
 * by entry by tests/itm/test_itm.c); other headers are all zero.
 *   meta  port | type << 16 | size << 24 | flags << 32, as itm_fast.h's
 *         (for an LTS1 with its size, 1, ORed in)
 *   pm    pext mask over the packet's bytes giving `value`
 *   dm    all ones for an LTS1 (the value is the time delta), else 0 */
#ifndef SONDE_ITM_SW_H
#define SONDE_ITM_SW_H

#include <stdint.h>

#include "sonde/itm.h"

#define ITM_SW_W(h) (((h) & 7) == 3)
#define ITM_SW_L(h) (((h) & 0xcf) == 0xc0)
#define ITM_SW_META(h)                                                                             \
  (ITM_SW_W(h)   ? (uint64_t)SONDE_ITM_SW << 16 | 4ull << 24 | (uint64_t)(h) >> 3                  \
   : ITM_SW_L(h) ? (uint64_t)SONDE_ITM_LTS << 16 | 1ull << 24 | (uint64_t)((h) >> 4 & 3) << 32      \
                 : 0)
#define ITM_SW_PM(h) (ITM_SW_W(h) ? 0xffffffff00ull : ITM_SW_L(h) ? 0x7f00ull : 0)
#define ITM_SW_DM(h) (ITM_SW_L(h) ? ~0ull : 0)
#define ITM_SW_E4(f, h) f(h), f((h) + 1), f((h) + 2), f((h) + 3)
#define ITM_SW_E16(f, h) ITM_SW_E4(f, h), ITM_SW_E4(f, (h) + 4), ITM_SW_E4(f, (h) + 8), ITM_SW_E4(f, (h) + 12)
#define ITM_SW_E64(f, h)                                                                           \
  ITM_SW_E16(f, h), ITM_SW_E16(f, (h) + 16), ITM_SW_E16(f, (h) + 32), ITM_SW_E16(f, (h) + 48)
#define ITM_SW_E256(f) ITM_SW_E64(f, 0u), ITM_SW_E64(f, 64u), ITM_SW_E64(f, 128u), ITM_SW_E64(f, 192u)

/* meta at [h], pm at [ITM_SW_PM0 + h], dm at [ITM_SW_DM0 + h]: one array,
 * so that one base register and the header index address all three */
enum { ITM_SW_PM0 = 256, ITM_SW_DM0 = 512 };
static const uint64_t itm_sw_table[768] = {ITM_SW_E256(ITM_SW_META), ITM_SW_E256(ITM_SW_PM),
                                           ITM_SW_E256(ITM_SW_DM)};

#undef ITM_SW_E256
#undef ITM_SW_E64
#undef ITM_SW_E16
#undef ITM_SW_E4
#undef ITM_SW_DM
#undef ITM_SW_PM
#undef ITM_SW_META
#undef ITM_SW_L
#undef ITM_SW_W

#endif
