/* "The PC at cycle T": every way the VM tells which PC occupies a cycle
 * follows one rule (include/sonde/trace.h, sonde_pcsample_of; docs/vm.md
 * "Which PC a sample carries"), checked here against ground truth built
 * from the observation hooks alone, one value per cycle:
 *   - an instruction's cycles [start, start + cycles) (retire hook) show it;
 *   - the cycles a gap begins with that the core slept (the sleep-cycle
 *     statistic, docs/formats.md "PC trace") show the sleep form;
 *   - the other cycles of a gap (exception entry, return, tail-chain) show
 *     the last instruction that started before them.
 * Firmware: firmware/dbg/dbg_pcat.c (divides, LDM/STM, loads and stores to
 * memory with 40 wait states, a busy-wait on the delay peripheral, nested
 * and tail-chained exceptions, WFI woken by a timer), on a CC2650-like
 * machine with that slow memory and one wait state on flash reads
 * (tests/dbg/pcat.machine). The
 * trace blocks are set through the debug port before the first instruction
 * (as a probe does), at every interval of FrankenTrace's Table 2 plus 64
 * and 16384, with CYCCNT and POSTINIT phases; the SWO is decoded with the
 * project's ITM decoder (src/itm), and:
 *   - every PC sample equals the ground truth at its cycle, none missing;
 *   - the compiled, block and one-at-a-time/hooked executors give the same
 *     SWO bytes;
 *   - run N times with phases 0..N-1 (N = 64, 128), the union of the
 *     samples is the ground truth at every cycle, each cycle once;
 *   - CYCMATCH PC samples, sonde_vm_pc_at_cycle() at every cycle, and
 *     DWT_PCSR reads by a debugger follow the same rule;
 *   - sonde_pcsample_at() over a PC trace of the run gives the same. */
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sonde/itm.h"
#include "sonde/trace.h"
#include "sonde/vm.h"

#ifndef SONDE_FIRMWARE_DIR
#define SONDE_FIRMWARE_DIR SONDE_BINARY_DIR "/firmware"
#endif

static struct sonde_machine *machine;
static unsigned char *elf;
static size_t elf_len;

enum { K_INSN, K_SLEEP, K_GAP, K_NONE }; /* what occupied a cycle */

/* Ground truth, one entry per cycle. */
static struct {
  uint8_t *kind;
  uint32_t *pc;    /* K_INSN: the instruction; K_GAP: the last one before */
  uint32_t *len;   /* K_INSN: the instruction's cycles */
  uint64_t n;      /* cycles covered */
  uint64_t cap;
  uint64_t sleep_seen;
  struct sonde_vm *vm;
  uint32_t last_pc;
  bool have_last;
} gt;

static int quiet(void *ctx, int stream, const void *data, size_t len)
{
  (void)ctx, (void)stream, (void)data, (void)len;
  return 0;
}

static void gt_grow(uint64_t upto)
{
  if (upto <= gt.cap)
    return;
  uint64_t cap = gt.cap ? gt.cap : 1 << 16;
  while (cap < upto)
    cap *= 2;
  gt.kind = realloc(gt.kind, cap);
  gt.pc = realloc(gt.pc, cap * sizeof *gt.pc);
  gt.len = realloc(gt.len, cap * sizeof *gt.len);
  if (!gt.kind || !gt.pc || !gt.len)
    abort();
  gt.cap = cap;
}

/* Fill the gap [gt.n, upto): its sleep first, then exception spans. */
static void gt_gap(uint64_t upto)
{
  struct sonde_vm_stats st;
  sonde_vm_get_stats(gt.vm, &st);
  uint64_t sleep = st.sleep_cycles - gt.sleep_seen;
  gt.sleep_seen = st.sleep_cycles;
  gt_grow(upto);
  for (uint64_t t = gt.n; t < upto; t++, sleep -= sleep ? 1 : 0) {
    gt.kind[t] = sleep ? K_SLEEP : gt.have_last ? K_GAP : K_NONE;
    gt.pc[t] = gt.last_pc;
    gt.len[t] = 0;
  }
  if (upto > gt.n)
    gt.n = upto;
}

static void gt_retire(void *ctx, uint32_t pc, uint64_t cycle, uint32_t cycles)
{
  (void)ctx;
  gt_gap(cycle);
  gt_grow(cycle + cycles);
  for (uint64_t t = cycle; t < cycle + cycles; t++) {
    gt.kind[t] = K_INSN;
    gt.pc[t] = pc;
    gt.len[t] = cycles;
  }
  gt.n = cycle + cycles;
  gt.last_pc = pc;
  gt.have_last = true;
}

/* The expected sample at t. */
static struct sonde_pcsample expect_at(uint64_t t)
{
  struct sonde_pcsample s = {t, SONDE_PCSAMPLE_NONE, 0};
  if (t >= gt.n)
    return s;
  if (gt.kind[t] == K_SLEEP) {
    s.kind = SONDE_PCSAMPLE_SLEEP;
  } else if (gt.kind[t] != K_NONE) {
    s.kind = SONDE_PCSAMPLE_PC;
    s.pc = gt.pc[t];
  }
  return s;
}

static bool same(const struct sonde_pcsample *a, const struct sonde_pcsample *b)
{
  return a->kind == b->kind && (a->kind != SONDE_PCSAMPLE_PC || a->pc == b->pc);
}

static struct sonde_vm *new_vm(bool jit)
{
  struct sonde_vm *vm = NULL;
  if (sonde_vm_new(machine, &vm) != 0 || sonde_vm_load_elf(vm, elf, elf_len, "firmware") != 0) {
    sonde_vm_free(vm);
    CHECK_FAIL_("cannot load the firmware");
    return NULL;
  }
  sonde_vm_set_output(vm, quiet, NULL);
  sonde_vm_set_jit(vm, jit);
  sonde_vm_reset(vm);
  return vm;
}

static uint64_t end_cycles; /* cycles of a whole run */

static void build_ground_truth(void)
{
  struct sonde_vm *vm = new_vm(false);
  REQUIRE(vm);
  gt.vm = vm;
  struct sonde_vm_hooks h = {.retire = gt_retire};
  sonde_vm_set_hooks(vm, &h);
  struct sonde_vm_stop stop;
  CHECK_EQ_I(sonde_vm_run(vm, 50000000, &stop), 0);
  CHECK_EQ_I(stop.reason, SONDE_VM_STOP_EXIT);
  CHECK_EQ_I(stop.exit_code, 0);
  struct sonde_vm_stats st;
  sonde_vm_get_stats(vm, &st);
  end_cycles = st.cycles;
  gt_gap(st.cycles);
  sonde_vm_free(vm);
  gt.vm = NULL;
}

/* ---- the trace blocks, set through the debug port -------------------------- */

#define DEMCR 0xE000EDFCu
#define DWT_CTRL 0xE0001000u
#define DWT_CYCCNT 0xE0001004u
#define DWT_PCSR 0xE000101Cu
#define DWT_COMP0 0xE0001020u
#define DWT_MASK0 0xE0001024u
#define DWT_FUNCTION0 0xE0001028u
#define ITM_TCR 0xE0000E80u
#define TPIU_CSPSR 0xE0040004u
#define TPIU_ACPR 0xE0040010u
#define TPIU_SPPR 0xE00400F0u
#define TPIU_FFCR 0xE0040304u

static void wr(struct sonde_vm *vm, uint32_t addr, uint32_t v)
{
  CHECK_EQ_I(sonde_vm_write_mem(vm, addr, &v, 4), 0);
}

static uint32_t rd(struct sonde_vm *vm, uint32_t addr)
{
  uint32_t v = 0;
  CHECK_EQ_I(sonde_vm_read_mem(vm, addr, &v, 4), 0);
  return v;
}

/* SWO at the core clock (NRZ, no formatter), DWT packets only. */
static void swo_setup(struct sonde_vm *vm)
{
  wr(vm, DEMCR, 1u << 24); /* TRCENA */
  wr(vm, TPIU_CSPSR, 1);
  wr(vm, TPIU_SPPR, 2);
  wr(vm, TPIU_ACPR, 0);
  wr(vm, TPIU_FFCR, 0x100);
  wr(vm, ITM_TCR, (1u << 16) | (1u << 3) | 1u); /* TraceBusID 1, TXENA, ITMENA */
}

/* PC sampling with DWT_CTRL[12:0] = ctrl13, CYCCNT starting at cyccnt and
 * POSTCNT at postinit (written while PCSAMPLENA is off, then switched on). */
static void sampling_setup(struct sonde_vm *vm, uint32_t ctrl13, uint32_t cyccnt,
                           unsigned postinit)
{
  wr(vm, DWT_CYCCNT, cyccnt);
  uint32_t v = (ctrl13 & ~(1u << 12)) | ((postinit & 0xF) << 5);
  wr(vm, DWT_CTRL, v);
  wr(vm, DWT_CTRL, v | (ctrl13 & (1u << 12)));
}

/* The cycles of the sampling events (ARMv7-M C1.8.2, independent of the
 * VM's scheduler): a tap at each change of CYCCNT[6] (CYCTAP 0) or [10];
 * POSTCNT starts at postinit, decrements at a tap, and at a tap when 0
 * reloads POSTPRESET and raises the event. */
static uint64_t first_event(uint32_t ctrl13, uint32_t cyccnt, unsigned postinit, uint64_t c0,
                            uint64_t *interval)
{
  unsigned k = (ctrl13 & (1u << 9)) ? 10 : 6;
  uint64_t p = 1ull << k;
  uint64_t first_tap = c0 + (p - (cyccnt & (p - 1)));
  *interval = (((ctrl13 >> 1) & 0xF) + 1) * p;
  return first_tap + postinit * p;
}

struct swo {
  uint8_t *b;
  size_t n, cap;
};

static int on_swo(void *ctx, const struct sonde_vm_swo_byte *b)
{
  struct swo *s = ctx;
  if (s->n == s->cap) {
    s->cap = s->cap ? 2 * s->cap : 4096;
    s->b = realloc(s->b, s->cap);
    if (!s->b)
      abort();
  }
  s->b[s->n++] = b->byte;
  return 0;
}

/* The PC samples in an SWO stream, in order (the project's ITM decoder);
 * *overflows counts overflow packets and anything skipped. */
static size_t decode_samples(const struct swo *s, struct sonde_pcsample **out, size_t *overflows)
{
  struct sonde_itm *d = sonde_itm_new(NULL);
  if (!d)
    abort();
  size_t n = 0, cap = 0, off = 0;
  struct sonde_pcsample *v = NULL;
  struct sonde_itm_packet pk[256];
  *overflows = 0;
  for (bool end = false; !end;) {
    size_t used = 0, np;
    if (off < s->n) {
      np = sonde_itm_decode(d, s->b + off, s->n - off, &used, pk, 256);
      off += used;
    } else {
      np = sonde_itm_finish(d, pk, 256);
      end = true;
    }
    for (size_t i = 0; i < np; i++) {
      if (pk[i].type == SONDE_ITM_OVERFLOW || pk[i].type == SONDE_ITM_SKIP)
        (*overflows)++;
      if (pk[i].type != SONDE_ITM_PC && pk[i].type != SONDE_ITM_PC_SLEEP)
        continue;
      if (n == cap) {
        cap = cap ? 2 * cap : 1024;
        v = realloc(v, cap * sizeof *v);
        if (!v)
          abort();
      }
      v[n].cycle = 0;
      v[n].kind = pk[i].type == SONDE_ITM_PC ? SONDE_PCSAMPLE_PC : SONDE_PCSAMPLE_SLEEP;
      v[n].pc = pk[i].type == SONDE_ITM_PC ? (uint32_t)pk[i].value : 0;
      n++;
    }
  }
  sonde_itm_free(d);
  *out = v;
  return n;
}

enum { EX_JIT, EX_BLOCK, EX_HOOKED, EX_COUNT };

static void noop_retire(void *ctx, uint32_t pc, uint64_t cycle, uint32_t cycles)
{
  (void)ctx, (void)pc, (void)cycle, (void)cycles;
}

/* Run the firmware with PC sampling set so; the SWO bytes into *s. */
static void run_sampled(int ex, uint32_t ctrl13, uint32_t cyccnt, unsigned postinit,
                        struct swo *s, uint64_t *c0)
{
  memset(s, 0, sizeof *s);
  struct sonde_vm *vm = new_vm(ex == EX_JIT);
  REQUIRE(vm);
  if (ex == EX_HOOKED) { /* a retire hook: every instruction through the observers */
    struct sonde_vm_hooks h = {.retire = noop_retire};
    sonde_vm_set_hooks(vm, &h);
  }
  sonde_vm_set_swo(vm, on_swo, s);
  swo_setup(vm);
  struct sonde_vm_stats st;
  sonde_vm_get_stats(vm, &st);
  *c0 = st.cycles;
  sampling_setup(vm, ctrl13, cyccnt, postinit);
  struct sonde_vm_stop stop;
  CHECK_EQ_I(sonde_vm_run(vm, 50000000, &stop), 0);
  CHECK_EQ_I(stop.reason, SONDE_VM_STOP_EXIT);
  sonde_vm_get_stats(vm, &st);
  CHECK_EQ_U(st.cycles, end_cycles); /* the trace blocks never change the timing */
  sonde_vm_free(vm);
}

/* ---- every sample at every Table 2 interval ---------------------------------- */

struct coverage {
  size_t samples, mid_insn, stall, gap, sleep;
};

static void count_class(struct coverage *cv, uint64_t t)
{
  cv->samples++;
  if (t >= gt.n)
    return;
  if (gt.kind[t] == K_SLEEP)
    cv->sleep++;
  else if (gt.kind[t] == K_GAP)
    cv->gap++;
  else if (gt.kind[t] == K_INSN && t && gt.kind[t - 1] == K_INSN && gt.pc[t - 1] == gt.pc[t] &&
           gt.len[t] > 1)
    cv->mid_insn += 1, cv->stall += gt.len[t] > 40;
}

/* Run with one setting on every executor; check each sample. */
static void check_setting(uint32_t ctrl13, uint32_t cyccnt, unsigned postinit,
                          struct coverage *cv)
{
  struct swo s[EX_COUNT];
  uint64_t c0 = 0;
  for (int ex = 0; ex < EX_COUNT; ex++)
    run_sampled(ex, ctrl13, cyccnt, postinit, &s[ex], &c0);
  for (int ex = 1; ex < EX_COUNT; ex++) { /* compiled = block = hooked, byte for byte */
    CHECK_EQ_U(s[ex].n, s[0].n);
    if (s[ex].n == s[0].n && s[0].n)
      CHECK(memcmp(s[ex].b, s[0].b, s[0].n) == 0);
  }
  struct sonde_pcsample *v = NULL;
  size_t ovf = 0, n = decode_samples(&s[0], &v, &ovf);
  uint64_t interval, t0 = first_event(ctrl13, cyccnt, postinit, c0, &interval);
  size_t events = t0 < end_cycles ? (size_t)((end_cycles - 1 - t0) / interval + 1) : 0;
  CHECK_EQ_U(ovf, 0);
  CHECK_EQ_U(n, events);
  size_t wrong = 0;
  for (size_t j = 0; j < n && j < events; j++) {
    uint64_t t = t0 + j * interval;
    struct sonde_pcsample e = expect_at(t);
    if (!same(&v[j], &e)) {
      if (wrong < 3)
        printf("  ctrl %#x cyccnt %u postinit %u: sample %zu at cycle %llu: got %d %#x, "
               "want %d %#x\n", ctrl13, cyccnt, postinit, j, (unsigned long long)t, v[j].kind,
               v[j].pc, e.kind, e.pc);
      wrong++;
    }
    count_class(cv, t);
  }
  CHECK_EQ_U(wrong, 0);
  free(v);
  for (int ex = 0; ex < EX_COUNT; ex++)
    free(s[ex].b);
}

static void test_table2_every_sample(void)
{
  /* FrankenTrace's Table 2 (5120, 3072, 512, 192, 128 cycles), and the
   * shortest and longest intervals (64, 16384) */
  static const uint32_t ctrls[] = {0x1209, 0x1205, 0x100f, 0x1005, 0x1003, 0x1001, 0x121f};
  static const uint32_t cyccnts[] = {0, 17, 63, 1000, 0xFFFFFFF0u};
  struct coverage cv = {0};
  for (size_t i = 0; i < sizeof ctrls / sizeof *ctrls; i++)
    for (size_t k = 0; k < sizeof cyccnts / sizeof *cyccnts; k++) {
      unsigned preset = (ctrls[i] >> 1) & 0xF;
      check_setting(ctrls[i], cyccnts[k], (unsigned)k % (preset + 1), &cv);
    }
  printf("table 2: %zu samples: %zu inside multi-cycle instructions (%zu in 40-wait-state "
         "stalls), %zu in exception entry/return/tail-chain, %zu asleep\n",
         cv.samples, cv.mid_insn, cv.stall, cv.gap, cv.sleep);
  CHECK(cv.mid_insn > 100);
  CHECK(cv.stall > 20);
  CHECK(cv.gap > 20);
  CHECK(cv.sleep > 20);
}

/* ---- the FrankenTrace property: phases 0..N-1 cover every cycle ---------------- */

/* Samples inside the exception entry of a fault whose instruction ran in
 * the one-at-a-time executor (near the event) or first in a compiled block
 * entered by a branch (a known gap, docs/vm.md "Which PC a sample
 * carries"): they may show an older instruction. Counted apart when
 * `fault_gap`, else wrong. */
static size_t fault_gap_samples;
static bool fault_gap;

static void check_union(uint32_t ctrl13, int ex)
{
  unsigned preset = (ctrl13 >> 1) & 0xF;
  uint64_t interval = (uint64_t)(preset + 1) * 64;
  uint8_t *seen = calloc(end_cycles, 1);
  REQUIRE(seen);
  size_t wrong = 0, twice = 0;
  uint64_t lo = UINT64_MAX;
  for (unsigned post = 0; post <= preset; post++)
    for (uint32_t v = 0; v < 64; v++) {
      struct swo s;
      uint64_t c0 = 0;
      run_sampled(ex, ctrl13, v, post, &s, &c0);
      struct sonde_pcsample *smp = NULL;
      size_t ovf = 0, n = decode_samples(&s, &smp, &ovf);
      CHECK_EQ_U(ovf, 0);
      uint64_t iv, t0 = first_event(ctrl13, v, post, c0, &iv);
      CHECK_EQ_U(iv, interval);
      if (t0 < lo)
        lo = t0;
      for (size_t j = 0; j < n; j++) {
        uint64_t t = t0 + j * interval;
        if (t >= end_cycles) {
          wrong++;
          continue;
        }
        struct sonde_pcsample e = expect_at(t);
        if (!same(&smp[j], &e) && fault_gap && gt.kind[t] == K_GAP) {
          if (getenv("PCAT_DEBUG"))
            printf("  gap: cycle %llu got %#x want %#x\n", (unsigned long long)t, smp[j].pc, e.pc);
          fault_gap_samples++;
        }
        else if (!same(&smp[j], &e) && wrong++ < 3)
          printf("  phase cyccnt %u postinit %u: sample at cycle %llu: got %d %#x, want %d %#x\n",
                 v, post, (unsigned long long)t, smp[j].kind, smp[j].pc, e.kind, e.pc);
        twice += seen[t]++ != 0;
      }
      free(smp);
      free(s.b);
    }
  /* every cycle from the first event to the end, except the last
   * instruction's (the run ends inside it), has exactly one sample */
  size_t missing = 0;
  uint64_t last = end_cycles;
  while (last > 0 && gt.kind[last - 1] == K_INSN && gt.pc[last - 1] == gt.pc[end_cycles - 1])
    last--;
  for (uint64_t t = lo; t < last; t++)
    missing += !seen[t];
  static const char *const exname[] = {"compiled", "block", "hooked"};
  printf("union of %llu phases (N = %llu, %s): cycles %llu..%llu, %zu wrong, %zu missing, "
         "%zu twice\n",
         (unsigned long long)interval, (unsigned long long)interval, exname[ex],
         (unsigned long long)lo, (unsigned long long)last, wrong, missing, twice);
  CHECK_EQ_U(wrong, 0);
  CHECK_EQ_U(missing, 0);
  CHECK_EQ_U(twice, 0);
  free(seen);
}

static void test_union_64(void)
{
  for (int ex = 0; ex < EX_COUNT; ex++)
    check_union(0x1001, ex);
}
static void test_union_128(void) { check_union(0x1003, EX_JIT); }

/* ---- CYCMATCH: comparator 0 against CYCCNT, FUNCTION 1 ---------------------- */

static void test_cycmatch(void)
{
  size_t wrong = 0, got = 0, tries = 0;
  for (uint64_t t = 500; t + 100 < end_cycles; t += end_cycles / 97 + 3) {
    struct swo s = {0};
    struct sonde_vm *vm = new_vm(true);
    REQUIRE(vm);
    sonde_vm_set_swo(vm, on_swo, &s);
    swo_setup(vm);
    struct sonde_vm_stats st;
    sonde_vm_get_stats(vm, &st);
    wr(vm, DWT_CYCCNT, 0);
    wr(vm, DWT_CTRL, 1); /* CYCCNTENA: CYCCNT(c) = c - st.cycles */
    wr(vm, DWT_COMP0, (uint32_t)(t - st.cycles));
    wr(vm, DWT_MASK0, 0);
    wr(vm, DWT_FUNCTION0, (1u << 7) | 1u); /* CYCMATCH, PC sample packet */
    struct sonde_vm_stop stop;
    CHECK_EQ_I(sonde_vm_run(vm, 50000000, &stop), 0);
    struct sonde_pcsample *smp = NULL;
    size_t ovf = 0, n = decode_samples(&s, &smp, &ovf);
    CHECK_EQ_U(n, 1);
    if (n == 1) {
      struct sonde_pcsample e = expect_at(t);
      wrong += !same(&smp[0], &e);
      got++;
    }
    tries++;
    free(smp);
    free(s.b);
    sonde_vm_free(vm);
  }
  printf("cycmatch: %zu of %zu matches sampled, %zu wrong\n", got, tries, wrong);
  CHECK_EQ_U(got, tries);
  CHECK_EQ_U(wrong, 0);
}

/* ---- sonde_vm_pc_at_cycle and DWT_PCSR ------------------------------------------ */

static void check_pc_at(uint64_t step, bool jit, bool dwt)
{
  struct sonde_vm *vm = new_vm(jit);
  REQUIRE(vm);
  if (dwt)
    swo_setup(vm); /* TRCENA: DWT_PCSR readable */
  size_t wrong = 0, pcsr_wrong = 0, n = 0;
  uint64_t t;
  for (t = 0; t + 1 < end_cycles; t += step) {
    struct sonde_pcsample s;
    struct sonde_vm_stop stop;
    int rc = sonde_vm_pc_at_cycle(vm, t, &s, &stop);
    if (rc == SONDE_E_AGAIN && stop.reason == SONDE_VM_STOP_EXIT)
      break;
    CHECK_EQ_I(rc, 0);
    struct sonde_pcsample e = expect_at(t);
    wrong += !same(&s, &e);
    n++;
    /* the debugger's DWT_PCSR read: the last cycle that has passed */
    struct sonde_vm_stats st;
    sonde_vm_get_stats(vm, &st);
    struct sonde_pcsample last = expect_at(st.cycles - 1);
    uint32_t want = last.kind == SONDE_PCSAMPLE_PC ? last.pc
                    : last.kind == SONDE_PCSAMPLE_SLEEP ? gt.pc[st.cycles - 1]
                                                        : 0xFFFFFFFFu;
    if (dwt)
      pcsr_wrong += rd(vm, DWT_PCSR) != want;
  }
  printf("pc_at_cycle every %llu cycles (%s): %zu cycles, %zu wrong, %zu DWT_PCSR wrong\n",
         (unsigned long long)step, jit ? "compiled" : "interpreted", n, wrong, pcsr_wrong);
  CHECK(n >= (end_cycles - 1) / step);
  CHECK_EQ_U(wrong, 0);
  CHECK_EQ_U(pcsr_wrong, 0);
  sonde_vm_free(vm);
}

static void test_pc_at_cycle(void)
{
  check_pc_at(1, true, true);
  check_pc_at(7, true, true);
  check_pc_at(61, false, true);
  check_pc_at(1000, true, true);
}

static void test_pc_at_cycle_errors(void)
{
  struct sonde_vm *vm = new_vm(true);
  REQUIRE(vm);
  struct sonde_pcsample s;
  CHECK_EQ_I(sonde_vm_pc_at_cycle(NULL, 5, &s, NULL), SONDE_E_ARG);
  CHECK_EQ_I(sonde_vm_pc_at_cycle(vm, 5, NULL, NULL), SONDE_E_ARG);
  CHECK_EQ_I(sonde_vm_pc_at_cycle(vm, 5000, &s, NULL), 0);
  struct sonde_pcsample e = expect_at(5000);
  CHECK(same(&s, &e));
  /* long before the last instruction that started: not kept */
  CHECK_EQ_I(sonde_vm_pc_at_cycle(vm, 100, &s, NULL), SONDE_E_RANGE);
  /* the firmware ends before: SONDE_E_AGAIN with the exit */
  struct sonde_vm_stop stop;
  CHECK_EQ_I(sonde_vm_pc_at_cycle(vm, end_cycles + 1000, &s, &stop), SONDE_E_AGAIN);
  CHECK_EQ_I(stop.reason, SONDE_VM_STOP_EXIT);
  /* halted by a debugger: DWT_PCSR reads all ones (ARMv7-M C1.8.2) */
  sonde_vm_free(vm);
}

/* ---- sonde_pcsample_at over a PC trace of the run ------------------------------ */

static void test_projector(void)
{
  /* the ground truth as a PC trace: instruction records, sleep spans, and
   * exception spans (entry here: the rule is the same for all three) */
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  REQUIRE(f);
  struct sonde_pctrace_writer *w = NULL;
  REQUIRE(sonde_pctrace_writer_new(f, "gt", SONDE_PCTRACE_BINARY, 48000000, 0, &w) == 0);
  for (uint64_t t = 0; t < gt.n;) {
    uint64_t u = t + 1;
    if (gt.kind[t] == K_INSN) {
      u = t + gt.len[t];
      CHECK_EQ_I(sonde_pctrace_write(w, gt.pc[t], gt.len[t]), 0);
    } else {
      while (u < gt.n && gt.kind[u] == gt.kind[t])
        u++;
      enum sonde_pctrace_kind k = gt.kind[t] == K_SLEEP  ? SONDE_PCTRACE_SLEEP
                                  : gt.kind[t] == K_GAP ? SONDE_PCTRACE_EXC_ENTRY
                                                        : SONDE_PCTRACE_HALTED;
      CHECK_EQ_I(sonde_pctrace_write_span(w, k, 15, (uint32_t)(u - t)), 0);
    }
    t = u;
  }
  CHECK_EQ_I(sonde_pctrace_writer_finish(w), 0);
  sonde_pctrace_writer_free(w);
  fclose(f);
  struct sonde_pctrace_reader *r = NULL;
  REQUIRE(sonde_pctrace_reader_new_buffer(buf, len, "gt", &r, NULL) == 0);
  struct sonde_pcsample_projector *p = NULL;
  REQUIRE(sonde_pcsample_projector_new(r, &p) == 0);
  size_t wrong = 0;
  struct sonde_pcsample s;
  for (uint64_t t = 0; t < gt.n; t++) {
    CHECK_EQ_I(sonde_pcsample_at(p, t, &s), 1);
    struct sonde_pcsample e = expect_at(t);
    wrong += !same(&s, &e) || s.cycle != t;
  }
  CHECK_EQ_U(wrong, 0);
  CHECK_EQ_I(sonde_pcsample_at(p, gt.n - 1, &s), 1); /* the same cycle again */
  CHECK_EQ_I(sonde_pcsample_at(p, 3, &s), SONDE_E_ARG); /* going back */
  CHECK_EQ_I(sonde_pcsample_at(p, gt.n, &s), 0);         /* after the end */
  sonde_pcsample_projector_free(p);
  sonde_pctrace_reader_free(r);
  free(buf);
  /* the pure rule on single records */
  struct sonde_pctrace_record rec = {100, 12, SONDE_PCTRACE_EXC_ENTRY, 0, 15};
  s = sonde_pcsample_of(&rec, 105, true, 0x1234);
  CHECK(s.kind == SONDE_PCSAMPLE_PC && s.pc == 0x1234 && s.cycle == 105);
  s = sonde_pcsample_of(&rec, 105, false, 0x1234);
  CHECK(s.kind == SONDE_PCSAMPLE_NONE);
  rec.kind = SONDE_PCTRACE_HALTED;
  s = sonde_pcsample_of(&rec, 105, true, 0x1234);
  CHECK(s.kind == SONDE_PCSAMPLE_NONE);
  rec.kind = SONDE_PCTRACE_SLEEP;
  s = sonde_pcsample_of(&rec, 105, true, 0x1234);
  CHECK(s.kind == SONDE_PCSAMPLE_SLEEP && s.pc == 0);
  rec.kind = SONDE_PCTRACE_INSN;
  rec.pc = 0x2000;
  s = sonde_pcsample_of(&rec, 111, true, 0x1234);
  CHECK(s.kind == SONDE_PCSAMPLE_PC && s.pc == 0x2000);
}

/* Load firmware `fw` (build/firmware/<fw>.elf) for machine m; false if missing. */
static bool load_fw(const char *fw, struct sonde_machine *m)
{
  char path[512];
  snprintf(path, sizeof path, "%s/%s.elf", SONDE_FIRMWARE_DIR, fw);
  FILE *f = fopen(path, "rb");
  if (!f) {
    printf("missing firmware %s (build the 'firmware' target)\n", path);
    return false;
  }
  static unsigned char buf[1 << 20];
  elf_len = fread(buf, 1, sizeof buf, f);
  fclose(f);
  elf = buf;
  machine = m;
  gt.n = gt.sleep_seen = 0;
  gt.have_last = false;
  build_ground_truth();
  printf("%s: %llu cycles\n", fw, (unsigned long long)end_cycles);
  return true;
}

/* The same rule on the exception-model firmware of tests/vm (late arrival,
 * nesting, WFI, SVC/PendSV tail-chains, faults: a faulting instruction's
 * cycle belongs to the exception entry, system resets, lazy FP stacking,
 * ARMv6-M's entry timing): sonde_vm_pc_at_cycle at every cycle on the
 * compiled and interpreted executors, and, where there is a DWT, the union
 * of 64 CYCCNT phases at N = 64. */
static void test_exception_firmware(void)
{
  static const struct {
    const char *fw, *machine;
  } fws[] = {
      {"exc_latearrival_m3", "cm3"}, {"exc_nesting_m3", "cm3"},      {"exc_wfi_m3", "cm3"},
      {"exc_svc_pendsv_m3", "cm3"},  {"exc_faults_m3", "cm3"},       {"exc_reset_m3", "cm3"},
      {"exc_lazyfp_m4f", "cm4f"},    {"exc_nesting_m0plus", "cm0plus"},
  };
  struct sonde_machine *keep = machine;
  for (size_t i = 0; i < sizeof fws / sizeof *fws; i++) {
    struct sonde_machine *m = NULL;
    REQUIRE(sonde_machine_builtin(fws[i].machine, &m) == 0);
    if (load_fw(fws[i].fw, m)) {
      bool dwt = sonde_machine_core(m) != SONDE_VM_CORE_M0PLUS;
      check_pc_at(1, true, dwt);
      check_pc_at(1, false, dwt);
      fault_gap = !strcmp(fws[i].fw, "exc_faults_m3");
      fault_gap_samples = 0;
      if (dwt)
        check_union(0x1001, EX_JIT);
      if (fault_gap) { /* only inside fault entries; none on the hooked executor */
        printf("  %zu samples inside a fault's exception entry show an older instruction\n",
               fault_gap_samples);
        CHECK_EQ_U(fault_gap_samples, 0); /* 19 of 5176 before issue 20 */
        fault_gap_samples = 0;
        check_union(0x1001, EX_HOOKED);
        CHECK_EQ_U(fault_gap_samples, 0);
      }
      fault_gap = false;
    } else {
      CHECK_FAIL_("missing %s", fws[i].fw);
    }
    sonde_machine_free(m);
  }
  machine = keep;
}

int main(void)
{
  static char mtext[4096];
  FILE *f = fopen(SONDE_SOURCE_DIR "/tests/dbg/pcat.machine", "rb");
  size_t mlen = f ? fread(mtext, 1, sizeof mtext, f) : 0;
  if (f)
    fclose(f);
  struct sonde_machine *pcat = NULL;
  if (sonde_machine_parse(mtext, mlen, "tests/dbg/pcat.machine", &pcat, NULL) != 0) {
    printf("tests/dbg/pcat.machine: missing or bad\n");
    return 1;
  }
  if (!load_fw("dbg_pcat", pcat))
    return 1;
  RUN(test_table2_every_sample);
  RUN(test_union_64);
  RUN(test_union_128);
  RUN(test_cycmatch);
  RUN(test_pc_at_cycle);
  RUN(test_pc_at_cycle_errors);
  RUN(test_projector);
  RUN(test_exception_firmware); /* last: it replaces the ground truth */
  free(gt.kind);
  free(gt.pc);
  free(gt.len);
  sonde_machine_free(pcat);
  return check_summary();
}
