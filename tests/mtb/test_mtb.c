/* MTB (src/vm/dbg_mtb.c) against the VM's ground truth.
 *
 * Firmware (firmware/mtb/mtb_trace.c + target/cortexm/mtb.c) enables the MTB
 * like production code and runs branches, calls, PendSV and SysTick. The test
 * records every retired PC and exception event through the observation hooks,
 * derives the packets an MTB must write (MTB-M0+ TRM 3.2: one per
 * non-sequential PC change; exception entry with the A-bit; exception return
 * as (return insn -> EXC_RETURN), (EXC_RETURN|A -> return address); S-bit on
 * the first packet) with its own logic, and compares them with the buffer
 * read from the VM's memory with its own parser. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sonde/vm.h"
#include "check.h"

enum { EV_RETIRE, EV_ENTER, EV_EXIT, EV_RETURN, EV_EN, EV_DIS };
struct ev {
  uint8_t kind;
  uint32_t pc;
};
struct gt {
  struct ev *ev;
  size_t n, cap;
  uint32_t master; /* address of MTB_MASTER */
  struct sonde_vm *vm;
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
  (void)cycle;
  (void)cycles;
  push(ctx, EV_RETIRE, pc);
}

static void on_transfer(void *ctx, uint64_t cycle, uint32_t pc, uint32_t addr, unsigned size,
                        uint32_t value, bool write)
{
  (void)cycle;
  (void)size;
  struct gt *g = ctx;
  if (write && addr == g->master) /* the MASTER write retires right after this */
    push(g, (value >> 31) ? EV_EN : EV_DIS, pc);
}

/* An entry's `pc` is the return address in the frame it pushed (at SP + 24),
 * which an MTB entry packet has as its source: the "architecturally-preferred
 * return address" (MTB-M0+ TRM 2.3.1). */
static void on_exc(void *ctx, uint64_t cycle, enum sonde_vm_exc_event ev, unsigned exc)
{
  (void)cycle;
  (void)exc;
  struct gt *g = ctx;
  uint32_t sp = 0, ret = 0;
  if (ev == SONDE_VM_EXC_ENTER) {
    sonde_vm_read_reg(g->vm, 13, &sp);
    sonde_vm_read_mem(g->vm, sp + 24, &ret, 4);
  }
  push(g, ev == SONDE_VM_EXC_ENTER ? EV_ENTER : ev == SONDE_VM_EXC_EXIT ? EV_EXIT : EV_RETURN,
       ret);
}

static int quiet(void *ctx, int stream, const void *data, size_t len)
{
  (void)ctx, (void)stream, (void)data, (void)len;
  return 0;
}

#define WILD 0xFFFFFFFEu /* an EXC_RETURN value: any 0xFxxxxxxx */
struct pkt {
  uint32_t src, dst; /* with the A- and S-bits in bit 0 */
};

/* Packets an MTB must write for the ground truth between the retire of the
 * enabling MASTER write and the retire of the disabling one. */
static uint32_t insn_size(struct sonde_vm *vm, uint32_t pc)
{
  uint16_t hw = 0;
  sonde_vm_read_mem(vm, pc, &hw, 2);
  return (hw >> 11) >= 0x1D ? 4 : 2;
}

/* Packets an MTB must write for the ground truth between the retire of the
 * enabling MASTER write and the retire of the disabling one, from the events
 * between two retired instructions a and b: a taken branch (a -> b); an
 * exception return ((a -> EXC_RETURN), (EXC_RETURN|A -> where it went)); an
 * entry (A-bit) from the return address it stacked, after the packet of the
 * branch a took when that address is not the instruction after a; a
 * tail-chain, the second return packet going to the next handler; an entry
 * taken before the first instruction of the handler just entered (or of the
 * code a return went back to): its stacked address is that instruction. */
static size_t expected(struct sonde_vm *vm, const struct gt *g, struct pkt **out)
{
  struct pkt *e = calloc(g->n * 4 + 1, sizeof *e);
  bool *first = calloc(g->n * 4 + 1, sizeof *first); /* a session's packets begin here */
  size_t ne = 0;
  bool on = false, en_pending = false;
  long last = -1; /* index of the previous retire while tracing */
  bool exited = false, returned = false;
  unsigned entered = 0;
  uint32_t ret[4]; /* the entries' stacked return addresses since the last retire */
  for (size_t i = 0; i < g->n; i++) {
    const struct ev *v = &g->ev[i];
    switch (v->kind) {
    case EV_EN: en_pending = true; break;
    case EV_DIS: on = false; last = -1; break;
    case EV_ENTER:
      if (entered < 4)
        ret[entered++] = v->pc;
      break;
    case EV_EXIT: exited = true; break;
    case EV_RETURN: returned = true; break;
    case EV_RETIRE:
      if (on && last >= 0) {
        uint32_t a = g->ev[last].pc, b = v->pc;
        unsigned k = 0; /* the first entry with a packet from its return address */
        if (exited) {
          e[ne++] = (struct pkt){a, WILD};
          if (returned && entered) /* returned, then entered before b's first instruction */
            e[ne++] = (struct pkt){WILD | 1, ret[0]};
          else if (entered) /* tail-chained into ret[]'s first entry */
            e[ne++] = (struct pkt){WILD | 1, entered > 1 ? ret[1] : b}, k = 1;
          else
            e[ne++] = (struct pkt){WILD | 1, b};
        } else if (entered) {
          if (ret[0] != a + insn_size(vm, a))
            e[ne++] = (struct pkt){a, ret[0]}; /* the branch a took */
        } else if (b != a + insn_size(vm, a)) {
          e[ne++] = (struct pkt){a, b};
        }
        for (; k < entered; k++)
          e[ne++] = (struct pkt){ret[k] | 1, k + 1 < entered ? ret[k + 1] : b};
      }
      entered = 0;
      exited = returned = false;
      if (en_pending) {
        if (!on)
          first[ne] = true;
        on = true;
        en_pending = false;
      }
      if (on)
        last = (long)i;
      break;
    }
  }
  /* S-bit on the first packet of each session (after each start) */
  for (size_t i = 0; i < ne; i++)
    if (first[i])
      e[i].dst |= 1;
  free(first);
  *out = e;
  return ne;
}

static bool pkt_eq(const struct pkt *want, const struct pkt *got)
{
  if (want->src == (WILD | 1))
    return (got->src & 0xF0000001u) == 0xF0000001u && got->dst == want->dst;
  if (want->dst == WILD || want->dst == (WILD | 1))
    return got->src == want->src && (got->dst & 0xF0000000u) == 0xF0000000u &&
           (got->dst & 1) == (want->dst & 1);
  return got->src == want->src && got->dst == want->dst;
}

struct run {
  struct sonde_vm *vm;
  struct sonde_machine *m;
  struct gt g;
  struct sonde_vm_stop stop;
  uint32_t sfr, position, master, flow, base;
  struct pkt *buf; /* oldest first, parsed from SRAM independently of the firmware */
  size_t nbuf;
};

/* The hooks above make the VM run its hooked executor, which observes every
 * instruction. Without hooks the MTB is fed by the MTB executor (branch
 * reports from the fast handlers, exec.c): run the image again that way, and
 * once more with the JIT allowed, and require the same buffer, registers,
 * stop and cycle count. */
static void same_without_hooks(const struct run *r, const unsigned char *img, size_t n,
                               const char *name, uint32_t size, bool jit)
{
  struct sonde_vm *vm;
  if (sonde_vm_new(r->m, &vm) != 0 || sonde_vm_load_elf(vm, img, n, name) != 0) {
    CHECK_FAIL_("cannot load %s", name);
    return;
  }
  sonde_vm_set_output(vm, quiet, NULL);
  sonde_vm_set_jit(vm, jit);
  sonde_vm_reset(vm);
  struct sonde_vm_stop stop;
  CHECK_EQ_I(sonde_vm_run(vm, 2000000, &stop), 0);
  CHECK_EQ_I(stop.reason, r->stop.reason);
  CHECK_EQ_U(stop.pc, r->stop.pc);
  uint32_t regs[4];
  CHECK_EQ_I(sonde_vm_read_mem(vm, r->sfr, regs, sizeof regs), 0);
  CHECK_EQ_U(regs[0], r->position);
  CHECK_EQ_U(regs[1], r->master);
  struct sonde_vm_stats a, b;
  sonde_vm_get_stats(r->vm, &a);
  sonde_vm_get_stats(vm, &b);
  CHECK_EQ_U(b.cycles, a.cycles);
  CHECK_EQ_U(b.instructions, a.instructions);
  unsigned char *x = malloc(size), *y = malloc(size);
  if (x && y && sonde_vm_read_mem(r->vm, r->base, x, size) == 0 &&
      sonde_vm_read_mem(vm, r->base, y, size) == 0)
    CHECK(memcmp(x, y, size) == 0);
  else
    CHECK_FAIL_("cannot read the %u-byte trace buffer", size);
  free(x);
  free(y);
  sonde_vm_free(vm);
}

static bool run_fw(struct run *r, const char *name, const char *machine)
{
  memset(r, 0, sizeof *r);
  char path[512];
  snprintf(path, sizeof path, "%s/%s.elf", SONDE_FIRMWARE_DIR, name);
  FILE *f = fopen(path, "rb");
  if (!f) {
    CHECK_FAIL_("missing firmware %s (build the 'firmware' target)", path);
    return false;
  }
  static unsigned char img[1 << 20];
  size_t n = fread(img, 1, sizeof img, f);
  fclose(f);
  if (strchr(machine, '/')) { /* a machine file; its MTB block is at `regs=` */
    static char txt[4096];
    FILE *mf = fopen(machine, "rb");
    size_t tl = mf ? fread(txt, 1, sizeof txt, mf) : 0;
    if (mf)
      fclose(mf);
    if (sonde_machine_parse(txt, tl, machine, &r->m, NULL) != 0) {
      CHECK_FAIL_("cannot parse machine file %s", machine);
      return false;
    }
    const char *k = strstr(txt, "regs=");
    r->sfr = k ? (uint32_t)strtoul(k + 5, NULL, 0) : 0xF0000000u;
  } else {
    if (sonde_machine_builtin(machine, &r->m) != 0) {
      CHECK_FAIL_("no machine %s", machine);
      return false;
    }
    r->sfr = sonde_machine_core(r->m) == SONDE_VM_CORE_M33 ? 0xE0043000u : 0xF0000000u;
  }
  r->g.master = r->sfr + 4;
  if (sonde_vm_new(r->m, &r->vm) != 0 || sonde_vm_load_elf(r->vm, img, n, name) != 0) {
    CHECK_FAIL_("cannot load %s", path);
    return false;
  }
  r->g.vm = r->vm;
  sonde_vm_set_output(r->vm, quiet, NULL);
  struct sonde_vm_hooks h = {.ctx = &r->g, .retire = on_retire, .transfer = on_transfer,
                             .exception = on_exc};
  sonde_vm_set_hooks(r->vm, &h);
  sonde_vm_reset(r->vm);
  CHECK_EQ_I(sonde_vm_run(r->vm, 2000000, &r->stop), 0);
  uint32_t regs[4];
  CHECK_EQ_I(sonde_vm_read_mem(r->vm, r->sfr, regs, sizeof regs), 0);
  r->position = regs[0];
  r->master = regs[1];
  r->flow = regs[2];
  r->base = regs[3];
  uint32_t size = 16u << (r->master & 0x1F);
  uint32_t ptr = r->position & ~7u & (size - 1);
  bool wrap = r->position & 4;
  uint32_t first = wrap ? ptr : 0, bytes = wrap ? size : ptr;
  r->buf = calloc(size / 8 + 1, sizeof *r->buf);
  for (uint32_t off = 0; off < bytes; off += 8) {
    uint32_t w[2];
    sonde_vm_read_mem(r->vm, r->base + ((first + off) & (size - 1)), w, 8);
    r->buf[r->nbuf++] = (struct pkt){w[0], w[1]};
  }
  same_without_hooks(r, img, n, name, size, false);
  same_without_hooks(r, img, n, name, size, true); /* and with the compiled blocks */
  return true;
}

static void run_free(struct run *r)
{
  sonde_vm_free(r->vm);
  sonde_machine_free(r->m);
  free(r->g.ev);
  free(r->buf);
}

/* buf[0..nbuf) must equal e[from..from+nbuf); count kinds. */
static void compare(const struct run *r, const struct pkt *e, size_t from)
{
  size_t bad = 0;
  for (size_t i = 0; i < r->nbuf; i++) {
    if (!pkt_eq(&e[from + i], &r->buf[i])) {
      if (bad++ < 5)
        CHECK_FAIL_("packet %zu: got %08x %08x, want %08x %08x", i, r->buf[i].src,
                    r->buf[i].dst, e[from + i].src, e[from + i].dst);
    }
    /* the two return packets agree on the EXC_RETURN value */
    if (i + 1 < r->nbuf && e[from + i].dst == WILD)
      CHECK_EQ_U(r->buf[i + 1].src, r->buf[i].dst | 1);
  }
  CHECK_EQ_U(bad, 0);
}

static void full_trace(const char *fw, const char *machine)
{
  struct run r;
  if (!run_fw(&r, fw, machine))
    return;
  CHECK_EQ_I(r.stop.reason, SONDE_VM_STOP_EXIT);
  CHECK_EQ_I(r.stop.exit_code, 0);
  CHECK_EQ_U(r.base, strcmp(machine, "cm33") == 0 ? 0x20040000u : 0x20008000u);
  if (strchr(machine, '/')) { /* nothing answers at the default M0+ address */
    uint32_t v = 0;
    CHECK(sonde_vm_read_mem(r.vm, 0xF000000Cu, &v, 4) != 0 || v != r.base);
  }
  CHECK_EQ_U(r.master >> 31, 0);   /* the firmware stopped it */
  CHECK_EQ_U(r.position & 4, 0);   /* 4 KiB: no wrap */
  struct pkt *e;
  size_t ne = expected(r.vm, &r.g, &e);
  CHECK(ne > 40);
  CHECK_EQ_U(r.nbuf, ne);
  CHECK_EQ_U(r.position, ne * 8);
  compare(&r, e, 0);
  size_t nexc = 0, nret = 0;
  for (size_t i = 0; i < ne; i++) {
    nexc += (e[i].src & 1) && e[i].src != (WILD | 1);
    nret += e[i].src == (WILD | 1);
  }
  CHECK(nexc >= 2); /* PendSV and at least one SysTick */
  CHECK_EQ_U(nret, nexc);
  printf("%s: %zu packets, %zu exception entries, all match the ground truth\n", fw, ne, nexc);
  free(e);
  run_free(&r);
}

static void test_m33(void) { full_trace("mtb_m33", "cm33"); }
static void test_m0p(void) { full_trace("mtb_m0p", "cm0plus"); }
/* The M0+ MTB block placed by the machine file (`mtb ... regs=0x41006000`),
 * driven by the same driver built with MTB_SFR_BASE = 0x41006000. */
static void test_m0p_regs(void)
{
  full_trace("mtb_m0p_regs", SONDE_SOURCE_DIR "/tests/mtb/m0p_regs.machine");
}

static void test_wrap(void)
{
  struct run r;
  if (!run_fw(&r, "mtb_wrap", "cm33"))
    return;
  CHECK_EQ_I(r.stop.reason, SONDE_VM_STOP_EXIT);
  CHECK_EQ_U(r.master & 0x1F, 2); /* 64 bytes */
  struct pkt *e;
  size_t ne = expected(r.vm, &r.g, &e);
  REQUIRE(ne > 8);
  CHECK_EQ_U(r.position & 4, 4);
  CHECK_EQ_U(r.position & ~7u, (ne * 8) % 64);
  CHECK_EQ_U(r.nbuf, 8);
  compare(&r, e, ne - 8); /* the newest 8, oldest at POINTER */
  free(e);
  /* Nothing outside the 64-byte circle was written. */
  uint32_t w = 0xdead;
  sonde_vm_read_mem(r.vm, r.base + 64, &w, 4);
  CHECK_EQ_U(w, 0);
  run_free(&r);
}

static void test_watermark_autostop(void)
{
  struct run r;
  if (!run_fw(&r, "mtb_wm", "cm33"))
    return;
  CHECK_EQ_I(r.stop.reason, SONDE_VM_STOP_EXIT);
  CHECK_EQ_U(r.flow, 0x41u);
  CHECK_EQ_U(r.master >> 31, 0);
  CHECK_EQ_U(r.position, 0x40u); /* stopped at the watermark */
  CHECK_EQ_U(r.nbuf, 8);
  struct pkt *e;
  size_t ne = expected(r.vm, &r.g, &e);
  REQUIRE(ne > 8);
  compare(&r, e, 0); /* the first 8 after the start */
  free(e);
  run_free(&r);
}

static void test_watermark_autohalt(void)
{
  struct run r;
  if (!run_fw(&r, "mtb_halt", "cm0plus"))
    return;
  CHECK_EQ_I(r.stop.reason, SONDE_VM_STOP_BREAKPOINT);
  CHECK_EQ_U(r.master & (1u << 9), 1u << 9); /* HALTREQ */
  CHECK_EQ_U(r.position, 0x40u);
  CHECK_EQ_U(r.nbuf, 8);
  struct pkt *e;
  size_t ne = expected(r.vm, &r.g, &e);
  /* The halt comes before the 8th packet's destination executes. */
  CHECK_EQ_U(ne, 7);
  r.nbuf = 7;
  compare(&r, e, 0);
  uint32_t last_retired = 0;
  for (size_t i = 0; i < r.g.n; i++)
    if (r.g.ev[i].kind == EV_RETIRE)
      last_retired = r.g.ev[i].pc;
  CHECK_EQ_U(r.buf[7].src & ~1u, last_retired);
  CHECK_EQ_U(r.buf[7].dst, r.stop.pc);
  free(e);
  run_free(&r);
}

/* TSTART/TSTOP: comparator 0 (traced_start) starts, comparator 1
 * (traced_stop) stops: the core DWT's on the M33 (0xE0001020/30), the
 * MTBDWT's on the M0+ (0xF0001020/30). The windows in the ground truth are
 * marked from the comparators read back through the debugger view; every
 * session's first packet has the S-bit. */
static void tstart(const char *fw, const char *machine, uint32_t dwt, unsigned windows)
{
  struct run r;
  if (!run_fw(&r, fw, machine))
    return;
  CHECK_EQ_I(r.stop.reason, SONDE_VM_STOP_EXIT);
  uint32_t comp[2] = {0, 0};
  sonde_vm_read_mem(r.vm, dwt + 0x20, &comp[0], 4);
  sonde_vm_read_mem(r.vm, dwt + 0x30, &comp[1], 4);
  CHECK(comp[0] != 0 && comp[1] != 0);
  CHECK_EQ_U(r.master >> 31, 0); /* stopped by comparator 1 */
  struct gt w = {0};
  unsigned starts = 0, stops = 0;
  for (size_t i = 0; i < r.g.n; i++) {
    const struct ev *v = &r.g.ev[i];
    if (v->kind == EV_EN || v->kind == EV_DIS)
      continue; /* MASTER writes: EN stays clear in this firmware */
    if (v->kind == EV_RETIRE && v->pc == comp[0]) {
      push(&w, EV_EN, 0);
      starts++;
    }
    push(&w, v->kind, v->pc);
    if (v->kind == EV_RETIRE && v->pc == comp[1]) {
      push(&w, EV_DIS, 0);
      stops++;
    }
  }
  CHECK_EQ_U(starts, windows);
  CHECK_EQ_U(stops, windows);
  struct pkt *e;
  size_t ne = expected(r.vm, &w, &e);
  CHECK(ne > 10 * windows);
  CHECK_EQ_U(r.nbuf, ne);
  CHECK_EQ_U(r.position, ne * 8);
  compare(&r, e, 0);
  unsigned sbits = 0, abits = 0;
  for (size_t i = 0; i < r.nbuf; i++) {
    sbits += r.buf[i].dst & 1;
    abits += r.buf[i].src & 1;
  }
  CHECK_EQ_U(r.buf[0].dst & 1, 1);
  CHECK_EQ_U(sbits, windows); /* one S-bit per session */
  if (windows > 1)
    CHECK(abits >= 2); /* SysTick entered and returned inside a session */
  printf("%s: %zu packets (%u with the A-bit) in %u session(s) between the comparators, all "
         "match\n", fw, ne, abits, windows);
  free(e);
  free(w.ev);
  run_free(&r);
}

static void test_tstart_tstop(void) { tstart("mtb_tstart", "cm33", 0xE0001000u, 1); }
static void test_tstart_tstop_m0p(void) { tstart("mtb_tstart_m0plus", "cm0plus", 0xF0001000u, 1); }
static void test_sessions_m33(void) { tstart("mtb_sessions_m33", "cm33", 0xE0001000u, 3); }
static void test_sessions_m0p(void) { tstart("mtb_sessions_m0plus", "cm0plus", 0xF0001000u, 3); }

/* The demo timer preempts SysTick before SysTick_Handler's first instruction
 * (firmware/mtb/mtb_trace.c NEST_MODE 3, which stops the MTB in the timer's
 * handler the first time that happens): the timer's entry packet has
 * SysTick_Handler as its source. SysTick's packet went in line (mtb.h) or,
 * in the 64-byte circle's last slot (`slow`), through dbg_mtb.c's full path;
 * both must leave the source of the next entry. */
static void at_entry(const char *fw, const char *machine, bool slow)
{
  struct run r;
  if (!run_fw(&r, fw, machine))
    return;
  CHECK_EQ_I(r.stop.reason, SONDE_VM_STOP_EXIT);
  CHECK_EQ_I(r.stop.exit_code, 0); /* 3: never preempted at entry */
  CHECK_EQ_U(r.master & 0x1F, 2);  /* 64 bytes */
  CHECK_EQ_U(r.master >> 31, 0);
  CHECK_EQ_U(r.position & 4, 4);
  struct pkt *e;
  size_t ne = expected(r.vm, &r.g, &e);
  REQUIRE(ne > 8);
  CHECK_EQ_U(r.position & ~7u & 63, (ne * 8) % 64);
  CHECK_EQ_U(r.nbuf, 8);
  compare(&r, e, ne - 8);
  /* one entry packet sourced at the previous entry's handler, in the slot wanted */
  unsigned found = 0;
  for (size_t i = 1; i < 8; i++) {
    const struct pkt *p = &e[ne - 8 + i - 1], *q = &e[ne - 8 + i];
    if ((p->src & 1) && p->src != (WILD | 1) && (q->src & 1) && q->src != (WILD | 1) &&
        (q->src & ~1u) == p->dst) {
      found++;
      unsigned slot = ((r.position & ~7u & 63) / 8 + (unsigned)i - 1) % 8;
      CHECK_EQ_U(slot == 7, slow);
    }
  }
  CHECK_EQ_U(found, 1);
  free(e);
  run_free(&r);
}
static void test_at_entry_m33(void) { at_entry("mtb_atentry_fast_m33", "cm33", false); }
static void test_at_entry_slow_m33(void) { at_entry("mtb_atentry_slow_m33", "cm33", true); }
static void test_at_entry_m0p(void) { at_entry("mtb_atentry_fast_m0plus", "cm0plus", false); }
static void test_at_entry_slow_m0p(void)
{
  at_entry("mtb_atentry_slow_m0plus", "cm0plus", true);
}

/* The same firmware with a 4 KiB buffer, every packet from the start up to
 * the first entry taken before its handler's first instruction (the run also
 * has interrupts taken right after a return, before the code it returned to
 * ran). */
static void test_at_entry_whole(void)
{
  struct run r;
  if (!run_fw(&r, "mtb_atentry_whole", "cm33"))
    return;
  CHECK_EQ_I(r.stop.exit_code, 0);
  CHECK_EQ_U(r.position & 4, 0); /* no wrap */
  struct pkt *e;
  size_t ne = expected(r.vm, &r.g, &e);
  CHECK(ne > 40);
  CHECK_EQ_U(r.nbuf, ne);
  compare(&r, e, 0);
  unsigned after_return = 0;
  for (size_t i = 1; i < ne; i++)
    after_return += e[i - 1].src == (WILD | 1) && (e[i].src & 1) && e[i].src != (WILD | 1);
  CHECK(after_return > 0);
  printf("mtb_atentry_whole: %zu packets, %u entries right after a return, all match\n", ne,
         after_return);
  free(e);
  run_free(&r);
}

int main(void)
{
  RUN(test_m33);
  RUN(test_m0p);
  RUN(test_m0p_regs);
  RUN(test_wrap);
  RUN(test_watermark_autostop);
  RUN(test_watermark_autohalt);
  RUN(test_tstart_tstop);
  RUN(test_tstart_tstop_m0p);
  RUN(test_sessions_m33);
  RUN(test_sessions_m0p);
  RUN(test_at_entry_m33);
  RUN(test_at_entry_slow_m33);
  RUN(test_at_entry_m0p);
  RUN(test_at_entry_slow_m0p);
  RUN(test_at_entry_whole);
  return check_summary();
}
