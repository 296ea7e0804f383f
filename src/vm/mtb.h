/* Micro Trace Buffer (MTB) of the virtual Cortex-M (dbg_mtb.c). Internal.
 *
 * Specs: ARM CoreSight MTB-M0+ TRM (DDI 0486B) ch. 3 "Programmers model"
 * (POSITION, MASTER, FLOW, BASE) and 3.3 "Trace packet format"; Cortex-M33
 * TRM (100230) ch. 9 "MTB" (adds TSTART, TSTOP, SECURE at 0x010-0x018).
 * docs/vm.md "MTB" describes the model and its gaps. */
#ifndef SONDE_VM_MTB_H
#define SONDE_VM_MTB_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "sonde/vm.h"

struct sonde_vm;

#define VM_MTB_M33_BASE 0xE0043000u  /* Cortex-M33: fixed in the PPB */
#define VM_MTB_M0P_BASE 0xF0000000u  /* Cortex-M0+: system-specific (Kinetis KL) */

/* MASTER (MTB-M0+ TRM 3.3.2) */
#define MTB_MASTER_EN (1u << 31)
#define MTB_MASTER_HALTREQ (1u << 9)
#define MTB_MASTER_TSTOPEN (1u << 6)
#define MTB_MASTER_TSTARTEN (1u << 5)
#define MTB_MASTER_MASK 0x1Fu
/* FLOW (3.3.3) */
#define MTB_FLOW_AUTOSTOP (1u << 0)
#define MTB_FLOW_AUTOHALT (1u << 1)
/* POSITION (3.3.1) */
#define MTB_POSITION_WRAP (1u << 2)

/* The MTB's DWT of Kinetis/MCX Cortex-M0+ parts (MTBDWT, dbg_mtbdwt.c): two
 * address comparators whose matches drive the MTB-M0+'s TSTART/TSTOP inputs. */
#define VM_MTBDWT_NUMCOMP 2u
#define MTBDWT_FCT_MATCHED (1u << 24)
#define MTBDWT_FCT_DATAVMATCH (1u << 8)
#define MTBDWT_FN_IFETCH 4u /* FCTn.FUNCTION: instruction fetch */

struct vm_mtbdwt {
  uint32_t regs_base;
  uint32_t comp[VM_MTBDWT_NUMCOMP], mask[VM_MTBDWT_NUMCOMP], fct[VM_MTBDWT_NUMCOMP];
  uint32_t tbctrl; /* ACOMP1[1], ACOMP0[0]: 1 = the match pulses TSTART, 0 = TSTOP */
};
#define VM_MTB_TSTART 1u /* vm_mtbdwt_match(): the TSTART input pulsed */
#define VM_MTB_TSTOP 2u  /* ... the TSTOP input */

struct vm_mtb {
  uint32_t regs_base;         /* SFR block */
  uint32_t sram_base, sram_size; /* the trace buffer (machine file `mtb BASE SIZE`) */
  uint8_t *sram;              /* host memory of sram_base (a bus region) */
  bool m33;                   /* TSTART/TSTOP/SECURE present */
  struct vm_mtbdwt *dwt;      /* M0+: the MTBDWT driving TSTART/TSTOP (NULL: none) */
  bool autostopped;           /* EN cleared by the watermark: TSTART cannot set it */
  bool watch;                 /* check every instruction for TSTART/TSTOP matches */
  uint32_t position, master, flow, tstart, tstop, secure;
  /* What every packet needs, kept by the register writes (mtb_derive):
   * the POINTER bits that advance (2^(MASK+4) - 1, bits 2:0 clear), WRAP for
   * their carry (0 when they are all of POINTER: the carry is lost), the
   * POINTER at which FLOW acts (1, never a POINTER, without AUTOSTOP and
   * AUTOHALT), and the buffer's offset mask. */
  uint32_t span, span_wrap, watermark, sram_mask;
  uint32_t start_bit;         /* 1: the next packet carries the S-bit */
  /* Packets that may be written with nothing but the store and the advance
   * (EN set, no S-bit due, POINTER's circle not wrapping, the advance not
   * reaching the watermark): compiled code writes those itself (jit_x64.c)
   * and calls vm_mtb_branch() when it is 0. Kept by every change of
   * POSITION, MASTER, FLOW or the S-bit (mtb_fast). pmask: the buffer's
   * offset mask without bits 2:0. */
  uint32_t fast_left, pmask;
  uint32_t exc_return;        /* EXC_RETURN of the pending second return packet (0: none) */
};

int vm_mtb_create(struct sonde_vm *vm);
void vm_mtb_free(struct sonde_vm *vm);
/* Observers (only while vm->mtb_observe): an instruction at `pc` retired and
 * vm->cpu.r[15] holds the next PC; a taken branch of a fast handler from `pc`
 * to `next` (not an exception return), with vm->cpu.r[15] = next; an
 * exception event (entry after the PC is the handler, return after the PC is
 * the return address). The source of an entry packet is vm->cpu.entry_return,
 * which the entry sets to the return address it stacked. */
void vm_mtb_retire_slow(struct sonde_vm *vm, uint32_t pc, unsigned size);
/* vm_mtb_retire(vm, pc, size): a macro, so that the common case (no trace
 * window, a sequential instruction: nothing to record) costs the executors
 * no call; it expands where struct sonde_vm is complete (vm_internal.h).
 * Called only while vm->mtb_observe, where vm->mtb_hooked is the MTB's
 * `watch` (vm_mtb_update_observe sets both). */
#define vm_mtb_retire(vm, pc, size)                                                      \
  do {                                                                                   \
    struct sonde_vm *vm_mtb_vm_ = (vm);                                                  \
    uint32_t vm_mtb_pc_ = (pc);                                                          \
    unsigned vm_mtb_size_ = (size);                                                      \
    if (!__builtin_expect(!vm_mtb_vm_->mtb_hooked &&                                       \
                          (vm_mtb_vm_->cpu.r[15] & ~1u) == vm_mtb_pc_ + vm_mtb_size_, 1)) \
      vm_mtb_retire_slow(vm_mtb_vm_, vm_mtb_pc_, vm_mtb_size_);                          \
  } while (0)
void vm_mtb_branch(struct sonde_vm *vm, uint32_t pc, uint32_t next);
void vm_mtb_exception(struct sonde_vm *vm, enum sonde_vm_exc_event ev, unsigned exc);

/* A little-endian word into the trace buffer (one store on a little-endian host). */
static inline void vm_mtb_put32(uint8_t *p, uint32_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  memcpy(p, &v, 4);
#else
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
  p[2] = (uint8_t)(v >> 16);
  p[3] = (uint8_t)(v >> 24);
#endif
}

/* A packet while fast_left says it is nothing but the store and the advance
 * (the path compiled code writes inline too); false, having written nothing,
 * when it needs dbg_mtb.c's full path (S-bit, wrap, watermark, EN clear). */
static inline bool vm_mtb_packet_fast(struct vm_mtb *m, uint32_t src, uint32_t abit, uint32_t dst)
{
  if (!m->fast_left)
    return false;
  uint8_t *p = m->sram + (m->position & m->pmask);
  vm_mtb_put32(p, (src & ~1u) | abit);
  vm_mtb_put32(p + 4, dst & ~1u);
  m->position += 8;
  m->fast_left--;
  return true;
}

/* The source of an exception's packet (A-bit set, destination the new PC):
 * at entry the preferred return address, the PC the entry stacked (`from`,
 * vm->cpu.entry_return: MTB-M0+ TRM 2.3.1, "the architecturally-preferred return
 * address"; for a fault the faulting instruction, for an interrupt the one
 * that has not run), or the EXC_RETURN a handler branched to when the entry
 * tail-chains; at return that EXC_RETURN, whose packet from the return
 * instruction vm_mtb_retire_slow wrote. */
static inline uint32_t vm_mtb_exc_source(const struct vm_mtb *m, enum sonde_vm_exc_event ev,
                                         uint32_t from)
{
  return ev == SONDE_VM_EXC_ENTER && !m->exc_return ? from : m->exc_return;
}

/* vm_mtb_exception's common case in line (exception.c calls it for entry and
 * return only): false, having changed nothing, when the packet needs the full
 * path; then the caller calls vm_mtb_exception. */
static inline bool vm_mtb_exception_fast(struct vm_mtb *m, enum sonde_vm_exc_event ev,
                                         uint32_t pc, uint32_t from)
{
  if (!vm_mtb_packet_fast(m, vm_mtb_exc_source(m, ev, from), 1, pc))
    return false;
  m->exc_return = 0;
  return true;
}
/* Recompute vm->mtb_observe / mtb_hooked after an MTB or MTBDWT write. */
void vm_mtb_update_observe(struct sonde_vm *vm);

/* MTBDWT (dbg_mtbdwt.c): map the block at `base` (machine key `mtbdwt=`);
 * whether a comparator watches instruction fetches (the VM then observes
 * every instruction); the TSTART/TSTOP pulses (VM_MTB_*) of the instruction
 * at `pc`, setting FCTn.MATCHED of the comparators that match. */
int vm_mtbdwt_create(struct sonde_vm *vm, uint32_t base);
bool vm_mtbdwt_armed(const struct vm_mtbdwt *w);
unsigned vm_mtbdwt_match(struct vm_mtbdwt *w, uint32_t pc);
/* Data comparators (FUNCTION 5-7, DATAVMATCH): whether one is armed (the VM
 * then feeds every data transfer through vm->dbg_observe, which is free on
 * ARMv6-M), and one transfer of an instruction (vm_dbg_transfer). */
bool vm_mtbdwt_data_armed(const struct vm_mtbdwt *w);
void vm_mtbdwt_transfer(struct sonde_vm *vm, uint32_t addr, unsigned size, uint32_t value,
                        bool write);
/* A TSTART/TSTOP pulse (VM_MTB_*) reaches the MTB (dbg_mtb.c). */
void vm_mtb_trigger(struct sonde_vm *vm, unsigned sig);

#endif
