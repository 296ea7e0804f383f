/* The core's part of exception entry and return (ARMv7-M ARM B1.5.6
 * ExceptionTaken(), B1.5.8 PopStack()), inline: exception.c does each once
 * per exception, and a call with six arguments cost as much as the work
 * (issue 20). Only exception.c includes this. */
#ifndef SONDE_VM_CPU_EXC_H
#define SONDE_VM_CPU_EXC_H

#include "vm_internal.h"

#define VM_CPU_EXC_EPSR_T (1u << 24)

/* Entry and return work out the new mode, stack and xPSR at once and swap
 * the SP bank at most once: the same state as set_control, set_ipsr,
 * set_xpsr and branch (cpu.c) one after the other, each checking the bank. */

/* Handler mode `exc` on MSP (CONTROL.SPSEL and FPCA cleared), IT state
 * cleared, LR = exc_return, the handler at `vector`, the exclusive monitor
 * cleared. */
VM_INLINE void vm_cpu_exception_taken_sp(struct sonde_vm *vm, unsigned exc, uint32_t exc_return,
                                         uint32_t vector, bool psp)
{
  struct vm_cpu *c = &vm->cpu;
  /* Handler mode on MSP: the process SP, if active, moves to the bank. */
  if (psp) {
    uint32_t t = c->r[13];
    c->r[13] = c->sp_inactive;
    c->sp_inactive = t;
  }
  c->control &= ~6u; /* SPSEL, FPCA */
  c->ipsr = exc & 0x1ffu;
  /* xPSR rewritten with its IT state cleared: APSR as set_xpsr masks it,
   * EPSR just the handler's Thumb bit (branch) */
  c->apsr &= vm->apsr_mask;
  c->itstate = 0;
  c->epsr = (vector & 1) ? VM_CPU_EXC_EPSR_T : 0;
  c->r[14] = exc_return;
  c->r[15] = vector & ~1u;
  c->ls_pipe = false;
  c->excl_valid = false;
}

/* `psp`: the process SP is active now (Thread mode, CONTROL.SPSEL). */
VM_INLINE void vm_cpu_exception_taken(struct sonde_vm *vm, unsigned exc, uint32_t exc_return,
                                      uint32_t vector)
{
  const struct vm_cpu *c = &vm->cpu;
  vm_cpu_exception_taken_sp(vm, exc, exc_return, vector, c->ipsr == 0 && (c->control & 2u));
}

/* The end of an exception return: set_xpsr of the frame's xPSR `x` with
 * the IPSR already set, then branch() to the return address `ret` with the
 * frame's T bit (in EPSR now). */
VM_INLINE void vm_cpu_return_to(struct sonde_vm *vm, uint32_t x, uint32_t ret)
{
  struct vm_cpu *c = &vm->cpu;
  c->apsr = x & vm->apsr_mask;
  c->itstate = (uint8_t)(((x >> 25) & 3u) | (((x >> 10) & 0x3fu) << 2));
  c->epsr = x & (VM_CPU_EXC_EPSR_T | 0x0600fc00u);
  c->r[15] = ret & ~1u;
  c->ls_pipe = false;
}

/* IPSR, CONTROL, the SP `psp` names = sp, then r0-r3, r12, LR, xPSR (its
 * IPSR replaced) and the return address from the basic frame. */
VM_INLINE void vm_cpu_exception_return(struct sonde_vm *vm, uint32_t ipsr, uint32_t control,
                                       bool psp, uint32_t sp, const uint32_t frame[8])
{
  struct vm_cpu *c = &vm->cpu;
  /* Mode and stack first (one bank swap), then the registers of the frame. */
  bool was = c->ipsr == 0 && (c->control & 2u);
  c->ipsr = ipsr & 0x1ffu;
  c->control = control;
  bool now = c->ipsr == 0 && (c->control & 2u);
  if (was != now) {
    uint32_t t = c->r[13];
    c->r[13] = c->sp_inactive;
    c->sp_inactive = t;
  }
  if (now == psp)
    c->r[13] = sp;
  else
    c->sp_inactive = sp;
  c->r[0] = frame[0];
  c->r[1] = frame[1];
  c->r[2] = frame[2];
  c->r[3] = frame[3];
  c->r[12] = frame[4];
  c->r[14] = frame[5];
  vm_cpu_return_to(vm, frame[7], frame[6]);
}

/* vm_cpu_exception_return() from Handler mode (no process SP in r13 now)
 * with the frame's words read straight from the host bytes at `frame`
 * (unaligned-safe): the new mode's SP is r13, the MSP goes to the bank when
 * that is the PSP. */
VM_INLINE void vm_cpu_exception_return_handler(struct sonde_vm *vm, uint32_t ipsr,
                                               uint32_t control, bool psp, uint32_t sp,
                                               const uint8_t *frame)
{
  struct vm_cpu *c = &vm->cpu;
  c->ipsr = ipsr & 0x1ffu;
  c->control = control;
  if (psp) /* then Thread mode on the PSP: the bank swaps */
    c->sp_inactive = c->r[13];
  c->r[13] = sp;
  uint32_t w[4];
  memcpy(&c->r[0], frame, 16);
  memcpy(w, frame + 16, 16);
  c->r[12] = w[0];
  c->r[14] = w[1];
  vm_cpu_return_to(vm, w[3], w[2]);
}

#endif
