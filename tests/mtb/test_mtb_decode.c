/* src/mtb against the VM's ground truth: firmware runs with the MTB on
 * (firmware/mtb/mtb_trace.c, target/cortexm/mtb.c), the test reads the buffer
 * and POSITION/MASTER from the VM's memory like a debugger would, decodes
 * them with the ELF, and requires the rebuilt instruction history to equal
 * the tail of the retire hook's PC trace, instruction for instruction, up to
 * the store that cleared MASTER.EN, and one exception event per exception
 * entry and return in that window. Also writes the dumps to
 * ${SONDE_BINARY_DIR}/mtb_dumps/ for tests/cli/mtb_decode.sh. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sonde/mtb.h"
#include "sonde/sym.h"
#include "sonde/vm.h"
#include "check.h"

enum { EV_RETIRE, EV_ENTER, EV_EXIT, EV_RETURN, EV_DIS };
struct ev {
  uint8_t kind;
  uint32_t pc;
};
struct gt {
  struct ev *ev;
  size_t n, cap;
  uint32_t master;
  bool enabled; /* MASTER.EN as the program last wrote it */
};

static void push(struct gt *g, uint8_t kind, uint32_t pc)
{
  if (g->n == g->cap) {
    g->cap = g->cap ? 2 * g->cap : 4096;
    g->ev = realloc(g->ev, g->cap * sizeof *g->ev);
  }
  g->ev[g->n++] = (struct ev){kind, pc};
}

static void on_retire(void *ctx, uint32_t pc, uint64_t cycle, uint32_t cycles)
{
  (void)cycle, (void)cycles;
  push(ctx, EV_RETIRE, pc);
}

static void on_transfer(void *ctx, uint64_t cycle, uint32_t pc, uint32_t addr, unsigned size,
                        uint32_t value, bool write)
{
  (void)cycle, (void)size;
  struct gt *g = ctx;
  if (!write || addr != g->master)
    return;
  if (!(value >> 31) && g->enabled) /* the store that stopped the MTB (not a later one) */
    push(g, EV_DIS, pc);
  g->enabled = value >> 31;
}

static void on_exc(void *ctx, uint64_t cycle, enum sonde_vm_exc_event ev, unsigned exc)
{
  (void)cycle, (void)exc;
  push(ctx, ev == SONDE_VM_EXC_ENTER ? EV_ENTER : ev == SONDE_VM_EXC_EXIT ? EV_EXIT : EV_RETURN,
       0);
}

static int quiet(void *ctx, int stream, const void *data, size_t len)
{
  (void)ctx, (void)stream, (void)data, (void)len;
  return 0;
}

/* Write a dump for the CLI test: <name>.bin and <name>.regs
 * ("base position master end_pc" in hex). */
static void write_dump(const char *name, const void *buf, uint32_t size, uint32_t base,
                       uint32_t position, uint32_t master, uint32_t end_pc)
{
  char path[600];
  snprintf(path, sizeof path, "%s/mtb_dumps", SONDE_BINARY_DIR);
  mkdir(path, 0777);
  snprintf(path, sizeof path, "%s/mtb_dumps/%s.bin", SONDE_BINARY_DIR, name);
  FILE *f = fopen(path, "wb");
  if (f) {
    fwrite(buf, 1, size, f);
    fclose(f);
  }
  snprintf(path, sizeof path, "%s/mtb_dumps/%s.regs", SONDE_BINARY_DIR, name);
  f = fopen(path, "w");
  if (f) {
    fprintf(f, "0x%08x 0x%08x 0x%08x 0x%08x\n", base, position, master, end_pc);
    fclose(f);
  }
}

/* Packet addresses outside the ELF that a test expects (a wild jump). */
static size_t outside_addresses;

struct result {
  size_t insns, packets, entries, returns, chains;
  size_t sessions;
  size_t nested; /* entries while a handler was active (depth counted from the start) */
  bool wrapped;
};

static bool is_bl(const struct sonde_sym *sym, uint32_t addr)
{
  uint8_t b[4];
  if (sonde_sym_read(sym, addr, b, 4))
    return false;
  return (b[1] & 0xF8) == 0xF0 && (b[3] & 0xD0) == 0xD0;
}

/* The other core's build of fw's source (mtb_stack_m33 -> mtb_stack_m0plus,
 * mtb_m0p -> mtb_m33); the plain trace image when there is none. */
static void other_core_elf(const char *fw, char *out, size_t cap)
{
  char name[256];
  const char *at;
  size_t n = strlen(fw);
  if (n > 4 && strcmp(fw + n - 4, "_m33") == 0)
    snprintf(name, sizeof name, "%.*s_m0plus", (int)(n - 4), fw);
  else if ((at = strstr(fw, "m0plus")) != NULL)
    snprintf(name, sizeof name, "%.*sm33%s", (int)(at - fw), fw, at + 6);
  else if ((at = strstr(fw, "m0p")) != NULL)
    snprintf(name, sizeof name, "%.*sm33%s", (int)(at - fw), fw, at + 3);
  else
    name[0] = 0;
  snprintf(out, cap, "%s/%s.elf", SONDE_FIRMWARE_DIR, name);
  FILE *f = name[0] ? fopen(out, "rb") : NULL;
  if (f)
    fclose(f);
  else
    snprintf(out, cap, "%s/%s.elf", SONDE_FIRMWARE_DIR, strstr(fw, "m0p") ? "mtb_m33" : "mtb_m0p");
}

/* fw run to its end on a built-in machine with the ground-truth hooks, and
 * what a debugger reads after the run: the MTB registers and the buffer. */
struct capture {
  char path[512]; /* the ELF */
  struct sonde_machine *m;
  struct sonde_vm *vm;
  struct gt g;
  uint32_t regs[4]; /* POSITION, MASTER, FLOW, BASE */
  uint32_t size;    /* the whole circle, 2^(MASK+4) bytes */
  unsigned char *buf;
};

static void capture_free(struct capture *c)
{
  free(c->buf);
  free(c->g.ev);
  sonde_vm_free(c->vm);
  sonde_machine_free(c->m);
}

static bool capture_run(const char *fw, const char *machine, struct capture *c)
{
  memset(c, 0, sizeof *c);
  snprintf(c->path, sizeof c->path, "%s/%s.elf", SONDE_FIRMWARE_DIR, fw);
  FILE *f = fopen(c->path, "rb");
  if (!f) {
    CHECK_FAIL_("missing firmware %s", c->path);
    return false;
  }
  static unsigned char img[1 << 20];
  size_t n = fread(img, 1, sizeof img, f);
  fclose(f);
  if (sonde_machine_builtin(machine, &c->m) != 0) {
    CHECK_FAIL_("no machine %s", machine);
    return false;
  }
  uint32_t sfr = sonde_machine_core(c->m) == SONDE_VM_CORE_M33 ? 0xE0043000u : 0xF0000000u;
  c->g.master = sfr + 4;
  if (sonde_vm_new(c->m, &c->vm) != 0 || sonde_vm_load_elf(c->vm, img, n, fw) != 0) {
    CHECK_FAIL_("cannot load %s on %s", fw, machine);
    capture_free(c);
    return false;
  }
  sonde_vm_set_output(c->vm, quiet, NULL);
  struct sonde_vm_hooks h = {.ctx = &c->g, .retire = on_retire, .transfer = on_transfer,
                             .exception = on_exc};
  sonde_vm_set_hooks(c->vm, &h);
  sonde_vm_reset(c->vm);
  struct sonde_vm_stop stop;
  CHECK_EQ_I(sonde_vm_run(c->vm, 20000000, &stop), 0);
  CHECK_EQ_I(stop.reason, SONDE_VM_STOP_EXIT);
  if (sonde_vm_read_mem(c->vm, sfr, c->regs, sizeof c->regs) == 0) {
    c->size = 16u << (c->regs[1] & 0x1F);
    c->buf = malloc(c->size);
  }
  if (!c->buf || sonde_vm_read_mem(c->vm, c->regs[3], c->buf, c->size) != 0) {
    CHECK_FAIL_("%s: cannot read the MTB", fw);
    capture_free(c);
    return false;
  }
  return true;
}

/* end_sym: the function whose first instruction stopped the MTB (a TSTOP
 * comparator); NULL: the last store that cleared MASTER.EN. */
static void decode_and_compare(const char *fw, const char *machine, struct result *res,
                               const char *end_sym)
{
  memset(res, 0, sizeof *res);
  struct capture c;
  if (!capture_run(fw, machine, &c))
    return;
  const char *path = c.path;
  const struct gt g = c.g;
  uint32_t position = c.regs[0], master = c.regs[1], base = c.regs[3], size = c.size;
  unsigned char *buf = c.buf;

  struct sonde_diag d;
  struct sonde_sym *sym = NULL;
  REQUIRE(sonde_sym_open(path, &sym, &d) == 0);
  /* The ground truth: the disabling store and everything retired before it. */
  size_t dis = g.n, k = SIZE_MAX; /* index of EV_DIS, and of the store's retire */
  if (end_sym) { /* the stop is the first instruction of end_sym */
    uint32_t a = 0;
    REQUIRE(sonde_sym_address(sym, end_sym, &a, NULL) == 0);
    for (size_t i = g.n; i-- > 0;)
      if (g.ev[i].kind == EV_RETIRE && g.ev[i].pc == a) {
        dis = i;
        break;
      }
  } else
  for (size_t i = g.n; i-- > 0;)
    if (g.ev[i].kind == EV_DIS) {
      dis = i;
      break;
    }
  REQUIRE(dis < g.n);
  for (size_t i = end_sym ? dis : dis + 1; i < g.n; i++)
    if (g.ev[i].kind == EV_RETIRE) {
      k = i;
      break;
    }
  REQUIRE(k != SIZE_MAX && g.ev[k].pc == g.ev[dis].pc);
  uint32_t end_pc = g.ev[dis].pc;
  write_dump(fw, buf, size, base, position, master, end_pc);
  struct sonde_mtb_raw raw = {buf, size, base, position, master, true};
  struct sonde_mtb_packet *p = NULL;
  size_t np = 0;
  CHECK_EQ_I(sonde_mtb_packets(&raw, &p, &np, &d), 0);
  struct sonde_mtb_options opt = {.end_pc = end_pc};
  struct sonde_mtb_history hist;
  CHECK_EQ_I(sonde_mtb_rebuild(p, np, sym, &opt, &hist, &d), 0);
  CHECK_EQ_U(hist.nissues, 0);
  for (size_t i = 0; i < hist.nissues && i < 5; i++)
    CHECK_FAIL_("issue at packet %u: %08x -> %08x: %s", hist.issues[i].packet,
                hist.issues[i].from, hist.issues[i].to, hist.issues[i].why);
  CHECK_EQ_U(hist.in_image + outside_addresses, hist.addresses);
  res->packets = np;
  res->wrapped = position & 4;

  /* The instruction PCs of the history, oldest first ... */
  uint32_t *pcs = malloc((hist.instructions + 1) * sizeof *pcs);
  size_t ni = 0, depth = 0;
  for (size_t i = 0; i < hist.n; i++) {
    const struct sonde_mtb_event *e = &hist.ev[i];
    if (e->kind == SONDE_MTB_INSN)
      pcs[ni++] = e->pc;
    if (e->kind == SONDE_MTB_EXC_ENTRY)
      res->nested += depth++ > 0;
    if (e->kind == SONDE_MTB_EXC_RETURN && !e->tail_chain && depth > 0)
      depth--;
    res->entries += e->kind == SONDE_MTB_EXC_ENTRY;
    res->sessions += e->kind == SONDE_MTB_SESSION;
    res->returns += e->kind == SONDE_MTB_EXC_RETURN && !e->tail_chain;
    res->chains += e->kind == SONDE_MTB_EXC_RETURN && e->tail_chain;
  }
  res->insns = ni;
  /* ... must equal the newest `ni` retires up to and including the store. */
  size_t got = 0, j = k + 1, mism = 0;
  size_t gt_entries = 0, gt_returns = 0, first_retire = k;
  while (j-- > 0 && got < ni) {
    if (g.ev[j].kind != EV_RETIRE)
      continue;
    if (g.ev[j].pc != pcs[ni - 1 - got] && mism++ < 5)
      CHECK_FAIL_("%s: instruction %zu from the end: got 0x%08x, ground truth 0x%08x", fw, got,
                  pcs[ni - 1 - got], g.ev[j].pc);
    got++;
    first_retire = j;
  }
  CHECK_EQ_U(got, ni);
  CHECK_EQ_U(mism, 0);
  /* Exceptions in the window, between the first and the last instruction;
   * when the window starts with an entry packet, the entry before the first
   * instruction (the packet's source did not run) too. */
  size_t from = first_retire;
  if (np && p[0].a && !sonde_mtb_is_exc_return(p[0].src))
    while (from > 0 && g.ev[from - 1].kind != EV_RETIRE)
      from--;
  for (size_t i = from; i <= k; i++) {
    gt_entries += g.ev[i].kind == EV_ENTER;
    gt_returns += g.ev[i].kind == EV_RETURN;
  }
  CHECK_EQ_U(res->entries + res->chains, gt_entries); /* a tail-chain enters the next handler */
  CHECK_EQ_U(res->returns, gt_returns);
  /* The oldest instruction is the source of the oldest packet, or its
   * destination when that is an exception's (the second half of a return,
   * an entry whose source had not run). */
  if (np && ni)
    CHECK_EQ_U(pcs[0], p[0].a ? p[0].dst : p[0].src);
  printf("%s on %s: %zu packets%s, %zu instructions, %zu exception entries, %zu returns, %zu "
         "tail-chains, %zu nested: equal to the ground truth\n",
         fw, machine, np, res->wrapped ? " (wrapped)" : "", ni, res->entries, res->returns,
         res->chains, res->nested);
  free(pcs);
  sonde_mtb_history_free(&hist);

  /* A corrupted packet in the middle: reported with its index, the rest
   * still decodes (a gap, then the same instructions as before). */
  if (np > 20) {
    size_t bad = np / 2;
    while (bad < np && (p[bad].a || sonde_mtb_is_exc_return(p[bad].dst) ||
                        sonde_mtb_is_exc_return(p[bad - 1].dst)))
      bad++;
    REQUIRE(bad < np);
    uint32_t saved = p[bad].src;
    p[bad].src = p[bad - 1].dst - 2; /* behind the previous destination */
    CHECK_EQ_I(sonde_mtb_rebuild(p, np, sym, &opt, &hist, &d), 0);
    CHECK(hist.nissues >= 1);
    if (hist.nissues)
      CHECK_EQ_U(hist.issues[0].packet, bad);
    size_t gaps = 0;
    for (size_t i = 0; i < hist.n; i++)
      gaps += hist.ev[i].kind == SONDE_MTB_GAP;
    CHECK_EQ_U(gaps, 1);
    CHECK_EQ_U(hist.ev[hist.n - 1].pc, end_pc); /* still runs on to the end */
    sonde_mtb_history_free(&hist);
    p[bad].src = saved;
    /* A direct branch (a BL here) whose packet goes elsewhere than its
     * target: an issue at that packet. */
    size_t db = 0;
    while (db < np && (p[db].a || !is_bl(sym, p[db].src)))
      db++;
    if (db < np) {
      uint32_t dst = p[db].dst;
      p[db].dst = dst + 2;
      CHECK_EQ_I(sonde_mtb_rebuild(p, np, sym, &opt, &hist, &d), 0);
      bool named = false;
      for (size_t i = 0; i < hist.nissues; i++)
        named |= hist.issues[i].packet == db && strstr(hist.issues[i].why, "where the branch goes");
      CHECK(named);
      sonde_mtb_history_free(&hist);
      p[db].dst = dst;
    } else {
      CHECK_FAIL_("%s: no direct branch packet", fw);
    }
  }
  /* The wrong ELF (the other core's build of the same source, at the same
   * addresses): most packets are inconsistent with its code. */
  char other[512];
  other_core_elf(fw, other, sizeof other);
  struct sonde_sym *osym = NULL;
  if (np > 20 && sonde_sym_open(other, &osym, &d) == 0) {
    CHECK_EQ_I(sonde_mtb_rebuild(p, np, osym, &opt, &hist, &d), 0);
    CHECK(hist.nissues * 2 > np);
    sonde_mtb_history_free(&hist);
    sonde_sym_free(osym);
  }
  free(p);
  sonde_sym_free(sym);
  capture_free(&c);
}

static void test_m33(void)
{
  struct result r;
  decode_and_compare("mtb_m33", "cm33", &r, NULL);
  CHECK(r.packets > 40);
  CHECK(!r.wrapped);
  CHECK(r.entries >= 2); /* PendSV and SysTick */
}

static void test_m0p(void)
{
  struct result r;
  decode_and_compare("mtb_m0p", "cm0plus", &r, NULL);
  CHECK(r.packets > 40);
  CHECK(!r.wrapped);
  CHECK(r.entries >= 2);
}

static void test_wrap_m33(void)
{
  struct result r;
  decode_and_compare("mtb_wrap", "cm33", &r, NULL);
  CHECK(r.wrapped);
  CHECK_EQ_U(r.packets, 8);
}

static void test_wrap_m33_long(void)
{
  struct result r;
  decode_and_compare("mtb_wrap_long", "cm33", &r, NULL);
  CHECK(r.wrapped);
  CHECK_EQ_U(r.packets, 64);
  CHECK(r.entries >= 2);
}

static void test_wrap_m0p_long(void)
{
  struct result r;
  decode_and_compare("mtb_wrap_m0p", "cm0plus", &r, NULL);
  CHECK(r.wrapped);
  CHECK_EQ_U(r.packets, 64);
  CHECK(r.entries >= 2);
}

/* PendSV pended inside SysTick: nested (PendSV preempts) and tail-chained
 * (PendSV runs between SysTick's return and the thread). */
static void nest(const char *fw, const char *machine, bool chained)
{
  struct result r;
  decode_and_compare(fw, machine, &r, NULL);
  CHECK(r.entries >= 4);
  CHECK_EQ_U(r.entries, r.returns); /* every activation ends in a return or a chain */
  if (chained) {
    CHECK(r.chains >= 4);
    CHECK_EQ_U(r.nested, 0);
  } else {
    CHECK_EQ_U(r.chains, 0);
    CHECK(r.nested >= 4); /* PendSV preempted SysTick */
  }
}
static void test_nested_m33(void) { nest("mtb_nest_m33", "cm33", false); }
static void test_nested_m0p(void) { nest("mtb_nest_m0plus", "cm0plus", false); }
static void test_chain_m33(void) { nest("mtb_chain_m33", "cm33", true); }
static void test_chain_m0p(void) { nest("mtb_chain_m0plus", "cm0plus", true); }

/* MTB TSTART/TSTOP (M33): DWT comparators start tracing at traced_start
 * and stop it at traced_stop's first instruction; one session (S-bit). */
static void test_tstart_tstop(void)
{
  struct result r;
  decode_and_compare("mtb_tstart", "cm33", &r, "traced_stop");
  CHECK_EQ_U(r.sessions, 1);
  CHECK(r.packets > 10);
}

/* MTB TSTART/TSTOP on the M0+: the MTBDWT's comparators (cm0plus,
 * mtbdwt=0xF0001000) start tracing at traced_start, stop it at traced_stop. */
static void test_tstart_tstop_m0p(void)
{
  struct result r;
  decode_and_compare("mtb_tstart_m0plus", "cm0plus", &r, "traced_stop");
  CHECK_EQ_U(r.sessions, 1);
  CHECK(r.packets > 10);
}

/* Several trace sessions in one buffer (mtb_sessions_*: three windows
 * between traced_start and traced_stop, SysTick inside and outside them).
 * The history is split at its session starts (S-bit); each session's
 * instructions must be a contiguous run of the ground truth, in order,
 * between a retire of traced_start and one of traced_stop (the stop: its
 * first instruction ends the last session); its exception entries those of
 * the ground truth in that run. */
static void decode_sessions(const char *fw, const char *machine, unsigned windows)
{
  struct capture c;
  if (!capture_run(fw, machine, &c))
    return;
  const struct gt g = c.g;
  const uint32_t *regs = c.regs;
  uint32_t size = c.size;
  unsigned char *buf = c.buf;
  const char *path = c.path;
  struct sonde_diag d;
  struct sonde_sym *sym = NULL;
  REQUIRE(sonde_sym_open(path, &sym, &d) == 0);
  uint32_t start = 0, stop_at = 0;
  REQUIRE(sonde_sym_address(sym, "traced_start", &start, NULL) == 0);
  REQUIRE(sonde_sym_address(sym, "traced_stop", &stop_at, NULL) == 0);
  write_dump(fw, buf, size, regs[3], regs[0], regs[1], stop_at);
  struct sonde_mtb_raw raw = {buf, size, regs[3], regs[0], regs[1], true};
  struct sonde_mtb_packet *p = NULL;
  size_t np = 0;
  CHECK_EQ_I(sonde_mtb_packets(&raw, &p, &np, &d), 0);
  struct sonde_mtb_options opt = {.end_pc = stop_at};
  struct sonde_mtb_history hist;
  CHECK_EQ_I(sonde_mtb_rebuild(p, np, sym, &opt, &hist, &d), 0);
  CHECK_EQ_U(hist.nissues, 0);
  unsigned sessions = 0, sbits = 0;
  size_t cursor = 0, total = 0, entries = 0;
  for (size_t i = 0; i < np; i++)
    sbits += p[i].s;
  for (size_t i = 0; i < hist.n;) {
    if (hist.ev[i].kind != SONDE_MTB_SESSION) {
      i++;
      continue;
    }
    sessions++;
    /* this session's instructions and exception entries */
    size_t j = i + 1, ni = 0, hent = 0;
    static uint32_t pcs[65536];
    for (; j < hist.n && hist.ev[j].kind != SONDE_MTB_SESSION; j++) {
      if (hist.ev[j].kind == SONDE_MTB_INSN && ni < 65536)
        pcs[ni++] = hist.ev[j].pc;
      hent += hist.ev[j].kind == SONDE_MTB_EXC_ENTRY ||
              (hist.ev[j].kind == SONDE_MTB_EXC_RETURN && hist.ev[j].tail_chain);
    }
    i = j;
    /* find it in the ground truth after the previous session */
    bool found = false, started = false;
    for (size_t a = cursor; a < g.n && !found; a++) {
      if (g.ev[a].kind != EV_RETIRE)
        continue;
      if (g.ev[a].pc == start)
        started = true;
      if (!started || g.ev[a].pc != pcs[0])
        continue;
      size_t k = a, got = 0;
      size_t gent = 0;
      for (; k < g.n && got < ni; k++) {
        if (g.ev[k].kind == EV_ENTER)
          gent++;
        if (g.ev[k].kind != EV_RETIRE)
          continue;
        if (g.ev[k].pc != pcs[got])
          break;
        got++;
      }
      if (got != ni)
        continue;
      found = true;
      total += ni;
      entries += hent;
      CHECK_EQ_U(hent, gent);
      /* the stop ends the session: the next retire after the run, or the
       * run's last instruction (the last session, which runs to end_pc) */
      size_t nx = k;
      while (nx < g.n && g.ev[nx].kind != EV_RETIRE)
        nx++;
      CHECK(pcs[ni - 1] == stop_at || (nx < g.n && g.ev[nx].pc == stop_at));
      cursor = k;
    }
    if (!found)
      CHECK_FAIL_("%s: session %u (%zu instructions from 0x%08x) is not a run of the ground truth",
                  fw, sessions, ni, ni ? pcs[0] : 0);
  }
  CHECK_EQ_U(sessions, windows);
  CHECK_EQ_U(sbits, windows);
  CHECK(entries >= 1); /* SysTick inside a session */
  printf("%s on %s: %zu packets, %u sessions (S-bits), %zu instructions, %zu exception "
         "entries: each session a run of the ground truth\n", fw, machine, np, sessions, total,
         entries);
  sonde_mtb_history_free(&hist);
  free(p);
  sonde_sym_free(sym);
  capture_free(&c);
}
static void test_sessions_m33(void) { decode_sessions("mtb_sessions_m33", "cm33", 3); }
static void test_sessions_m0p(void) { decode_sessions("mtb_sessions_m0plus", "cm0plus", 3); }

/* Run fw without hooks to its end; *sym is its ELF; the bundle the fault
 * handler stored (symbol mtb_bundle) is copied to a malloc'd *bundle. */
struct fault_run {
  struct sonde_machine *m;
  struct sonde_vm *vm;
  struct sonde_sym *sym;
  struct sonde_vm_stop stop;
  unsigned char *bundle;
  uint32_t size;
};

/* What the firmware printed (semihosting) in the last fault_run. */
static char run_out[16384];
static size_t run_out_len;

static int capture(void *ctx, int stream, const void *data, size_t len)
{
  (void)ctx, (void)stream;
  if (run_out_len + len < sizeof run_out) {
    memcpy(run_out + run_out_len, data, len);
    run_out_len += len;
    run_out[run_out_len] = 0;
  }
  return 0;
}

static bool fault_run(const char *fw, const char *machine, struct fault_run *r)
{
  run_out_len = 0;
  run_out[0] = 0;
  memset(r, 0, sizeof *r);
  char path[512];
  snprintf(path, sizeof path, "%s/%s.elf", SONDE_FIRMWARE_DIR, fw);
  FILE *f = fopen(path, "rb");
  if (!f) {
    CHECK_FAIL_("missing firmware %s", path);
    return false;
  }
  static unsigned char img[1 << 20];
  size_t n = fread(img, 1, sizeof img, f);
  fclose(f);
  struct sonde_diag d;
  uint32_t at = 0;
  if (sonde_machine_builtin(machine, &r->m) != 0 || sonde_vm_new(r->m, &r->vm) != 0 ||
      sonde_vm_load_elf(r->vm, img, n, fw) != 0 || sonde_sym_open(path, &r->sym, &d) != 0 ||
      sonde_sym_address(r->sym, "mtb_bundle", &at, &r->size) != 0 || r->size < 132) {
    CHECK_FAIL_("cannot set up %s", fw);
    return false;
  }
  sonde_vm_set_output(r->vm, capture, NULL);
  sonde_vm_reset(r->vm);
  CHECK_EQ_I(sonde_vm_run(r->vm, 20000000, &r->stop), 0);
  CHECK_EQ_I(r->stop.reason, SONDE_VM_STOP_EXIT);
  r->bundle = malloc(r->size);
  return r->bundle && sonde_vm_read_mem(r->vm, at, r->bundle, r->size) == 0;
}

static void fault_run_free(struct fault_run *r)
{
  free(r->bundle);
  sonde_sym_free(r->sym);
  sonde_vm_free(r->vm);
  sonde_machine_free(r->m);
}

static void save_bundle(const char *fw, const struct fault_run *r)
{
  char out[600];
  snprintf(out, sizeof out, "%s/mtb_dumps/%s.smtb", SONDE_BINARY_DIR, fw);
  FILE *f = fopen(out, "wb");
  if (f) {
    fwrite(r->bundle, 1, r->size, f);
    fclose(f);
  }
}

/* A real fault: the instruction history up to the handler's MTB stop equals
 * the ground truth (above), and the bundle the handler wrote into .noinit
 * parses (CRC), decodes to the same packets, and names the faulting
 * instruction in culprit(). Writes <fw>.smtb for the CLI test. */
static void fault(const char *fw, const char *machine, bool v8)
{
  struct result r;
  decode_and_compare(fw, machine, &r, NULL);
  CHECK(r.entries >= 2); /* SysTick(s) and the HardFault */
  struct fault_run fr;
  struct sonde_diag d = {{0}};
  if (!fault_run(fw, machine, &fr)) {
    fault_run_free(&fr);
    return;
  }
  CHECK_EQ_I(fr.stop.exit_code, 3);
  struct sonde_mtb_bundle bu;
  CHECK_EQ_I(sonde_mtb_bundle_parse(fr.bundle, fr.size, &bu, &d), 0);
  CHECK_EQ_U(bu.arch, v8 ? 8 : 6);
  CHECK_EQ_U(bu.ipsr, 3); /* HardFault */
  CHECK_EQ_U(bu.raw.len, 1024);
  CHECK_EQ_U(bu.stack_len, 64);
  CHECK_EQ_U(bu.exc_return >> 28, 0xF);
  const char *fn = sonde_sym_name(fr.sym, bu.frame[6], NULL);
  CHECK_EQ_STR(fn, "culprit");
  struct sonde_sym_insn in;
  CHECK(sonde_sym_disasm(fr.sym, bu.frame[6], &in) == 0 && strncmp(in.mnemonic, "ldr", 3) == 0);
  if (v8) {
    CHECK_EQ_U(bu.hfsr, 1u << 30);               /* FORCED */
    CHECK_EQ_U(bu.cfsr, (1u << 9) | (1u << 15)); /* PRECISERR, BFARVALID */
    CHECK_EQ_U(bu.bfar, 0xCFFFFFF0u);
    char w[128];
    CHECK_EQ_STR(sonde_mtb_fault_words(bu.cfsr, bu.hfsr, w, sizeof w),
                 "PRECISERR BFARVALID FORCED");
  }
  /* The stack slice starts with the frame. */
  uint32_t w0;
  memcpy(&w0, bu.stack + 24, 4);
  CHECK_EQ_U(w0, bu.frame[6]);
  /* The newest exception entry goes to HardFault_Handler. */
  struct sonde_mtb_packet *p = NULL;
  size_t np = 0;
  CHECK(sonde_mtb_packets(&bu.raw, &p, &np, &d) == 0 && np > 10);
  size_t e = np;
  for (size_t i = 0; i < np; i++)
    if (p[i].a && !sonde_mtb_is_exc_return(p[i].src))
      e = i;
  if (e < np && e > 0) {
    CHECK_EQ_STR(sonde_sym_name(fr.sym, p[e].dst, NULL), "HardFault_Handler");
    /* The load is culprit's first instruction: the call's branch packet goes
     * to it, then the entry packet names the load (the preferred return
     * address of a fault, which the frame holds too) as its source. */
    CHECK_EQ_U(p[e - 1].dst, bu.frame[6]);
    CHECK_EQ_U(p[e].src & ~1u, bu.frame[6]);
    CHECK_EQ_STR(sonde_sym_name(fr.sym, p[e - 1].src, NULL), "main");
  } else {
    CHECK_FAIL_("no exception entry in %zu packets", np);
  }
  uint32_t fault_pc = bu.frame[6];
  /* A corrupted byte is caught by the CRC, a cut bundle by its size. */
  fr.bundle[200] ^= 1;
  CHECK_EQ_I(sonde_mtb_bundle_parse(fr.bundle, fr.size, &bu, &d), SONDE_E_FORMAT);
  CHECK(strstr(d.msg, "CRC-32") != NULL);
  fr.bundle[200] ^= 1;
  CHECK_EQ_I(sonde_mtb_bundle_parse(fr.bundle, 700, &bu, &d), SONDE_E_TRUNCATED);
  save_bundle(fw, &fr);
  printf("%s: bundle of %u bytes, fault at 0x%08x in %s\n", fw, fr.size, fault_pc, fn);
  free(p);
  fault_run_free(&fr);
}

/* The bundle survives a SYSRESETREQ in .noinit: the next boot finds it,
 * sends it (mtb_bundle_send: hex lines "MTB ..." over semihosting, as over a
 * UART), marks it sent and exits with 4; what was sent still names the
 * fault, and the copy in RAM no longer counts as waiting. */
static void fault_reset(const char *fw, const char *machine)
{
  struct fault_run fr;
  struct sonde_diag d = {{0}};
  if (fault_run(fw, machine, &fr)) {
    CHECK_EQ_I(fr.stop.exit_code, 4);
    static uint8_t sent[8192];
    size_t n = 0;
    for (const char *l = strstr(run_out, "MTB "); l; l = strstr(l, "MTB ")) {
      l += 4;
      unsigned v;
      while (n < sizeof sent && sscanf(l, "%2x", &v) == 1 && l[0] != '\n') {
        sent[n++] = (uint8_t)v;
        l += 2;
      }
    }
    struct sonde_mtb_bundle bu;
    CHECK_EQ_U(n, fr.size);
    CHECK_EQ_I(sonde_mtb_bundle_parse(sent, n, &bu, &d), 0);
    CHECK_EQ_STR(sonde_sym_name(fr.sym, bu.frame[6], NULL), "culprit");
    CHECK_EQ_U(bu.ipsr, 3);
    uint32_t fault_pc = bu.frame[6];
    CHECK(memcmp(sent + 4, fr.bundle + 4, n - 4) == 0); /* the RAM copy, magic cleared */
    CHECK_EQ_I(sonde_mtb_bundle_parse(fr.bundle, fr.size, &bu, &d), SONDE_E_FORMAT);
    printf("%s: bundle survived the reset and was sent (%zu bytes), fault at 0x%08x\n", fw, n,
           fault_pc);
  }
  fault_run_free(&fr);
}
static void test_fault_reset_m33(void) { fault_reset("mtb_fault_reset_m33", "cm33"); }
static void test_fault_reset_m0p(void) { fault_reset("mtb_fault_reset_m0plus", "cm0plus"); }

/* Demos: the fault's PC is garbage (0x1FFF0000), so the culprit is the
 * source of the last branch before the HardFault entry: dispatch()'s call
 * through the wild pointer, smash()'s return through the overwritten LR.
 * The history up to the handler's MTB stop also equals the ground truth. */
static void demo(const char *fw, const char *machine, const char *culprit, uint32_t wild)
{
  struct result r;
  outside_addresses = 2; /* the wild destination, and the source of the fault's entry */
  decode_and_compare(fw, machine, &r, NULL);
  outside_addresses = 0;
  struct fault_run fr;
  struct sonde_diag d = {{0}};
  struct sonde_mtb_bundle bu;
  struct sonde_mtb_packet *p = NULL;
  size_t np = 0;
  if (fault_run(fw, machine, &fr) && sonde_mtb_bundle_parse(fr.bundle, fr.size, &bu, &d) == 0 &&
      sonde_mtb_packets(&bu.raw, &p, &np, &d) == 0) {
    CHECK_EQ_I(fr.stop.exit_code, 3);
    CHECK_EQ_U(bu.frame[6] & ~1u, wild);
    size_t e = np;
    for (size_t i = 0; i < np; i++)
      if (p[i].a && !sonde_mtb_is_exc_return(p[i].src))
        e = i;
    if (e < np && e > 0) {
      CHECK_EQ_STR(sonde_sym_name(fr.sym, p[e].dst, NULL), "HardFault_Handler");
      CHECK_EQ_U(p[e - 1].dst, wild);
      CHECK_EQ_U(p[e].src & ~1u, wild); /* the fetch that faulted */
      CHECK_EQ_STR(sonde_sym_name(fr.sym, p[e - 1].src, NULL), culprit);
    } else {
      CHECK_FAIL_("no exception entry in %zu packets", np);
    }
    save_bundle(fw, &fr);
    printf("%s: jumped to 0x%08x from %s\n", fw, wild, culprit);
  } else {
    CHECK_FAIL_("%s: no bundle: %s", fw, d.msg);
  }
  free(p);
  fault_run_free(&fr);
}
/* Ground truth at the HardFault entry: the registers the stacked frame does
 * not hold (r4-r11, S0-S31), read from the VM at the entry, the last
 * instruction that retired before it and the PC after it (the instruction
 * the core was about to run). */
struct entry_truth {
  struct sonde_vm *vm;
  bool seen;
  uint32_t r4_r11[8], s[32], msp, psp, last_retired, retired, next, interrupted;
};

static void truth_retire(void *ctx, uint32_t pc, uint64_t cycle, uint32_t cycles)
{
  (void)cycle, (void)cycles;
  struct entry_truth *t = ctx;
  t->retired = pc;
  sonde_vm_read_reg(t->vm, 15, &t->next);
}

static void truth_exc(void *ctx, uint64_t cycle, enum sonde_vm_exc_event ev, unsigned exc)
{
  (void)cycle;
  struct entry_truth *t = ctx;
  if (ev != SONDE_VM_EXC_ENTER || exc != 3 || t->seen)
    return;
  t->seen = true;
  t->last_retired = t->retired;
  t->interrupted = t->next & ~1u;
  for (unsigned i = 0; i < 8; i++)
    sonde_vm_read_reg(t->vm, 4 + i, &t->r4_r11[i]);
  for (unsigned i = 0; i < 32; i++)
    sonde_vm_read_reg(t->vm, SONDE_VM_REG_S0 + i, &t->s[i]);
  sonde_vm_read_reg(t->vm, SONDE_VM_REG_MSP, &t->msp);
  sonde_vm_read_reg(t->vm, SONDE_VM_REG_PSP, &t->psp);
}

static bool entry_truth(const char *fw, const char *machine, struct entry_truth *t)
{
  memset(t, 0, sizeof *t);
  char path[512];
  snprintf(path, sizeof path, "%s/%s.elf", SONDE_FIRMWARE_DIR, fw);
  FILE *f = fopen(path, "rb");
  if (!f)
    return false;
  static unsigned char img[1 << 20];
  size_t n = fread(img, 1, sizeof img, f);
  fclose(f);
  struct sonde_machine *m = NULL;
  if (sonde_machine_builtin(machine, &m) != 0 || sonde_vm_new(m, &t->vm) != 0 ||
      sonde_vm_load_elf(t->vm, img, n, fw) != 0)
    return false;
  sonde_vm_set_output(t->vm, quiet, NULL);
  struct sonde_vm_hooks h = {.ctx = t, .retire = truth_retire, .exception = truth_exc};
  sonde_vm_set_hooks(t->vm, &h);
  sonde_vm_reset(t->vm);
  struct sonde_vm_stop stop;
  sonde_vm_run(t->vm, 20000000, &stop);
  sonde_vm_free(t->vm);
  sonde_machine_free(m);
  t->vm = NULL;
  return t->seen;
}

/* Version 2: r4-r11 (and MSP, PSP) in the bundle are the core's at the
 * HardFault entry; with the FPU (mtb_fault_fpu_m33) S0-S31 too, with the
 * values main() put there; the build id is the ELF's. */
static void regs_check(const char *fw, const char *machine, bool fpu)
{
  struct entry_truth t;
  struct fault_run fr;
  struct sonde_diag d = {{0}};
  struct sonde_mtb_bundle bu;
  if (!entry_truth(fw, machine, &t)) {
    CHECK_FAIL_("%s: no HardFault entry seen", fw);
    return;
  }
  if (fault_run(fw, machine, &fr) && sonde_mtb_bundle_parse(fr.bundle, fr.size, &bu, &d) == 0) {
    CHECK_EQ_U(bu.version, 2);
    CHECK(bu.flags & SONDE_MTB_REGS_CORE);
    for (unsigned i = 0; i < 8; i++)
      CHECK_EQ_U(bu.r4_r11[i], t.r4_r11[i]);
    CHECK_EQ_U(bu.msp, t.msp);
    CHECK_EQ_U(bu.psp, t.psp);
    CHECK_EQ_U(!!(bu.flags & SONDE_MTB_REGS_FPU), fpu);
    CHECK_EQ_U(!!(bu.flags & SONDE_MTB_REGS_SPLIM), !strcmp(machine, "cm33"));
    if (fpu) {
      for (unsigned i = 0; i < 32; i++)
        CHECK_EQ_U(bu.s[i], t.s[i]);
      CHECK_EQ_U(bu.s[0], 0x3FC00000u);  /* 1.5 */
      CHECK_EQ_U(bu.s[17], 0xC0000000u); /* -2.0 */
      CHECK_EQ_U(bu.s[31], 0x3E800000u); /* 0.25 */
    }
    uint8_t id[20];
    size_t idn = sonde_sym_build_id(fr.sym, id, sizeof id, NULL);
    CHECK_EQ_U(idn, 20);
    CHECK_EQ_U(bu.build_id_len, 20);
    CHECK(memcmp(bu.build_id, id, 20) == 0);
    CHECK_EQ_I(sonde_mtb_build_id_check(&bu, id, idn), SONDE_MTB_ID_MATCH);
    id[3] ^= 1;
    CHECK_EQ_I(sonde_mtb_build_id_check(&bu, id, idn), SONDE_MTB_ID_MISMATCH);
    CHECK_EQ_I(sonde_mtb_build_id_check(&bu, id, 0), SONDE_MTB_ID_NONE_IN_ELF);
    bu.build_id_len = 0;
    CHECK_EQ_I(sonde_mtb_build_id_check(&bu, id, idn), SONDE_MTB_ID_NONE_IN_BUNDLE);
    save_bundle(fw, &fr);
    printf("%s: r4-r11%s and the build id as at the fault\n", fw, fpu ? ", S0-S31" : "");
  } else {
    CHECK_FAIL_("%s: no bundle: %s", fw, d.msg);
  }
  fault_run_free(&fr);
}
static void test_regs_m33(void) { regs_check("mtb_fault_m33", "cm33", false); }
static void test_regs_m0p(void) { regs_check("mtb_fault_m0plus", "cm0plus", false); }
static void test_regs_fpu_m33(void) { regs_check("mtb_fault_fpu_m33", "cm33", true); }

/* Linked without --build-id: the bundle says it has no build id; the same
 * code with another build id (mtb_fault_other_m33) has a different one. */
static void test_no_build_id(void)
{
  struct fault_run fr;
  struct sonde_diag d = {{0}};
  struct sonde_mtb_bundle bu;
  if (fault_run("mtb_fault_noid_m33", "cm33", &fr) &&
      sonde_mtb_bundle_parse(fr.bundle, fr.size, &bu, &d) == 0) {
    CHECK_EQ_U(bu.build_id_len, 0);
    CHECK_EQ_U(sonde_sym_build_id(fr.sym, NULL, 0, NULL), 0);
    save_bundle("mtb_fault_noid_m33", &fr);
  } else {
    CHECK_FAIL_("mtb_fault_noid_m33: %s", d.msg);
  }
  fault_run_free(&fr);
  uint8_t a[20], b[20];
  struct sonde_sym *s1 = NULL, *s2 = NULL;
  CHECK(sonde_sym_open(SONDE_FIRMWARE_DIR "/mtb_fault_m33.elf", &s1, &d) == 0);
  CHECK(sonde_sym_open(SONDE_FIRMWARE_DIR "/mtb_fault_other_m33.elf", &s2, &d) == 0);
  uint32_t at1 = 0, at2 = 0;
  CHECK_EQ_U(sonde_sym_build_id(s1, a, sizeof a, &at1), 20);
  CHECK_EQ_U(sonde_sym_build_id(s2, b, sizeof b, &at2), 20);
  CHECK(memcmp(a, b, 20) != 0);
  /* The note is loaded (in flash) and its descriptor follows the 16-byte header. */
  uint32_t note = 0;
  CHECK(sonde_sym_address(s1, "__build_id_note", &note, NULL) == 0);
  CHECK_EQ_U(at1, note + 16);
  sonde_sym_free(s1);
  sonde_sym_free(s2);
}

/* Stack overflow, M33: recurse() crosses MSPLIM; STKOF escalates to
 * HardFault. The trace's entry site is in recurse(), right after the last
 * instruction that retired (the ground truth's); the bundle keeps MSPLIM. */
static void test_demo_stack_m33(void)
{
  struct result r;
  decode_and_compare("mtb_stack_m33", "cm33", &r, NULL);
  struct entry_truth t;
  struct fault_run fr;
  struct sonde_diag d = {{0}};
  struct sonde_mtb_bundle bu;
  struct sonde_mtb_packet *p = NULL;
  size_t np = 0;
  struct sonde_mtb_history h = {0};
  if (!entry_truth("mtb_stack_m33", "cm33", &t)) {
    CHECK_FAIL_("no HardFault entry");
    return;
  }
  if (fault_run("mtb_stack_m33", "cm33", &fr) &&
      sonde_mtb_bundle_parse(fr.bundle, fr.size, &bu, &d) == 0 &&
      sonde_mtb_packets(&bu.raw, &p, &np, &d) == 0 &&
      sonde_mtb_rebuild(p, np, fr.sym, NULL, &h, &d) == 0) {
    CHECK_EQ_I(fr.stop.exit_code, 3);
    CHECK_EQ_U(bu.cfsr, 1u << 20); /* STKOF */
    CHECK_EQ_U(bu.hfsr, 1u << 30); /* FORCED */
    uint32_t limit = 0;
    CHECK(sonde_sym_address(fr.sym, "__HeapLimit", &limit, NULL) == 0);
    CHECK_EQ_U(bu.msplim, limit);
    struct sonde_mtb_site site;
    CHECK_EQ_I(sonde_mtb_entry_site(&h, fr.sym, &site), 0);
    CHECK_EQ_U(site.last, t.last_retired);
    CHECK_EQ_U(site.pc, t.interrupted);
    CHECK_EQ_STR(sonde_sym_name(fr.sym, site.pc, NULL), "recurse");
    CHECK_EQ_STR(sonde_sym_name(fr.sym, site.handler, NULL), "HardFault_Handler");
    /* Here the limit is crossed by a SysTick's exception frame: the M33
     * pushes nothing below the limit (SP = MSPLIM), so the "frame" the
     * handler sees is not the program's; the trace still says where it was. */
    CHECK_EQ_U(bu.stack_addr, limit);
    CHECK(bu.frame[6] != site.pc);
    save_bundle("mtb_stack_m33", &fr);
    printf("mtb_stack_m33: STKOF while at 0x%08x in recurse (stacked pc 0x%08x)\n", site.pc,
           bu.frame[6]);
  } else {
    CHECK_FAIL_("mtb_stack_m33: %s", d.msg);
  }
  sonde_mtb_history_free(&h);
  free(p);
  fault_run_free(&fr);
}

static void test_demo_wild_m33(void) { demo("mtb_wild_m33", "cm33", "dispatch", 0x1FFF0000u); }
static void test_demo_wild_m0p(void) { demo("mtb_wild_m0plus", "cm0plus", "dispatch", 0x1FFF0000u); }
static void test_demo_smash_m33(void) { demo("mtb_smash_m33", "cm33", "smash", 0x1FFF0000u); }
static void test_demo_smash_m0p(void) { demo("mtb_smash_m0plus", "cm0plus", "smash", 0x1FFF0000u); }
/* M0+ stack overflow: the task stack ran over its callback (0xA5 bytes of
 * recurse()'s buffer); run_task's call through it is the culprit. */
static void test_demo_stack_m0p(void) { demo("mtb_stack_m0plus", "cm0plus", "run_task", 0xA5A5A5A4u); }
static void test_fault_m33(void) { fault("mtb_fault_m33", "cm33", true); }
static void test_fault_m0p(void) { fault("mtb_fault_m0plus", "cm0plus", false); }

int main(void)
{
  RUN(test_fault_m33);
  RUN(test_demo_wild_m33);
  RUN(test_demo_wild_m0p);
  RUN(test_demo_smash_m33);
  RUN(test_demo_smash_m0p);
  RUN(test_demo_stack_m33);
  RUN(test_demo_stack_m0p);
  RUN(test_regs_m33);
  RUN(test_regs_m0p);
  RUN(test_regs_fpu_m33);
  RUN(test_no_build_id);
  RUN(test_fault_reset_m33);
  RUN(test_fault_reset_m0p);
  RUN(test_fault_m0p);
  RUN(test_tstart_tstop);
  RUN(test_tstart_tstop_m0p);
  RUN(test_sessions_m33);
  RUN(test_sessions_m0p);
  RUN(test_nested_m33);
  RUN(test_nested_m0p);
  RUN(test_chain_m33);
  RUN(test_chain_m0p);
  RUN(test_m33);
  RUN(test_m0p);
  RUN(test_wrap_m33);
  RUN(test_wrap_m33_long);
  RUN(test_wrap_m0p_long);
  return check_summary();
}
