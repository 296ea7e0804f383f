/* SysTick, ARMv7-M ARM B3.3: a 24-bit down-counter clocked by the core clock
 * (CSR.CLKSOURCE = 1; the external reference is not implemented, CALIB.NOREF
 * says so). The counter is not stepped: it is derived from the cycle count.
 * While enabled, `syst_base_cycle` is the cycle at which the counter next
 * reaches zero; the zero crossing is a timed event that sets COUNTFLAG and,
 * with TICKINT, pends the SysTick exception, then re-arms RVR+1 cycles later.
 * Writes to CVR clear it (and COUNTFLAG); the reload happens on the next
 * clock, so SysTick_Config(N) gives an interrupt every N cycles. */
#include <assert.h>

#include "nvic.h"
#include "vm_internal.h"

#define CSR_ENABLE 1u
#define CSR_TICKINT VM_SYST_CSR_TICKINT
#define CSR_CLKSOURCE 4u
#define CSR_COUNTFLAG VM_SYST_CSR_COUNTFLAG

static uint32_t current_value(const struct sonde_vm *vm, uint64_t now)
{
  const struct vm_sys *s = &vm->sys;
  if (!(s->syst_csr & CSR_ENABLE))
    return s->syst_cvr;
  if (now <= s->syst_base_cycle)
    return (uint32_t)(s->syst_base_cycle - now);
  /* Past the zero the service has not handled yet (mid-instruction read). */
  uint64_t period = (uint64_t)s->syst_rvr + 1;
  if (s->syst_rvr == 0)
    return 0;
  return (uint32_t)(s->syst_rvr - ((now - s->syst_base_cycle - 1) % period));
}

static void arm_timer(struct sonde_vm *vm)
{
  struct vm_sys *s = &vm->sys;
  bool on = (s->syst_csr & CSR_ENABLE) && s->syst_base_cycle > vm->cpu.cycles;
  vm_sys_timer_set(vm, s->syst_timer, on ? s->syst_base_cycle : UINT64_MAX);
}

/* The counter reached zero (timed event): vm_systick_wrap() (nvic.h). */
void vm_systick_fire(struct sonde_vm *vm, void *ctx)
{
  (void)ctx;
  vm_systick_wrap(vm);
}

/* The same less the pend, for the direct service: vm_systick_advance(). */
unsigned vm_systick_direct(struct sonde_vm *vm, void *ctx)
{
  (void)ctx;
  return vm_systick_advance(vm);
}

int vm_systick_init(struct sonde_vm *vm)
{
  int id = vm_sys_timer_add(vm, vm_systick_fire, NULL);
  if (id < 0)
    return SONDE_E_LIMIT;
  vm->sys.syst_timer = id;
  vm_sys_timer_direct(&vm->sys, id, vm_systick_direct);
  return 0;
}

void vm_systick_reset(struct sonde_vm *vm)
{
  struct vm_sys *s = &vm->sys;
  s->syst_csr = CSR_CLKSOURCE;
  s->syst_rvr = 0;
  s->syst_cvr = 0;
  s->syst_base_cycle = 0;
  vm_sys_timer_set(vm, s->syst_timer, UINT64_MAX);
}

static uint32_t calib(const struct sonde_vm *vm)
{
  /* NOREF (no external clock); TENMS = core cycles in 10 ms - 1 when it fits. */
  uint64_t hz = vm->machine ? sonde_machine_clock_hz(vm->machine) : 0;
  uint64_t tenms = hz / 100;
  uint32_t v = 1u << 31;
  if (tenms && tenms - 1 <= 0xFFFFFF) {
    v |= (uint32_t)(tenms - 1);
    if (hz % 100)
      v |= 1u << 30; /* SKEW: not exactly 10 ms */
  } else {
    v |= 1u << 30;
  }
  return v;
}

bool vm_systick_reg_read(struct sonde_vm *vm, uint32_t off, uint32_t *value, bool debug)
{
  struct vm_sys *s = &vm->sys;
  switch (off) {
  case 0x010:
    *value = s->syst_csr;
    if (!debug)
      s->syst_csr &= ~CSR_COUNTFLAG; /* a read by the core clears COUNTFLAG */
    return true;
  case 0x014: *value = s->syst_rvr; return true;
  case 0x018: *value = current_value(vm, vm->cpu.cycles) & 0xFFFFFF; return true;
  case 0x01C: *value = calib(vm); return true;
  default: return false;
  }
}

bool vm_systick_reg_write(struct sonde_vm *vm, uint32_t off, uint32_t value, uint32_t mask)
{
  struct vm_sys *s = &vm->sys;
  uint64_t now = vm->cpu.cycles;
  switch (off) {
  case 0x010: {
    uint32_t cvr = current_value(vm, now);
    bool was_on = s->syst_csr & CSR_ENABLE;
    uint32_t v = (s->syst_csr & ~mask) | (value & mask);
    s->syst_csr = (s->syst_csr & CSR_COUNTFLAG) | (v & (CSR_ENABLE | CSR_TICKINT)) | CSR_CLKSOURCE;
    bool on = s->syst_csr & CSR_ENABLE;
    if (on && !was_on) {
      /* From 0 the counter loads RVR on the next clock, then counts down. */
      s->syst_base_cycle = cvr ? now + cvr : s->syst_rvr ? now + 1 + s->syst_rvr : now;
      s->syst_cvr = cvr;
    } else if (!on && was_on) {
      s->syst_cvr = cvr;
    }
    arm_timer(vm);
    return true;
  }
  case 0x014:
    s->syst_rvr = ((s->syst_rvr & ~mask) | (value & mask)) & 0xFFFFFF;
    arm_timer(vm);
    return true;
  case 0x018:
    /* Any write clears the counter and COUNTFLAG. */
    s->syst_csr &= ~CSR_COUNTFLAG;
    s->syst_cvr = 0;
    if (s->syst_csr & CSR_ENABLE)
      s->syst_base_cycle = s->syst_rvr ? now + 1 + s->syst_rvr : now;
    arm_timer(vm);
    return true;
  case 0x01C:
    return true;
  default:
    return false;
  }
}
