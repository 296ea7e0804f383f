/* MTBDWT: the "MTB Data Watchpoint and Trace" block that NXP Kinetis KL/KE/KW
 * and MCX Cortex-M0+ parts place next to the MTB-M0+ (0xF0001000 on Kinetis
 * KL, the MTB at 0xF0000000).
 *
 * Why it exists: the MTB-M0+ starts and stops tracing from two input signals,
 * TSTART and TSTOP (MTB-M0+ TRM DDI 0486B 3.3.2, MASTER.TSTARTEN/TSTOPEN:
 * "if this bit is 1 and the TSTART signal is HIGH, EN is set to 1"), but the
 * Cortex-M0+'s own DWT has no outputs to drive them. The chip drives them:
 * Kinetis/MCX with this block (KL25 Sub-Family Reference Manual ch. 19
 * "MTB_DWT": two comparators on the processor's address/data buses, "two
 * signals formed by the MTB_DWT module and driven to the MTB_RAM controller:
 * TSTART and TSTOP"); others differently (LPC800: SYSCON EXTTRACECMD, a
 * software write; SAM D21: an event-system input), not modelled.
 *
 * Registers (offset, reset; NXP device headers' MTBDWT_Type and the RM):
 *   0x000 CTRL      RO  0x2F000000  NUMCMP[31:28] = 2, DWTCFGCTRL[27:0]
 *   0x020 COMP0     RW  0           reference address (or data value)
 *   0x024 MASK0     RW  0           MASK[4:0]: low address bits ignored
 *   0x028 FCT0      RW  0           FUNCTION[3:0], DATAVMATCH[8],
 *                                   DATAVSIZE[11:10], DATAVADDR0[15:12],
 *                                   MATCHED[24] (RO, cleared by a read)
 *   0x030/34/38     COMP1, MASK1, FCT1 (FUNCTION, MATCHED)
 *   0x200 TBCTRL    RW  0x20000000  NUMCOMP[31:28] = 2 (RO), ACOMP1[1],
 *                                   ACOMP0[0]: a match of comparator n
 *                                   pulses TSTART (1) or TSTOP (0)
 *   0xFC8 DEVICECFG 0; 0xFCC DEVICETYPID 0x4 (debug control)
 *   0xFD0.. PIDR4..7, PIDR0..3, CIDR0..3: Freescale (JEP106 0x0E, bank 0),
 *           part 0x000, CoreSight class 0x9 (as debuggers' component tables
 *           list it: PIDR 0x00008E000)
 *
 * FUNCTION 4 (instruction fetch) is modelled as a match on the address of
 * an executed instruction: (pc & ~(2^MASK - 1)) == (COMP & ~(2^MASK - 1)),
 * checked as the instruction retires (dbg_mtb.c, mtb_retire_slow). On
 * silicon the block watches bus fetches (word-aligned, and ahead of a taken
 * branch); the VM's reading is the architectural one (docs/vm.md "MTB").
 * FUNCTION 5 (read), 6 (write), 7 (either) match a data transfer of an
 * instruction that touches a byte of [COMP, COMP + 2^MASK) (COMP & ~mask);
 * comparator 0 with DATAVMATCH compares the data instead: an access of the
 * FUNCTION's kind that covers the address of the linked comparator
 * (DATAVADDR0, i.e. comparator 1, its COMP and MASK), whose DATAVSIZE bytes
 * there equal COMP0's low bytes. Transfers come from the hooked executor's
 * log (vm_dbg_transfer: ARMv6-M has no DWT, so vm->dbg_observe carries
 * them), before the instruction retires: a start there traces the
 * instruction's own branch (a POP {pc}), a stop does not. Exception stacking
 * is not a transfer of an instruction and is not seen. */
#include <stdlib.h>

#include "vm_internal.h"

#define MTBDWT_CTRL_RESET 0x2F000000u
#define MTBDWT_NUMCOMP_FIELD (2u << 28)
#define FCT0_WRITABLE (0xFu | MTBDWT_FCT_DATAVMATCH | (3u << 10) | (0xFu << 12))
#define FCT1_WRITABLE 0xFu

bool vm_mtbdwt_armed(const struct vm_mtbdwt *w)
{
  for (unsigned c = 0; c < VM_MTBDWT_NUMCOMP; c++)
    if ((w->fct[c] & 0xFu) == MTBDWT_FN_IFETCH && !(w->fct[c] & MTBDWT_FCT_DATAVMATCH))
      return true;
  return false;
}

unsigned vm_mtbdwt_match(struct vm_mtbdwt *w, uint32_t pc)
{
  unsigned out = 0;
  for (unsigned c = 0; c < VM_MTBDWT_NUMCOMP; c++) {
    if ((w->fct[c] & 0xFu) != MTBDWT_FN_IFETCH || (w->fct[c] & MTBDWT_FCT_DATAVMATCH))
      continue;
    uint32_t msk = ~(uint32_t)((1ull << (w->mask[c] & 0x1Fu)) - 1);
    if ((pc & msk) != (w->comp[c] & msk))
      continue;
    w->fct[c] |= MTBDWT_FCT_MATCHED;
    out |= (w->tbctrl >> c) & 1u ? VM_MTB_TSTART : VM_MTB_TSTOP;
  }
  return out;
}

static bool data_fn(uint32_t fct, bool write)
{
  uint32_t f = fct & 0xFu;
  return f == 7 || (f == 6 && write) || (f == 5 && !write);
}

bool vm_mtbdwt_data_armed(const struct vm_mtbdwt *w)
{
  for (unsigned c = 0; c < VM_MTBDWT_NUMCOMP; c++) {
    uint32_t f = w->fct[c] & 0xFu;
    if (f >= 5 && f <= 7)
      return true;
  }
  return false;
}

/* Does the access [addr, addr+size) touch comparator c's range? */
static bool addr_hits(const struct vm_mtbdwt *w, unsigned c, uint32_t addr, unsigned size)
{
  unsigned mk = w->mask[c] & 0x1Fu;
  uint64_t lo = w->comp[c] & ~(uint32_t)((1ull << mk) - 1), hi = lo + (1ull << mk);
  return addr < hi && (uint64_t)addr + size > lo;
}

void vm_mtbdwt_transfer(struct sonde_vm *vm, uint32_t addr, unsigned size, uint32_t value,
                        bool write)
{
  struct vm_mtbdwt *w = vm->mtb->dwt;
  unsigned sig = 0;
  for (unsigned c = 0; c < VM_MTBDWT_NUMCOMP; c++) {
    uint32_t fct = w->fct[c];
    if (!data_fn(fct, write))
      continue;
    if (c == 0 && (fct & MTBDWT_FCT_DATAVMATCH)) {
      unsigned link = (fct >> 12) & 0xFu, vsize = 1u << ((fct >> 10) & 3u);
      if (link != 1 || vsize > 4 || !addr_hits(w, 1, addr, size))
        continue;
      uint32_t at = w->comp[1] & ~(vsize - 1); /* the value's lane inside the access */
      if (at < addr || at + vsize > addr + size)
        continue;
      uint32_t lane = value >> (8 * (at - addr));
      uint32_t vmask = vsize == 4 ? 0xFFFFFFFFu : (1u << (8 * vsize)) - 1;
      if ((lane & vmask) != (w->comp[0] & vmask))
        continue;
    } else if (!addr_hits(w, c, addr, size)) {
      continue;
    }
    w->fct[c] |= MTBDWT_FCT_MATCHED;
    sig |= (w->tbctrl >> c) & 1u ? VM_MTB_TSTART : VM_MTB_TSTOP;
  }
  if (sig)
    vm_mtb_trigger(vm, sig);
}

/* Peripheral and component ID registers (ADIv5.2 D1). */
static uint32_t mtbdwt_id(uint32_t off)
{
  switch (off) {
  case 0xFE4: return 0xE0; /* PIDR1: part[11:8] 0, JEP106 ID[3:0] = 0xE */
  case 0xFE8: return 0x08; /* PIDR2: JEDEC, JEP106 ID[6:4] = 0, revision 0 */
  case 0xFF0: return 0x0D;
  case 0xFF4: return 0x90; /* CIDR1: class 0x9, CoreSight component */
  case 0xFF8: return 0x05;
  case 0xFFC: return 0xB1;
  default: return 0;       /* PIDR0 part[7:0] 0, PIDR3, PIDR4..7 */
  }
}

static int mtbdwt_read(void *ctx, struct sonde_vm *vm, uint32_t offset, unsigned size,
                       uint32_t *value, bool debug)
{
  (void)vm;
  (void)debug;
  struct vm_mtbdwt *w = ctx;
  uint32_t off = offset & ~3u, v = 0;
  switch (off) {
  case 0x000: v = MTBDWT_CTRL_RESET; break;
  case 0x020: case 0x030: v = w->comp[(off - 0x20) / 16]; break;
  case 0x024: case 0x034: v = w->mask[(off - 0x24) / 16]; break;
  case 0x028: case 0x038: {
    unsigned c = (off - 0x28) / 16;
    v = w->fct[c];
    /* MATCHED clears on any read, a debugger's too (as the core DWT's) */
    w->fct[c] &= ~MTBDWT_FCT_MATCHED;
    break;
  }
  case 0x200: v = w->tbctrl | MTBDWT_NUMCOMP_FIELD; break;
  case 0xFCC: v = 0x4; break; /* DEVICETYPID */
  default: v = off >= 0xFD0 ? mtbdwt_id(off) : 0; break;
  }
  v >>= 8 * (offset & 3);
  *value = size == 4 ? v : v & ((1u << (8 * size)) - 1);
  return VM_BUS_OK;
}

static int mtbdwt_write(void *ctx, struct sonde_vm *vm, uint32_t offset, unsigned size,
                        uint32_t value, bool debug)
{
  (void)debug;
  struct vm_mtbdwt *w = ctx;
  if (size != 4 || (offset & 3))
    return VM_BUS_OK; /* word accesses only (RM: "use only 32-bit transactions") */
  switch (offset) {
  case 0x020: case 0x030: w->comp[(offset - 0x20) / 16] = value; break;
  case 0x024: case 0x034: w->mask[(offset - 0x24) / 16] = value & 0x1Fu; break;
  case 0x028:
    w->fct[0] = (w->fct[0] & MTBDWT_FCT_MATCHED) | (value & FCT0_WRITABLE);
    break;
  case 0x038:
    w->fct[1] = (w->fct[1] & MTBDWT_FCT_MATCHED) | (value & FCT1_WRITABLE);
    break;
  case 0x200: w->tbctrl = value & 3u; break;
  default: return VM_BUS_OK; /* CTRL and the ID registers are read-only */
  }
  vm_mtb_update_observe(vm); /* an armed comparator needs every instruction */
  return VM_BUS_OK;
}

static const struct vm_device_ops mtbdwt_ops = {"mtbdwt", mtbdwt_read, mtbdwt_write};

int vm_mtbdwt_create(struct sonde_vm *vm, uint32_t base)
{
  struct vm_mtbdwt *w = calloc(1, sizeof *w);
  if (!w)
    return SONDE_E_NOMEM;
  w->regs_base = base;
  int rc = vm_bus_add_device(&vm->bus, base, 0x1000, &mtbdwt_ops, w);
  if (rc < 0) {
    free(w);
    return rc;
  }
  vm->mtb->dwt = w;
  return 0;
}
