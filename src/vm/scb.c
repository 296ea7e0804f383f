/* The System Control Space at 0xE000E000 as a bus device, and the System
 * Control Block registers in it: CPUID, ICSR, VTOR, AIRCR, SCR, CCR, SHPR1-3,
 * SHCSR, CFSR/HFSR/DFSR/MMFAR/BFAR/AFSR, CPACR, FPCCR/FPCAR/FPDSCR, ACTLR.
 * ARMv7-M ARM B3.2 (SCS, SCB), B3.2.2 table B3-4; ARMv6-M ARM B3.2;
 * ARMv7-M ARM B3.2.20 (FP registers). NVIC and SysTick registers are in
 * nvic.c and systick.c. Unimplemented SCS registers read as zero and ignore
 * writes (no MPU: MPU_TYPE reads 0). */
#include "nvic.h"
#include "vm_internal.h"

#define SCS_BASE 0xE000E000u
#define SCS_SIZE 0x1000u
#define VECTKEY 0x05FAu

static uint32_t shcsr_read(const struct sonde_vm *vm)
{
  const struct vm_sys *s = &vm->sys;
  uint32_t v = s->shcsr & (7u << 16); /* MEMFAULTENA, BUSFAULTENA, USGFAULTENA */
  static const struct { unsigned exc, active_bit, pending_bit; } map[] = {
    {VM_EXC_MEMMANAGE, 0, 13}, {VM_EXC_BUSFAULT, 1, 14}, {VM_EXC_USAGEFAULT, 3, 12},
    {VM_EXC_SVCALL, 7, 15}, {VM_EXC_DEBUGMONITOR, 8, 99}, {VM_EXC_PENDSV, 10, 99},
    {VM_EXC_SYSTICK, 11, 99},
  };
  for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
    if (vm_nvic_is_active(vm, map[i].exc))
      v |= 1u << map[i].active_bit;
    if (map[i].pending_bit < 32 && vm_nvic_is_pending(vm, map[i].exc))
      v |= 1u << map[i].pending_bit;
  }
  if (!vm->has_v7m) /* ARMv6-M: only SVCALLPENDED */
    v &= 1u << 15;
  return v;
}

static void shcsr_write(struct sonde_vm *vm, uint32_t v)
{
  struct vm_sys *s = &vm->sys;
  if (!vm->has_v7m) {
    vm_nvic_set_pending(vm, VM_EXC_SVCALL, (v >> 15) & 1);
    return;
  }
  s->shcsr = v & (7u << 16);
  vm_sys_nvic_changed(s); /* the fault enables */
  static const struct { unsigned exc, active_bit, pending_bit; } map[] = {
    {VM_EXC_MEMMANAGE, 0, 13}, {VM_EXC_BUSFAULT, 1, 14}, {VM_EXC_USAGEFAULT, 3, 12},
    {VM_EXC_SVCALL, 7, 15}, {VM_EXC_PENDSV, 10, 99}, {VM_EXC_SYSTICK, 11, 99},
  };
  for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
    vm_nvic_set_active(vm, map[i].exc, (v >> map[i].active_bit) & 1);
    if (map[i].pending_bit < 32)
      vm_nvic_set_pending(vm, map[i].exc, (v >> map[i].pending_bit) & 1);
  }
}

static uint32_t icsr_read(struct sonde_vm *vm)
{
  const struct vm_sys *s = &vm->sys;
  uint32_t v = vm->cpu.ipsr & 0x1FF; /* VECTACTIVE */
  /* RETTOBASE: in a handler with no other active exception. */
  if (vm->cpu.ipsr && s->nactive <= 1 && vm->has_v7m)
    v |= 1u << 11;
  unsigned pend = vm_nvic_highest_pending(vm, NULL);
  v |= (pend & 0x1FF) << 12; /* VECTPENDING */
  for (unsigned w = 0; w <= VM_MAX_EXC / 32; w++) {
    uint32_t bits = s->nvic_pending[w];
    if (w == 0)
      bits &= 0xFFFF0000u;
    if (bits) {
      v |= 1u << 22; /* ISRPENDING */
      break;
    }
  }
  if (vm_nvic_is_pending(vm, VM_EXC_SYSTICK))
    v |= 1u << 26;
  if (vm_nvic_is_pending(vm, VM_EXC_PENDSV))
    v |= 1u << 28;
  if (vm_nvic_is_pending(vm, VM_EXC_NMI))
    v |= 1u << 31;
  return v;
}

static void icsr_write(struct sonde_vm *vm, uint32_t v)
{
  if (v & (1u << 31))
    vm_nvic_set_pending(vm, VM_EXC_NMI, true);
  if (v & (1u << 28))
    vm_nvic_set_pending(vm, VM_EXC_PENDSV, true);
  else if (v & (1u << 27))
    vm_nvic_set_pending(vm, VM_EXC_PENDSV, false);
  if (v & (1u << 26))
    vm_nvic_set_pending(vm, VM_EXC_SYSTICK, true);
  else if (v & (1u << 25))
    vm_nvic_set_pending(vm, VM_EXC_SYSTICK, false);
}

static void aircr_write(struct sonde_vm *vm, uint32_t v)
{
  struct vm_sys *s = &vm->sys;
  if ((v >> 16) != VECTKEY)
    return; /* writes without the key are ignored */
  if (vm->has_v7m) {
    s->aircr = v & (7u << 8); /* PRIGROUP */
    vm_nvic_prigroup_changed(vm);
  }
  if ((v & (1u << 2)) || (vm->has_v7m && !vm->has_v8m && (v & 1))) {
    /* SYSRESETREQ (a system reset), or VECTRESET (ARMv7-M only: a local
     * reset of the processor: ARMv7-M ARM B3.2.6 and "Reset management"; SYSRESETREQ wins
     * when both are set, as setting both is UNPREDICTABLE): at the next
     * instruction boundary. */
    s->reset_request = (v & (1u << 2)) ? VM_RESET_SYSTEM : VM_RESET_LOCAL;
    vm->attention |= VM_ATTN_EXCEPTION;
  }
  if (vm->has_v7m && !vm->has_v8m && (v & 2)) {
    /* VECTCLRACTIVE: clear all active state (debug use). */
    for (unsigned i = 0; i <= VM_MAX_EXC / 32; i++)
      s->nvic_active[i] = 0;
    s->nactive = 0;
    vm_sys_nvic_changed(s);
    vm_cpu_set_ipsr(vm, 0);
  }
}

/* Which CCR bits are writable on this core. */
static uint32_t ccr_writable(const struct sonde_vm *vm)
{
  if (!vm->has_v7m)
    return 0; /* ARMv6-M: CCR is read-only (STKALIGN, UNALIGN_TRP set) */
  if (vm->has_v8m)
    return (1u << 3) | (1u << 4) | (1u << 8) | (1u << 10) | (1u << 1); /* USERSETMPEND too */
  return 0x31Bu; /* NONBASETHRDENA USERSETMPEND UNALIGN_TRP DIV_0_TRP BFHFNMIGN STKALIGN */
}

static uint32_t cpacr_mask(const struct sonde_vm *vm)
{
  return vm->has_fpu ? 0x00F00000u : 0; /* CP10, CP11 */
}

bool vm_scb_reg_read(struct sonde_vm *vm, uint32_t off, uint32_t *value)
{
  struct vm_sys *s = &vm->sys;
  uint32_t v = 0;
  switch (off) {
  case 0x008: v = s->actlr; break;
  case 0xD00: v = s->cpuid; break;
  case 0xD04: v = icsr_read(vm); break;
  case 0xD08: v = s->vtor; break;
  case 0xD0C: v = (0xFA05u << 16) | s->aircr; break; /* VECTKEYSTAT, little-endian */
  case 0xD10: v = s->scr; break;
  case 0xD14: v = s->ccr; break;
  case 0xD18: case 0xD1C: case 0xD20: /* SHPR1-3: priorities of exceptions 4..15 */
    for (unsigned b = 0; b < 4; b++)
      v |= (uint32_t)s->priority[4 + (off - 0xD18) + b] << (8 * b);
    if (!vm->has_v7m)
      v &= off == 0xD1C ? 0xFF000000u : off == 0xD20 ? 0xFFFF0000u : 0;
    break;
  case 0xD24: v = shcsr_read(vm); break;
  case 0xD28: v = vm->has_v7m ? s->cfsr : 0; break;
  case 0xD2C: v = vm->has_v7m ? s->hfsr : 0; break;
  case 0xD30: v = s->dfsr; break;
  case 0xD34: v = vm->has_v7m ? s->mmfar : 0; break;
  case 0xD38: v = vm->has_v7m ? s->bfar : 0; break;
  case 0xD3C: v = s->afsr; break;
  case 0xD88: v = s->cpacr; break;
  case 0xF34: v = vm->has_fpu ? s->fpccr : 0; break;
  case 0xF38: v = vm->has_fpu ? s->fpcar : 0; break;
  case 0xF3C: v = vm->has_fpu ? s->fpdscr : 0; break;
  case 0xF40: /* MVFR0: single precision, FPv4/5-SP with sqrt/divide */
    v = vm->has_fpu ? 0x10110021u : 0;
    break;
  case 0xF44: v = vm->has_fpu ? (vm->has_v8m ? 0x12000011u : 0x11000011u) : 0; break;
  case 0xF48: v = vm->has_fpu && vm->has_v8m ? 0x00000040u : 0; break;
  default:
    if (off >= 0xFD0) { /* the SCS's CoreSight identity (dbg_rom.c): class 0xE */
      static const uint16_t part[] = {[SONDE_VM_CORE_M0PLUS] = 0x008, [SONDE_VM_CORE_M3] = 0x000,
                                      [SONDE_VM_CORE_M4] = 0x00C, [SONDE_VM_CORE_M4F] = 0x00C,
                                      [SONDE_VM_CORE_M33] = 0xD21};
      v = vm_coresight_id(off, part[vm->core], 0, 0xE);
      break;
    }
    if (off >= 0xD40 && off < 0xD80) { /* ID_PFR0..ID_ISAR4: M-profile defaults */
      static const uint32_t ids[16] = {
        0x00000030, 0x00000200, 0x00100000, 0x00000000, 0x00100030, 0x00000000,
        0x01000000, 0x00000000, 0x01101110, 0x02112000, 0x21232231, 0x01111131,
        0x01310132, 0x00000000, 0x00000000, 0x00000000};
      v = vm->has_v7m ? ids[(off - 0xD40) >> 2] : 0;
      break;
    }
    return false;
  }
  *value = v;
  return true;
}

bool vm_scb_reg_write(struct sonde_vm *vm, uint32_t off, uint32_t value, uint32_t mask)
{
  struct vm_sys *s = &vm->sys;
  uint32_t v;
  /* Read-modify-write for plain read/write registers written by byte. */
#define MERGE(old) (((old) & ~mask) | (value & mask))
  switch (off) {
  case 0x008: s->actlr = MERGE(s->actlr) & 0x7u; break;
  case 0xD00: break;
  case 0xD04: icsr_write(vm, value & mask); break;
  case 0xD08: s->vtor = MERGE(s->vtor) & 0xFFFFFF80u; break;
  case 0xD0C:
    if (mask == 0xFFFFFFFFu)
      aircr_write(vm, value);
    break;
  case 0xD10: s->scr = MERGE(s->scr) & 0x16u; break; /* SLEEPONEXIT SLEEPDEEP SEVONPEND */
  case 0xD14: {
    uint32_t w = ccr_writable(vm);
    s->ccr = (s->ccr & ~(w & mask)) | (value & w & mask);
    break;
  }
  case 0xD18: case 0xD1C: case 0xD20: {
    uint8_t pm = vm_nvic_prio_mask(vm);
    for (unsigned b = 0; b < 4; b++) {
      unsigned exc = 4 + (off - 0xD18) + b;
      if (!((mask >> (8 * b)) & 0xFF))
        continue;
      bool ok = vm->has_v7m ? (exc == 4 || exc == 5 || exc == 6 || exc == 11 || exc == 12 ||
                               exc == 14 || exc == 15)
                            : (exc == 11 || exc == 14 || exc == 15);
      if (ok)
        s->priority[exc] = (uint8_t)(value >> (8 * b)) & pm;
    }
    vm_sys_nvic_changed(s);
    break;
  }
  case 0xD24: shcsr_write(vm, MERGE(shcsr_read(vm))); break;
  case 0xD28: /* CFSR: write one to clear (byte/halfword accessible) */
    if (vm->has_v7m)
      s->cfsr &= ~(value & mask);
    break;
  case 0xD2C:
    if (vm->has_v7m)
      s->hfsr &= ~(value & mask);
    break;
  case 0xD30: s->dfsr &= ~(value & mask); break;
  case 0xD34: if (vm->has_v7m) s->mmfar = MERGE(s->mmfar); break;
  case 0xD38: if (vm->has_v7m) s->bfar = MERGE(s->bfar); break;
  case 0xD3C: s->afsr &= ~(value & mask); break;
  case 0xD88: s->cpacr = MERGE(s->cpacr) & cpacr_mask(vm); break;
  case 0xF34: /* FPCCR: ASPEN, LSPEN writable; the state bits too (privileged) */
    if (vm->has_fpu) {
      v = MERGE(s->fpccr);
      s->fpccr = v & 0xC000017Bu;
    }
    break;
  case 0xF38: if (vm->has_fpu) s->fpcar = MERGE(s->fpcar) & ~7u; break;
  case 0xF3C: if (vm->has_fpu) s->fpdscr = MERGE(s->fpdscr) & 0x07C00000u; break;
  default:
    if (off >= 0xD40 && off < 0xD80)
      break;
    if (off >= 0xF40 && off < 0xF4C)
      break;
    return false;
  }
#undef MERGE
  vm_exc_update(vm);
  return true;
}

/* ---- the SCS device ------------------------------------------------------ */

static bool is_debug_reg(uint32_t off)
{
  return off >= 0xDF0 && off < 0xE00; /* DHCSR DCRSR DCRDR DEMCR */
}

static int scs_read(void *ctx, struct sonde_vm *vm, uint32_t offset, unsigned size,
                    uint32_t *value, bool debug)
{
  (void)ctx;
  uint32_t word_off = offset & ~3u, v = 0;
  if (is_debug_reg(word_off) || (word_off >= 0xFB0 && word_off < 0xFC0)) {
    if (vm->sys.debug_ops && vm->sys.debug_ops->read)
      return vm->sys.debug_ops->read(vm->sys.debug_ctx, vm, offset, size, value, debug);
    *value = 0;
    return VM_BUS_OK;
  }
  if (!vm_nvic_reg_read(vm, word_off, &v) && !vm_systick_reg_read(vm, word_off, &v, debug) &&
      !vm_scb_reg_read(vm, word_off, &v))
    v = 0; /* reserved / unimplemented: RAZ */
  v >>= 8 * (offset & 3);
  *value = size == 4 ? v : v & ((1u << (8 * size)) - 1);
  return VM_BUS_OK;
}

static int scs_write(void *ctx, struct sonde_vm *vm, uint32_t offset, unsigned size,
                     uint32_t value, bool debug)
{
  (void)ctx;
  uint32_t word_off = offset & ~3u;
  if (is_debug_reg(word_off) || (word_off >= 0xFB0 && word_off < 0xFC0)) {
    if (vm->sys.debug_ops && vm->sys.debug_ops->write)
      return vm->sys.debug_ops->write(vm->sys.debug_ctx, vm, offset, size, value, debug);
    return VM_BUS_OK;
  }
  unsigned shift = 8 * (offset & 3);
  uint32_t mask = (size == 4 ? 0xFFFFFFFFu : ((1u << (8 * size)) - 1)) << shift;
  value <<= shift;
  if (!vm_nvic_reg_write(vm, word_off, value, mask) &&
      !vm_systick_reg_write(vm, word_off, value, mask))
    (void)vm_scb_reg_write(vm, word_off, value, mask); /* else WI */
  return VM_BUS_OK;
}

static const struct vm_device_ops scs_ops = {"scs", scs_read, scs_write};

static uint32_t cpuid_for(enum sonde_vm_core core)
{
  switch (core) {
  case SONDE_VM_CORE_M0PLUS: return 0x410CC601u; /* Cortex-M0+ r0p1 */
  case SONDE_VM_CORE_M3: return 0x412FC231u;     /* Cortex-M3 r2p1 */
  case SONDE_VM_CORE_M4:
  case SONDE_VM_CORE_M4F: return 0x410FC241u;    /* Cortex-M4 r0p1 */
  case SONDE_VM_CORE_M33: return 0x410FD214u;    /* Cortex-M33 r0p4 */
  }
  return 0;
}

int vm_sys_init(struct sonde_vm *vm, unsigned num_irqs, unsigned prio_bits)
{
  struct vm_sys *s = &vm->sys;
  memset(s, 0, sizeof *s);
  s->sleep_from = UINT64_MAX;      /* no sleep and */
  vm->cpu.exec_pc = VM_EXEC_NONE;  /* no instruction yet (pc_at.c) */
  s->num_irqs = num_irqs > VM_MAX_IRQS ? VM_MAX_IRQS : num_irqs;
  s->prio_bits = prio_bits < 2 ? 2 : prio_bits > 8 ? 8 : prio_bits;
  vm_nvic_prigroup_changed(vm); /* and num_irqs */
  s->cpuid = cpuid_for(vm->core);
  int rc = vm_systick_init(vm);
  if (rc < 0)
    return rc;
  return vm_bus_add_device(&vm->bus, SCS_BASE, SCS_SIZE, &scs_ops, NULL);
}
