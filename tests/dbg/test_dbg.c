/* The debug and trace blocks (DWT, ITM, TPIU/SWO) on firmware: target code
 * from target/cortexm/ runs on the VM (firmware/dbg/dbg_trace.c), and every
 * SWO stream is decoded here by an independent ITM decoder (ARMv7-M ARM
 * Appendix D4, written for this test, not src/itm) and checked against the
 * VM's ground truth from the observation hooks:
 *   - each PC sample shows what occupied its cycle (include/sonde/trace.h,
 *     sonde_pcsample_of): the instruction whose cycles contain it, the sleep
 *     form in a sleep, else the last instruction that started before it;
 *     the samples come every N cycles of FrankenTrace's Table 2;
 *   - each exception-trace packet is a ground-truth exception event, in order;
 *   - each data-trace packet is a ground-truth transfer, in order;
 *   - ITM printf with FIFO polling loses nothing at a slow baud;
 *   - at a baud too slow for the sample interval, overflow packets appear and
 *     no sample is wrong. */
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sonde/itm.h"
#include "sonde/vm.h"

#ifndef SONDE_FIRMWARE_DIR
#define SONDE_FIRMWARE_DIR SONDE_BINARY_DIR "/firmware"
#endif

struct retire { uint32_t pc; uint64_t start; uint32_t cycles; uint64_t sleep_before; };
struct xfer { uint64_t cycle; uint32_t pc, addr, value; unsigned size; bool write; };
struct excev { uint64_t cycle; int ev; unsigned exc; };
struct swob { uint8_t b; uint64_t start; };

struct gt {
  struct sonde_vm *vm;
  uint64_t sleep_seen;      /* sleep cycles before the last retired instruction */
  struct retire *r; size_t nr, cr;
  struct xfer *x; size_t nx, cx;
  struct excev e[8192]; size_t ne;
  struct swob *s; size_t ns, cs;
  int tcr_mark, ctrl_mark;  /* the current instruction wrote ITM_TCR / DWT_CTRL */
  uint32_t ctrl_val;
  uint64_t ts_origin;       /* start cycle of the instruction enabling TSENA */
  uint64_t samp_on;         /* ... enabling PCSAMPLENA */
  uint64_t samp_off;        /* ... disabling it */
  uint32_t samp_ctrl;
  uint64_t exc_on;
  int cyc_mark;             /* the current instruction wrote DWT_CYCCNT */
  uint32_t cyc_val;         /* ... this value */
  uint64_t cyc_zero;        /* start cycle of the last CYCCNT write */
  uint32_t comp0[32];       /* values written to DWT_COMP0, in order */
  size_t ncomp0;
};

#define PUSH(arr, n, cap, val)                                        \
  do {                                                                \
    if ((n) == (cap)) {                                               \
      (cap) = (cap) ? 2 * (cap) : 4096;                               \
      (arr) = realloc((arr), (cap) * sizeof *(arr));                  \
      if (!(arr))                                                     \
        abort();                                                      \
    }                                                                 \
    (arr)[(n)++] = (val);                                             \
  } while (0)

static void on_retire(void *ctx, uint32_t pc, uint64_t cycle, uint32_t cycles)
{
  struct gt *g = ctx;
  struct sonde_vm_stats st;
  sonde_vm_get_stats(g->vm, &st); /* the gap before it: sleep first (docs/formats.md) */
  PUSH(g->r, g->nr, g->cr, ((struct retire){pc, cycle, cycles, st.sleep_cycles - g->sleep_seen}));
  g->sleep_seen = st.sleep_cycles;
  if (g->cyc_mark) {
    g->cyc_mark = 0;
    g->cyc_zero = cycle;
  }
  if (g->tcr_mark) {
    g->tcr_mark = 0;
    g->ts_origin = cycle;
  }
  if (g->ctrl_mark) {
    g->ctrl_mark = 0;
    if (g->ctrl_val & (1u << 12)) {
      g->samp_on = cycle;
      g->samp_ctrl = g->ctrl_val;
    } else if (g->samp_on && !g->samp_off) {
      g->samp_off = cycle;
    }
    if ((g->ctrl_val & (1u << 16)) && !g->exc_on)
      g->exc_on = cycle;
  }
}

static void on_transfer(void *ctx, uint64_t cycle, uint32_t pc, uint32_t addr, unsigned size,
                        uint32_t value, bool write)
{
  struct gt *g = ctx;
  PUSH(g->x, g->nx, g->cx, ((struct xfer){cycle, pc, addr, value, size, write}));
  if (write && addr == 0xE0000E80u && (value & 3) == 3)
    g->tcr_mark = 1;
  if (write && addr == 0xE0001004u) {
    g->cyc_mark = 1;
    g->cyc_val = value;
  }
  if (write && addr == 0xE0001020u && g->ncomp0 < 32)
    g->comp0[g->ncomp0++] = value;
  if (write && addr == 0xE0001000u) {
    g->ctrl_mark = 1;
    g->ctrl_val = value;
  }
}

static void on_exc(void *ctx, uint64_t cycle, enum sonde_vm_exc_event ev, unsigned exc)
{
  struct gt *g = ctx;
  if (g->ne < sizeof g->e / sizeof g->e[0])
    g->e[g->ne++] = (struct excev){cycle, (int)ev, exc};
}

static int on_swo(void *ctx, const struct sonde_vm_swo_byte *b)
{
  struct gt *g = ctx;
  PUSH(g->s, g->ns, g->cs, ((struct swob){b->byte, b->start_cycle}));
  return 0;
}

static int quiet(void *ctx, int stream, const void *data, size_t len)
{
  (void)ctx, (void)stream, (void)data, (void)len;
  return 0;
}

static void gt_free(struct gt *g)
{
  free(g->r);
  free(g->x);
  free(g->s);
  memset(g, 0, sizeof *g);
}

/* ---- an independent ITM packet decoder (ARMv7-M ARM D4.2, D4.3) ---------- */

enum { P_SYNC, P_OVF, P_LTS, P_SW, P_HW, P_GTS1, P_GTS2 };
struct pkt {
  int kind;
  unsigned id;      /* SW: port; HW: discriminator; LTS: TC */
  unsigned size;    /* payload bytes */
  uint32_t value;   /* payload (LTS: delta) */
  uint64_t cycle;   /* from timestamps: ts_origin + sum of deltas up to the next LTS */
  bool timed;       /* the next LTS has TC = 0 and no overflow came between */
  uint64_t start;   /* pin start cycle of the packet's first byte */
};

static size_t decode(const struct swob *s, size_t n, uint64_t origin, struct pkt **out)
{
  struct pkt *p = NULL;
  size_t np = 0, cp = 0;
  size_t i = 0;
  while (i < n) {
    uint8_t h = s[i].b;
    struct pkt k = {0};
    k.start = s[i].start;
    if (h == 0x94 || h == 0xB4) { /* GTS1 / GTS2 (D4.2.5): 7 bits a byte, C in bit 7 */
      k.kind = h == 0x94 ? P_GTS1 : P_GTS2;
      size_t j = i + 1;
      unsigned nb = 0;
      for (;;) {
        if (j >= n || nb == (h == 0x94 ? 4u : 6u)) {
          CHECK(j < n);
          goto out;
        }
        uint8_t b = s[j++].b;
        if (h == 0x94 && nb == 3) { /* TS[25:21], ClkCh, Wrap */
          k.value |= (uint32_t)(b & 0x1F) << 21;
          k.id = (b >> 6) & 1;
        } else {
          k.value |= (uint32_t)(b & 0x7F) << (7 * nb);
        }
        nb++;
        if (!(b & 0x80))
          break;
      }
      k.size = nb;
      i = j;
    } else if (h == 0) {
      size_t z = i;
      while (z < n && s[z].b == 0)
        z++;
      CHECK(z < n && s[z].b == 0x80 && z - i >= 5);
      k.kind = P_SYNC;
      i = z + 1;
    } else if (h == 0x70) {
      k.kind = P_OVF;
      i++;
    } else if ((h & 0x0F) == 0) {
      k.kind = P_LTS;
      if (!(h & 0x80)) {
        k.value = (h >> 4) & 7;
        i++;
      } else {
        CHECK((h & 0xC0) == 0xC0);
        k.id = (h >> 4) & 3;
        unsigned sh = 0;
        i++;
        for (;;) {
          if (i >= n) {
            CHECK(i < n);
            goto out;
          }
          k.value |= (uint32_t)(s[i].b & 0x7F) << sh;
          sh += 7;
          if (!(s[i++].b & 0x80))
            break;
        }
      }
    } else {
      unsigned ss = h & 3;
      CHECK(ss != 0);
      k.size = ss == 3 ? 4 : ss;
      k.kind = (h & 4) ? P_HW : P_SW;
      k.id = h >> 3;
      if (i + k.size >= n + 1) {
        CHECK(i + k.size < n + 1);
        goto out;
      }
      for (unsigned j = 0; j < k.size; j++)
        k.value |= (uint32_t)s[i + 1 + j].b << (8 * j);
      i += 1 + k.size;
    }
    PUSH(p, np, cp, k);
  }
out:;
  /* Timestamps: a packet happened at the time of the next LTS (TC = 0). */
  uint64_t ts = origin;
  size_t pending = 0; /* first packet not yet stamped */
  for (size_t j = 0; j < np; j++) {
    if (p[j].kind == P_OVF) {
      pending = j + 1;
      continue;
    }
    if (p[j].kind != P_LTS)
      continue;
    ts += p[j].value;
    for (size_t q = pending; q < j; q++) {
      p[q].cycle = ts;
      p[q].timed = p[j].id == 0;
    }
    pending = j + 1;
  }
  *out = p;
  return np;
}

/* ---- running a firmware --------------------------------------------------- */

static struct sonde_machine *machine;

static struct sonde_vm *run_fw(const char *name, struct gt *g, struct sonde_vm_stop *stop)
{
  memset(g, 0, sizeof *g);
  char path[512];
  snprintf(path, sizeof path, "%s/%s.elf", SONDE_FIRMWARE_DIR, name);
  FILE *f = fopen(path, "rb");
  if (!f) {
    CHECK_FAIL_("missing firmware %s (build the 'firmware' target)", path);
    return NULL;
  }
  static unsigned char buf[1 << 20];
  size_t n = fread(buf, 1, sizeof buf, f);
  fclose(f);
  struct sonde_vm *vm = NULL;
  if (!machine && sonde_machine_builtin("cc2650", &machine) != 0) {
    CHECK_FAIL_("cannot create the built-in machine cc2650");
    return NULL;
  }
  if (sonde_vm_new(machine, &vm) != 0 || sonde_vm_load_elf(vm, buf, n, name) != 0) {
    sonde_vm_free(vm);
    CHECK_FAIL_("cannot load %s", path);
    return NULL;
  }
  sonde_vm_set_output(vm, quiet, NULL);
  g->vm = vm;
  struct sonde_vm_hooks h = {.ctx = g, .retire = on_retire, .transfer = on_transfer,
                             .exception = on_exc};
  sonde_vm_set_hooks(vm, &h);
  sonde_vm_set_swo(vm, on_swo, g);
  sonde_vm_reset(vm);
  int rc = sonde_vm_run(vm, 200000000, stop); /* dbg_gts sleeps 84 M cycles */
  CHECK_EQ_I(rc, 0);
  CHECK_EQ_I(stop->reason, SONDE_VM_STOP_EXIT);
  CHECK_EQ_I(stop->exit_code, 0);
  return vm;
}

/* Index of the first retired instruction starting at or after cycle t. */
static size_t first_at(const struct gt *g, uint64_t t)
{
  size_t lo = 0, hi = g->nr;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (g->r[mid].start < t)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* Check one PC sample packet at cycle t against the ground truth: the
 * instruction whose cycles hold t; in the gap after it, the sleep form
 * while the gap's sleep lasts (sleep comes first in a gap), else still its
 * address (exception entry, return, tail-chain). */
static bool sample_ok(struct sonde_vm *vm, const struct gt *g, const struct pkt *p, uint64_t t)
{
  (void)vm;
  size_t i = first_at(g, t + 1); /* the first instruction starting after t */
  if (i == 0)
    return false;
  const struct retire *r = &g->r[i - 1];
  uint64_t end = r->start + r->cycles;
  if (t >= end && i < g->nr && t - end < g->r[i].sleep_before)
    return p->size == 1 && p->value == 0;
  return p->size == 4 && p->value == r->pc;
}

static unsigned interval_of(uint32_t ctrl)
{
  return (((ctrl >> 1) & 0xF) + 1) * ((ctrl & (1u << 9)) ? 1024u : 64u);
}

/* PC sampling at one row of Table 2 (or the overflow configuration). */
static void check_pc_sampling(const char *fw, unsigned expect_n, bool expect_overflow)
{
  struct gt g;
  struct sonde_vm_stop stop;
  struct sonde_vm *vm = run_fw(fw, &g, &stop);
  if (!vm)
    return;
  REQUIRE(g.samp_on && g.samp_off && g.ts_origin);
  unsigned n = interval_of(g.samp_ctrl);
  CHECK_EQ_U(n, expect_n);
  unsigned tap = (g.samp_ctrl & (1u << 9)) ? 1024u : 64u;
  uint64_t first = g.samp_on + tap * (((g.samp_ctrl >> 5) & 0xF) + 1);
  struct pkt *p = NULL;
  size_t np = decode(g.s, g.ns, g.ts_origin, &p);
  size_t samples = 0, timed = 0, wrong = 0, sleeps = 0, ovf = 0, bad_phase = 0, untimed_bad = 0;
  uint64_t prev_t = 0;
  bool gap = false, gap_after_ovf = true;
  for (size_t j = 0; j < np; j++) {
    if (p[j].kind == P_OVF) {
      ovf++;
      gap = true;
      continue;
    }
    if (p[j].kind != P_HW || p[j].id != 2)
      continue;
    samples++;
    if (p[j].size == 1)
      sleeps++;
    if (p[j].timed) {
      uint64_t t = p[j].cycle;
      timed++;
      if (t < first || (t - first) % n)
        bad_phase++;
      if (!sample_ok(vm, &g, &p[j], t))
        wrong++;
      if (prev_t && gap && t - prev_t <= n)
        gap_after_ovf = false; /* an overflow must mean lost samples */
      if (prev_t && !gap && !expect_overflow)
        CHECK_EQ_U(t - prev_t, n);
      prev_t = t;
      gap = false;
    } else {
      /* No own timestamp: it must still be the PC at some sampling cycle
       * after the previous timed sample. */
      bool any = false;
      uint64_t t0 = prev_t ? prev_t + n : first;
      for (uint64_t t = t0; t <= g.samp_off && !any; t += n)
        any = sample_ok(vm, &g, &p[j], t);
      if (!any)
        untimed_bad++;
    }
  }
  uint64_t events = g.samp_off >= first ? (g.samp_off - first) / n + 1 : 0;
  printf("%s: N=%u events=%llu samples=%zu (timed %zu, sleep %zu) overflow packets=%zu\n", fw,
         n, (unsigned long long)events, samples, timed, sleeps, ovf);
  CHECK_EQ_U(wrong, 0);
  CHECK_EQ_U(bad_phase, 0);
  CHECK_EQ_U(untimed_bad, 0);
  CHECK(gap_after_ovf);
  if (n <= 512)
    CHECK(sleeps > 0); /* the workload sleeps 6 x ~1000 cycles */
  if (expect_overflow) {
    CHECK(ovf > 0);
    CHECK(samples < events);
  } else {
    CHECK_EQ_U(ovf, 0);
    CHECK_EQ_U(samples, events);
    CHECK_EQ_U(timed, samples);
  }
  uint64_t lost = 0, ovfs = 0;
  sonde_vm_swo_stats(vm, NULL, &lost, &ovfs);
  CHECK_EQ_U(ovfs, ovf);
  CHECK_EQ_U(lost == 0, !expect_overflow);
  free(p);
  sonde_vm_free(vm);
  gt_free(&g);
}

static void test_table2_1209(void) { check_pc_sampling("dbg_pc1209", 5120, false); }
static void test_table2_1205(void) { check_pc_sampling("dbg_pc1205", 3072, false); }
static void test_table2_100f(void) { check_pc_sampling("dbg_pc100f", 512, false); }
static void test_table2_1005(void) { check_pc_sampling("dbg_pc1005", 192, false); }
static void test_table2_1003(void) { check_pc_sampling("dbg_pc1003", 128, false); }
static void test_overflow(void) { check_pc_sampling("dbg_ovf1003", 128, true); }

static void test_exception_and_data_trace(void)
{
  struct gt g;
  struct sonde_vm_stop stop;
  struct sonde_vm *vm = run_fw("dbg_excdt", &g, &stop);
  if (!vm)
    return;
  uint32_t comp[2];
  sonde_vm_read_mem(vm, 0xE0001020u, &comp[0], 4);
  sonde_vm_read_mem(vm, 0xE0001030u, &comp[1], 4);
  struct pkt *p = NULL;
  size_t np = decode(g.s, g.ns, g.ts_origin, &p);
  /* Every timed packet must be a ground-truth event at its cycle: an
   * exception event (same number and kind), or a transfer to a traced address
   * (same PC / address / value / size / direction). Packets lost to overflow
   * are accounted for: matched units + lost units = ground-truth units. */
  size_t gt_exc = 0, gt_dt = 0;
  for (size_t i = 0; i < g.ne; i++)
    gt_exc += g.e[i].cycle >= g.exc_on;
  for (size_t i = 0; i < g.nx; i++)
    gt_dt += g.x[i].cycle >= g.exc_on && /* comparators set after EXCTRCENA; not .bss zeroing */
             ((g.x[i].addr == comp[0] && g.x[i].write) || g.x[i].addr == comp[1]);
  size_t nexc = 0, exc_bad = 0, ndt = 0, dt_bad = 0, ovf = 0, untimed = 0;
  uint32_t unit_pc = 0, unit_addr = 0;
  bool have_pc = false, have_addr = false;
  for (size_t j = 0; j < np; j++) {
    if (p[j].kind == P_OVF)
      ovf++;
    if (p[j].kind != P_HW)
      continue;
    untimed += !p[j].timed; /* its timestamp was lost: checked by content only */
    if (p[j].id == 1) { /* exception trace */
      unsigned exc = p[j].value & 0x1FF, fn = (p[j].value >> 12) & 3;
      bool ok = false;
      for (size_t i = 0; i < g.ne && !ok; i++)
        ok = (!p[j].timed || g.e[i].cycle == p[j].cycle) && g.e[i].exc == exc && (unsigned)g.e[i].ev == fn;
      nexc += ok;
      exc_bad += !ok;
    } else if (p[j].id >= 8 && p[j].id < 16) {
      if (p[j].id & 1) {
        unit_addr = p[j].value;
        have_addr = true;
      } else {
        unit_pc = p[j].value;
        have_pc = true;
      }
    } else if (p[j].id >= 16 && p[j].id <= 23) {
      unsigned c = (p[j].id >> 1) & 3;
      bool write = p[j].id & 1, ok = false;
      for (size_t i = 0; i < g.nx && !ok; i++) {
        const struct xfer *x = &g.x[i];
        if ((p[j].timed && x->cycle != p[j].cycle) || x->addr != comp[c] || x->write != write)
          continue;
        ok = x->value == p[j].value && x->size == p[j].size &&
             (c == 0 ? have_addr && !have_pc && unit_addr == (x->addr & 0xFFFF)
                     : have_pc && !have_addr && unit_pc == x->pc);
      }
      ndt += ok;
      dt_bad += !ok;
      have_pc = have_addr = false;
    }
  }
  if (getenv("DBG_DUMP"))
    for (size_t i = 0; i < g.ne; i++) {
      bool f = false;
      for (size_t j = 0; j < np && !f; j++)
        f = p[j].kind == P_HW && p[j].id == 1 && p[j].cycle == g.e[i].cycle &&
            (p[j].value & 0x1FF) == g.e[i].exc;
      if (!f)
        printf("gt exc %zu not traced: exc %u ev %d cycle %llu (on %llu)\n", i, g.e[i].exc,
               g.e[i].ev, (unsigned long long)g.e[i].cycle, (unsigned long long)g.exc_on);
    }
  if (getenv("DBG_DUMP"))
    for (size_t i = 0; i < g.nx; i++) {
      if (!((g.x[i].addr == comp[0] && g.x[i].write) || g.x[i].addr == comp[1]))
        continue;
      bool f = false;
      for (size_t j = 0; j < np && !f; j++)
        f = p[j].kind == P_HW && p[j].id >= 16 && p[j].cycle == g.x[i].cycle;
      if (!f)
        printf("gt dt %zu not traced: addr %x w %d cycle %llu\n", i, g.x[i].addr, g.x[i].write,
               (unsigned long long)g.x[i].cycle);
    }
  uint64_t lost = 0;
  sonde_vm_swo_stats(vm, NULL, &lost, NULL);
  printf("excdt: %zu/%zu exception packets, %zu/%zu data-trace units, %zu overflows, %llu "
         "lost, %zu untimed\n", nexc, gt_exc, ndt, gt_dt, ovf, (unsigned long long)lost,
         untimed);
  CHECK(nexc >= 100);
  CHECK(ndt >= 100);
  CHECK_EQ_U(exc_bad, 0);
  CHECK_EQ_U(dt_bad, 0);
  CHECK(untimed < (nexc + ndt) / 4);
  CHECK_EQ_U(nexc + ndt + lost, gt_exc + gt_dt);
  CHECK_EQ_U(ovf > 0, lost > 0);
  free(p);
  sonde_vm_free(vm);
  gt_free(&g);
}

static void test_itm_printf(void)
{
  struct gt g;
  struct sonde_vm_stop stop;
  struct sonde_vm *vm = run_fw("dbg_printf", &g, &stop);
  if (!vm)
    return;
  char want[2048];
  size_t wl = 0;
  for (int i = 0; i < 20; i++)
    wl += (size_t)snprintf(want + wl, sizeof want - wl, "line %d: 0x%08x %s\n", i,
                           (unsigned)(i * 0x1234567), i & 1 ? "odd" : "even");
  struct pkt *p = NULL;
  size_t np = decode(g.s, g.ns, g.ts_origin, &p);
  char got[2048];
  size_t gl = 0, ovf = 0;
  for (size_t j = 0; j < np; j++) {
    if (p[j].kind == P_OVF)
      ovf++;
    if (p[j].kind == P_SW && p[j].id == 0 && p[j].size == 1 && gl < sizeof got - 1)
      got[gl++] = (char)p[j].value;
  }
  got[gl] = 0;
  CHECK_EQ_U(ovf, 0);
  CHECK_EQ_U(gl, wl);
  CHECK_EQ_STR(got, want);
  /* The pin was the bottleneck: 480 cycles per byte at ACPR = 47, and the
   * last byte left the pin no earlier than bytes x 480 cycles after the first. */
  REQUIRE(g.ns > 0);
  CHECK(g.s[g.ns - 1].start - g.s[0].start >= (uint64_t)(g.ns - 1) * 480);
  free(p);
  sonde_vm_free(vm);
  gt_free(&g);
}

/* ITM global timestamps (firmware/dbg/dbg_gts.c). The global timestamp
 * counter is the core cycle count, so each GTS value must be the cycle its
 * request came: a multiple of 128 / 8192 (GTSFREQ 01 / 10) or the cycle of the
 * stimulus write it follows (11), and its first byte leaves the pin at that
 * cycle or right after the byte before it. The same stream is decoded by the
 * project's decoder (src/itm), which must agree on every value. */
struct gtsv { uint64_t value, start, prev_end; bool full, wrap; unsigned bytes; };

static void test_gts(void)
{
  struct gt g;
  struct sonde_vm_stop stop;
  struct sonde_vm *vm = run_fw("dbg_gts", &g, &stop);
  if (!vm)
    return;
  struct pkt *p = NULL;
  size_t np = decode(g.s, g.ns, 0, &p);
  /* Ground truth: GTSFREQ changes (cycle = the TCR write's data phase is in
   * its instruction; the VM applies it at the instruction's start, which is
   * <= the transfer cycle) and the stimulus writes on port 2. */
  struct { uint64_t cycle; unsigned f; } fr[16];
  size_t nf = 0;
  uint64_t stim[32];
  size_t nstim = 0;
  for (size_t i = 0; i < g.nx; i++) {
    const struct xfer *x = &g.x[i];
    if (x->write && x->addr == 0xE0000E80u && nf < 16)
      fr[nf++] = (typeof(fr[0])){x->cycle, (x->value >> 10) & 3};
    if (x->write && x->addr == 0xE0000008u && nstim < 32)
      stim[nstim++] = x->cycle;
  }
  /* Reassemble the values: a GTS1 sets TS[7k-1:0] (k bytes; 4: TS[25:0]), a
   * GTS2 right after it TS[47:26]. */
  struct gtsv v[16384];
  size_t nv = 0;
  uint64_t cur = 0, bytes_end = 0;
  size_t nsync = 0, after_sync_full = 0, wraps = 0;
  bool sync_seen = false;
  for (size_t j = 0; j < np; j++) {
    if (p[j].kind == P_SYNC) {
      nsync++;
      sync_seen = true;
    }
    if (p[j].kind == P_GTS1) {
      unsigned bits = p[j].size == 4 ? 26 : 7 * p[j].size;
      cur = (cur & ~((1ull << bits) - 1)) | p[j].value;
      bool full = j + 1 < np && p[j + 1].kind == P_GTS2;
      if (full)
        cur = (cur & ((1ull << 26) - 1)) | ((uint64_t)p[j + 1].value << 26);
      REQUIRE(nv < 16384);
      /* the pin end of the byte before this packet */
      size_t bi = 0;
      while (bi < g.ns && g.s[bi].start < p[j].start)
        bi++;
      bytes_end = bi ? g.s[bi - 1].start + 10 : 0; /* ACPR 0: 10 cycles a byte */
      v[nv++] = (struct gtsv){cur, p[j].start, bytes_end, full, p[j].id != 0, p[j].size};
      if (full && sync_seen)
        after_sync_full++;
      if (sync_seen && !full)
        CHECK_FAIL_("a GTS after a sync packet is not full");
      sync_seen = false;
      wraps += p[j].id != 0;
      if (p[j].id)
        CHECK(full && (cur >> 26) != 0); /* Wrap: TS[47:26] changed, GTS2 follows */
    }
  }
  REQUIRE(nf >= 6 && nstim == 10);
  /* Every GTS: at its request cycle, or queued behind the byte before it. */
  size_t bad_pin = 0, n1 = 0, n2 = 0, n3 = 0, bad = 0;
  size_t si = 0;
  for (size_t i = 0; i < nv; i++) {
    bad_pin += !(v[i].start == v[i].value || (v[i].start > v[i].value &&
                                              v[i].start == v[i].prev_end));
    /* which GTSFREQ was in force */
    unsigned f = 0;
    for (size_t k = 0; k < nf && fr[k].cycle <= v[i].value; k++)
      f = fr[k].f;
    if (f == 1 || f == 2) {
      uint64_t per = f == 1 ? 128 : 8192;
      bad += v[i].value % per != 0;
      if (i > 0 && v[i - 1].value >= fr[0].cycle) {
        /* consecutive requests under the same setting: exactly one period apart */
        unsigned pf = 0;
        for (size_t k = 0; k < nf && fr[k].cycle <= v[i - 1].value; k++)
          pf = fr[k].f;
        if (pf == f)
          bad += v[i].value - v[i - 1].value != per;
      }
      f == 1 ? n1++ : n2++;
    } else if (f == 3) {
      /* right after a stimulus write that found the FIFO empty */
      while (si < nstim && stim[si] < v[i].value)
        si++;
      bool ok = false;
      for (size_t k = 0; k < nstim && !ok; k++)
        ok = stim[k] >= v[i].value && stim[k] - v[i].value <= 2; /* same instruction */
      bad += !ok;
      n3++;
    } else {
      bad++;
    }
  }
  printf("gts: %zu GTS (GTSFREQ 01: %zu, 11: %zu, 10: %zu), %zu syncs, %zu wraps\n", nv, n1, n3,
         n2, nsync, wraps);
  CHECK_EQ_U(bad, 0);
  CHECK_EQ_U(bad_pin, 0);
  CHECK(n1 >= 20);
  CHECK(n2 >= 10000); /* 5 x 2^24 cycles asleep / 8192 */
  /* GTSFREQ 11: one GTS after each spaced write (6), none after the 3
   * back-to-back second writes. */
  CHECK_EQ_U(n3, 6);
  CHECK_EQ_U(wraps, 1); /* TS[47:26] changed once, at 2^26 */
  CHECK_EQ_U(nsync, 5);
  CHECK_EQ_U(after_sync_full, 4); /* the 5th sync comes after GTSFREQ = 0 */
  /* The project's decoder agrees on every GTS value. */
  uint8_t *raw = malloc(g.ns ? g.ns : 1);
  REQUIRE(raw);
  for (size_t i = 0; i < g.ns; i++)
    raw[i] = g.s[i].b;
  struct sonde_itm *d = sonde_itm_new(NULL);
  REQUIRE(d);
  static struct sonde_itm_packet out[65536];
  size_t used = 0, no = 0, k = 0, mism = 0;
  while (used < g.ns) {
    size_t c = 0;
    size_t got = sonde_itm_decode(d, raw + used, g.ns - used, &c, out + no,
                                  sizeof out / sizeof out[0] - no);
    no += got;
    used += c;
    if (!got && !c)
      break;
  }
  for (size_t i = 0; i < no; i++) {
    if (out[i].type != SONDE_ITM_GTS)
      continue;
    bool gts2 = out[i].flags & SONDE_ITM_GTS2;
    bool next2 = i + 1 < no && out[i + 1].type == SONDE_ITM_GTS &&
                 (out[i + 1].flags & SONDE_ITM_GTS2);
    if (gts2 || next2)
      if (!gts2)
        continue; /* compare a full GTS1 once its GTS2 completed the value */
    mism += !(k < nv && out[i].value == v[k].value);
    k++;
  }
  CHECK_EQ_U(k, nv);
  CHECK_EQ_U(mism, 0);
  sonde_itm_free(d);
  free(raw);
  free(p);
  sonde_vm_free(vm);
  gt_free(&g);
}

/* CYCMATCH and linked data value comparators (firmware/dbg/dbg_cmp.c). */
static void test_cycmatch_and_value_match(void)
{
  struct gt g;
  struct sonde_vm_stop stop;
  struct sonde_vm *vm = run_fw("dbg_cmp", &g, &stop);
  if (!vm)
    return;
  REQUIRE(g.ts_origin && g.cyc_zero && g.ncomp0 >= 9);
  struct pkt *p = NULL;
  size_t np = decode(g.s, g.ns, g.ts_origin, &p);
  /* 1. One PC sample per CYCMATCH, showing what occupied the cycle CYCCNT
   * reached COMP0 (CYCCNT(t) = cyc_val + t - cyc_zero), as periodic
   * samples do, dated by its timestamp to that very cycle. */
  uint32_t words[32];
  size_t nw = 0, ns = 0, wrong = 0, late = 0;
  for (size_t j = 0; j < np; j++) {
    if (p[j].kind == P_SW && p[j].id == 1 && p[j].size == 4 && nw < 32)
      words[nw++] = p[j].value;
    if (p[j].kind != P_HW || p[j].id != 2)
      continue;
    REQUIRE(ns < 8 && p[j].size == 4);
    uint64_t t = g.cyc_zero + (uint32_t)(g.comp0[ns] - g.cyc_val);
    wrong += !sample_ok(vm, &g, &p[j], t);
    late += !(p[j].timed && p[j].cycle == t);
    ns++;
  }
  CHECK_EQ_U(ns, 8);
  CHECK_EQ_U(wrong, 0);
  CHECK_EQ_U(late, 0);
  /* Port 1: 8 spin counts (each > 0: the match came while polling), then
   * DWTTRAP of the CYCCNT watchpoint, the value-match hit counts of the
   * five phases (ARMv7-M C1.8.4 linking rules), and DWTTRAP in total. */
  static const uint32_t want[8] = {1, 2, 1, 1, 2, 1, 2, 10};
  REQUIRE(nw == 16);
  for (size_t i = 0; i < 8; i++)
    CHECK(words[i] > 0);
  for (size_t i = 0; i < 8; i++)
    CHECK_EQ_U(words[8 + i], want[i]);
  /* 2. DebugMonitor (exception 12) entries: 1 for the CYCCNT watchpoint, taken
   * at the first instruction boundary at or after its cycle, + 7 data value
   * watchpoints, each right after an access carrying a watched value, + 2
   * PC-match watchpoints. */
  uint64_t tw = g.cyc_zero + (uint32_t)(g.comp0[8] - g.cyc_val);
  size_t nmon = 0;
  for (size_t i = 0; i < g.ne; i++) {
    if (g.e[i].exc != 12 || g.e[i].ev != SONDE_VM_EXC_ENTER)
      continue;
    uint64_t c = g.e[i].cycle;
    if (nmon++ == 0) {
      size_t k = first_at(&g, tw);
      CHECK(c >= tw);
      CHECK(k < g.nr && g.r[k].start >= c); /* no instruction began between */
      continue;
    }
    if (nmon > 8)
      continue; /* the PC-match watchpoints (phase 4) */
    const struct xfer *last = NULL;
    for (size_t x = 0; x < g.nx && g.x[x].cycle < c; x++)
      if (g.x[x].addr >= 0x20000000u && g.x[x].addr < 0x20010000u)
        last = &g.x[x];
    REQUIRE(last);
    uint32_t v = last->value;
    bool ok = v == 0x5A5A1234u || (last->size >= 2 && (v & 0xFFFF) == 0x1234 && !last->write) ||
              ((v & 0xFF) == 0x34);
    CHECK(ok);
  }
  CHECK_EQ_U(nmon, 10);
  free(p);
  sonde_vm_free(vm);
  gt_free(&g);
}

int main(void)
{
  RUN(test_table2_1209);
  RUN(test_table2_1205);
  RUN(test_table2_100f);
  RUN(test_table2_1005);
  RUN(test_table2_1003);
  RUN(test_overflow);
  RUN(test_exception_and_data_trace);
  RUN(test_itm_printf);
  RUN(test_cycmatch_and_value_match);
  RUN(test_gts);
  sonde_machine_free(machine);
  return check_summary();
}
