/* Micro Trace Buffer driver (see mtb.h). MTB-M0+ TRM 3.3: MASK gives a
 * buffer of 2^(MASK+4) bytes; POSITION.WRAP says the pointer has wrapped, in
 * which case the oldest packet is at POINTER, else at offset 0. */
#include "mtb.h"

/* Stop the MTB, clear a buffer of `size` bytes and rewind POSITION; MASK
 * for that size, or -1 when it is not a power of two >= 16. */
static int mtb_prepare(size_t size)
{
  if (size < 16 || (size & (size - 1)))
    return -1;
  int mask = 0;
  while ((16u << mask) < size)
    mask++;
  mtb_disable(); /* reconfigure while stopped */
  volatile uint32_t *buf = (volatile uint32_t *)MTB->BASE;
  for (size_t i = 0; i < size / 4; i++)
    buf[i] = 0;
  MTB->POSITION = 0;
  return mask;
}

int mtb_enable(size_t size, uint32_t watermark, uint32_t flow_bits)
{
  int mask = mtb_prepare(size);
  if (mask < 0)
    return -1;
  MTB->FLOW = watermark ? ((watermark & ~7u) | (flow_bits & 3u)) : 0;
  MTB->MASTER = MTB_MASTER_EN | (uint32_t)mask;
  return 0;
}

void mtb_disable(void)
{
  MTB->MASTER &= ~(MTB_MASTER_EN | MTB_MASTER_TSTARTEN);
}

/* TSTART/TSTOP sources: ARMv8-M core DWT (ARMv8-M ARM C1.3 DWT_COMPn,
 * DWT_FUNCTIONn MATCH = 0b0010 instruction address, ACTION 0b00 trigger
 * only; the MTB's TSTART/TSTOP registers select the comparators), ARMv6-M
 * the chip's MTBDWT (FCTn FUNCTION 4 instruction fetch, TBCTRL.ACOMPn). */
int mtb_enable_window(size_t size, uint32_t start_pc, uint32_t stop_pc)
{
  int mask = mtb_prepare(size);
  if (mask < 0)
    return -1;
  MTB->FLOW = 0;
#if defined(__ARM_ARCH_8M_MAIN__) || defined(__ARM_ARCH_8M_BASE__)
  volatile uint32_t *const demcr = (volatile uint32_t *)0xE000EDFCu;
  volatile uint32_t *const dwt = (volatile uint32_t *)0xE0001000u;
  *demcr |= 1u << 24; /* TRCENA: the DWT runs */
  dwt[0x20 / 4] = start_pc & ~1u; /* COMP0 */
  dwt[0x28 / 4] = 2u;             /* FUNCTION0: instruction address, trigger only */
  dwt[0x30 / 4] = stop_pc & ~1u;  /* COMP1 */
  dwt[0x38 / 4] = stop_pc ? 2u : 0u;
  MTB->TSTART = 1u << 0;
  MTB->TSTOP = stop_pc ? 1u << 1 : 0u;
#else
  MTBDWT->CMP[0].COMP = start_pc & ~1u;
  MTBDWT->CMP[0].MASK = 0;
  MTBDWT->CMP[0].FCT = MTBDWT_FCT_IFETCH;
  MTBDWT->CMP[1].COMP = stop_pc & ~1u;
  MTBDWT->CMP[1].MASK = 0;
  MTBDWT->CMP[1].FCT = stop_pc ? MTBDWT_FCT_IFETCH : 0u;
  MTBDWT->TBCTRL = 1u << 0; /* ACOMP0: comparator 0 pulses TSTART, 1 TSTOP */
#endif
  MTB->MASTER = MTB_MASTER_TSTARTEN | (stop_pc ? MTB_MASTER_TSTOPEN : 0u) | (uint32_t)mask;
  /* EN stays clear until the start */
  return 0;
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

/* Post-mortem bundle (mtb.h, docs/formats.md). Written word by word with
 * volatile reads of the buffer, no library calls. */
static uint32_t crc32_word(uint32_t crc, uint32_t w)
{
  for (int i = 0; i < 4; i++) {
    crc ^= (w >> (8 * i)) & 0xFFu;
    for (int k = 0; k < 8; k++)
      crc = (crc & 1u) ? 0xEDB88320u ^ (crc >> 1) : crc >> 1;
  }
  return crc;
}

mtb_fault_regs_t mtb_fault_regs;
volatile uint32_t *const mtb_master_reg = &MTB->MASTER;

/* The linker script's symbol at the start of `.note.gnu.build-id`; weak, so
 * an image linked without it still links (the address is then 0). */
extern const uint32_t __build_id_note[] __attribute__((weak));

const uint8_t *mtb_build_id(unsigned *len)
{
  const uint32_t *n = __build_id_note;
  /* Elf32_Nhdr: namesz 4, descsz, type NT_GNU_BUILD_ID (3), "GNU\0", desc. */
  if (!n || n[0] != 4u || n[1] == 0u || n[1] > 64u || n[2] != 3u || n[3] != 0x00554E47u)
    return 0;
  if (len)
    *len = n[1];
  return (const uint8_t *)&n[4];
}

size_t mtb_bundle_write(void *out, size_t cap, const uint32_t *frame, uint32_t exc_return,
                        const mtb_fault_regs_t *regs, size_t stack_bytes)
{
  mtb_disable();
  uint32_t *o = (uint32_t *)out;
  uint32_t size = 16u << (MTB->MASTER & 0x1Fu);
  if (cap < MTB_BUNDLE_SIZE(size, 0))
    return 0;
  stack_bytes &= ~(size_t)3;
  if (MTB_BUNDLE_SIZE(size, stack_bytes) > cap)
    stack_bytes = (cap - MTB_BUNDLE_SIZE(size, 0)) & ~(size_t)3;
  uint32_t total = MTB_BUNDLE_SIZE(size, stack_bytes);
  uint32_t ipsr, control;
  __asm__ volatile("mrs %0, ipsr" : "=r"(ipsr));
  __asm__ volatile("mrs %0, control" : "=r"(control));
  for (unsigned i = 0; i < MTB_BUNDLE_HEADER / 4; i++)
    o[i] = 0;
  o[0] = 0x42544D53u; /* "SMTB" */
  o[1] = MTB_BUNDLE_VERSION | (MTB_BUNDLE_HEADER << 16);
  o[2] = total;
#if defined(__ARM_ARCH_8M_MAIN__)
  o[3] = 8;
#else
  o[3] = 6;
#endif
  o[4] = MTB->POSITION;
  o[5] = MTB->MASTER;
  o[6] = MTB->FLOW;
  o[7] = MTB->BASE;
  o[8] = size;
  o[9] = (uint32_t)stack_bytes;
  o[10] = (uint32_t)(uintptr_t)frame;
  o[11] = exc_return;
  for (unsigned i = 0; i < 8; i++)
    o[12 + i] = frame[i];
#if defined(__ARM_ARCH_8M_MAIN__) || defined(__ARM_ARCH_7M__) || defined(__ARM_ARCH_7EM__)
  o[20] = *(volatile uint32_t *)0xE000ED28u; /* CFSR */
  o[21] = *(volatile uint32_t *)0xE000ED2Cu; /* HFSR */
  o[22] = *(volatile uint32_t *)0xE000ED34u; /* MMFAR */
  o[23] = *(volatile uint32_t *)0xE000ED38u; /* BFAR */
  o[24] = *(volatile uint32_t *)0xE000ED24u; /* SHCSR */
#endif
  o[25] = ipsr & 0x1FFu;
  unsigned id_len = 0;
  const uint8_t *id = mtb_build_id(&id_len);
  if (id) {
    if (id_len > 20)
      id_len = 20;
    uint8_t *dst = (uint8_t *)&o[26];
    for (unsigned i = 0; i < id_len; i++)
      dst[i] = id[i];
  }
  uint32_t flags = regs ? regs->flags & 7u : 0;
  o[31] = flags | (uint32_t)(id ? id_len : 0) << 8;
  if (flags & MTB_REGS_CORE) {
    for (unsigned i = 0; i < 8; i++)
      o[32 + i] = regs->r4_r11[i];
    o[40] = regs->msp;
    o[41] = regs->psp;
  }
  o[42] = control;
  if (flags & MTB_REGS_SPLIM) {
    o[43] = regs->msplim;
    o[44] = regs->psplim;
  }
  if (flags & MTB_REGS_FPU) {
    o[45] = regs->fpscr;
    for (unsigned i = 0; i < 32; i++)
      o[46 + i] = regs->s[i];
  }
  const volatile uint32_t *buf = (const volatile uint32_t *)MTB->BASE;
  for (uint32_t i = 0; i < size / 4; i++)
    o[MTB_BUNDLE_HEADER / 4 + i] = buf[i];
  for (uint32_t i = 0; i < stack_bytes / 4; i++)
    o[(MTB_BUNDLE_HEADER + size) / 4 + i] = frame[i];
  uint32_t crc = 0xFFFFFFFFu;
  for (uint32_t i = 0; i < (total - 4) / 4; i++)
    crc = crc32_word(crc, o[i]);
  o[(total - 4) / 4] = ~crc;
  return total;
}

size_t mtb_bundle_check(const void *buf, size_t cap)
{
  const uint32_t *o = (const uint32_t *)buf;
  if (cap < MTB_BUNDLE_HEADER + 4 || o[0] != 0x42544D53u ||
      o[1] != (MTB_BUNDLE_VERSION | (MTB_BUNDLE_HEADER << 16)))
    return 0;
  uint32_t total = o[2];
  if (total < MTB_BUNDLE_HEADER + 4 || total > cap || (total & 3u))
    return 0;
  uint32_t crc = 0xFFFFFFFFu;
  for (uint32_t i = 0; i < (total - 4) / 4; i++)
    crc = crc32_word(crc, o[i]);
  return ~crc == o[(total - 4) / 4] ? total : 0;
}

size_t mtb_bundle_send(void *buf, size_t cap, void (*send)(const void *data, size_t len, void *ctx),
                       void *ctx)
{
  size_t n = mtb_bundle_check(buf, cap);
  if (!n)
    return 0;
  send(buf, n, ctx);
  ((volatile uint32_t *)buf)[0] = 0; /* sent: not reported again */
  return n;
}
