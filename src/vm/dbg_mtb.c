/* Micro Trace Buffer (MTB) of the virtual Cortex-M.
 *
 * Implements the programmers' model of the ARM CoreSight MTB-M0+ TRM
 * (DDI 0486B) 3.3 — POSITION (POINTER[31:3], WRAP[2]), MASTER (EN[31],
 * HALTREQ[9], TSTOPEN[6], TSTARTEN[5], MASK[4:0]), FLOW (WATERMARK[31:3],
 * AUTOHALT[1], AUTOSTOP[0]), BASE (read-only) — and the Cortex-M33 MTB layout
 * (Cortex-M33 TRM 100230, MTB chapter) with TSTART/TSTOP/SECURE at
 * 0x010/0x014/0x018.
 *
 * Trace packets (MTB-M0+ TRM 3.2): 8 bytes per non-sequential PC change,
 * word 0 = source address | A-bit (1: the change came from an exception
 * entry or return, not a branch), word 1 = destination | S-bit (1: the first
 * packet since tracing started). Exception return writes two packets:
 * (return instruction -> EXC_RETURN) then (EXC_RETURN|A -> return address).
 * Packets go to SRAM at BASE + POINTER; POINTER advances by 8 and only its
 * bits below MASK+4 change, so the buffer is a circle of 2^(MASK+4) bytes;
 * the carry out of those bits sets POSITION.WRAP. When POINTER reaches
 * FLOW.WATERMARK, AUTOSTOP clears MASTER.EN and AUTOHALT sets MASTER.HALTREQ
 * (the core halts: the run stops with SONDE_VM_STOP_BREAKPOINT).
 *
 * MASTER.EN sets vm->mtb_observe. The executors then report every
 * non-sequential PC change: the fast handlers of taken branches call
 * vm_mtb_branch() (compiled code writes the packet itself while fast_left
 * says it is only the store and the advance, jit_x64.c), every other
 * instruction (exec_insn) vm_mtb_retire(), and the exception model
 * vm_mtb_exception(), whose entry packets have the return address the entry
 * stacked as their source (cpu.entry_return, set by exception.c: the preferred
 * return address, MTB-M0+ TRM 2.3.1). Only TSTART/TSTOP need every instruction (a
 * comparator match on its address: the core DWT's on the M33, the MTBDWT's
 * on an M0+ that has one, dbg_mtbdwt.c): then vm->mtb_hooked selects the
 * hooked executor, which calls vm_mtb_retire() for each one. */
#include "machine.h"
#include "vm_internal.h"

#include <stdlib.h>
#include <string.h>

void vm_mtb_update_observe(struct sonde_vm *vm)
{
  struct vm_mtb *m = vm->mtb;
  bool mtb_was = vm->mtb_observe;
  /* Every instruction is checked while a start/stop source is armed: on the
   * M33 TSTARTEN/TSTOPEN (core DWT comparators), on the M0+ an MTBDWT
   * instruction comparator (its MATCHED flag is kept even without them). */
  bool dwt_armed = m && m->dwt && vm_mtbdwt_armed(m->dwt);
  if (m)
    m->watch = dwt_armed ||
               (m->m33 && (m->master & (MTB_MASTER_TSTARTEN | MTB_MASTER_TSTOPEN)) != 0);
  vm->mtb_observe = m && ((m->master & MTB_MASTER_EN) || dwt_armed ||
                          (m->m33 && (m->master & MTB_MASTER_TSTARTEN) && (m->tstart & 0xFu)));
  vm->mtb_hooked = vm->mtb_observe && m->watch;
  /* An MTBDWT data comparator needs the data transfers: on ARMv6-M (no DWT)
   * dbg_observe is free and routes them here (vm_dbg_transfer). */
  if (!vm->dbg)
    vm->dbg_observe = m && m->dwt && vm_mtbdwt_data_armed(m->dwt);
  vm_update_hooked(vm, mtb_was);
}

/* span, span_wrap and watermark from MASTER.MASK and FLOW (struct vm_mtb):
 * after every write of MASTER or FLOW. */
static void mtb_derive(struct vm_mtb *m)
{
  uint32_t mask = m->master & MTB_MASTER_MASK;
  m->span = mask >= 27 ? 0xFFFFFFF8u : ((1u << (mask + 4)) - 1) & ~7u;
  m->span_wrap = mask >= 27 ? 0 : MTB_POSITION_WRAP;
  m->watermark = (m->flow & (MTB_FLOW_AUTOSTOP | MTB_FLOW_AUTOHALT)) ? m->flow & ~7u : 1u;
}

/* fast_left (struct vm_mtb) from the current state: the packets before the
 * one at which POINTER's circle bits are all ones (it wraps), and before
 * the one whose advance reaches an 8-aligned watermark above POINTER (one
 * below it is met only after a wrap). */
static void mtb_fast(struct vm_mtb *m)
{
  uint32_t ptr = m->position & ~7u;
  uint32_t left = 0;
  if ((m->master & MTB_MASTER_EN) && !m->start_bit) {
    left = (m->span - (ptr & m->span)) / 8;
    if (!(m->watermark & 7) && m->watermark > ptr && (m->watermark - ptr) / 8 - 1 < left)
      left = (m->watermark - ptr) / 8 - 1;
  }
  m->fast_left = left;
}

/* POINTER reached WATERMARK with AUTOSTOP or AUTOHALT set (MTB-M0+ TRM 3.3.3). */
static __attribute__((noinline, cold)) void watermark_reached(struct sonde_vm *vm)
{
  struct vm_mtb *m = vm->mtb;
  if (m->flow & MTB_FLOW_AUTOSTOP) {
    m->master &= ~MTB_MASTER_EN;
    m->autostopped = true;
    vm_mtb_update_observe(vm);
    mtb_fast(m);
  }
  if (m->flow & MTB_FLOW_AUTOHALT) {
    m->master |= MTB_MASTER_HALTREQ;
    vm_request_stop(vm, SONDE_VM_STOP_BREAKPOINT);
  }
}

/* Write one packet at POSITION and advance it (MTB-M0+ TRM 3.3.1). Every
 * taken branch of a traced program comes here: the two words go straight
 * into the buffer's host memory, and POINTER advances by 8 inside its
 * 2^(MASK+4)-byte circle (POSITION bits 1:0 are 0 and bit 2 is WRAP, so
 * POSITION + 8 is the advance unless POINTER's circle bits are all ones:
 * then they clear and WRAP is set). */
static inline __attribute__((always_inline)) void emit(struct sonde_vm *vm, uint32_t src,
                                                       uint32_t abit, uint32_t dst)
{
  struct vm_mtb *m = vm->mtb;
  if (VM_LIKELY(vm_mtb_packet_fast(m, src, abit, dst))) /* EN, no S-bit, no wrap, no watermark */
    return;
  uint32_t pos = m->position;
  if (!(m->master & MTB_MASTER_EN))
    return;
  uint8_t *p = m->sram + (pos & ~7u & m->sram_mask);
  vm_mtb_put32(p, (src & ~1u) | abit);
  vm_mtb_put32(p + 4, (dst & ~1u) | m->start_bit);
  m->start_bit = 0;
  if (VM_LIKELY((pos & m->span) != m->span))
    pos += 8;
  else
    pos = (pos & ~m->span) | m->span_wrap;
  m->position = pos;
  if (VM_UNLIKELY((pos & ~7u) == m->watermark))
    watermark_reached(vm);
  mtb_fast(m); /* an edge: fast_left was 0 */
}

void vm_mtb_trigger(struct sonde_vm *vm, unsigned sig)
{
  struct vm_mtb *m = vm->mtb;
  if ((sig & VM_MTB_TSTART) && (m->master & MTB_MASTER_TSTARTEN) &&
      !(m->master & MTB_MASTER_EN) && !m->autostopped) {
    m->master |= MTB_MASTER_EN;
    m->start_bit = 1;
    vm_mtb_update_observe(vm);
  }
  if ((sig & VM_MTB_TSTOP) && (m->master & MTB_MASTER_TSTOPEN) && (m->master & MTB_MASTER_EN)) {
    m->master &= ~MTB_MASTER_EN;
    vm_mtb_update_observe(vm);
  }
  mtb_fast(m);
}

/* Bit mask of the DWT instruction-address comparators matching `pc`: the
 * ARMv8-M encoding of the M33's DWT (ARMv8-M ARM C1.3 DWT_FUNCTIONn.MATCH
 * 0b0010, instruction address: an exact compare, CMPMATCH whatever the
 * ACTION), and the ARMv7-M encodings the VM's DWT (dbg_dwt.c) implements
 * (FUNCTION 4 or 8 without CYCMATCH, under DWT_MASKn) that earlier images
 * use. */
static unsigned dwt_pc_matches(const struct sonde_vm *vm, uint32_t pc)
{
  const struct vm_dbg *d = vm->dbg;
  if (!d || !(d->demcr & VM_DEMCR_TRCENA))
    return 0;
  unsigned hit = 0;
  for (unsigned c = 0; c < VM_DWT_NUMCOMP; c++) {
    uint32_t f = d->function[c] & 0xF;
    if (f == 2 && pc == (d->comp[c] & ~1u))
      hit |= 1u << c;
    if ((f == 4 || f == 8) && !(d->function[c] & (1u << 7))) {
      uint32_t msk = ~((uint32_t)((1ull << (d->mask[c] & 0x1F)) - 1));
      if ((pc & msk) == (d->comp[c] & msk))
        hit |= 1u << c;
    }
  }
  return hit;
}

/* The rare cases of vm_mtb_retire (mtb.h): a trace window to check, or a
 * non-sequential PC change to record. The common case (a sequential
 * instruction with no window) stays a few host instructions at the caller. */
void vm_mtb_retire_slow(struct sonde_vm *vm, uint32_t pc, unsigned size)
{
  struct vm_mtb *m = vm->mtb;
  /* TSTART/TSTOP: a comparator match on this instruction starts tracing (its
   * own branch is traced) or stops it (its own is not). The M33's inputs come
   * from the core DWT (MTB TSTART/TSTOP select the comparators), the M0+'s
   * from the MTBDWT (TBCTRL.ACOMPn). After a watermark AUTOSTOP, TSTART
   * cannot set EN until software moves POINTER or WATERMARK (MASTER.EN note,
   * MTB-M0+ TRM 3.3.2). */
  if (m->watch) {
    unsigned sig = 0;
    if (m->dwt) {
      sig = vm_mtbdwt_match(m->dwt, pc);
    } else if (m->m33) {
      unsigned hit = dwt_pc_matches(vm, pc);
      sig = ((hit & m->tstart & 0xFu) ? VM_MTB_TSTART : 0) |
            ((hit & m->tstop & 0xFu) ? VM_MTB_TSTOP : 0);
    }
    if (sig)
      vm_mtb_trigger(vm, sig);
  }
  uint32_t next = vm->cpu.r[15]; /* `size`: the decoded instruction's length */
  if (next >= 0xF0000000u) { /* EXC_RETURN: the first of the two return packets */
    emit(vm, pc, 0, next);
    m->exc_return = next;
  } else if ((next & ~1u) != pc + size) {
    emit(vm, pc, 0, next);
  }
}

void vm_mtb_branch(struct sonde_vm *vm, uint32_t pc, uint32_t next)
{
  emit(vm, pc, 0, next);
}

void vm_mtb_exception(struct sonde_vm *vm, enum sonde_vm_exc_event ev, unsigned exc)
{
  (void)exc;
  if (ev != SONDE_VM_EXC_ENTER && ev != SONDE_VM_EXC_RETURN)
    return;
  /* as vm_mtb_exception_fast (mtb.h), with the packet's full path */
  struct vm_mtb *m = vm->mtb;
  uint32_t pc = vm->cpu.r[15];
  emit(vm, vm_mtb_exc_source(m, ev, vm->cpu.entry_return), 1, pc);
  m->exc_return = 0;
}

static int mtb_read(void *ctx, struct sonde_vm *vm, uint32_t offset, unsigned size,
                    uint32_t *value, bool debug)
{
  (void)vm;
  (void)debug;
  struct vm_mtb *m = ctx;
  uint32_t v = 0;
  switch (offset & ~3u) {
  case 0x000: v = m->position; break;
  case 0x004: v = m->master; break;
  case 0x008: v = m->flow; break;
  case 0x00C: v = m->sram_base; break;
  case 0x010: v = m->m33 ? m->tstart : 0; break;
  case 0x014: v = m->m33 ? m->tstop : 0; break;
  case 0x018: v = m->m33 ? m->secure : 0; break;
  default: /* CoreSight identity: the M0+ MTB (part 0x932), the M33's (0xD31) */
    v = (offset & ~3u) >= 0xFD0 ? vm_coresight_id(offset & ~3u, m->m33 ? 0xD31 : 0x932, 0, 0x9) : 0;
    break;
  }
  v >>= 8 * (offset & 3);
  *value = size == 4 ? v : v & ((1u << (8 * size)) - 1);
  return VM_BUS_OK;
}

static int mtb_write(void *ctx, struct sonde_vm *vm, uint32_t offset, unsigned size,
                     uint32_t value, bool debug)
{
  (void)debug;
  struct vm_mtb *m = ctx;
  if (size != 4 || (offset & 3))
    return VM_BUS_OK; /* the SFRs take word writes only */
  switch (offset) {
  case 0x000:
    if ((value & ~7u) != (m->position & ~7u))
      m->autostopped = false; /* a new POINTER lets TSTART restart tracing */
    m->position = value & ~3u;
    break;
  case 0x004: {
    bool was = m->master & MTB_MASTER_EN;
    m->master = value & (MTB_MASTER_EN | MTB_MASTER_HALTREQ | (1u << 8) | (1u << 7) |
                         MTB_MASTER_TSTOPEN | MTB_MASTER_TSTARTEN | MTB_MASTER_MASK);
    if (!was && (m->master & MTB_MASTER_EN)) {
      m->start_bit = 1;
      m->autostopped = false;
    }
    mtb_derive(m);
    vm_mtb_update_observe(vm);
    break;
  }
  case 0x008:
    if (!(value & MTB_FLOW_AUTOSTOP) || (value & ~7u) != (m->flow & ~7u))
      m->autostopped = false; /* AUTOSTOP cleared or a new WATERMARK */
    m->flow = value & ~4u;
    mtb_derive(m);
    break;
  case 0x010:
    if (m->m33)
      m->tstart = value;
    vm_mtb_update_observe(vm);
    break;
  case 0x014: if (m->m33) m->tstop = value; break;
  case 0x018: if (m->m33) m->secure = value; break;
  default: break;
  }
  mtb_fast(m);
  return VM_BUS_OK;
}

static const struct vm_device_ops mtb_ops = {"mtb", mtb_read, mtb_write};

int vm_mtb_create(struct sonde_vm *vm)
{
  const struct sonde_machine *mach = vm->machine;
  if (!mach->has_mtb)
    return 0;
  if (mach->mtb_size < 16 || (mach->mtb_size & (mach->mtb_size - 1)) || (mach->mtb_base & 7))
    return sonde_diag_set(&vm->diag, SONDE_E_RANGE,
                          "machine '%s': mtb: the buffer size must be a power of two >= 16 "
                          "and its base 8-byte aligned", mach->name);
  struct vm_mtb *m = calloc(1, sizeof *m);
  if (!m)
    return SONDE_E_NOMEM;
  m->m33 = vm->core == SONDE_VM_CORE_M33;
  if (m->m33 && mach->mtb_regs && mach->mtb_regs != VM_MTB_M33_BASE) {
    free(m);
    return sonde_diag_set(&vm->diag, SONDE_E_RANGE,
                          "machine '%s': mtb: regs= is for Cortex-M0+ (the Cortex-M33 MTB is "
                          "at 0x%08x)", mach->name, VM_MTB_M33_BASE);
  }
  /* M0+: the chip places the block (machine line `regs=`; default 0xF0000000). */
  m->regs_base = m->m33 ? VM_MTB_M33_BASE : mach->mtb_regs ? mach->mtb_regs : VM_MTB_M0P_BASE;
  m->sram_base = mach->mtb_base;
  m->sram_size = mach->mtb_size;
  m->sram_mask = m->sram_size - 1;
  m->pmask = m->sram_mask & ~7u;
  mtb_derive(m);
  mtb_fast(m);
  vm->mtb = m;
  /* The buffer is SRAM: inside a memory of the machine, or its own region. */
  const struct vm_region *r = vm_bus_find_region(&vm->bus, m->sram_base);
  int rc = 0;
  if (!r) {
    rc = vm_bus_add_region(&vm->bus, "mtb", m->sram_base, m->sram_size, 0, 0,
                           VM_REGION_RETAIN);
    r = vm_bus_find_region(&vm->bus, m->sram_base);
  }
  if (rc == 0 && (!r || m->sram_base + m->sram_size - 1 > r->base + (r->size - 1)))
    rc = SONDE_E_RANGE;
  if (rc == 0)
    rc = vm_bus_add_device(&vm->bus, m->regs_base, 0x1000, &mtb_ops, m);
  if (rc < 0)
    return sonde_diag_set(&vm->diag, rc, "machine '%s': mtb at 0x%08x: %s", mach->name,
                          m->sram_base, sonde_strerror(rc));
  m->sram = r->mem + (m->sram_base - r->base);
  if (mach->mtbdwt_regs) { /* M0+ only: the chip's TSTART/TSTOP source (dbg_mtbdwt.c) */
    rc = m->m33 ? SONDE_E_RANGE : vm_mtbdwt_create(vm, mach->mtbdwt_regs);
    if (rc < 0)
      return sonde_diag_set(&vm->diag, rc, "machine '%s': mtb: %s", mach->name,
                            m->m33 ? "mtbdwt= is for Cortex-M0+ (the Cortex-M33 MTB takes "
                                     "TSTART/TSTOP from the core DWT)"
                                   : sonde_strerror(rc));
  }
  return 0;
}

void vm_mtb_free(struct sonde_vm *vm)
{
  if (vm->mtb)
    free(vm->mtb->dwt);
  free(vm->mtb);
  vm->mtb = NULL;
}
