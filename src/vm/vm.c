/* The public API of the virtual Cortex-M (include/sonde/vm.h): building a VM
 * from a machine description, reset, run/step with a cycle limit, stop
 * information, statistics, debugger-style register and memory access, the
 * output callback and the observation hooks. */
#include <stdio.h>
#include <stdlib.h>

#include "dbg.h"
#include "machine.h"
#include "nvic.h"
#include "periph.h"
#include "vm_internal.h"

/* Default output: semihosting stdout/stderr to the host's, UART to stdout. */
static int default_write(void *ctx, int stream, const void *data, size_t len)
{
  (void)ctx;
  FILE *f = stream == SONDE_VM_STREAM_STDERR ? stderr : stdout;
  if (fwrite(data, 1, len, f) != len)
    return SONDE_E_IO;
  if (stream == SONDE_VM_STREAM_STDERR)
    fflush(f);
  return 0;
}

int vm_output(struct sonde_vm *vm, int stream, const void *data, size_t len)
{
  if (!vm->out_write || !len)
    return 0;
  int rc = vm->out_write(vm->out_ctx, stream, data, len);
  if (rc < 0)
    sonde_diag_set(&vm->diag, rc, "output callback failed for stream %d", stream);
  return rc;
}

int sonde_vm_new(const struct sonde_machine *m, struct sonde_vm **out)
{
  if (!m || !out)
    return SONDE_E_ARG;
  *out = NULL;
  struct sonde_vm *vm = calloc(1, sizeof *vm);
  if (!vm)
    return SONDE_E_NOMEM;
  vm->machine = m;
  vm->core = m->core;
  vm->max_cycles = UINT64_MAX;
  vm->event_cycle = UINT64_MAX;
  vm->out_write = default_write;
  vm_features_init(vm);
  vm_bus_init(&vm->bus);
  vm->bus.bitband = vm->core == SONDE_VM_CORE_M3 || vm->core == SONDE_VM_CORE_M4 ||
                    vm->core == SONDE_VM_CORE_M4F;
  vm->bus.code_written = vm_cpu_code_written;
  int rc = 0;
  for (unsigned i = 0; i < m->nmem && rc == 0; i++) {
    const struct vm_machine_mem *r = &m->mem[i];
    rc = vm_bus_add_region(&vm->bus, r->name, r->base, r->size, r->wait_read, r->wait_write,
                           r->flags);
    if (rc < 0)
      sonde_diag_set(&vm->diag, rc, "machine '%s': memory '%s' at 0x%08x: %s", m->name,
                     r->name, r->base, sonde_strerror(rc));
  }
  if (rc == 0) {
    rc = vm_sys_init(vm, m->num_irqs, m->prio_bits);
    vm->sys.reset_vtor = m->reset_vtor; /* after the init, which clears vm->sys */
    if (rc < 0)
      sonde_diag_set(&vm->diag, rc, "machine '%s': system control space: %s", m->name,
                     sonde_strerror(rc));
  }
  if (rc == 0)
    rc = vm_dbg_create(vm); /* DWT, ITM, TPIU (dbg_dwt.c); before vm_dbgh_init */
  if (rc == 0)
    rc = vm_mtb_create(vm); /* MTB when the machine has one (dbg_mtb.c) */
  for (unsigned i = 0; i < m->nperiph && rc == 0; i++) {
    rc = vm_periph_create(vm, &m->periph[i]);
    if (rc < 0)
      sonde_diag_set(&vm->diag, rc, "machine '%s': peripheral at 0x%08x: %s", m->name,
                     m->periph[i].base, sonde_strerror(rc));
  }
  if (rc == 0) /* last: chains the SCS debug registers installed before (dbg_halt.c) */
    rc = vm_dbgh_init(vm);
  if (rc == 0) /* after every debug block: lists those present (dbg_rom.c) */
    rc = vm_rom_init(vm);
  if (rc == 0) /* the memory-system timing model, when the machine has one */
    rc = vm_exec_tm_create(vm);
  if (rc < 0) {
    sonde_vm_free(vm);
    return rc;
  }
  vm_power_init(vm);
  vm_sys_update_event(vm);
  *out = vm;
  return 0;
}

void sonde_vm_free(struct sonde_vm *vm)
{
  if (!vm)
    return;
  for (unsigned i = 0; i < vm->nperiph; i++)
    free(vm->periph[i]);
  vm_dbgh_free(vm);
  vm_rom_free(vm);
  vm_dbg_free(vm);
  vm_mtb_free(vm);
  vm_blocks_free(vm);
  vm_exec_tm_free(vm);
  vm_bus_free(&vm->bus);
  free(vm);
}

const char *sonde_vm_error_detail(const struct sonde_vm *vm)
{
  if (!vm)
    return "no VM";
  return vm->diag.msg[0] ? vm->diag.msg : "no error";
}

int sonde_vm_reset(struct sonde_vm *vm)
{
  if (!vm)
    return SONDE_E_ARG;
  vm_sys_reset(vm, !vm->reset_done);
  vm->reset_done = true;
  vm->attention &= ~(uint32_t)VM_ATTN_STOP;
  vm->pc_at_ended = false;
  return 0;
}

static void fill_stop(const struct sonde_vm *vm, struct sonde_vm_stop *stop)
{
  if (!stop)
    return;
  *stop = vm->stop;
  stop->cfsr = vm->sys.cfsr;
  stop->hfsr = vm->sys.hfsr;
  stop->mmfar = vm->sys.mmfar;
  stop->bfar = vm->sys.bfar;
}

static int run_common(struct sonde_vm *vm, uint64_t max_cycles, struct sonde_vm_stop *stop,
                      bool step)
{
  if (!vm)
    return SONDE_E_ARG;
  if (!vm->reset_done)
    sonde_vm_reset(vm);
  vm->attention &= ~(uint32_t)VM_ATTN_STOP;
  memset(&vm->stop, 0, sizeof vm->stop);
  vm->max_cycles = max_cycles;
  vm_sys_update_event(vm);
  vm_exc_update(vm);
  const uint64_t instret = vm->cpu.instret;
  int rc = 0;
  if (vm->cpu.locked_up) {
    vm->cpu.r[15] = 0xEFFFFFFEu;
    vm_request_stop(vm, SONDE_VM_STOP_LOCKUP);
  } else if (vm->cpu.cycles >= max_cycles) {
    vm_request_stop(vm, SONDE_VM_STOP_CYCLE_LIMIT);
  } else {
    rc = step ? vm_cpu_step(vm) : vm_cpu_execute(vm);
  }
  if (rc < 0) {
    vm->stop.reason = SONDE_VM_STOP_ERROR;
    vm->stop.pc = vm->cpu.r[15];
  } else if (!(vm->attention & VM_ATTN_STOP) && step) {
    vm->stop.reason = SONDE_VM_STOP_HALT; /* one step done */
    vm->stop.pc = vm->cpu.r[15];
  }
  if (vm->stop.reason == SONDE_VM_STOP_ERROR && rc == 0)
    rc = SONDE_E_IO;
  if (vm->cpu.instret != instret && vm->cpu.cycles) /* where the last instruction may start */
    vm->pc_floor = vm->stop.reason == SONDE_VM_STOP_CYCLE_LIMIT && vm->cpu.cycles >= max_cycles
                       ? max_cycles - 1
                       : vm->cpu.cycles - 1;
  fill_stop(vm, stop);
  vm->attention &= ~(uint32_t)VM_ATTN_STOP;
  return rc;
}

int sonde_vm_run(struct sonde_vm *vm, uint64_t max_cycles, struct sonde_vm_stop *stop)
{
  int rc = run_common(vm, max_cycles, stop, false);
  if (vm) /* report the power changes up to the end of the run (power.c) */
    vm_power_advance(&vm->power, vm->cpu.cycles);
  return rc;
}

int sonde_vm_step(struct sonde_vm *vm, struct sonde_vm_stop *stop)
{
  return run_common(vm, UINT64_MAX, stop, true);
}

void sonde_vm_halt(struct sonde_vm *vm)
{
  if (vm)
    vm_request_stop(vm, SONDE_VM_STOP_HALT);
}

void sonde_vm_get_stats(const struct sonde_vm *vm, struct sonde_vm_stats *out)
{
  if (!out)
    return;
  memset(out, 0, sizeof *out);
  if (!vm)
    return;
  out->instructions = vm->cpu.instret;
  out->cycles = vm->cpu.cycles;
  out->exceptions = vm->sys.exceptions_taken;
  out->sleep_cycles = vm->sys.sleep_cycles;
  out->compiled_blocks = vm->jit_blocks;
  struct vm_power p = vm->power; /* integrate a copy up to now: stats stay const */
  p.fn = NULL;
  vm_power_advance(&p, vm->cpu.cycles);
  out->charge_ua_cycles = p.charge;
  uint64_t hz = sonde_machine_clock_hz(vm->machine);
  out->charge_uc = hz ? (double)p.charge / (double)hz : 0;
  out->energy_uj = out->charge_uc * sonde_machine_supply_mv(vm->machine) / 1000.0;
}

void sonde_vm_set_power(struct sonde_vm *vm, sonde_vm_power_fn fn, void *ctx)
{
  if (!vm)
    return;
  vm_power_advance(&vm->power, vm->cpu.cycles);
  vm->power.fn = fn;
  vm->power.ctx = ctx;
  if (fn)
    fn(ctx, vm->power.last, vm->power.current_ua);
}

int sonde_vm_read_reg(const struct sonde_vm *vm, unsigned reg, uint32_t *value)
{
  if (!vm || !value || reg >= SONDE_VM_REG_COUNT)
    return SONDE_E_ARG;
  const struct vm_cpu *c = &vm->cpu;
  if (reg < 16) {
    *value = c->r[reg];
    return 0;
  }
  switch (reg) {
  case SONDE_VM_REG_XPSR: *value = vm_cpu_get_xpsr(vm); return 0;
  case SONDE_VM_REG_MSP: *value = vm_cpu_get_sp(vm, false); return 0;
  case SONDE_VM_REG_PSP: *value = vm_cpu_get_sp(vm, true); return 0;
  case SONDE_VM_REG_PRIMASK: *value = c->primask; return 0;
  case SONDE_VM_REG_BASEPRI: *value = vm->has_v7m ? c->basepri : 0; return 0;
  case SONDE_VM_REG_FAULTMASK: *value = vm->has_v7m ? c->faultmask : 0; return 0;
  case SONDE_VM_REG_CONTROL: *value = c->control; return 0;
  default: break;
  }
  if (!vm->has_fpu)
    return SONDE_E_UNSUPPORTED;
  if (reg == SONDE_VM_REG_FPSCR)
    *value = c->fpscr;
  else
    *value = c->s[reg - SONDE_VM_REG_S0];
  return 0;
}

int sonde_vm_write_reg(struct sonde_vm *vm, unsigned reg, uint32_t value)
{
  if (!vm || reg >= SONDE_VM_REG_COUNT)
    return SONDE_E_ARG;
  struct vm_cpu *c = &vm->cpu;
  if (reg < 15) {
    c->r[reg] = value;
    return 0;
  }
  switch (reg) {
  case SONDE_VM_REG_PC: vm_cpu_branch(vm, value | 1); return 0;
  case SONDE_VM_REG_XPSR: vm_cpu_set_xpsr(vm, value); return 0;
  case SONDE_VM_REG_MSP: vm_cpu_set_sp(vm, false, value); return 0;
  case SONDE_VM_REG_PSP: vm_cpu_set_sp(vm, true, value); return 0;
  case SONDE_VM_REG_PRIMASK: c->primask = value & 1; break;
  case SONDE_VM_REG_BASEPRI:
    if (vm->has_v7m)
      c->basepri = value & 0xFF & (uint32_t)(0xFF << (8 - vm->sys.prio_bits));
    break;
  case SONDE_VM_REG_FAULTMASK:
    if (vm->has_v7m)
      c->faultmask = value & 1;
    break;
  case SONDE_VM_REG_CONTROL:
    vm_cpu_set_control(vm, value & (vm->has_fpu ? 7u : vm->has_v7m ? 3u : 3u));
    break;
  default:
    if (!vm->has_fpu)
      return SONDE_E_UNSUPPORTED;
    if (reg == SONDE_VM_REG_FPSCR)
      c->fpscr = value;
    else
      c->s[reg - SONDE_VM_REG_S0] = value;
    return 0;
  }
  vm_exc_mask_changed(vm);
  return 0;
}

int sonde_vm_read_mem(struct sonde_vm *vm, uint32_t addr, void *buf, size_t len)
{
  if (!vm || (!buf && len) || len > 0xFFFFFFFFu)
    return SONDE_E_ARG;
  if (vm_bus_debug_read(vm, &vm->bus, addr, buf, (uint32_t)len) != VM_BUS_OK)
    return sonde_diag_set(&vm->diag, SONDE_E_RANGE,
                          "read of %zu bytes at 0x%08x: not all mapped", len, addr);
  return 0;
}

int sonde_vm_write_mem(struct sonde_vm *vm, uint32_t addr, const void *buf, size_t len)
{
  if (!vm || (!buf && len) || len > 0xFFFFFFFFu)
    return SONDE_E_ARG;
  if (vm_bus_debug_write(vm, &vm->bus, addr, buf, (uint32_t)len) != VM_BUS_OK)
    return sonde_diag_set(&vm->diag, SONDE_E_RANGE,
                          "write of %zu bytes at 0x%08x: not all mapped", len, addr);
  vm_cpu_code_written(vm, addr, (unsigned)len);
  return 0;
}

void sonde_vm_set_jit(struct sonde_vm *vm, bool on)
{
  if (!vm || vm->jit_off == !on)
    return;
  vm->jit_off = !on;
  vm_blocks_free(vm); /* built again, with or without code, when next run */
}

void sonde_vm_set_stop_at_reset(struct sonde_vm *vm, bool on)
{
  if (vm)
    vm->stop_at_reset = on;
}

void sonde_vm_set_output(struct sonde_vm *vm, sonde_vm_write_fn write, void *ctx)
{
  if (!vm)
    return;
  vm->out_write = write;
  vm->out_ctx = ctx;
}

void sonde_vm_set_hooks(struct sonde_vm *vm, const struct sonde_vm_hooks *hooks)
{
  if (!vm)
    return;
  if (hooks)
    vm->hooks = *hooks;
  else
    memset(&vm->hooks, 0, sizeof vm->hooks);
  vm_update_hooked(vm, vm->mtb_observe);
}
