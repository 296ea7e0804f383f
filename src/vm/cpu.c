/* Architectural state of the virtual Cortex-M's core (cpu.h): reset, xPSR
 * composition, banked stack pointers and CONTROL (ARMv7-M ARM B1.4.1-B1.4.7),
 * branches, and the local exclusive monitor (A3.4). */
#include "vm_internal.h"

#define EPSR_T (1u << 24)
#define CONTROL_SPSEL 2u
#define CONTROL_FPCA 4u

static bool sp_process_active(const struct vm_cpu *c)
{
  return c->ipsr == 0 && (c->control & CONTROL_SPSEL);
}

void vm_cpu_reset(struct sonde_vm *vm)
{
  struct vm_cpu *c = &vm->cpu;
  for (unsigned i = 0; i < 16; i++)
    c->r[i] = 0;
  c->r[14] = 0xffffffffu; /* B1.5.5: LR reset value UNKNOWN; 0xFFFFFFFF as silicon */
  c->sp_inactive = 0;
  c->apsr = 0;
  c->ipsr = 0;
  c->epsr = EPSR_T;
  c->primask = c->faultmask = c->basepri = c->control = 0;
  c->fpscr = 0;
  c->sleeping = false;
  c->locked_up = false;
  c->itstate = 0;
  c->excl_valid = false;
  c->msplim = c->psplim = 0;
  c->splim_on = false;
  c->ls_pipe = false;
  c->ls_rt = 0xff;
  c->t.core = 0;
  vm_cpu_flush_decode_cache(vm);
  vm_exec_tm_reset(vm); /* cold caches, empty fetch queue */
}

/* The accessors below are static inline so that the exception entry and
 * return of this file (one call each) inline them; the exported vm_cpu_*
 * versions wrap them (this code is built position-independent, so the
 * exported ones are not inlined even here). */

/* Swap the banked SP in when the active one changed. */
static inline void switch_sp(struct vm_cpu *c, bool was)
{
  if (was != sp_process_active(c)) {
    uint32_t t = c->r[13];
    c->r[13] = c->sp_inactive;
    c->sp_inactive = t;
  }
}

static inline void set_ipsr(struct vm_cpu *c, uint32_t ipsr)
{
  bool was = sp_process_active(c);
  c->ipsr = ipsr & 0x1ffu;
  switch_sp(c, was);
}

static inline void set_xpsr(const struct sonde_vm *vm, struct vm_cpu *c, uint32_t xpsr)
{
  c->apsr = xpsr & (vm->has_dsp ? 0xf80f0000u : 0xf8000000u);
  set_ipsr(c, xpsr & 0x1ffu);
  uint8_t it = (uint8_t)(((xpsr >> 25) & 3u) | (((xpsr >> 10) & 0x3fu) << 2));
  c->itstate = it;
  c->epsr = (xpsr & EPSR_T) | (xpsr & 0x0600fc00u);
  c->ls_pipe = false;
}

void vm_cpu_set_xpsr(struct sonde_vm *vm, uint32_t xpsr)
{
  set_xpsr(vm, &vm->cpu, xpsr);
}

void vm_cpu_set_ipsr(struct sonde_vm *vm, uint32_t ipsr)
{
  set_ipsr(&vm->cpu, ipsr);
}

uint32_t vm_cpu_get_sp(const struct sonde_vm *vm, bool process)
{
  const struct vm_cpu *c = &vm->cpu;
  return sp_process_active(c) == process ? c->r[13] : c->sp_inactive;
}

static inline void set_sp(struct vm_cpu *c, bool process, uint32_t value)
{
  if (sp_process_active(c) == process)
    c->r[13] = value;
  else
    c->sp_inactive = value;
}

void vm_cpu_set_sp(struct sonde_vm *vm, bool process, uint32_t value)
{
  set_sp(&vm->cpu, process, value);
}

static inline void set_control(struct vm_cpu *c, uint32_t control)
{
  bool was = sp_process_active(c);
  c->control = control;
  switch_sp(c, was);
}

void vm_cpu_set_control(struct sonde_vm *vm, uint32_t control)
{
  set_control(&vm->cpu, control);
}

static inline void branch(struct vm_cpu *c, uint32_t addr)
{
  if (addr & 1)
    c->epsr |= EPSR_T;
  else
    c->epsr &= ~EPSR_T;
  c->r[15] = addr & ~1u;
  c->ls_pipe = false;
}

void vm_cpu_branch(struct sonde_vm *vm, uint32_t addr)
{
  branch(&vm->cpu, addr);
}

void vm_cpu_clear_exclusive(struct sonde_vm *vm)
{
  vm->cpu.excl_valid = false;
}
