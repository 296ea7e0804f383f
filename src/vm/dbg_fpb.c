/* Flash Patch and Breakpoint unit at 0xE0002000 (breakpoints only; flash
 * patch remapping is not implemented: FP_REMAP.RMPSPT reads 0, so debuggers
 * and firmware see that remapping is unsupported, and literal comparators
 * hold their value without effect).
 * ARMv7-M ARM C1.11 (FP_CTRL, FP_REMAP, FP_COMPn version 1: COMP[28:2],
 * REPLACE[31:30], ENABLE); ARMv6-M ARM C1.8 (BPU, same layout, 4 comparators
 * on the Cortex-M0+); ARMv8-M ARM D1.2 (FPB version 2: FP_COMPn BPADDR[31:1],
 * BE, FP_CTRL.REV = 1), used on the M33.
 *
 * A match is a breakpoint debug event before the instruction executes
 * (vm_dbgh_breakpoint): the comparator addresses are looked up when the CPU
 * decodes an instruction into its decode cache, and every change here flushes
 * that cache. Comparators apply to the Code region (0x00000000-0x1FFFFFFF)
 * only, as on silicon with FPB version 1. */
#include "dbg_halt.h"
#include "vm_internal.h"

#define FPB_BASE 0xE0002000u
#define FPB_SIZE 0x1000u

static unsigned ncomp(const struct vm_dbgh *d)
{
  return d->fp_ncode + d->fp_nlit;
}

/* The (up to two) halfword addresses comparator i breaks on; returns how many. */
static unsigned comp_addrs(const struct vm_dbgh *d, unsigned i, uint32_t out[2])
{
  uint32_t c = d->fp_comp[i];
  if (!d->fp_enable || i >= d->fp_ncode)
    return 0;
  if (d->fp_v2) {
    if (!(c & 1))
      return 0;
    out[0] = c & ~1u;
    return 1;
  }
  if (!(c & 1))
    return 0;
  uint32_t base = c & 0x1FFFFFFCu;
  switch (c >> 30) {
  case 1: out[0] = base; return 1;
  case 2: out[0] = base + 2; return 1;
  case 3: out[0] = base; out[1] = base + 2; return 2;
  default: return 0; /* REPLACE = 0: remap, not a breakpoint */
  }
}

bool vm_dbgh_bp_match(const struct sonde_vm *vm, uint32_t pc)
{
  const struct vm_dbgh *d = vm->dbgh;
  if (!d || !d->nbp)
    return false;
  pc &= ~1u;
  for (unsigned i = 0; i < d->nhost_bp; i++)
    if (d->host_bp[i] == pc)
      return true;
  for (unsigned i = 0; i < d->fp_ncode; i++) {
    uint32_t a[2];
    unsigned n = comp_addrs(d, i, a);
    for (unsigned k = 0; k < n; k++)
      if (a[k] == pc)
        return true;
  }
  return false;
}

void vm_dbgh_bp_changed(struct sonde_vm *vm)
{
  struct vm_dbgh *d = vm->dbgh;
  unsigned n = d->nhost_bp;
  for (unsigned i = 0; i < d->fp_ncode; i++) {
    uint32_t a[2];
    n += comp_addrs(d, i, a);
  }
  d->nbp = n;
  vm_cpu_flush_decode_cache(vm); /* decodes carry the breakpoints */
}

static uint32_t fp_ctrl(const struct vm_dbgh *d)
{
  uint32_t v = d->fp_enable ? 1u : 0u;
  v |= (d->fp_ncode & 0xF) << 4 | (d->fp_nlit & 0xF) << 8 | ((d->fp_ncode >> 4) & 7) << 12;
  if (d->fp_v2)
    v |= 1u << 28; /* REV = 1: FPB version 2 */
  return v;
}

static int fpb_read(void *ctx, struct sonde_vm *vm, uint32_t offset, unsigned size,
                    uint32_t *value, bool debug)
{
  (void)ctx;
  (void)debug;
  const struct vm_dbgh *d = vm->dbgh;
  uint32_t w = offset & ~3u, v = 0;
  if (w == 0)
    v = fp_ctrl(d);
  else if (w >= 8 && (w - 8) / 4 < ncomp(d))
    v = d->fp_comp[(w - 8) / 4];
  else if (w == 0xFD0) /* PIDR4: ARM's JEP106 continuation code */
    v = 0x04;
  else if (w == 0xFE0) /* PIDR0..3, CIDR0..3: the FPB's CoreSight identity */
    v = 0x03;
  else if (w == 0xFE4)
    v = 0xB0;
  else if (w == 0xFE8)
    v = 0x0B;
  else if (w == 0xFF0)
    v = 0x0D;
  else if (w == 0xFF4)
    v = 0xE0;
  else if (w == 0xFF8)
    v = 0x05;
  else if (w == 0xFFC)
    v = 0xB1;
  v >>= 8 * (offset & 3);
  *value = size == 4 ? v : v & ((1u << (8 * size)) - 1);
  return VM_BUS_OK;
}

static int fpb_write(void *ctx, struct sonde_vm *vm, uint32_t offset, unsigned size,
                     uint32_t value, bool debug)
{
  (void)ctx;
  (void)debug;
  struct vm_dbgh *d = vm->dbgh;
  uint32_t w = offset & ~3u;
  if (size != 4)
    return VM_BUS_OK; /* word access only */
  if (w == 0) {
    if (value & 2) /* KEY must be 1 for the write to take effect */
      d->fp_enable = value & 1;
    else
      return VM_BUS_OK;
  } else if (w >= 8 && (w - 8) / 4 < ncomp(d)) {
    d->fp_comp[(w - 8) / 4] = d->fp_v2 ? value : value & 0xDFFFFFFDu;
  } else {
    return VM_BUS_OK; /* FP_REMAP and the rest: WI */
  }
  vm_dbgh_bp_changed(vm);
  return VM_BUS_OK;
}

static const struct vm_device_ops fpb_ops = {"fpb", fpb_read, fpb_write};

int vm_fpb_init(struct sonde_vm *vm)
{
  struct vm_dbgh *d = vm->dbgh;
  switch (vm->core) {
  case SONDE_VM_CORE_M0PLUS: d->fp_ncode = 4; d->fp_nlit = 0; break;
  case SONDE_VM_CORE_M33: d->fp_ncode = 8; d->fp_nlit = 0; d->fp_v2 = true; break;
  default: d->fp_ncode = 6; d->fp_nlit = 2; break; /* Cortex-M3/M4 */
  }
  return vm_bus_add_device(&vm->bus, FPB_BASE, FPB_SIZE, &fpb_ops, NULL);
}

int vm_dbgh_fpb_bp(struct sonde_vm *vm, uint32_t addr, bool insert)
{
  struct vm_dbgh *d = vm->dbgh;
  addr &= ~1u;
  if (!d->fp_v2 && addr >= 0x20000000u)
    return SONDE_E_RANGE; /* FPB v1 covers the Code region only */
  uint32_t want = d->fp_v2 ? (addr | 1)
                           : ((addr & 0x1FFFFFFCu) | ((addr & 2) ? 2u << 30 : 1u << 30) | 1);
  int freei = -1;
  for (unsigned i = 0; i < d->fp_ncode; i++) {
    if (d->fp_comp[i] == want) {
      if (!insert) {
        d->fp_comp[i] = 0;
        vm_dbgh_bp_changed(vm);
      }
      return 0;
    }
    if (!(d->fp_comp[i] & 1) && freei < 0)
      freei = (int)i;
  }
  if (!insert)
    return 0;
  if (freei < 0)
    return SONDE_E_RANGE;
  d->fp_comp[freei] = want;
  d->fp_enable = true; /* as a debugger does: FP_CTRL = KEY | ENABLE */
  vm_dbgh_bp_changed(vm);
  return 0;
}
