/* The threaded executor of the virtual Cortex-M (exec.c, "the fast
 * executor"), included four times by exec.c: FAST_FN names the function,
 * FAST_HOOKED (0 or 1) says whether every retired instruction is reported to
 * observe_retire() (the hooked path: retire/transfer hooks, DWT, MTB with
 * TSTART/TSTOP), FAST_MTB (0 or 1, only without FAST_HOOKED) whether the
 * MTB is told of each taken branch (dbg_mtb.c), and
 * FAST_BLOCK (0 or 1, only without the other two) whether it runs whole
 * blocks (block.c): straight-line runs of fast instructions ending at a
 * branch, whose cycles are bounded beforehand, so that inside a block no
 * instruction checks the event limit, counts itself or looks up its
 * successor. The semantics and cycle model are exec_insn()'s, which every
 * instruction not handled here runs through (label `slow`). Not a
 * standalone header. */
#ifndef FAST_TM
#define FAST_TM 0
#endif
/* Where an executor goes when the event is due (its state in locals, or
 * already in memory): the block executor may serve a PC sample and go on
 * (label `event`); the others return to vm_cpu_execute. */
#if FAST_BLOCK
#define EVENT event
#define EVENT_SYNCED event_synced
#else
#define EVENT out
#define EVENT_SYNCED synced_out
#endif
static __attribute__((noinline)) VM_THREADED void FAST_FN(struct sonde_vm *vm)
{
  struct vm_cpu *c = &vm->cpu;
#if FAST_TM
  /* this instruction's data accesses as the timing model takes them: how
   * many, the first's address and value (exec_tm.c) */
  unsigned tm_n = 0;
  uint32_t tm_addr = 0, tm_val = 0;
#define TX_LOG(ADDR, SIZE, VALUE, WRITE)                                               \
  do {                                                                                 \
    if (!tm_n) {                                                                       \
      tm_addr = (ADDR);                                                                \
      tm_val = (VALUE);                                                                \
    }                                                                                  \
    tm_n++;                                                                            \
  } while (0)
#elif FAST_HOOKED
  struct vm_txlog tx; /* this instruction's transfers, for observe_retire() */
  tx.n = 0;
#define TX_LOG(ADDR, SIZE, VALUE, WRITE)                                               \
  do {                                                                                 \
    tx.t[tx.n].addr = (ADDR);                                                          \
    tx.t[tx.n].size = (uint8_t)(SIZE);                                                 \
    tx.t[tx.n].value = (VALUE);                                                        \
    tx.t[tx.n].write = (WRITE);                                                        \
    tx.n++;                                                                            \
  } while (0)
#else
#define TX_LOG(ADDR, SIZE, VALUE, WRITE) ((void)0)
#endif
#define DP_LABELS_I(A) &&dpi_##A##_0, &&dpi_##A##_1,
#define DP_LABELS_R(A) &&dpr_##A##_0, &&dpr_##A##_1,
#define DP_LABELS_S(A) &&dps_##A##_0, &&dps_##A##_1,
  static const void *const handler[256] = {
    [VM_FAST_SLOW] = &&slow, /* the DP handlers follow it, in enum vm_fast's order */
    ALU_LIST(DP_LABELS_I)
    ALU_LIST(DP_LABELS_R)
    ALU_LIST(DP_LABELS_S)
    [VM_FAST_IT] = &&slow,
    [VM_FAST_LD] = &&ld, [VM_FAST_ST] = &&st, [VM_FAST_B] = &&b,
    [VM_FAST_BL] = &&bl, [VM_FAST_BX] = &&bx, [VM_FAST_CBZ] = &&cbz, [VM_FAST_CBNZ] = &&cbnz,
    [VM_FAST_LDM] = &&ldm, [VM_FAST_STM] = &&stm, [VM_FAST_MUL] = &&mul, [VM_FAST_MLA] = &&mla,
    [VM_FAST_MLS] = &&mls, [VM_FAST_SBFX] = &&sbfx, [VM_FAST_UBFX] = &&ubfx,
    [VM_FAST_EXT] = &&ext, [VM_FAST_ADR] = &&adr, [VM_FAST_MOVT] = &&movt,
#define BCOND_LABEL(C) [VM_FAST_BCOND + (C)] = &&bcond_##C,
    COND_LIST(BCOND_LABEL)
#undef BCOND_LABEL
#define LDST_LABELS(M)                                                                 \
    [VM_FAST_LDST + 8 * VM_LDST_##M + VM_LDST_LDR_W] = &&ldr_w_##M,                    \
    [VM_FAST_LDST + 8 * VM_LDST_##M + VM_LDST_LDR_H] = &&ldr_h_##M,                    \
    [VM_FAST_LDST + 8 * VM_LDST_##M + VM_LDST_LDR_SH] = &&ldr_sh_##M,                  \
    [VM_FAST_LDST + 8 * VM_LDST_##M + VM_LDST_LDR_B] = &&ldr_b_##M,                    \
    [VM_FAST_LDST + 8 * VM_LDST_##M + VM_LDST_LDR_SB] = &&ldr_sb_##M,                  \
    [VM_FAST_LDST + 8 * VM_LDST_##M + VM_LDST_STR_W] = &&str_w_##M,                    \
    [VM_FAST_LDST + 8 * VM_LDST_##M + VM_LDST_STR_H] = &&str_h_##M,                    \
    [VM_FAST_LDST + 8 * VM_LDST_##M + VM_LDST_STR_B] = &&str_b_##M,
    LDST_LABELS(OFF) LDST_LABELS(PRE) LDST_LABELS(POST)
#undef LDST_LABELS
#if FAST_BLOCK
    [VM_FAST_BLKEND] = &&blkend,
    [VM_FAST_JIT] = &&jit,
#endif
  };
#undef DP_LABELS_I
#undef DP_LABELS_R
#undef DP_LABELS_S
  /* The PC, the APSR's flags (unpacked, struct vm_lflags), the cycle and
   * instruction counts and the load/store pipelining state live in locals
   * while handlers run; SYNC() writes them back before the slow path and on
   * return, LOAD() reads them after it. */
  uint64_t ev, cy, ir;
  uint32_t pc, next, cyc;
  struct vm_lflags fl;
  bool lsp;
  uint8_t lsrt;
  const struct vm_icache_entry *e;
#define in (&e->insn) /* one base register for the entry and its instruction */
#define SYNC()                                                                         \
  do {                                                                                 \
    c->r[15] = pc;                                                                     \
    c->cycles = cy;                                                                    \
    c->instret = ir;                                                                   \
    c->ls_pipe = lsp;                                                                  \
    c->ls_rt = lsrt;                                                                   \
    c->apsr = lflags_pack(&fl, c->apsr);                                               \
  } while (0)
#define LOAD()                                                                         \
  do {                                                                                 \
    pc = c->r[15];                                                                     \
    cy = c->cycles;                                                                    \
    ir = c->instret;                                                                   \
    lsp = c->ls_pipe;                                                                  \
    lsrt = c->ls_rt;                                                                   \
    lflags_unpack(&fl, c->apsr);                                                       \
    ev = vm->event_cycle;                                                              \
  } while (0)
  /* Each handler ends with its own copy of the dispatch (threaded code). The
   * entry of pc is icache[(pc >> 1) & mask], addressed from pc in one step. */
#define DISPATCH()                                                                     \
  do {                                                                                 \
    e = (const struct vm_icache_entry *)((const char *)c->icache +                     \
                                         ((pc & ((VM_ICACHE_SIZE - 1) << 1)) << 4));   \
    if (VM_UNLIKELY(e->tag != (pc | 1)))                                               \
      goto slow;                                                                       \
    goto *handler[e->fast];                                                            \
  } while (0)
  /* Retire a fast instruction (its cycles include its wait states); RETIRE_BR
   * one that may branch. PC is the instruction's address. */
#if FAST_TM && !FAST_BLOCK
#error "the timing model's variant is a block executor"
#endif
#if FAST_BLOCK
#if FAST_MTB || FAST_HOOKED
#error "the block executor reports nothing to the MTB or the observers"
#endif
  /* In a block, the next instruction is the next entry; ir counts the
   * instructions before the block (an entry's nth says how many of the
   * block's precede it) and pc is the block's address until it ends. */
#define PC (e->tag)
  /* The pipelining state is not kept inside a block: a load/store there knows
   * its cycles (ls_cycles, block.c) unless it comes first, and an exit from
   * the middle of a block works it out from the entry before (LS_FROM_PREV). */
  /* e points into a struct vm_block_op, which carries the handler's address */
#define BLOCK_OP(E) ((const struct vm_block_op *)(E))
#if FAST_TM
  /* A machine with a memory system (exec_tm.c): each instruction is charged
   * the timing model's cycles as it retires, in the hooked executor's order,
   * and the event is checked after each one as the one-at-a-time executors
   * do (the model's stalls make the blocks' table bound no bound): a block
   * is left after the instruction that reaches the event. */
#define TM_CHARGE(NEXT, CYCLES)                                                        \
  do {                                                                                 \
    (void)(CYCLES); /* the table's: the model's replace them */                        \
    cy += vm_exec_tm_charge_fast(vm, in, e->tag, (NEXT), tm_n, tm_addr, tm_val);       \
    tm_n = 0;                                                                          \
  } while (0)
#define RETIRE(NEXT, CYCLES, LS_PIPE, LS_RT)                                           \
  do {                                                                                 \
    const uint32_t next_ = (NEXT);                                                     \
    TM_CHARGE(next_, (CYCLES));                                                        \
    if (VM_UNLIKELY(cy >= ev)) {                                                       \
      c->exec_pc = e->tag;                                                             \
      ir += e->nth + 1u;                                                               \
      pc = next_;                                                                      \
      lsp = (LS_PIPE);                                                                 \
      lsrt = (LS_RT);                                                                  \
      goto EVENT;                                                                      \
    }                                                                                  \
    e = &BLOCK_OP(e)[1].d;                                                             \
    goto *BLOCK_OP(e)->handler;                                                        \
  } while (0)
#else
#define TM_CHARGE(NEXT, CYCLES) (cy += (CYCLES))
#define RETIRE(NEXT, CYCLES, LS_PIPE, LS_RT)                                           \
  do {                                                                                 \
    cy += (CYCLES);                                                                    \
    e = &BLOCK_OP(e)[1].d;                                                             \
    goto *BLOCK_OP(e)->handler;                                                        \
  } while (0)
#endif
#define LS_FROM_PREV()                                                                 \
  do {                                                                                 \
    if (e->nth) {                                                                      \
      const struct vm_icache_entry *prev_ = &BLOCK_OP(e)[-1].d;                        \
      vm_fast_ls_after(prev_->fast, &prev_->insn, c->t.ls_pipeline, &lsp, &lsrt);      \
    }                                                                                  \
  } while (0)
#define LS_CYCLES() (in->ls_cycles ? in->ls_cycles : vm_fast_ls_cycles(lsp, lsrt, in))
#define RETIRE_BR(NEXT, CYCLES, LS_PIPE, LS_RT)                                        \
  do {                                                                                 \
    const uint32_t next_ = (NEXT);                                                     \
    TM_CHARGE(next_, (CYCLES));                                                        \
    c->exec_pc = e->tag; /* it may cross the event, or the target fault (block.c) */   \
    ir += e->nth + 1u;                                                                 \
    pc = next_;                                                                        \
    lsp = (LS_PIPE);                                                                   \
    lsrt = (LS_RT);                                                                    \
    goto enter;                                                                        \
  } while (0)
/* A conditional branch not taken goes on with the block (block.c) */
#define RETIRE_FALL RETIRE
/* A handler's BX or POP/LDM {..., pc} with EXC_RETURN value V after CYCLES:
 * what exec_insn does for it (its cycles and refill, retirement, the MTB's
 * report, then vm_exc_return, which sets the PC from the unstacked frame),
 * without the trip through step_one and exec_insn (issue 20). */
#define EXC_RETURN_RETIRE(V, CYCLES)                                                   \
  do {                                                                                 \
    const uint32_t ipc_ = e->tag, v_ = (V);                                            \
    ir += e->nth + 1u;                                                                 \
    cy += (CYCLES) + refill_cycles(vm, v_);                                            \
    lsp = false;                                                                       \
    lsrt = VM_NOREG;                                                                   \
    pc = v_;                                                                           \
    SYNC();                                                                            \
    c->exec_pc = ipc_;                                                                 \
    if (VM_UNLIKELY(vm->mtb_observe))                                                  \
      vm_mtb_retire_exc_return(vm, ipc_, in->len, v_);                                 \
    vm_exc_return(vm, v_);                                                             \
    if (VM_UNLIKELY(vm->attention))                                                    \
      return;                                                                          \
    LOAD();                                                                            \
    goto check_mode;                                                                   \
  } while (0)
/* A direct branch taken goes straight to the block linked to it when that
 * runs whole; else through enter, which links the branch to the block. */
#define RETIRE_TAKEN()                                                                 \
  do {                                                                                 \
    const struct vm_block_op *to_ = BLOCK_OP(e)->link;                                 \
    NONSEQ((uint32_t)e->soff);                                                         \
    TM_CHARGE((uint32_t)e->soff, e->taken_cycles);                                     \
    ir += e->nth + 1u;                                                                 \
    lsp = false;                                                                       \
    lsrt = VM_NOREG;                                                                   \
    c->exec_pc = e->tag; /* it may cross the event, or the target fault (block.c) */   \
    if (VM_LIKELY(to_ != NULL) && cy + (FAST_TM ? 0 : to_->bound) < ev) {              \
      e = &to_->d;                                                                     \
      goto *to_->handler;                                                              \
    }                                                                                  \
    pc = (uint32_t)e->soff;                                                            \
    link_from = BLOCK_OP(e);                                                           \
    goto enter;                                                                        \
  } while (0)
#else /* one instruction at a time */
#define PC pc
#define RETIRE_BR RETIRE
#define RETIRE_FALL RETIRE
#define RETIRE_TAKEN()                                                                 \
  do {                                                                                 \
    next = (uint32_t)e->soff;                                                          \
    NONSEQ(next);                                                                      \
    RETIRE(next, e->taken_cycles, false, VM_NOREG);                                    \
  } while (0)
#define LS_CYCLES() vm_fast_ls_cycles(lsp, lsrt, in)
#if !FAST_HOOKED
  /* At the event, the instruction it fell in (or ended at) for PC sampling:
   * stored only on the way out (cpu.exec_pc). */
#define RETIRE(NEXT, CYCLES, LS_PIPE, LS_RT)                                           \
  do {                                                                                 \
    cy += (CYCLES);                                                                    \
    /* for the event, or a fault of the next (its entry shows this one) */            \
    c->exec_pc = pc;                                                                   \
    pc = (NEXT);                                                                       \
    ir++;                                                                              \
    lsp = (LS_PIPE);                                                                   \
    lsrt = (LS_RT);                                                                    \
    if (VM_UNLIKELY(cy >= ev))                                                         \
      goto out;                                                                        \
    DISPATCH();                                                                        \
  } while (0)
#else
  /* ... then, with the state in memory as exec_insn leaves it, the observers;
   * they may ask for attention, unhook, or move event_cycle. */
/* A machine with a memory system (exec_tm.c): the timing model's cycles. */
#define RETIRE(NEXT, CYCLES, LS_PIPE, LS_RT)                                           \
  do {                                                                                 \
    const uint32_t ipc_ = pc, next_ = (NEXT);                                          \
    uint32_t icy_ = (CYCLES);                                                          \
    if (VM_UNLIKELY(vm->tm))                                                           \
      icy_ = vm_exec_tm_charge(vm, in, ipc_, next_, true, icy_, tx.n,                  \
                               tx.n ? tx.t[0].addr : 0, tx.n ? tx.t[0].value : 0);     \
    const uint64_t start_ = cy;                                                        \
    cy += icy_;                                                                        \
    pc = next_;                                                                        \
    ir++;                                                                              \
    lsp = (LS_PIPE);                                                                   \
    lsrt = (LS_RT);                                                                    \
    SYNC();                                                                            \
    c->exec_pc = ipc_;                                                                 \
    observe(vm, ipc_, start_, icy_, in->len, &tx);                                     \
    tx.n = 0;                                                                          \
    if (VM_UNLIKELY(vm->attention || !vm->hooked))                                     \
      return;                                                                          \
    LOAD();                                                                            \
    if (VM_UNLIKELY(cy >= ev))                                                         \
      goto out;                                                                        \
    DISPATCH();                                                                        \
  } while (0)
#endif /* FAST_HOOKED */
#endif /* FAST_BLOCK */
  /* A taken branch to NEXT (not an exception return), before its RETIRE: the
   * MTB executor writes its packet; AUTOHALT or AUTOSTOP then leave it at the
 * next boundary. */
#if FAST_MTB
#define NONSEQ(NEXT)                                                                   \
  do {                                                                                 \
    c->r[15] = (NEXT);                                                                 \
    vm_mtb_branch(vm, pc, (NEXT));                                                     \
    ev = VM_UNLIKELY(vm->attention) ? 0 : vm->event_cycle; /* AUTOSTOP moves it */     \
  } while (0)
#elif !FAST_HOOKED
/* the block and one-at-a-time executors (and compiled code, jit_x64.c)
 * with the MTB on; the hooked one reports every instruction instead */
#define NONSEQ(NEXT)                                                                   \
  do {                                                                                 \
    if (VM_UNLIKELY(vm->mtb_observe) && (NEXT) != PC + in->len) { /* vm_mtb_retire's */ \
      c->r[15] = (NEXT);                                                               \
      vm_mtb_branch(vm, PC, (NEXT));                                                   \
      ev = VM_UNLIKELY(vm->attention) ? 0 : vm->event_cycle;                           \
    }                                                                                  \
  } while (0)
#else
#define NONSEQ(NEXT) ((void)0)
#endif

  if (vm->attention)
    return;
#if FAST_BLOCK
  struct vm_blocks *bk = vm_blocks_get(vm);
  const struct vm_block_op *link_from = NULL; /* a taken direct branch on its way to enter */
  struct vm_jit_state js;                     /* what compiled code gets and gives (jit.h) */
  const void *code;                           /* compiled code to run (label jit_run) */
  if (VM_UNLIKELY(!bk)) { /* out of memory: instruction by instruction */
    if (FAST_TM)
      run_hooked(vm); /* which charges the model */
    else
      run_plain(vm);
    return;
  }
#endif
  LOAD();
  goto check_mode;

slow:
#if FAST_BLOCK
  /* an entry that cannot run fast here (or the one after a block that
   * stopped before a slow instruction): the state is that before it */
  pc = e->tag;
  ir += e->nth;
  LS_FROM_PREV();
  if (e->nth) /* the instruction before: it crossed the event (block.c), or this one may fault */
    c->exec_pc = BLOCK_OP(e)[-1].d.tag;
  if (VM_UNLIKELY(cy >= ev)) /* after a block's last instruction: the event is due */
    goto EVENT;
#endif
  SYNC();
  step_one(vm, FAST_HOOKED || FAST_TM); /* (exec_insn charges the model when "hooked") */
  if (VM_UNLIKELY(vm->attention || (FAST_HOOKED && !vm->hooked)))
    return;
  LOAD();
check_mode:
  /* inside an IT block or with EPSR.T clear, every instruction is slow */
  while (VM_UNLIKELY(c->itstate || !(c->epsr & EPSR_T))) {
    if (cy >= ev)
      goto EVENT_SYNCED;
    step_one(vm, FAST_HOOKED || FAST_TM);
    if (vm->attention || (FAST_HOOKED && !vm->hooked))
      return;
    LOAD();
  }
  if (VM_UNLIKELY(cy >= ev))
    goto EVENT_SYNCED;
#if !FAST_BLOCK
  DISPATCH();
#else
enter: {
  const struct vm_block *b = &bk->map[(pc >> 1) & (VM_BLOCK_MAP - 1)];
  if (VM_UNLIKELY(b->tag != (pc | 1))) {
    SYNC();
    b = vm_block_build(vm, pc, handler); /* may drop every block, link_from's too */
  } else if (link_from) { /* the entries are ours (bk->op): link the branch to its target */
    ((struct vm_block_op *)link_from)->link = b->op;
  }
  link_from = NULL;
  /* the event may come before the last instruction starts (or be due now:
   * run_plain returns at once): then instruction by instruction up to it,
   * in the compiled block's checked variant where there is one */
  e = &b->op->d;
#if FAST_TM
  if (VM_UNLIKELY(cy >= ev)) /* (each instruction checks the event: no bound) */
    goto EVENT;
  goto *b->op->handler;
#endif
  if (VM_UNLIKELY(cy + b->op->bound >= ev)) {
    if (e->fast == VM_FAST_SLOW) /* just a slow instruction (block.c) */
      goto slow;
    if (b->op->jit_checked) {
      code = b->op->jit_checked;
      js.exec_pc = c->exec_pc; /* what it stops with if it stops before its first */
      goto jit_run;
    }
    SYNC();
    run_plain(vm);
    return;
  }
  goto *b->op->handler;
}
blkend: /* a block ended at its length limit, before a fast instruction */
  pc = e->tag;
  ir += e->nth;
  LS_FROM_PREV();
  c->exec_pc = BLOCK_OP(e)[-1].d.tag; /* it may have crossed the event (block.c), or the next fault */
  goto enter;
jit: /* a compiled block (jit.h): its code runs on from block to block */
  code = BLOCK_OP(e)->jit;
  js.exec_pc = c->exec_pc; /* kept unless it runs or branches */
jit_run: {
  js.cy = cy;
  js.ev = ev;
  js.ir = ir;
  js.fl = fl;
  js.lsp = lsp;
  js.lsrt = lsrt;
  const int how = vm_jit_run(bk->jit, &js, c, vm->bus.page, code);
  if (how >= VM_JIT_SYNCED) {
    /* vm_jit_slow ran one (as after `slow`'s step_one), or vm_jit_serve
     * served the event (`event`) and says this returns (VM_JIT_SERVED) */
    if (how == VM_JIT_SERVED || VM_UNLIKELY(vm->attention))
      return;
    LOAD();
    goto check_mode;
  }
  cy = js.cy;
  ir = js.ir;
  fl = js.fl;
  ev = VM_UNLIKELY(vm->attention) ? 0 : vm->event_cycle; /* the MTB's AUTOSTOP/AUTOHALT */
  c->exec_pc = js.exec_pc; /* the last branch, or (towards the event) instruction */
  if (how != VM_JIT_ENTER) { /* it stopped before an entry, with nothing of it done */
    lsp = js.lsp;
    lsrt = js.lsrt;
    e = &js.op->d;
    if (how == VM_JIT_RESUME) { /* on with that entry's handler */
#if FAST_TM
      /* a load or store of an IT block it stopped before (its condition
       * passed): exec_insn's, as every instruction in an IT block */
      if (VM_UNLIKELY(c->itstate))
        goto slow;
#endif
      goto *handler[e->fast];
    }
    /* VM_JIT_PLAIN: on one instruction at a time up to the event. What
     * exec_insn runs anyway (an IT block, a slow instruction) and the end
     * of a block go the way they go in a block, which checks the event
     * before every instruction from there (step_one, enter). */
    if (VM_UNLIKELY(c->served)) { /* vm_jit_event did the service: as `event` leaves */
      pc = e->tag;
      ir += e->nth;
      LS_FROM_PREV();
      goto out;
    }
    if (e->fast == VM_FAST_IT || e->fast == VM_FAST_SLOW)
      goto slow;
    if (e->fast == VM_FAST_BLKEND)
      goto blkend;
#if FAST_TM
    /* (not reached: code that charges the model leaves so only when the
     * event is due, jit.h; never on to run_plain's table timing) */
    if (VM_UNLIKELY(cy < ev)) {
      if (c->itstate)
        goto slow;
      goto *handler[e->fast];
    }
#endif
    pc = e->tag;
    ir += e->nth;
    LS_FROM_PREV();
    if (cy >= ev) /* the event is due: nothing to run before it */
      goto EVENT;
    SYNC();
    run_plain(vm);
    return;
  }
  pc = js.pc;
  lsp = false;
  lsrt = VM_NOREG;
  link_from = js.op;
  goto enter;
}
#endif

out: __attribute__((unused)); /* (the block executor's exits go to `event`) */
  SYNC();
synced_out: __attribute__((unused));
  return;
#if FAST_BLOCK
  /* At the event: the service, here, and on, as vm_cpu_execute would do it
   * after this function returned and then call it again (exec.c): a PC
   * sample, a timer, an exception to take (issue 20: no trip out and back
   * in for a timer's interrupt). When the service stops the run, or
   * vm_cpu_execute would pick another executor (or the MTB's way to call
   * this one), return with the service done (cpu.served, cpu.served_stop). */
event:
  SYNC();
event_synced:
  if (!needs_service(vm))
    return;
  if (vm_sys_service(vm)) {
    c->served = c->served_stop = true;
    return;
  }
  if (VM_UNLIKELY(c->sleeping || c->locked_up)) /* vm_cpu_execute serves again */
    return;
  if (VM_UNLIKELY(vm->attention || vm->hooked || vm->mtb_observe != c->run_mtb)) {
    c->served = true;
    return;
  }
  link_from = NULL;
  LOAD();
  goto check_mode;
#endif

#define DP_RETIRE RETIRE(PC + in->len, 1, false, VM_NOREG)
#define DP_HANDLERS(A)                                                                 \
  dpi_##A##_0: fast_dp(c, &fl, in, VM_ALU_##A, 0, false); DP_RETIRE;                        \
  dpi_##A##_1: fast_dp(c, &fl, in, VM_ALU_##A, 0, true); DP_RETIRE;                         \
  dpr_##A##_0: fast_dp(c, &fl, in, VM_ALU_##A, 1, false); DP_RETIRE;                        \
  dpr_##A##_1: fast_dp(c, &fl, in, VM_ALU_##A, 1, true); DP_RETIRE;                         \
  dps_##A##_0: fast_dp(c, &fl, in, VM_ALU_##A, 2, false); DP_RETIRE;                        \
  dps_##A##_1: fast_dp(c, &fl, in, VM_ALU_##A, 2, true); DP_RETIRE;
  ALU_LIST(DP_HANDLERS)
#undef DP_HANDLERS
#undef DP_RETIRE

  /* LDR/STR Rt with an immediate offset, one size and addressing mode each
   * (M: OFF [Rn, #off], PRE [Rn, #off]!, POST [Rn], #off): the commonest
   * forms, as the generic `ld`/`st` below and exec_insn do them. */
#define LDST_ADDR(M) (VM_LDST_##M == VM_LDST_POST ? c->r[in->rn] : c->r[in->rn] + (uint32_t)e->soff)
#define LDST_WB(M)                                                                     \
  do {                                                                                 \
    if (VM_LDST_##M == VM_LDST_PRE)                                                    \
      c->r[in->rn] = addr;                                                             \
    else if (VM_LDST_##M == VM_LDST_POST)                                              \
      c->r[in->rn] = addr + (uint32_t)e->soff;                                         \
  } while (0)
#define LDR_IMM(LBL, M, SIZE, TYPE, EXT)                                               \
  LBL##_##M: {                                                                         \
    const uint32_t addr = LDST_ADDR(M);                                                \
    if (VM_UNLIKELY(addr & ((SIZE) - 1)))                                              \
      goto slow;                                                                       \
    const struct vm_page *p = fast_page(&vm->bus, addr, (SIZE), false);                \
    if (VM_UNLIKELY(!p))                                                               \
      goto slow;                                                                       \
    TYPE raw_;                                                                         \
    memcpy(&raw_, p->host + (addr & ((1u << VM_PAGE_SHIFT) - 1)), (SIZE));             \
    TX_LOG(addr, (SIZE), (uint32_t)raw_, 0);                                           \
    LDST_WB(M);                                                                        \
    c->r[in->rd] = (uint32_t)(EXT)raw_;                                                \
    cyc = LS_CYCLES();                                                                 \
    RETIRE(PC + in->len, cyc + p->wait_read, c->t.ls_pipeline, in->rd);                \
  }
#define STR_IMM(LBL, M, SIZE, TYPE)                                                    \
  LBL##_##M: {                                                                         \
    const uint32_t addr = LDST_ADDR(M);                                                \
    if (VM_UNLIKELY(addr & ((SIZE) - 1)))                                              \
      goto slow;                                                                       \
    const struct vm_page *p = fast_page(&vm->bus, addr, (SIZE), true);                 \
    if (VM_UNLIKELY(!p))                                                               \
      goto slow;                                                                       \
    const TYPE v_ = (TYPE)(in->rd == 15 ? PC : c->r[in->rd]);                          \
    memcpy(p->host + (addr & ((1u << VM_PAGE_SHIFT) - 1)), &v_, (SIZE));               \
    TX_LOG(addr, (SIZE), (uint32_t)v_, 1);                                             \
    LDST_WB(M);                                                                        \
    cyc = LS_CYCLES();                                                                 \
    RETIRE(PC + in->len, cyc + p->wait_write, c->t.ls_pipeline, VM_NOREG);             \
  }
#define LDST_HANDLERS(M)                                                               \
  LDR_IMM(ldr_w, M, 4, uint32_t, uint32_t)                                             \
  LDR_IMM(ldr_h, M, 2, uint16_t, uint16_t)                                             \
  LDR_IMM(ldr_sh, M, 2, uint16_t, int16_t)                                             \
  LDR_IMM(ldr_b, M, 1, uint8_t, uint8_t)                                               \
  LDR_IMM(ldr_sb, M, 1, uint8_t, int8_t)                                               \
  STR_IMM(str_w, M, 4, uint32_t)                                                       \
  STR_IMM(str_h, M, 2, uint16_t)                                                       \
  STR_IMM(str_b, M, 1, uint8_t)
  LDST_HANDLERS(OFF)
  LDST_HANDLERS(PRE)
  LDST_HANDLERS(POST)
#undef LDST_HANDLERS
#undef LDR_IMM
#undef STR_IMM
#undef LDST_ADDR
#undef LDST_WB

ld: {
  uint32_t base = (in->flags & VM_F_LIT) ? (PC + 4) & ~3u : c->r[in->rn];
  uint32_t off = in->rm != VM_NOREG ? c->r[in->rm] << in->sh_n : in->imm;
  uint32_t offaddr = (in->flags & VM_F_U) ? base + off : base - off;
  uint32_t addr = (in->flags & VM_F_P) ? offaddr : base;
  unsigned size = in->sub & 7;
  if (VM_UNLIKELY(addr & (size - 1)))
    goto slow;
  const struct vm_page *p = fast_page(&vm->bus, addr, size, false);
  if (VM_UNLIKELY(!p))
    goto slow;
  const uint8_t *h = p->host + (addr & ((1u << VM_PAGE_SHIFT) - 1));
  uint32_t v;
  if (size == 4) {
    memcpy(&v, h, 4);
  } else if (size == 2) {
    uint16_t v16;
    memcpy(&v16, h, 2);
    v = (in->sub & VM_SZ_SIGNED) ? (uint32_t)(int32_t)(int16_t)v16 : v16;
  } else {
    v = (in->sub & VM_SZ_SIGNED) ? (uint32_t)(int32_t)(int8_t)*h : *h;
  }
  TX_LOG(addr, size, size == 4 ? v : size == 2 ? v & 0xffff : v & 0xff, 0);
  if (in->flags & VM_F_W)
    c->r[in->rn] = offaddr;
  c->r[in->rd] = v;
  /* Neighbouring single loads/stores pipeline (as exec_insn) */
  cyc = LS_CYCLES();
  RETIRE(PC + in->len, cyc + p->wait_read, c->t.ls_pipeline, in->rd);
}

st: {
  uint32_t base = (in->flags & VM_F_LIT) ? (PC + 4) & ~3u : c->r[in->rn];
  uint32_t off = in->rm != VM_NOREG ? c->r[in->rm] << in->sh_n : in->imm;
  uint32_t offaddr = (in->flags & VM_F_U) ? base + off : base - off;
  uint32_t addr = (in->flags & VM_F_P) ? offaddr : base;
  unsigned size = in->sub & 7;
  if (VM_UNLIKELY(addr & (size - 1)))
    goto slow;
  const struct vm_page *p = fast_page(&vm->bus, addr, size, true);
  if (VM_UNLIKELY(!p))
    goto slow;
  uint8_t *h = p->host + (addr & ((1u << VM_PAGE_SHIFT) - 1));
  uint32_t v = in->rd == 15 ? PC : c->r[in->rd];
  if (size == 4) {
    memcpy(h, &v, 4);
  } else if (size == 2) {
    uint16_t v16 = (uint16_t)v;
    memcpy(h, &v16, 2);
  } else {
    *h = (uint8_t)v;
  }
  TX_LOG(addr, size, size == 4 ? v : v & ((1u << (size * 8)) - 1), 1);
  if (in->flags & VM_F_W)
    c->r[in->rn] = offaddr;
  cyc = LS_CYCLES();
  RETIRE(PC + in->len, cyc + p->wait_write, c->t.ls_pipeline && in->rm == VM_NOREG, VM_NOREG);
}

  /* B<c>, one handler per condition */
#define BCOND_HANDLER(C)                                                               \
  bcond_##C:                                                                           \
    if (!lflags_pass(&fl, (C)))                                                        \
      RETIRE_FALL(PC + in->len, 1, false, VM_NOREG);                                   \
    RETIRE_TAKEN();
  COND_LIST(BCOND_HANDLER)
#undef BCOND_HANDLER
b:
  RETIRE_TAKEN();

bl:
  c->r[14] = (PC + in->len) | 1;
  RETIRE_TAKEN();

bx: {
  uint32_t v = c->r[in->rm];
#if FAST_BLOCK && !FAST_TM
  /* a handler's BX with EXC_RETURN; the event still comes first */
  if (VM_UNLIKELY((v & 1) && is_exc_return(vm, v)) && cy < ev)
    EXC_RETURN_RETIRE(v, 1);
#endif
  if (VM_UNLIKELY(!(v & 1) || is_exc_return(vm, v)))
    goto slow;
  next = v & ~1u;
  NONSEQ(next);
  RETIRE_BR(next, 1 + refill_cycles(vm, next), false, VM_NOREG);
}

cbz:
  if (c->r[in->rn] != 0)
    RETIRE_FALL(PC + in->len, 1, false, VM_NOREG);
  RETIRE_TAKEN();
cbnz:
  if (c->r[in->rn] == 0)
    RETIRE_FALL(PC + in->len, 1, false, VM_NOREG);
  RETIRE_TAKEN();

ldm: {
  uint32_t list = in->imm, n = (uint32_t)__builtin_popcount(list);
  uint32_t base = c->r[in->rn];
  uint32_t addr = in->sub ? base - 4 * n : base;
  if (VM_UNLIKELY(addr & 3))
    goto slow;
  const struct vm_page *p = fast_page(&vm->bus, addr, 4 * n, false);
  if (VM_UNLIKELY(!p))
    goto slow;
  const uint8_t *h = p->host + (addr & ((1u << VM_PAGE_SHIFT) - 1));
  uint32_t pcv = 0;
  bool exc_ret = false;
  if (list & 0x8000) { /* LoadWritePC: interworking and EXC_RETURN are slow */
    memcpy(&pcv, h + 4 * (n - 1), 4);
    if (VM_UNLIKELY(!(pcv & 1) || is_exc_return(vm, pcv))) {
#if FAST_BLOCK && !FAST_TM
      /* a handler's POP {..., pc} with EXC_RETURN: below, as `bx` does it */
      exc_ret = (pcv & 1) && cy < ev;
#endif
      if (!exc_ret)
        goto slow;
    }
  }
  uint32_t vals[16];
  unsigned tx_i = 0;
  (void)tx_i;
  for (unsigned r = 0; r < 15; r++)
    if (list & (1u << r)) {
      memcpy(&vals[r], h, 4);
      TX_LOG(addr + 4 * tx_i, 4, vals[r], 0);
      tx_i++;
      h += 4;
    }
  if (list & 0x8000)
    TX_LOG(addr + 4 * (n - 1), 4, pcv, 0);
  if (in->flags & VM_F_W)
    c->r[in->rn] = in->sub ? base - 4 * n : base + 4 * n;
  for (unsigned r = 0; r < 15; r++)
    if (list & (1u << r))
      c->r[r] = vals[r];
  cyc = 1 + n + n * p->wait_read;
#if FAST_BLOCK && !FAST_TM
  if (VM_UNLIKELY(exc_ret)) /* exec_insn's LoadWritePC of EXC_RETURN, then the return */
    EXC_RETURN_RETIRE(pcv, cyc);
#endif
  if (list & 0x8000) {
    next = pcv & ~1u;
    NONSEQ(next);
    RETIRE_BR(next, cyc + refill_cycles(vm, next), false, VM_NOREG);
  }
  RETIRE(PC + in->len, cyc, false, VM_NOREG);
}

stm: {
  uint32_t list = in->imm, n = (uint32_t)__builtin_popcount(list);
  uint32_t base = c->r[in->rn];
  uint32_t addr = in->sub ? base - 4 * n : base;
  if (VM_UNLIKELY((addr & 3) || (list & 0x8000)))
    goto slow;
  const struct vm_page *p = fast_page(&vm->bus, addr, 4 * n, true);
  if (VM_UNLIKELY(!p))
    goto slow;
  uint8_t *h = p->host + (addr & ((1u << VM_PAGE_SHIFT) - 1));
  for (unsigned r = 0; r < 15; r++)
    if (list & (1u << r)) {
      memcpy(h, &c->r[r], 4);
      TX_LOG(addr + (uint32_t)(h - p->host - (addr & ((1u << VM_PAGE_SHIFT) - 1))), 4, c->r[r],
             1);
      h += 4;
    }
  if (in->flags & VM_F_W)
    c->r[in->rn] = in->sub ? base - 4 * n : base + 4 * n;
  RETIRE(PC + in->len, 1 + n + n * p->wait_write, false, VM_NOREG);
}

mul: {
  uint32_t res = c->r[in->rn] * c->r[in->rm];
  c->r[in->rd] = res;
  if (in->flags & (VM_F_S | VM_F_S_NOTIT))
    fl.n = fl.z = res;
  RETIRE(PC + in->len, c->t.mul, false, VM_NOREG);
}
mla:
  c->r[in->rd] = c->r[in->ra] + c->r[in->rn] * c->r[in->rm];
  RETIRE(PC + in->len, c->t.mla, false, VM_NOREG);
mls:
  c->r[in->rd] = c->r[in->ra] - c->r[in->rn] * c->r[in->rm];
  RETIRE(PC + in->len, c->t.mla, false, VM_NOREG);
sbfx: {
  uint32_t v = c->r[in->rn] >> in->sh_n;
  unsigned w = in->imm;
  if (w < 32) {
    v &= (1u << w) - 1;
    if ((v >> (w - 1)) & 1)
      v |= ~((1u << w) - 1);
  }
  c->r[in->rd] = v;
  RETIRE(PC + in->len, 1, false, VM_NOREG);
}
ubfx: {
  uint32_t v = c->r[in->rn] >> in->sh_n;
  if (in->imm < 32)
    v &= (1u << in->imm) - 1;
  c->r[in->rd] = v;
  RETIRE(PC + in->len, 1, false, VM_NOREG);
}
ext: {
  uint32_t v = ror32(c->r[in->rm], in->sh_n);
  switch (in->sub) {
  case VM_EXT_SXTB: v = (uint32_t)(int32_t)(int8_t)v; break;
  case VM_EXT_SXTH: v = (uint32_t)(int32_t)(int16_t)v; break;
  case VM_EXT_UXTB: v &= 0xff; break;
  default: v &= 0xffff; break;
  }
  if (in->rn != 15)
    v += c->r[in->rn];
  c->r[in->rd] = v;
  RETIRE(PC + in->len, 1, false, VM_NOREG);
}
adr:
  c->r[in->rd] = ((PC + 4) & ~3u) + in->imm;
  RETIRE(PC + in->len, 1, false, VM_NOREG);
movt:
  c->r[in->rd] = (c->r[in->rd] & 0xffff) | (in->imm << 16);
  RETIRE(PC + in->len, 1, false, VM_NOREG);
#undef RETIRE
#undef TM_CHARGE
#undef RETIRE_BR
#undef RETIRE_FALL
#undef RETIRE_TAKEN
#undef PC
#undef LS_CYCLES
#undef LS_FROM_PREV
#undef BLOCK_OP
#undef NONSEQ
#undef DISPATCH
#undef SYNC
#undef LOAD
#undef TX_LOG
#undef in
#undef EVENT
#undef EVENT_SYNCED
}

#if FAST_BLOCK && !FAST_TM
/* The core's state before op from compiled code's (s), as run_block's SYNC
 * leaves it after an exit there (cpu.exec_pc aside: the callers differ). */
static inline void jit_sync(struct sonde_vm *vm, const struct vm_jit_state *s,
                            const struct vm_icache_entry *e)
{
  struct vm_cpu *c = &vm->cpu;
  bool lsp = s->lsp;
  uint8_t lsrt = s->lsrt;
  if (e->nth) {
    const struct vm_icache_entry *prev = &((const struct vm_block_op *)e)[-1].d;
    vm_fast_ls_after(prev->fast, &prev->insn, c->t.ls_pipeline, &lsp, &lsrt);
  }
  c->r[15] = e->tag;
  c->cycles = s->cy;
  c->instret = s->ir + e->nth;
  c->ls_pipe = lsp;
  c->ls_rt = lsrt;
  c->apsr = lflags_pack(&s->fl, c->apsr);
}

/* run_block's LOAD and check_mode's tests after vm_jit_slow or
 * vm_jit_serve: VM_JIT_SYNCED when run_block must go on itself, else 1
 * with s reloaded for compiled code to go on at the new PC. `apsr`: the
 * APSR the sync packed s->fl into; while it holds, s->fl means the same
 * flags (an exception's entry keeps them) and is kept. */
static inline int jit_reload(struct sonde_vm *vm, struct vm_jit_state *s, uint32_t apsr)
{
  const struct vm_cpu *c = &vm->cpu;
  if (VM_UNLIKELY(vm->attention || c->itstate || !(c->epsr & EPSR_T) ||
                  c->cycles >= vm->event_cycle))
    return VM_JIT_SYNCED;
  s->pc = c->r[15];
  s->cy = c->cycles;
  s->ir = c->instret;
  s->ev = vm->event_cycle;
  s->lsp = c->ls_pipe;
  s->lsrt = c->ls_rt;
  if (c->apsr != apsr)
    lflags_unpack(&s->fl, c->apsr);
  return 1;
}

/* vm_jit_slow's label `slow`: apart, so that the EXC_RETURN's way does not
 * carry exec_insn's stack frame. The APSR jit_sync packed. */
static __attribute__((noinline)) uint32_t jit_slow_step(struct sonde_vm *vm,
                                                        const struct vm_jit_state *s,
                                                        const struct vm_icache_entry *e)
{
  struct vm_cpu *c = &vm->cpu;
  c->exec_pc = e->nth ? ((const struct vm_block_op *)e)[-1].d.tag
                      : s->exec_pc; /* (run_block's, after the exit) */
  jit_sync(vm, s, e);
  const uint32_t apsr = c->apsr;
  step_one(vm, false);
  return apsr;
}

/* (jit.h) What run_block does for op after compiled code stopped before it:
 * the `bx` handler's EXC_RETURN_RETIRE for a handler's BX with EXC_RETURN,
 * else label `slow` (step_one: exec_insn), then LOAD and check_mode's tests,
 * with its locals in s. An instruction run elsewhere than in its block
 * (here rather than by the block's handler going on) changes nothing: the
 * handlers and exec_insn do the same, cycle for cycle. */
int vm_jit_slow(struct sonde_vm *vm, struct vm_jit_state *s, const struct vm_block_op *op)
{
  struct vm_cpu *c = &vm->cpu;
  const struct vm_icache_entry *e = &op->d;
  const uint64_t ev = VM_UNLIKELY(vm->attention) ? 0 : vm->event_cycle; /* run_block's, after the exit */
  if (VM_UNLIKELY(s->cy >= ev || c->itstate)) /* the event first; an IT block: as before */
    return 0;
  uint32_t v = 0, apsr;
  if (e->fast == VM_FAST_BX && ((v = c->r[e->insn.rm]) & 1) && is_exc_return(vm, v)) {
    /* EXC_RETURN_RETIRE(v, 1) */
    c->r[15] = v;
    c->cycles = s->cy + 1 + refill_cycles(vm, v);
    c->instret = s->ir + e->nth + 1u;
    c->ls_pipe = false;
    c->ls_rt = VM_NOREG;
    c->apsr = apsr = lflags_pack(&s->fl, c->apsr);
    c->exec_pc = e->tag;
    if (VM_UNLIKELY(vm->mtb_observe))
      vm_mtb_retire_exc_return(vm, e->tag, e->insn.len, v);
    vm_exc_return(vm, v);
  } else { /* `slow` */
    apsr = jit_slow_step(vm, s, e);
  }
  s->exec_pc = c->exec_pc; /* (run_block copies it back after every exit) */
  return jit_reload(vm, s, apsr);
}

/* (jit.h) A single load or store that compiled code's page check sent
 * away (memory that is not plain), when a device the bus met before answers
 * it: exec_insn's access and retirement (its LD/ST case and `retire`), with
 * the core's state as jit_sync leaves it where a device may read it (the
 * PC, the cycle and instruction counts, cpu.exec_pc: the DWT, a timer's
 * count, a stop's PC). Anything else (a bit-band alias, memory, a device
 * not met yet, an access it does not fit, the event due) is vm_jit_slow's
 * (0). After it: VM_JIT_DEV_ON, compiled code goes on after op with s->cy
 * and s->ev (nothing the rest of its block assumed changed: the event no
 * sooner, no attention, the blocks kept); else as vm_jit_slow returns,
 * with the core's state synced as step_one leaves it. */
int vm_jit_dev(struct sonde_vm *vm, struct vm_jit_state *s, const struct vm_block_op *op)
{
  struct vm_cpu *c = &vm->cpu;
  const struct vm_icache_entry *e = &op->d;
  const struct vm_insn *in = &e->insn;
  if (VM_UNLIKELY(vm->attention || s->cy >= vm->event_cycle || c->itstate))
    return 0;
  const unsigned f = e->fast;
  uint32_t addr, offaddr, size;
  bool load, wb, sign;
  if (f >= VM_FAST_LDST && f < VM_FAST_LDST + 24) { /* LDR_IMM, STR_IMM */
    const unsigned k = f - VM_FAST_LDST, mode = k / 8, form = k % 8;
    static const uint8_t sz[8] = {4, 2, 2, 1, 1, 4, 2, 1};
    addr = mode == VM_LDST_POST ? c->r[in->rn] : c->r[in->rn] + (uint32_t)e->soff;
    offaddr = mode == VM_LDST_POST ? addr + (uint32_t)e->soff : addr;
    wb = mode != VM_LDST_OFF;
    size = sz[form];
    load = form < VM_LDST_STR_W;
    sign = form == VM_LDST_LDR_SH || form == VM_LDST_LDR_SB;
  } else if (f == VM_FAST_LD || f == VM_FAST_ST) { /* `ld`, `st` */
    const uint32_t base = (in->flags & VM_F_LIT) ? (e->tag + 4) & ~3u : c->r[in->rn];
    const uint32_t off = in->rm != VM_NOREG ? c->r[in->rm] << in->sh_n : in->imm;
    offaddr = (in->flags & VM_F_U) ? base + off : base - off;
    addr = (in->flags & VM_F_P) ? offaddr : base;
    wb = (in->flags & VM_F_W) != 0;
    size = in->sub & 7;
    load = f == VM_FAST_LD;
    sign = (in->sub & VM_SZ_SIGNED) != 0;
  } else {
    return 0;
  }
  if (VM_UNLIKELY(addr & (size - 1)))
    return 0;
  /* jit_sync's, where a device may read it */
  const uint32_t pc = e->tag;
  const uint64_t start = s->cy;
  const uint32_t used = vm->cpu.blocks->used; /* (0 after a flush) */
  c->r[15] = pc;
  c->cycles = start;
  c->instret = s->ir + e->nth;
  c->exec_pc = e->nth ? ((const struct vm_block_op *)e)[-1].d.tag : s->exec_pc;
  uint32_t v = 0;
  int rc;
  if (load) {
    rc = vm_bus_device_read(vm, &vm->bus, addr, size, &v);
  } else {
    v = in->rd == 15 ? pc : c->r[in->rd];
    rc = vm_bus_device_write(vm, &vm->bus, addr, size, v);
  }
  if (rc == VM_BUS_NOT_SEEN)
    return 0; /* (nothing done; vm_jit_slow syncs again) */
  bool lsp = s->lsp; /* the pipelining state before op (jit_sync's) */
  uint8_t lsrt = s->lsrt;
  if (e->nth) {
    const struct vm_icache_entry *prev = &((const struct vm_block_op *)e)[-1].d;
    vm_fast_ls_after(prev->fast, &prev->insn, c->t.ls_pipeline, &lsp, &lsrt);
  }
  if (VM_UNLIKELY(rc != VM_BUS_OK)) { /* exec_insn's fault: a precise BusFault */
    c->ls_pipe = lsp;
    c->ls_rt = lsrt;
    const uint32_t apsr = c->apsr = lflags_pack(&s->fl, c->apsr);
    vm_fault(vm, VM_FAULT_PRECISERR, addr);
    c->ls_pipe = false;
    vm_bus_take_stalls(&vm->bus);
    c->cycles = start + 1;
    s->exec_pc = c->exec_pc;
    return jit_reload(vm, s, apsr);
  }
  if (load) {
    if (sign)
      v = size == 1 ? (uint32_t)(int32_t)(int8_t)v : (uint32_t)(int32_t)(int16_t)v;
    if (wb)
      c->r[in->rn] = offaddr;
    c->r[in->rd] = v;
  } else if (wb) {
    c->r[in->rn] = offaddr;
  }
  /* exec_insn's `retire` */
  const uint64_t stalls = vm_bus_take_stalls(&vm->bus); /* (none from a device yet) */
  const uint64_t end = start + vm_fast_ls_cycles(lsp, lsrt, in) + stalls;
  c->exec_pc = pc;
  s->exec_pc = pc;
  /* on in its block: its bound held for the event before (s->ev), and still
   * holds without stalls beyond the table's */
  if (VM_LIKELY(!vm->attention && vm->event_cycle >= s->ev && !stalls &&
                vm->cpu.blocks->used == used && !vm->mtb_hooked)) {
    s->cy = end;
    s->ev = vm->event_cycle;
    return VM_JIT_DEV_ON;
  }
  /* the rest of the block may not run: the state as step_one leaves it */
  bool lsp_after;
  uint8_t lsrt_after;
  vm_fast_ls_after(f, in, c->t.ls_pipeline, &lsp_after, &lsrt_after);
  c->r[15] = pc + in->len;
  c->cycles = end;
  c->instret = s->ir + e->nth + 1u;
  c->ls_pipe = lsp_after;
  c->ls_rt = lsrt_after;
  const uint32_t apsr = c->apsr = lflags_pack(&s->fl, c->apsr);
  if (VM_UNLIKELY(vm->mtb_observe) && vm->mtb_hooked)
    vm_mtb_retire(vm, pc, in->len);
  return jit_reload(vm, s, apsr);
}

/* (jit.h) run_block's way at a checked variant's stop at the event before
 * op (VM_JIT_PLAIN: `slow`, `blkend` or its last lines, which all come to
 * label `event` then), and label `event` itself: the service, here. */
int vm_jit_serve(struct sonde_vm *vm, struct vm_jit_state *s, const struct vm_block_op *op)
{
  struct vm_cpu *c = &vm->cpu;
  const struct vm_icache_entry *e = &op->d;
  if (VM_UNLIKELY(c->served || vm->attention) || s->cy < vm->event_cycle)
    return 0; /* vm_jit_event served it, or not due: as the exit goes on */
  c->exec_pc = s->exec_pc; /* (the exit stored the entry before op there) */
  jit_sync(vm, s, e);
  const uint32_t apsr = c->apsr;
  /* `event_synced` (needs_service: the cycle is due) */
  int how = 1;
  if (vm_sys_service(vm)) {
    c->served = c->served_stop = true;
    how = VM_JIT_SERVED;
  } else {
    if (VM_UNLIKELY(c->sleeping || c->locked_up)) {
      how = VM_JIT_SERVED;
    } else if (VM_UNLIKELY(vm->attention || vm->hooked || vm->mtb_observe != c->run_mtb)) {
      c->served = true;
      how = VM_JIT_SERVED;
    }
  }
  s->exec_pc = c->exec_pc;
  return how != 1 ? how : jit_reload(vm, s, apsr); /* (attention is clear here) */
}
#endif

#undef FAST_FN
#undef FAST_HOOKED
#undef FAST_MTB
#undef FAST_BLOCK
#undef FAST_TM

