/* src/monitor on the VM against ground truth (issue 18): function-level PC
 * polling at several rates against `sonde run --trace-pc`, the call-graph
 * inference, energy per function against the power model's integral,
 * watchpoint mode against `sonde run --trace-lsu`, breakpoint mode's
 * perturbation, and the power model's GPIO and delay currents. */
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sonde/monitor.h"
#include "sonde/trace.h"
#include "sonde/vm.h"
#include "vm/periph.h"

#define FW(n) SONDE_BINARY_DIR "/firmware/" n ".elf"
#define SONDE SONDE_BINARY_DIR "/src/cli/sonde"

static void *slurp(const char *path, size_t *len)
{
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  void *p = malloc((size_t)n + 1);
  if (p && fread(p, 1, (size_t)n, f) != (size_t)n) {
    free(p);
    p = NULL;
  }
  fclose(f);
  ((char *)p)[n] = 0;
  *len = (size_t)n;
  return p;
}

static struct sonde_machine *cm3_machine(const char *power_line)
{
  struct sonde_machine *m = NULL;
  if (!power_line) {
    sonde_machine_builtin("cm3", &m);
    return m;
  }
  char text[1024];
  snprintf(text, sizeof text,
           "machine cm3p\ncore m3\nclock 48MHz\nnvic irqs=64 prio-bits=3\n"
           "memory flash 0x00000000 512K access=rx\nmemory sram 0x20000000 128K access=rwx retain\n"
           "peripheral uart 0x400F0000 irq=0\nperipheral gpio 0x400F1000\n"
           "peripheral timer 0x400F2000 irq=1\nperipheral delay 0x400F3000 irq=2\n"
           "swo-baud 2000000\n%s\n",
           power_line);
  struct sonde_diag d;
  if (sonde_machine_parse(text, strlen(text), "test", &m, &d) < 0)
    fprintf(stderr, "machine: %s\n", d.msg);
  return m;
}

static int quiet(void *ctx, int stream, const void *data, size_t len)
{
  (void)ctx, (void)stream, (void)data, (void)len;
  return 0;
}

static struct sonde_vm *load_vm(const struct sonde_machine *m, const char *elf)
{
  size_t len;
  void *img = slurp(elf, &len);
  struct sonde_vm *vm = NULL;
  if (!img || sonde_vm_new(m, &vm) < 0 || sonde_vm_load_elf(vm, img, len, elf) < 0 ||
      sonde_vm_reset(vm) < 0) {
    fprintf(stderr, "cannot load %s\n", elf);
    sonde_vm_free(vm);
    vm = NULL;
  }
  sonde_vm_set_output(vm, quiet, NULL);
  free(img);
  return vm;
}

/* Ground truth through the sonde binary (src/cli/cmd_run.c writes it). */
static int truth_changes(const char *elf, const struct sonde_mon_ftab *ft,
                         struct sonde_mon_change **ch, size_t *n, uint64_t *end)
{
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "%s run %s --trace-pc %s/mon_truth.pct > /dev/null", SONDE, elf,
           SONDE_BINARY_DIR);
  if (system(cmd) != 0)
    return -1;
  snprintf(cmd, sizeof cmd, "%s/mon_truth.pct", SONDE_BINARY_DIR);
  FILE *f = fopen(cmd, "rb");
  struct sonde_pctrace_reader *r = NULL;
  if (!f || sonde_pctrace_reader_new(f, cmd, &r, NULL) < 0)
    return -1;
  int rc = sonde_mon_changes_from_pctrace(r, ft, ch, n, end);
  sonde_pctrace_reader_free(r);
  fclose(f);
  return rc;
}

static struct sonde_sym *sym;
static struct sonde_mon_ftab *ft;

static void test_ftab(void)
{
  CHECK(sonde_mon_ftab_from_sym(sym, &ft) == 0);
  long m = sonde_mon_ftab_find(ft, "mul32"), d = sonde_mon_ftab_find(ft, "div32"),
       g = sonde_mon_ftab_find(ft, "to_global"), s = sonde_mon_ftab_find(ft, "send"),
       irq = sonde_mon_ftab_find(ft, "IRQ1_Handler");
  CHECK(m >= 0 && d >= 0 && g >= 0 && s >= 0 && irq >= 0);
  CHECK(sonde_mon_ftab_calls(ft, (size_t)g, (size_t)m));
  CHECK(sonde_mon_ftab_calls(ft, (size_t)g, (size_t)d));
  CHECK(sonde_mon_ftab_calls(ft, (size_t)s, (size_t)g));
  CHECK(!sonde_mon_ftab_calls(ft, (size_t)m, (size_t)d));
  CHECK(!sonde_mon_ftab_calls(ft, (size_t)s, (size_t)m));
  CHECK(sonde_sym_address(sym, "mul32", NULL, NULL) == 0);
  CHECK(sonde_mon_ftab_at(ft, (size_t)irq)->handler);
  CHECK(!sonde_mon_ftab_at(ft, (size_t)m)->handler);
  /* Without symbols (AVEKSHA's disassembly): every called function of the
   * image is found at its symbol's address, and the edges agree. */
  struct sonde_mon_ftab *ct = NULL;
  CHECK(sonde_mon_ftab_from_code((sonde_mon_read_fn)sonde_sym_read, sym, 0, 1u << 20, &ct) == 0);
  const char *called[] = {"mul32", "div32", "to_global", "sense", "send", "nap", "set_state",
                          "main", "IRQ1_Handler"};
  long ci[9];
  for (unsigned i = 0; i < 9; i++) {
    uint32_t a = 0;
    sonde_sym_address(sym, called[i], &a, NULL);
    ci[i] = sonde_mon_ftab_lookup(ct, a);
    CHECK(ci[i] >= 0 && sonde_mon_ftab_at(ct, (size_t)ci[i])->start == a);
    if (ci[i] < 0)
      fprintf(stderr, "  %s at 0x%x not found by disassembly\n", called[i], (unsigned)a);
  }
  CHECK(sonde_mon_ftab_calls(ct, (size_t)ci[2], (size_t)ci[0]));
  CHECK(sonde_mon_ftab_calls(ct, (size_t)ci[2], (size_t)ci[1]));
  CHECK(sonde_mon_ftab_at(ct, (size_t)ci[8])->handler);
  CHECK(!strncmp(sonde_mon_ftab_at(ct, (size_t)ci[0])->name, "sub_", 4));
  sonde_mon_ftab_free(ct);
}

/* Precision and recall of function transitions as the poll rate drops. */
static void test_pc_poll_rates(void)
{
  struct sonde_mon_change *truth = NULL;
  size_t nt = 0;
  uint64_t end = 0;
  CHECK(truth_changes(FW("mon_demo"), ft, &truth, &nt, &end) == 0);
  CHECK(nt > 1000);
  struct sonde_machine *m = cm3_machine(NULL);
  static const uint64_t rates[] = {1, 2, 4, 7, 16, 64, 256};
  static const uint64_t matched[] = {2377, 2377, 2372, 2074, 1232, 368, 99};
  double last_recall = 2;
  for (unsigned i = 0; i < sizeof rates / sizeof rates[0]; i++) {
    struct sonde_vm *vm = load_vm(m, FW("mon_demo"));
    struct sonde_mon_link *l = NULL;
    CHECK(sonde_mon_link_vm(vm, &l) == 0);
    struct sonde_mon_pc_opts o = {.every_cycles = rates[i]};
    struct sonde_mon_pc_result r;
    CHECK(sonde_mon_pc_poll(l, ft, &o, &r) == 0);
    CHECK(r.exited);
    struct sonde_mon_match mt;
    sonde_mon_compare(truth, nt, r.changes, r.nchanges, rates[i], &mt);
    printf("every %3llu: polls %llu changes %zu truth %llu matched %llu precision %.4f recall "
           "%.4f\n",
           (unsigned long long)rates[i], (unsigned long long)r.polls, r.nchanges,
           (unsigned long long)mt.truth, (unsigned long long)mt.matched, mt.precision, mt.recall);
    /* a poll at every multiple of C up to the last instruction's end */
    CHECK(r.polls >= (end - 40) / rates[i] && r.polls <= (end + rates[i] - 1) / rates[i]);
    if (rates[i] == 1) {
      /* every cycle: exactly the ground truth */
      CHECK_EQ_U(r.nchanges, nt);
      bool same = r.nchanges == nt;
      for (size_t k = 0; same && k < nt; k++)
        same = truth[k].cycle == r.changes[k].cycle && truth[k].func == r.changes[k].func;
      CHECK(same);
      CHECK_EQ_U(mt.matched, mt.truth);
      CHECK(mt.precision == 1.0 && mt.recall == 1.0);
    }
    CHECK(mt.recall <= last_recall);
    last_recall = mt.recall;
    CHECK_EQ_U(mt.matched, matched[i]);
    CHECK_EQ_U(mt.truth, 2377);
    CHECK(mt.precision == 1.0); /* a polled change is never wrong, only late */
    sonde_mon_pc_result_free(&r);
    sonde_mon_link_free(l);
    sonde_vm_free(vm);
  }
  CHECK(last_recall < 0.9);
  free(truth);
  sonde_machine_free(m);
}

/* Sparse polls through the VM's "PC at cycle T" (sonde_vm_pc_at_cycle, the
 * fast path between polls) give exactly what the retire hook gives. */
static void test_pc_poll_sparse_same(void)
{
  struct sonde_machine *m = cm3_machine(NULL);
  static const uint64_t rates[] = {16, 64, 97, 256, 1000, 4096};
  for (unsigned i = 0; i < sizeof rates / sizeof rates[0]; i++) {
    struct sonde_mon_pc_result r[2];
    for (int k = 0; k < 2; k++) {
      struct sonde_vm *vm = load_vm(m, FW("mon_demo"));
      struct sonde_mon_link *l = NULL;
      sonde_mon_link_vm(vm, &l);
      struct sonde_mon_pc_opts o = {.every_cycles = rates[i], .phase = 5, .hooked = k == 0};
      CHECK(sonde_mon_pc_poll(l, ft, &o, &r[k]) == 0);
      sonde_mon_link_free(l);
      sonde_vm_free(vm);
    }
    CHECK_EQ_U(r[1].polls, r[0].polls);
    CHECK_EQ_U(r[1].nchanges, r[0].nchanges);
    bool same = r[0].nchanges == r[1].nchanges;
    for (size_t k = 0; same && k < r[0].nchanges; k++)
      same = r[0].changes[k].cycle == r[1].changes[k].cycle &&
             r[0].changes[k].func == r[1].changes[k].func && r[0].changes[k].pc == r[1].changes[k].pc;
    CHECK(same);
    CHECK(r[0].exited && r[1].exited);
    sonde_mon_pc_result_free(&r[0]);
    sonde_mon_pc_result_free(&r[1]);
  }
  sonde_machine_free(m);
}

/* Executions and nesting (Figures 13-14): to_global runs 40 times per round
 * and calls mul32, div32, mul32 in that order, one level deeper. */
static void test_infer(void)
{
  struct sonde_machine *m = cm3_machine(NULL);
  long g = sonde_mon_ftab_find(ft, "to_global"), mu = sonde_mon_ftab_find(ft, "mul32"),
       dv = sonde_mon_ftab_find(ft, "div32");
  static const uint64_t rates[] = {1, 4};
  for (unsigned ri = 0; ri < 2; ri++) {
    struct sonde_vm *vm = load_vm(m, FW("mon_demo"));
    struct sonde_mon_link *l = NULL;
    sonde_mon_link_vm(vm, &l);
    struct sonde_mon_pc_opts o = {.every_cycles = rates[ri]};
    struct sonde_mon_pc_result r;
    CHECK(sonde_mon_pc_poll(l, ft, &o, &r) == 0);
    struct sonde_mon_infer inf;
    CHECK(sonde_mon_infer_run(ft, r.changes, r.nchanges, r.last_cycle + 1, &inf) == 0);
    uint64_t ng = 0, nm = 0, nd = 0, nested = 0;
    for (size_t i = 0; i < inf.nexecs; i++) {
      const struct sonde_mon_exec *e = &inf.execs[i];
      if (e->func == g)
        ng++;
      if (e->func == dv)
        nd++;
      if (e->func == mu) {
        nm++;
        /* mul32 runs inside to_global, one level deeper */
        size_t k = i;
        while (k > 0 && inf.execs[k - 1].depth >= e->depth)
          k--;
        if (k > 0 && inf.execs[k - 1].func == g && inf.execs[k - 1].depth + 1 == e->depth &&
            inf.execs[k - 1].start <= e->start && inf.execs[k - 1].end >= e->end)
          nested++;
      }
    }
    printf("infer every %llu: to_global %llu mul32 %llu (nested %llu) div32 %llu calls %llu "
           "returns %llu preempt %llu inferred %llu unexplained %llu\n",
           (unsigned long long)rates[ri], (unsigned long long)ng, (unsigned long long)nm,
           (unsigned long long)nested, (unsigned long long)nd, (unsigned long long)inf.calls,
           (unsigned long long)inf.returns, (unsigned long long)inf.preemptions,
           (unsigned long long)inf.inferred, (unsigned long long)inf.unexplained);
    CHECK_EQ_U(ng, 8 * 40);
    CHECK_EQ_U(nm, 2 * 8 * 40);
    CHECK_EQ_U(nd, 8 * 40);
    CHECK_EQ_U(nested, nm);
    if (rates[ri] == 1) {
      CHECK_EQ_U(inf.unexplained, 0);
      /* the profile: to_global's inclusive time is its own plus its callees'
       * (mul32 and div32 are called from nowhere else) */
      size_t nf = sonde_mon_ftab_count(ft);
      struct sonde_mon_prof_row *pr = calloc(nf + 1, sizeof *pr);
      CHECK(sonde_mon_profile(ft, &inf, r.changes, r.nchanges, r.last_cycle + 1, NULL, pr) == 0);
      CHECK_EQ_U(pr[g].calls, 320);
      CHECK_EQ_U(pr[g].incl_cycles, pr[g].self_cycles + pr[mu].self_cycles + pr[dv].self_cycles);
      CHECK_EQ_U(pr[mu].incl_cycles, pr[mu].self_cycles);
      CHECK(pr[g].min_cycles > 0 && pr[g].min_cycles <= pr[g].max_cycles);
      long mn = sonde_mon_ftab_find(ft, "main");
      CHECK_EQ_U(pr[mn].calls, 1);
      printf("profile: to_global %llu calls, %llu..%llu cycles, incl %llu self %llu\n",
             (unsigned long long)pr[g].calls, (unsigned long long)pr[g].min_cycles,
             (unsigned long long)pr[g].max_cycles, (unsigned long long)pr[g].incl_cycles,
             (unsigned long long)pr[g].self_cycles);
      free(pr);
    }
    sonde_mon_infer_free(&inf);
    sonde_mon_pc_result_free(&r);
    sonde_mon_link_free(l);
    sonde_vm_free(vm);
  }
  sonde_machine_free(m);
}

/* Energy per function from polling every cycle equals the power model's
 * integral over the ground-truth trace, and the total is the VM's charge. */
static void test_energy(void)
{
  struct sonde_machine *m = cm3_machine(NULL);
  struct sonde_vm *vm = load_vm(m, FW("mon_demo"));
  struct sonde_mon_current cur;
  sonde_mon_current_init(&cur, sonde_machine_clock_hz(m), sonde_machine_supply_mv(m));
  sonde_vm_set_power(vm, sonde_mon_current_vm_fn, &cur);
  struct sonde_mon_link *l = NULL;
  sonde_mon_link_vm(vm, &l);
  struct sonde_mon_pc_opts o = {.every_cycles = 1};
  struct sonde_mon_pc_result r;
  CHECK(sonde_mon_pc_poll(l, ft, &o, &r) == 0);
  struct sonde_vm_stats st;
  sonde_vm_get_stats(vm, &st);
  struct sonde_mon_change *truth = NULL;
  size_t nt = 0;
  uint64_t end = 0;
  CHECK(truth_changes(FW("mon_demo"), ft, &truth, &nt, &end) == 0);
  CHECK_EQ_U(end, st.cycles);
  size_t nf = sonde_mon_ftab_count(ft);
  struct sonde_mon_interval *iv = calloc(nt + r.nchanges + 1, sizeof *iv);
  struct sonde_mon_energy_row *a = calloc(nf + 1, sizeof *a), *b = calloc(nf + 1, sizeof *b);
  size_t n1 = sonde_mon_intervals_from_changes(r.changes, r.nchanges, st.cycles, (uint32_t)nf, iv);
  sonde_mon_energy(&cur, iv, n1, a, nf + 1);
  size_t n2 = sonde_mon_intervals_from_changes(truth, nt, end, (uint32_t)nf, iv);
  sonde_mon_energy(&cur, iv, n2, b, nf + 1);
  uint64_t total = 0;
  bool same = true;
  for (size_t i = 0; i <= nf; i++) {
    same &= a[i].ua_cycles == b[i].ua_cycles && a[i].cycles == b[i].cycles;
    total += a[i].ua_cycles;
  }
  CHECK(same);
  CHECK_EQ_U(total + sonde_mon_charge(&cur, 0, r.changes[0].cycle), st.charge_ua_cycles);
  long s = sonde_mon_ftab_find(ft, "send");
  printf("energy: total %.3f uJ (vm %.3f), send %.3f uJ over %llu cycles\n",
         sonde_mon_uj(&cur, total), st.energy_uj, a[s].uj, (unsigned long long)a[s].cycles);
  CHECK(a[s].uj > 0);
  free(iv);
  free(a);
  free(b);
  free(truth);
  sonde_mon_pc_result_free(&r);
  sonde_mon_current_free(&cur);
  sonde_mon_link_free(l);
  sonde_vm_free(vm);
  sonde_machine_free(m);
}

/* The GPIO (LED on) and delay (operation running) currents are counted. */
static void test_power_gpio_delay(void)
{
  struct sonde_machine *m0 = cm3_machine("power run=1000 sleep=100 voltage=3300");
  struct sonde_machine *m1 =
      cm3_machine("power run=1000 sleep=100 gpio=500 delay=300 voltage=3300");
  CHECK(m0 && m1);
  struct sonde_vm *v0 = load_vm(m0, FW("mon_demo")), *v1 = load_vm(m1, FW("mon_demo"));
  struct sonde_vm_stop s;
  sonde_vm_run(v0, UINT64_MAX, &s);
  sonde_vm_run(v1, UINT64_MAX, &s);
  CHECK_EQ_I(s.reason, SONDE_VM_STOP_EXIT);
  struct sonde_vm_stats a, b;
  sonde_vm_get_stats(v0, &a);
  sonde_vm_get_stats(v1, &b);
  CHECK_EQ_U(a.cycles, b.cycles);
  /* LED-on cycles from the GPIO's own change log */
  const struct vm_gpio_change *ch;
  size_t n = vm_gpio_changes(v1, &ch, NULL);
  uint64_t on = 0;
  for (size_t i = 0; i < n; i++)
    if (ch[i].value && i + 1 < n)
      on += ch[i + 1].cycle - ch[i].cycle;
  CHECK_EQ_U(n, 16);
  /* the delay runs 300 cycles per sense(), 8 rounds */
  CHECK_EQ_U(b.charge_ua_cycles - a.charge_ua_cycles, 500 * on + 300ull * 300 * 8);
  printf("power: LED on %llu cycles, extra charge %llu uA-cycles\n", (unsigned long long)on,
         (unsigned long long)(b.charge_ua_cycles - a.charge_ua_cycles));
  sonde_vm_free(v0);
  sonde_vm_free(v1);
  sonde_machine_free(m0);
  sonde_machine_free(m1);
}

/* Writes to mon_state in the ground-truth LSU trace. */
static size_t truth_writes(const char *elf, uint32_t addr, uint32_t *values, size_t cap)
{
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "%s run %s --trace-lsu %s/mon_truth.lsu > /dev/null", SONDE, elf,
           SONDE_BINARY_DIR);
  if (system(cmd) != 0)
    return 0;
  snprintf(cmd, sizeof cmd, "%s/mon_truth.lsu", SONDE_BINARY_DIR);
  FILE *f = fopen(cmd, "rb");
  struct sonde_lsutrace_reader *r = NULL;
  if (!f || sonde_lsutrace_reader_new(f, cmd, &r, NULL) < 0)
    return 0;
  struct sonde_lsutrace_record rec;
  size_t n = 0;
  while (sonde_lsutrace_next(r, &rec) == 1)
    if (rec.write && !rec.stacking && rec.addr == addr) {
      if (n < cap)
        values[n] = rec.value;
      n++;
    }
  sonde_lsutrace_reader_free(r);
  fclose(f);
  return n;
}

/* Watchpoint mode: every write to the state variable below the SWO pin's
 * rate; above it (mon_burst), caught + lost = all. */
static void test_watch(void)
{
  struct sonde_machine *m = cm3_machine(NULL);
  const char *fws[] = {FW("mon_demo"), FW("mon_burst")};
  for (unsigned k = 0; k < 2; k++) {
    struct sonde_sym *s2 = NULL;
    sonde_sym_open(fws[k], &s2, NULL);
    uint32_t state = 0, delay_status = 0x400F3008u;
    CHECK(sonde_sym_address(s2, "mon_state", &state, NULL) == 0);
    uint32_t tv[256];
    size_t nt = truth_writes(fws[k], state, tv, 256);
    struct sonde_vm *vm = load_vm(m, fws[k]);
    struct sonde_mon_link *l = NULL;
    sonde_mon_link_vm(vm, &l);
    struct sonde_mon_trigger t[3] = {
        {SONDE_MON_TRIG_WRITE_VAR, state, 4, "mon_state"},
        {SONDE_MON_TRIG_FUNC_ENTRY, 0, 0, "to_global"},
        {SONDE_MON_TRIG_READ_RANGE, delay_status & ~0xFu, 16, "delay"},
    };
    sonde_sym_address(s2, "to_global", &t[1].addr, NULL);
    struct sonde_mon_watch_opts o = {.drain_every = 50};
    struct sonde_mon_watch_result r;
    CHECK(sonde_mon_watch(l, t, k == 0 ? 2 : 1, &o, &r) == 0);
    CHECK(r.exited);
    size_t nw = 0, ne = 0;
    bool values = true;
    for (size_t i = 0; i < r.nevents; i++) {
      if (r.events[i].trigger == 0) {
        values &= nw < nt && r.events[i].value == tv[nw];
        nw++;
      } else if (r.events[i].trigger == 1) {
        ne++;
      }
    }
    printf("watch %s: truth %zu writes, caught %zu, lost %llu, overflows %llu, entries %zu, "
           "drains %llu\n",
           k ? "burst" : "demo", nt, nw, (unsigned long long)r.lost,
           (unsigned long long)r.overflows, ne, (unsigned long long)r.drains);
    if (k == 0) {
      CHECK_EQ_U(nt, 1 + 8 * 4 + 1); /* .bss zeroing, 4 per round, the last */
      CHECK_EQ_U(nw, nt);
      CHECK(values);
      CHECK_EQ_U(r.lost, 0);
      CHECK_EQ_U(ne, 320); /* to_global entries, 100+ cycles apart, drained every 50 */
    } else {
      CHECK(r.lost > 0 && r.overflows > 0);
      CHECK_EQ_U(nw + r.lost, nt);
    }
    sonde_mon_watch_result_free(&r);
    sonde_mon_link_free(l);
    sonde_vm_free(vm);
    sonde_sym_free(s2);
  }
  sonde_machine_free(m);
}

/* Reads of the delay peripheral's STATUS (a busy loop: far above the pin's
 * rate; caught + lost = all) and the two `mov r11, r11` markers (one event
 * per round each, drained). */
static void test_watch_reads_markers(void)
{
  struct sonde_machine *m = cm3_machine(NULL);
  uint32_t mk[4];
  long nmk = sonde_mon_find_markers((sonde_mon_read_fn)sonde_sym_read, sym, ft, 0, UINT32_MAX, mk, 4);
  CHECK_EQ_I(nmk, 2);
  uint32_t sense = 0, mainf = 0;
  sonde_sym_address(sym, "sense", &sense, NULL);
  sonde_sym_address(sym, "main", &mainf, NULL);
  /* one in sense, one in main */
  CHECK(nmk == 2 && sonde_mon_ftab_lookup(ft, mk[0]) == sonde_mon_ftab_lookup(ft, sense) &&
        sonde_mon_ftab_lookup(ft, mk[1]) == sonde_mon_ftab_lookup(ft, mainf));
  /* reads in [0x400F3000, 0x400F3010) in the ground truth */
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "%s run %s --trace-lsu %s/mon_truth2.lsu > /dev/null", SONDE,
           FW("mon_demo"), SONDE_BINARY_DIR);
  CHECK(system(cmd) == 0);
  snprintf(cmd, sizeof cmd, "%s/mon_truth2.lsu", SONDE_BINARY_DIR);
  FILE *f = fopen(cmd, "rb");
  struct sonde_lsutrace_reader *r = NULL;
  CHECK(f && sonde_lsutrace_reader_new(f, cmd, &r, NULL) == 0);
  struct sonde_lsutrace_record rec;
  uint64_t reads = 0;
  while (r && sonde_lsutrace_next(r, &rec) == 1)
    reads += !rec.write && !rec.stacking && rec.addr >= 0x400F3000u && rec.addr < 0x400F3010u;
  sonde_lsutrace_reader_free(r);
  if (f)
    fclose(f);
  struct sonde_vm *vm = load_vm(m, FW("mon_demo"));
  struct sonde_mon_link *l = NULL;
  sonde_mon_link_vm(vm, &l);
  struct sonde_mon_trigger t[3] = {
      {SONDE_MON_TRIG_READ_RANGE, 0x400F3000u, 16, "delay"},
      {SONDE_MON_TRIG_MARKER, mk[0], 0, "marker 0"},
      {SONDE_MON_TRIG_MARKER, mk[1], 0, "marker 1"},
  };
  struct sonde_mon_watch_opts o = {.drain_every = 100};
  struct sonde_mon_watch_result res;
  CHECK(sonde_mon_watch(l, t, 3, &o, &res) == 0);
  uint64_t n[3] = {0, 0, 0};
  for (size_t i = 0; i < res.nevents; i++)
    n[res.events[i].trigger]++;
  printf("watch reads: truth %llu, caught %llu, lost %llu, overflows %llu; markers %llu %llu\n",
         (unsigned long long)reads, (unsigned long long)n[0], (unsigned long long)res.lost,
         (unsigned long long)res.overflows, (unsigned long long)n[1], (unsigned long long)n[2]);
  CHECK(reads > 100);
  CHECK_EQ_U(n[0] + res.lost, reads);
  CHECK(res.lost > 0 && res.overflows > 0);
  CHECK_EQ_U(n[1], 8);
  CHECK_EQ_U(n[2], 8);
  sonde_mon_watch_result_free(&res);
  sonde_mon_link_free(l);
  sonde_vm_free(vm);
  sonde_machine_free(m);
}

/* Breakpoint mode: one event per to_global call; the perturbation inside the
 * target is the cycle difference with an unmonitored run. */
static void test_break(void)
{
  struct sonde_machine *m = cm3_machine(NULL);
  struct sonde_vm *ref = load_vm(m, FW("mon_demo")), *vm = load_vm(m, FW("mon_demo"));
  struct sonde_vm_stop s;
  sonde_vm_run(ref, UINT64_MAX, &s);
  struct sonde_vm_stats rs;
  sonde_vm_get_stats(ref, &rs);
  struct sonde_mon_link *l = NULL;
  sonde_mon_link_vm(vm, &l);
  uint32_t a[2];
  sonde_sym_address(sym, "to_global", &a[0], NULL);
  sonde_sym_address(sym, "div32", &a[1], NULL);
  struct sonde_mon_bp_result r;
  CHECK(sonde_mon_break(l, a, 2, NULL, &r) == 0);
  CHECK(r.exited);
  CHECK_EQ_U(r.nevents, 640);
  size_t n0 = 0;
  for (size_t i = 0; i < r.nevents; i++)
    n0 += r.events[i].bp == 0 && r.events[i].addr == a[0];
  CHECK_EQ_U(n0, 320);
  printf("break: %zu events, cycles %llu (free run %llu), halted %.0f ns per event\n",
         r.nevents, (unsigned long long)r.total_cycles, (unsigned long long)rs.cycles,
         r.halt_ns_per_event);
  /* stepping over a breakpoint costs the target exactly one cycle (the VM's
   * measure: monitored run - free run) */
  CHECK_EQ_U(r.total_cycles - rs.cycles, r.nevents);
  sonde_mon_bp_result_free(&r);
  sonde_mon_link_free(l);
  sonde_vm_free(vm);
  sonde_vm_free(ref);
  sonde_machine_free(m);
}

/* A meter's CSV: units from the header, exact integration, bad input named. */
static void test_current_csv(void)
{
  struct sonde_mon_current c;
  struct sonde_diag d;
  sonde_mon_current_init(&c, 1000000, 3000);
  const char *ok = "time_ms,current_ma\n0,5\n1.5,2\n2,0.5\r\n";
  CHECK(sonde_mon_current_parse_csv(&c, ok, strlen(ok), "m.csv", &d) == 0);
  CHECK_EQ_U(c.n, 3);
  CHECK_EQ_U(c.cycle[1], 1500);
  CHECK_EQ_U(c.ua[2], 500);
  /* 5 mA x 1500 cycles + 2 mA x 500 + 0.5 mA x 500 */
  CHECK_EQ_U(sonde_mon_charge(&c, 0, 2500), 5000ull * 1500 + 2000 * 500 + 500 * 500);
  CHECK_EQ_U(sonde_mon_charge(&c, 1000, 1600), 5000ull * 500 + 2000 * 100);
  /* 1 uA for 1 s at 3 V = 3 uJ */
  CHECK(sonde_mon_uj(&c, 1000000) > 2.9999 && sonde_mon_uj(&c, 1000000) < 3.0001);
  sonde_mon_current_free(&c);
  static const struct {
    const char *text, *msg;
  } bad[] = {
      {"t,i\n0,1\n", "m.csv: line 1 (offset 0): expected a header"},
      {"time,current\n0,1\n0.5,x\n", "m.csv: line 3 (offset 17): expected 'time,current'"},
      {"cycle,current_ua\n10,1\n5,1\n", "m.csv: line 3 (offset 22): time goes backwards"},
      {"time,current\n0,-1\n", "m.csv: line 2 (offset 13): expected"},
      {"time,current\n", "m.csv: no samples after the header"},
  };
  for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    sonde_mon_current_init(&c, 1000000, 3000);
    CHECK(sonde_mon_current_parse_csv(&c, bad[i].text, strlen(bad[i].text), "m.csv", &d) < 0);
    if (strncmp(d.msg, bad[i].msg, strlen(bad[i].msg)))
      CHECK_EQ_STR(d.msg, bad[i].msg);
    sonde_mon_current_free(&c);
  }
}

int main(void)
{
  struct sonde_diag d;
  if (sonde_sym_open(FW("mon_demo"), &sym, &d) < 0) {
    fprintf(stderr, "%s\n", d.msg);
    return 1;
  }
  RUN(test_ftab);
  RUN(test_pc_poll_rates);
  RUN(test_pc_poll_sparse_same);
  RUN(test_infer);
  RUN(test_energy);
  RUN(test_power_gpio_delay);
  RUN(test_watch);
  RUN(test_current_csv);
  RUN(test_watch_reads_markers);
  RUN(test_break);
  sonde_mon_ftab_free(ft);
  sonde_sym_free(sym);
  return check_summary();
}
