/* Sonde: the virtual Cortex-M (src/vm).
 *
 * A cycle-level model of a Cortex-M0+/M3/M4(F)/M33 microcontroller: the CPU,
 * the exception model (NVIC, SysTick, faults), a memory map with wait states,
 * a few demo peripherals, and (later) the debug blocks at register level.
 * Deterministic: the same machine, firmware and inputs give the same cycles.
 *
 * Lifecycle:  sonde_machine_builtin()/sonde_machine_parse() -> sonde_vm_new()
 *             -> sonde_vm_load_elf()/sonde_vm_load_binary() -> sonde_vm_reset()
 *             -> sonde_vm_run() ... -> sonde_vm_free() -> sonde_machine_free()
 * A machine description may be freed only after every VM made from it. */
#ifndef SONDE_VM_H
#define SONDE_VM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sonde/common.h"
#include "sonde/trace.h" /* struct sonde_pcsample */

#ifdef __cplusplus
extern "C" {
#endif

/* ---- machine descriptions ------------------------------------------------ */

enum sonde_vm_core {
  SONDE_VM_CORE_M0PLUS, /* ARMv6-M */
  SONDE_VM_CORE_M3,     /* ARMv7-M */
  SONDE_VM_CORE_M4,     /* ARMv7E-M (DSP) */
  SONDE_VM_CORE_M4F,    /* ARMv7E-M + FPv4-SP-D16 */
  SONDE_VM_CORE_M33,    /* ARMv8-M Mainline + DSP + FPv5-SP, no TrustZone */
};

struct sonde_machine; /* opaque; see docs/vm.md for the text format */

/* A built-in machine by name ("cm3", "cc2650", "cm4f", "cm33", "cm0plus").
 * Returns SONDE_E_NOTFOUND for an unknown name. */
int sonde_machine_builtin(const char *name, struct sonde_machine **out);
/* Names of the built-in machines, NULL-terminated. */
const char *const *sonde_machine_builtin_names(void);
/* Parse a machine description from text; `name` is used in messages (a file
 * name). On error, `diag` (may be NULL) says which line and why. */
int sonde_machine_parse(const char *text, size_t len, const char *name,
                        struct sonde_machine **out, struct sonde_diag *diag);
void sonde_machine_free(struct sonde_machine *m);
const char *sonde_machine_name(const struct sonde_machine *m);
enum sonde_vm_core sonde_machine_core(const struct sonde_machine *m);
uint64_t sonde_machine_clock_hz(const struct sonde_machine *m);

/* ---- the VM --------------------------------------------------------------- */

struct sonde_vm; /* opaque */

int sonde_vm_new(const struct sonde_machine *m, struct sonde_vm **out);
void sonde_vm_free(struct sonde_vm *vm); /* NULL is a no-op */
/* Detail of the last error returned for this VM ("ELF segment 2 at 0x30000000
 * is outside every memory region"). Never NULL. */
const char *sonde_vm_error_detail(const struct sonde_vm *vm);

/* Load an ELF32 ARM executable: every PT_LOAD segment (file bytes, then zeros
 * up to memsz) is written to the machine's memories at its physical address.
 * `name` is used in messages. The entry state comes from the vector table at
 * reset (SP = word 0, PC = word 1). */
int sonde_vm_load_elf(struct sonde_vm *vm, const void *data, size_t len, const char *name);
/* Load a raw image at `base`. */
int sonde_vm_load_binary(struct sonde_vm *vm, const void *data, size_t len, uint32_t base);
/* Power-on reset: clears SRAM only on the first reset after sonde_vm_new (a
 * later reset, like AIRCR.SYSRESETREQ, retains SRAM as silicon does), resets
 * the core and system registers, loads SP and PC from the vector table. */
int sonde_vm_reset(struct sonde_vm *vm);
/* Whether unobserved runs may compile hot code for the host (x86-64 only;
 * on by default). SONDE_JIT=0 in the environment keeps it off for every VM
 * whatever this says. The results are the same either way, bit for bit and
 * cycle for cycle; off, the VM interprets every instruction. */
void sonde_vm_set_jit(struct sonde_vm *vm, bool on);
/* Which run of a series this VM makes (for an environment that varies from
 * run to run: the delay peripheral's `jitter=`, docs/vm.md). A power-on
 * reset makes it 0 and every system reset (AIRCR.SYSRESETREQ) adds 1, so a
 * firmware that resets itself sees run 0, 1, 2, ...; call after
 * sonde_vm_reset() to start a fresh VM at run `run` (as FrankenTrace does for
 * each iteration it runs on its own VM). No effect without such a device. */
void sonde_vm_set_run_index(struct sonde_vm *vm, uint32_t run);
/* Make sonde_vm_run() return (SONDE_VM_STOP_HALT) right after a system reset
 * (AIRCR.SYSRESETREQ) has been taken, before the first instruction after it,
 * without halting debug: unlike DHCSR.C_DEBUGEN + DEMCR.VC_CORERESET, debug
 * events still reach DebugMonitor (FrankenTrace's invasive LSU iterations,
 * one per VM). Off by default. */
void sonde_vm_set_stop_at_reset(struct sonde_vm *vm, bool on);

/* Why sonde_vm_run() returned. */
enum sonde_vm_stop_reason {
  SONDE_VM_STOP_EXIT,        /* semihosting SYS_EXIT(_EXTENDED); exit_code is set */
  SONDE_VM_STOP_CYCLE_LIMIT, /* max_cycles reached */
  SONDE_VM_STOP_LOCKUP,      /* the core locked up (fault in HardFault/NMI, ...) */
  SONDE_VM_STOP_BREAKPOINT,  /* BKPT (not semihosting) or a debug halt */
  SONDE_VM_STOP_HALT,        /* halted by the host (sonde_vm_halt) */
  SONDE_VM_STOP_ERROR,       /* host-side error (I/O writing a trace, ...) */
};

struct sonde_vm_stop {
  enum sonde_vm_stop_reason reason;
  int exit_code;     /* SONDE_VM_STOP_EXIT */
  uint32_t pc;       /* PC at the stop */
  uint32_t cfsr, hfsr, mmfar, bfar; /* fault status at the stop */
};

/* Run until the firmware exits, locks up, halts, or the cycle counter reaches
 * `max_cycles` (absolute; UINT64_MAX for no limit). */
int sonde_vm_run(struct sonde_vm *vm, uint64_t max_cycles, struct sonde_vm_stop *stop);
/* Execute exactly one instruction (or take one exception entry). */
int sonde_vm_step(struct sonde_vm *vm, struct sonde_vm_stop *stop);
/* Ask a running sonde_vm_run() to return at the next instruction boundary
 * (safe to call from a trace callback). */
void sonde_vm_halt(struct sonde_vm *vm);

struct sonde_vm_stats {
  uint64_t instructions; /* retired instructions (a folded IT counts as its own) */
  uint64_t cycles;       /* core clock cycles since reset */
  uint64_t exceptions;   /* exception entries */
  uint64_t sleep_cycles; /* cycles spent in WFI/WFE */
  /* Power model (docs/vm.md "Power model"): charge drawn since power-on in
   * microamp-cycles (exact), as microcoulombs, and the energy at the
   * machine's supply voltage. All 0 when the machine gives no currents. */
  uint64_t charge_ua_cycles;
  double charge_uc;
  double energy_uj;
  /* Blocks compiled to host code since sonde_vm_new (docs/vm.md, "The block
   * compiler"): 0 when the compiler is off or the host has none. */
  uint64_t compiled_blocks;
};
void sonde_vm_get_stats(const struct sonde_vm *vm, struct sonde_vm_stats *out);

/* Power model: `fn` is called with the supply current (microamps) at once,
 * then every time it changes, with the cycle from which it holds. Changes come
 * in cycle order; the current holds until the next call (or the end of the
 * run). NULL removes the callback. */
typedef void (*sonde_vm_power_fn)(void *ctx, uint64_t cycle, uint32_t current_ua);
void sonde_vm_set_power(struct sonde_vm *vm, sonde_vm_power_fn fn, void *ctx);
/* The machine's supply voltage in millivolts (0 when not given). */
uint32_t sonde_machine_supply_mv(const struct sonde_machine *m);

/* ---- the PC at a cycle ------------------------------------------------------ */

/* Run until cycle `cycle` has passed and say what a DWT PC sample at that
 * cycle shows: the rule of sonde_pcsample_of() (include/sonde/trace.h,
 * docs/vm.md "Which PC a sample carries"), so *out equals what
 * sonde_pcsample_at() gives for the VM's own --trace-pc at `cycle`. The
 * VM stops at the first instruction boundary after `cycle` (as
 * sonde_vm_run(vm, cycle + 1, stop)); no run is needed when it is past
 * `cycle` already. Then stop->reason is SONDE_VM_STOP_CYCLE_LIMIT and 0 is
 * returned. When the run ends before (the firmware exits, locks up, halts
 * or hits a breakpoint), stop says why and SONDE_E_AGAIN is returned: call
 * again to go on (after a breakpoint or halt). After an exit or a lockup,
 * also one reached in the same call as an earlier cycle (whose sample is then
 * returned with 0 and stop->reason saying so), every later call returns
 * SONDE_E_AGAIN with that stop: the core is never run past the program's end
 * (sonde_vm_reset() starts over). SONDE_E_RANGE: `cycle` lies before the last instruction
 * the VM started (it cannot look back further); calls with increasing
 * cycles never get it. `stop` may be NULL. Costs what sonde_vm_run costs:
 * the fast path runs up to the cycle. */
int sonde_vm_pc_at_cycle(struct sonde_vm *vm, uint64_t cycle, struct sonde_pcsample *out,
                         struct sonde_vm_stop *stop);

/* ---- host access (as a debugger's MEM-AP: no effect on timing) ------------ */

/* Registers in GDB's numbering for ARM M-profile: 0-12 r0-r12, 13 sp, 14 lr,
 * 15 pc, 16 xpsr, then the SONDE_VM_REG_* below. */
enum {
  SONDE_VM_REG_SP = 13, SONDE_VM_REG_LR = 14, SONDE_VM_REG_PC = 15, SONDE_VM_REG_XPSR = 16,
  SONDE_VM_REG_MSP = 17, SONDE_VM_REG_PSP = 18, SONDE_VM_REG_PRIMASK = 19,
  SONDE_VM_REG_BASEPRI = 20, SONDE_VM_REG_FAULTMASK = 21, SONDE_VM_REG_CONTROL = 22,
  SONDE_VM_REG_FPSCR = 23, SONDE_VM_REG_S0 = 24, /* s0..s31 = 24..55 */
  SONDE_VM_REG_COUNT = 56,
};
int sonde_vm_read_reg(const struct sonde_vm *vm, unsigned reg, uint32_t *value);
int sonde_vm_write_reg(struct sonde_vm *vm, unsigned reg, uint32_t value);
/* Debug reads/writes of target memory and peripherals (device side effects of
 * reads are suppressed where a debugger's read would not cause them). */
int sonde_vm_read_mem(struct sonde_vm *vm, uint32_t addr, void *buf, size_t len);
int sonde_vm_write_mem(struct sonde_vm *vm, uint32_t addr, const void *buf, size_t len);

/* ---- output and observation ----------------------------------------------- */

/* Where target text goes: semihosting stdout/stderr (stream 1/2) and UART TX
 * (stream 3 + uart index). Default: semihosting to the host's stdout/stderr,
 * UART to stdout. `write` returns 0 or a negative error (which stops the run). */
enum { SONDE_VM_STREAM_STDOUT = 1, SONDE_VM_STREAM_STDERR = 2, SONDE_VM_STREAM_UART0 = 3 };
typedef int (*sonde_vm_write_fn)(void *ctx, int stream, const void *data, size_t len);
void sonde_vm_set_output(struct sonde_vm *vm, sonde_vm_write_fn write, void *ctx);

/* Observation hooks for ground truth. Any member may be NULL. When no hook is
 * set the VM runs its fast path; hooks never change the simulated timing. */
enum sonde_vm_exc_event {
  SONDE_VM_EXC_ENTER = 1,  /* exception entry (after stacking) */
  SONDE_VM_EXC_EXIT = 2,   /* exception return from the handler */
  SONDE_VM_EXC_RETURN = 3, /* resumed (returned to) an exception or thread mode */
};
struct sonde_vm_hooks {
  void *ctx;
  /* An instruction at `pc` retired; it occupied cycles [cycle, cycle+cycles). */
  void (*retire)(void *ctx, uint32_t pc, uint64_t cycle, uint32_t cycles);
  /* A data transfer by an instruction (not instruction fetch, not exception
   * stacking; see `stacking`): `size` is 1, 2 or 4 bytes. */
  void (*transfer)(void *ctx, uint64_t cycle, uint32_t pc, uint32_t addr, unsigned size,
                   uint32_t value, bool write);
  /* Exception trace: entry, exit and return, with the exception number. */
  void (*exception)(void *ctx, uint64_t cycle, enum sonde_vm_exc_event ev, unsigned exc);
  /* Exception stacking, one call per word: the frame pushed at exception entry
   * (write) or popped at exception return (read), and the deferred push of a
   * lazy FP save (write, stamped with the cycle of the FP instruction that
   * caused it). `pc` is the return address in the frame (lazy FP save: the FP
   * instruction). Costs nothing per
   * instruction: setting it alone keeps the fast path. docs/vm.md. */
  void (*stacking)(void *ctx, uint64_t cycle, uint32_t pc, uint32_t addr, uint32_t value,
                   bool write);
};
void sonde_vm_set_hooks(struct sonde_vm *vm, const struct sonde_vm_hooks *hooks);

/* ---- SWO pin (debug blocks: ITM -> TPIU -> SWO, docs/vm.md) ---------------- */

enum { SONDE_VM_SWO_MANCHESTER = 1, SONDE_VM_SWO_NRZ = 2 }; /* TPIU_SPPR values */
/* One byte on the SWO pin: its frame (start bit to the end of its last bit
 * time) occupies cycles [start_cycle, end_cycle), `bit_cycles` per bit. */
struct sonde_vm_swo_byte {
  uint64_t start_cycle, end_cycle;
  uint32_t bit_cycles;
  uint8_t byte;
  uint8_t protocol; /* SONDE_VM_SWO_* */
  /* Impairments, for the sampler only (0 from the VM): */
  uint16_t flip;    /* invert the level in these bit times (bit 0 = start bit ..
                       bit 9 = stop bit): bit errors */
  int32_t skew_ppm; /* bit time scaled by 1 + skew_ppm / 10^6: baud error
                       (|skew_ppm| <= 50000; the frame keeps its slot) */
};
/* Called for every byte, in pin order, when it enters the output FIFO (its
 * cycles may lie after the VM's current cycle). Returns 0 or a negative error
 * (which stops the run). */
typedef int (*sonde_vm_swo_fn)(void *ctx, const struct sonde_vm_swo_byte *b);
void sonde_vm_set_swo(struct sonde_vm *vm, sonde_vm_swo_fn fn, void *ctx);
/* TPIU formatter on (FFCR.EnFCont): complete and send a partial frame now
 * (call at the end of a run; docs/vm.md). */
void sonde_vm_swo_flush(struct sonde_vm *vm);
/* Debug-block statistics: bytes that left the pin, packets lost, overflow packets. */
void sonde_vm_swo_stats(const struct sonde_vm *vm, uint64_t *bytes, uint64_t *lost,
                        uint64_t *overflows);

/* The pin as logic-analyzer samples (one byte per sample, bit 0 = SWO, as
 * sigrok's binary format): sample k is the level at cycle floor(k * clock_hz /
 * rate_hz). Idle is HIGH for NRZ, LOW for Manchester. */
struct sonde_vm_swo_sampler;
int sonde_vm_swo_sampler_new(uint64_t clock_hz, uint64_t rate_hz,
                             struct sonde_vm_swo_sampler **out);
void sonde_vm_swo_sampler_free(struct sonde_vm_swo_sampler *s);
/* Write the samples up to the end of byte `b` (idle before it) through `write`. */
int sonde_vm_swo_sampler_feed(struct sonde_vm_swo_sampler *s, const struct sonde_vm_swo_byte *b,
                              sonde_vm_write_fn write, void *ctx);
/* Write idle samples up to cycle `end_cycle`. */
int sonde_vm_swo_sampler_finish(struct sonde_vm_swo_sampler *s, uint64_t end_cycle,
                                sonde_vm_write_fn write, void *ctx);

#ifdef __cplusplus
}
#endif
#endif
