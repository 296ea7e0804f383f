/* Micro Trace Buffer driver (see mtb.h). MTB-M0+ TRM 3.3: MASK gives a
 * buffer of 2^(MASK+4) bytes; POSITION.WRAP says the pointer has wrapped, in
 * which case the oldest packet is at POINTER, else at offset 0. */
#include "mtb.h"

int mtb_enable(size_t size, uint32_t watermark, uint32_t flow_bits)
{
  if (size < 16 || (size & (size - 1)))
    return -1;
  unsigned mask = 0;
  while ((16u << mask) < size)
    mask++;
  mtb_disable(); /* reconfigure while stopped */
  volatile uint32_t *buf = (volatile uint32_t *)MTB->BASE;
  for (size_t i = 0; i < size / 4; i++)
    buf[i] = 0;
  MTB->POSITION = 0;
  MTB->FLOW = watermark ? ((watermark & ~7u) | (flow_bits & 3u)) : 0;
  MTB->MASTER = MTB_MASTER_EN | mask;
  return 0;
}

void mtb_disable(void)
{
  MTB->MASTER &= ~MTB_MASTER_EN;
}

size_t mtb_read(uint32_t *out, size_t max)
{
  uint32_t pos = MTB->POSITION;
  uint32_t size = 16u << (MTB->MASTER & 0x1Fu);
  uint32_t ptr = pos & ~7u & (size - 1);
  uint32_t first = (pos & MTB_POSITION_WRAP) ? ptr : 0;
  uint32_t bytes = (pos & MTB_POSITION_WRAP) ? size : ptr;
  const volatile uint32_t *buf = (const volatile uint32_t *)MTB->BASE;
  size_t n = 0;
  for (uint32_t off = 0; off < bytes && n < max; off += 8, n++) {
    uint32_t at = (first + off) & (size - 1);
    out[2 * n] = buf[at / 4];
    out[2 * n + 1] = buf[at / 4 + 1];
  }
  return n;
}
