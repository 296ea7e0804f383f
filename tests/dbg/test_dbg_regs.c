/* Register-level tests of the DWT, ITM and TPIU (ARMv7-M ARM C1.7, C1.8,
 * C1.10) through the debugger's view of the bus, with a one-instruction
 * firmware (`b .`) running: reset values, NUMCOMP, CYCCNT counting and
 * writes, POSTCNT read back, CYCEVTENA event packets every
 * (POSTPRESET+1)*64 cycles, the ITM lock, and no debug blocks on ARMv6-M. */
#include "check.h"

#include <stdlib.h>
#include <string.h>

#include "sonde/vm.h"

static uint8_t swo[4096];
static uint64_t swo_cycle[4096];
static size_t nswo;

static int on_swo(void *ctx, const struct sonde_vm_swo_byte *b)
{
  (void)ctx;
  if (nswo < sizeof swo) {
    swo_cycle[nswo] = b->start_cycle;
    swo[nswo++] = b->byte;
  }
  return 0;
}

static uint32_t rd(struct sonde_vm *vm, uint32_t a)
{
  uint32_t v = 0xDEADBEEF;
  CHECK_EQ_I(sonde_vm_read_mem(vm, a, &v, 4), 0);
  return v;
}

static void wr(struct sonde_vm *vm, uint32_t a, uint32_t v)
{
  CHECK_EQ_I(sonde_vm_write_mem(vm, a, &v, 4), 0);
}

static struct sonde_vm *new_vm(const char *mname, struct sonde_machine **m)
{
  struct sonde_vm *vm = NULL;
  if (sonde_machine_builtin(mname, m) != 0 || sonde_vm_new(*m, &vm) != 0)
    abort();
  /* vector table: SP, reset = 0x9; at 0x8: b . (0xE7FE) */
  static const uint32_t img[3] = {0x20001000u, 0x9u, 0xE7FEu};
  if (sonde_vm_load_binary(vm, img, sizeof img, 0) != 0)
    abort();
  sonde_vm_reset(vm);
  return vm;
}

static void test_reset_values(void)
{
  struct sonde_machine *m;
  struct sonde_vm *vm = new_vm("cm3", &m);
  CHECK_EQ_U(rd(vm, 0xE0001000u), 0x40000000u); /* NUMCOMP = 4 */
  CHECK_EQ_U(rd(vm, 0xE0001004u), 0);
  CHECK_EQ_U(rd(vm, 0xE0000FB4u), 3);           /* ITM LSR: SLI, SLK (locked) */
  CHECK_EQ_U(rd(vm, 0xE0000E80u), 0);
  CHECK_EQ_U(rd(vm, 0xE00400F0u), 1);           /* TPIU SPPR: Manchester */
  CHECK_EQ_U(rd(vm, 0xE0040304u), 0x102u);      /* FFCR */
  CHECK_EQ_U(rd(vm, 0xE0040004u), 1);           /* CSPSR */
  CHECK_EQ_U(rd(vm, 0xE0000FE0u), 0x01);        /* ITM PID0 */
  CHECK_EQ_U(rd(vm, 0xE0001FE0u), 0x02);        /* DWT PID0 */
  wr(vm, 0xE0040010u, 0xFFFFFFFFu);
  CHECK_EQ_U(rd(vm, 0xE0040010u), 0x1FFFu);     /* ACPR: 13 bits */
  sonde_vm_free(vm);
  sonde_machine_free(m);
}

static void test_cyccnt(void)
{
  struct sonde_machine *m;
  struct sonde_vm *vm = new_vm("cm3", &m);
  struct sonde_vm_stop st;
  wr(vm, 0xE0001000u, 1); /* CYCCNTENA without TRCENA: does not count */
  sonde_vm_run(vm, 1000, &st);
  CHECK_EQ_U(rd(vm, 0xE0001004u), 0);
  struct sonde_vm_stats s;
  sonde_vm_get_stats(vm, &s);
  uint64_t c1 = s.cycles; /* runs stop at the first boundary at or after the limit */
  wr(vm, 0xE000EDFCu, 1u << 24); /* DEMCR.TRCENA: counting starts now */
  CHECK_EQ_U(rd(vm, 0xE000EDFCu), 1u << 24);
  sonde_vm_run(vm, 3000, &st);
  sonde_vm_get_stats(vm, &s);
  uint64_t c2 = s.cycles;
  CHECK_EQ_U(rd(vm, 0xE0001004u), (uint32_t)(c2 - c1));
  wr(vm, 0xE0001004u, 0xFFFFFF00u); /* writable; wraps */
  sonde_vm_run(vm, c2 + 0x200, &st);
  sonde_vm_get_stats(vm, &s);
  uint64_t c3 = s.cycles;
  CHECK_EQ_U(rd(vm, 0xE0001004u), (uint32_t)(0xFFFFFF00u + (c3 - c2)));
  wr(vm, 0xE0001000u, 0); /* stop */
  sonde_vm_run(vm, c3 + 0x400, &st);
  CHECK_EQ_U(rd(vm, 0xE0001004u), (uint32_t)(0xFFFFFF00u + (c3 - c2)));
  sonde_vm_free(vm);
  sonde_machine_free(m);
}

/* SWO on (ITM, 10 cycles per byte, no formatter) and the cycle counter
 * started with CYCEVTENA, POSTPRESET = 2, POSTINIT = 1: returns the cycle
 * of the start (events follow at t0 + 128 + 192k). */
static uint64_t start_cycevt(struct sonde_vm *vm)
{
  nswo = 0;
  sonde_vm_set_swo(vm, on_swo, NULL);
  wr(vm, 0xE000EDFCu, 1u << 24);
  wr(vm, 0xE0000FB0u, 0xC5ACCE55u);
  wr(vm, 0xE0000E80u, 0x10009u); /* ITMENA, TXENA, no timestamps */
  wr(vm, 0xE0040010u, 0);          /* 10 cycles per byte */
  wr(vm, 0xE0040304u, 0x100u);     /* formatter bypass */
  struct sonde_vm_stats s;
  sonde_vm_get_stats(vm, &s);
  wr(vm, 0xE0001004u, 0);
  /* POSTPRESET = 2, POSTINIT = 1, CYCEVTENA, CYCCNTENA */
  wr(vm, 0xE0001000u, (1u << 22) | (1u << 5) | (2u << 1) | 1u);
  return s.cycles;
}

/* CYCEVTENA: an event-counter packet (0x05 0x20) every (POSTPRESET+1)*64
 * cycles; POSTINIT sets the phase; CTRL[8:5] reads back POSTCNT. */
static void test_cycevt(void)
{
  struct sonde_machine *m;
  struct sonde_vm *vm = new_vm("cm3", &m);
  struct sonde_vm_stop st;
  uint64_t t0 = start_cycevt(vm);
  CHECK_EQ_U((rd(vm, 0xE0001000u) >> 5) & 0xF, 1);
  sonde_vm_run(vm, t0 + 64 + 10, &st); /* past the first tap: POSTCNT 1 -> 0 */
  CHECK_EQ_U((rd(vm, 0xE0001000u) >> 5) & 0xF, 0);
  sonde_vm_run(vm, t0 + 2000, &st);
  /* events at taps 2, 5, 8, ... after t0: cycles t0 + 128 + 192k */
  size_t n = 0;
  for (size_t i = 0; i + 1 < nswo; i += 2) {
    CHECK_EQ_U(swo[i], 0x05);
    CHECK_EQ_U(swo[i + 1], 0x20);
    CHECK_EQ_U(swo_cycle[i], t0 + 128 + 192 * n);
    n++;
  }
  CHECK_EQ_U(n, (2000 - 128) / 192 + 1);
  sonde_vm_free(vm);
  sonde_machine_free(m);
}

/* Writing a comparator (COMP, MASK, FUNCTION) while the counter samples does
 * not move the sampling phase: the events stay at t0 + 128 + 192k (a
 * reschedule from a stale POSTCNT once put the next one a few taps late). */
static void test_comparator_write_keeps_phase(void)
{
  struct sonde_machine *m;
  struct sonde_vm *vm = new_vm("cm3", &m);
  struct sonde_vm_stop st;
  uint64_t t0 = start_cycevt(vm);
  for (uint64_t at = 300; at < 2000; at += 250) { /* between taps, at several phases */
    sonde_vm_run(vm, t0 + at, &st);
    wr(vm, 0xE0001030u, 0x20000000u); /* COMP1 */
    wr(vm, 0xE0001034u, 16);          /* MASK1 */
    wr(vm, 0xE0001038u, 0);           /* FUNCTION1 */
    wr(vm, 0xE0001028u, 0);           /* FUNCTION0 */
  }
  sonde_vm_run(vm, t0 + 2000, &st);
  size_t n = 0;
  for (size_t i = 0; i + 1 < nswo; i += 2) {
    CHECK_EQ_U(swo[i], 0x05);
    CHECK_EQ_U(swo_cycle[i], t0 + 128 + 192 * n);
    n++;
  }
  CHECK_EQ_U(n, (2000 - 128) / 192 + 1);
  sonde_vm_free(vm);
  sonde_machine_free(m);
}

/* TPIU formatter at its reset value (FFCR = 0x102, CoreSight IHI 0029 D4.2):
 * two ITM byte packets, 01 41 and 01 42, with TraceBusID 1, go out as a full
 * sync and one 16-byte frame, worked out by hand: slot 0 the ID change 0x03,
 * the data bytes with the bit 0 of even slots in the aux byte (slot 2: 0x41
 * -> 0x40, aux bit 1), and, once the pin is idle, the frame completed with a
 * change to the null ID at slot 4 (aux bit 2 = 1: the byte after it, 0x42 in
 * slot 5, keeps the old ID) and zero filler. */
static void test_formatter(void)
{
  struct sonde_machine *m;
  struct sonde_vm *vm = new_vm("cm3", &m);
  nswo = 0;
  sonde_vm_set_swo(vm, on_swo, NULL);
  struct sonde_vm_stop st;
  wr(vm, 0xE000EDFCu, 1u << 24);
  wr(vm, 0xE0000FB0u, 0xC5ACCE55u);
  wr(vm, 0xE0000E00u, 1);          /* TER: port 0 */
  wr(vm, 0xE0000E80u, 0x10001u);   /* ITMENA, TraceBusID 1 */
  wr(vm, 0xE0040010u, 0);
  uint8_t c = 'A';
  CHECK_EQ_I(sonde_vm_write_mem(vm, 0xE0000000u, &c, 1), 0);
  c = 'B';
  CHECK_EQ_I(sonde_vm_write_mem(vm, 0xE0000000u, &c, 1), 0);
  struct sonde_vm_stats s;
  sonde_vm_get_stats(vm, &s);
  sonde_vm_run(vm, s.cycles + 1000, &st);
  static const uint8_t want[20] = {0xFF, 0xFF, 0xFF, 0x7F, 0x03, 0x01, 0x40, 0x01, 0x01, 0x42,
                                   0, 0, 0, 0, 0, 0, 0, 0, 0, 0x06};
  CHECK_EQ_U(nswo, sizeof want);
  if (nswo == sizeof want)
    CHECK_EQ_MEM(swo, want, sizeof want);
  /* bypass: the same two packets go out as they are */
  nswo = 0;
  wr(vm, 0xE0040304u, 0x100u);
  c = 'C';
  CHECK_EQ_I(sonde_vm_write_mem(vm, 0xE0000000u, &c, 1), 0);
  sonde_vm_get_stats(vm, &s);
  sonde_vm_run(vm, s.cycles + 1000, &st);
  CHECK_EQ_U(nswo, 2);
  CHECK_EQ_U(swo[0], 0x01);
  CHECK_EQ_U(swo[1], 0x43);
  sonde_vm_free(vm);
  sonde_machine_free(m);
}

static void test_no_trace_on_v6m(void)
{
  struct sonde_machine *m;
  struct sonde_vm *vm = new_vm("cm0plus", &m);
  uint32_t v;
  CHECK(sonde_vm_read_mem(vm, 0xE0001000u, &v, 4) != 0); /* no DWT trace unit mapped */
  CHECK(sonde_vm_read_mem(vm, 0xE0000E80u, &v, 4) != 0);
  sonde_vm_free(vm);
  sonde_machine_free(m);
}

/* DWT_FUNCTIONn writable bits (C1.8.17): CYCMATCH only on comparator 0,
 * DATAVMATCH only on comparator 1, LNK1ENA read-only 1 on comparator 1. A
 * CYCMATCH on comparator 0 sets MATCHED once CYCCNT reaches COMP0 (and not
 * before), a debugger read leaves it set, a core-side read clears it. */
static void test_function_bits(void)
{
  struct sonde_machine *m;
  struct sonde_vm *vm = new_vm("cm3", &m);
  wr(vm, 0xE0001028u, 0xFFFFFFFFu);
  CHECK_EQ_U(rd(vm, 0xE0001028u), 0x000FFCAFu); /* no DATAVMATCH, no LNK1ENA */
  wr(vm, 0xE0001038u, 0xFFFFFFFFu);
  CHECK_EQ_U(rd(vm, 0xE0001038u), 0x000FFF2Fu); /* no CYCMATCH; LNK1ENA = 1 */
  wr(vm, 0xE0001048u, 0xFFFFFFFFu);
  CHECK_EQ_U(rd(vm, 0xE0001048u), 0x000FFC2Fu);
  wr(vm, 0xE0001038u, 0);
  CHECK_EQ_U(rd(vm, 0xE0001038u), 1u << 9);
  wr(vm, 0xE0001028u, 0);
  wr(vm, 0xE0001048u, 0);
  struct sonde_vm_stop st;
  struct sonde_vm_stats s;
  wr(vm, 0xE000EDFCu, 1u << 24);
  wr(vm, 0xE0001004u, 0);
  wr(vm, 0xE0001000u, 1); /* CYCCNT from 0 now */
  sonde_vm_get_stats(vm, &s);
  uint64_t c0 = s.cycles;
  wr(vm, 0xE0001020u, 5000);
  wr(vm, 0xE0001024u, 0);
  wr(vm, 0xE0001028u, 0x88); /* CYCMATCH, CMPMATCH action (MATCHED only) */
  sonde_vm_run(vm, c0 + 4990, &st);
  CHECK_EQ_U(rd(vm, 0xE0001028u) >> 24, 0);
  sonde_vm_run(vm, c0 + 5010, &st);
  CHECK_EQ_U(rd(vm, 0xE0001028u) >> 24, 1);
  /* a read clears it (C1.8.17), a debugger's too: that is how a probe drains
   * comparator matches (src/monitor watch.c) */
  CHECK_EQ_U(rd(vm, 0xE0001028u) >> 24, 0);
  sonde_vm_free(vm);
  sonde_machine_free(m);
  /* MASK0 = 4: the match is where CYCCNT reaches COMP0 with its low 4 bits
   * cleared (20011 -> 20000), before CYCCNT reaches 20011. A fresh VM. */
  vm = new_vm("cm3", &m);
  wr(vm, 0xE000EDFCu, 1u << 24);
  wr(vm, 0xE0001004u, 0);
  wr(vm, 0xE0001000u, 1);
  sonde_vm_get_stats(vm, &s);
  c0 = s.cycles;
  wr(vm, 0xE0001020u, 20011);
  wr(vm, 0xE0001024u, 4);
  wr(vm, 0xE0001028u, 0x88);
  sonde_vm_run(vm, c0 + 19990, &st);
  CHECK_EQ_U(rd(vm, 0xE0001028u) >> 24, 0);
  sonde_vm_run(vm, c0 + 20006, &st);
  CHECK_EQ_U(rd(vm, 0xE0001028u) >> 24, 1);
  sonde_vm_free(vm);
  sonde_machine_free(m);
}

/* FP loads and stores are data transfers for the DWT's comparators too: a
 * VSTR to a watched address sets FUNCTION1.MATCHED (cm4f, C1.8.17). */
static void test_fp_store_matches(void)
{
  struct sonde_machine *m;
  struct sonde_vm *vm = NULL;
  if (sonde_machine_builtin("cm4f", &m) != 0 || sonde_vm_new(m, &vm) != 0)
    abort();
  /* at 0x8: VSTR s0, [r0] (0xED80 0x0A00), then b . */
  static const uint32_t img[4] = {0x20001000u, 0x9u, 0x0A00ED80u, 0xE7FEu};
  CHECK_EQ_I(sonde_vm_load_binary(vm, img, sizeof img, 0), 0);
  sonde_vm_reset(vm);
  wr(vm, 0xE000ED88u, 0xFu << 20); /* CPACR: CP10/CP11 full access */
  CHECK_EQ_I(sonde_vm_write_reg(vm, 0, 0x20000100u), 0);
  wr(vm, 0xE000EDFCu, 1u << 24);   /* TRCENA */
  wr(vm, 0xE0001030u, 0x20000100u); /* COMP1 */
  wr(vm, 0xE0001034u, 0);           /* MASK1 */
  wr(vm, 0xE0001038u, 1);           /* FUNCTION1: data address match */
  struct sonde_vm_stop st;
  sonde_vm_run(vm, 50, &st);
  CHECK_EQ_U(rd(vm, 0xE0001038u) >> 24 & 1, 1); /* MATCHED */
  sonde_vm_free(vm);
  sonde_machine_free(m);
}

int main(void)
{
  RUN(test_reset_values);
  RUN(test_cyccnt);
  RUN(test_cycevt);
  RUN(test_comparator_write_keeps_phase);
  RUN(test_formatter);
  RUN(test_function_bits);
  RUN(test_fp_store_matches);
  RUN(test_no_trace_on_v6m);
  return check_summary();
}
