/* Analyses of src/frankentrace on hand-made traces: busy-wait loops (incl.
 * pieces joined across unrecoverable cycles, stalls that are not loops),
 * per-instruction statistics and histograms, the DWT projection of ground
 * truth, and verify. */
#include "check.h"
#include "sonde/frankentrace.h"

static void put(struct sonde_ft_trace *t, uint32_t pc, uint64_t n)
{
  CHECK_EQ_I(sonde_ft_trace_append(t, (struct sonde_ft_cell){pc, SONDE_FT_PC}, n), 0);
}

static void put_state(struct sonde_ft_trace *t, enum sonde_ft_state s, uint32_t pc, uint64_t n)
{
  CHECK_EQ_I(sonde_ft_trace_append(t, (struct sonde_ft_cell){pc, s}, n), 0);
}

static void test_busy_loops(void)
{
  struct sonde_ft_trace *t;
  sonde_ft_trace_new(100, &t);
  put(t, 0x200, 5);           /* 100..104: a stall, not a loop */
  for (int i = 0; i < 10; i++) { /* 105..: ldr (4) cmp (1) beq (2) x 10 = 70 cycles */
    put(t, 0x1a32, 4);
    put(t, 0x1a34, 1);
    put(t, 0x1a36, 2);
  }
  put_state(t, SONDE_FT_INVALID, 0x1a32, 1); /* 175: one unrecoverable cycle */
  for (int i = 0; i < 5; i++) {               /* 176..209 */
    put(t, 0x1a32, i == 0 ? 3 : 4);
    put(t, 0x1a34, 1);
    put(t, 0x1a36, 2);
  }
  put(t, 0x1a38, 1);          /* 210: leaves */
  for (int i = 0; i < 2; i++) { /* only 2 iterations: too few */
    put(t, 0x300, 40);
    put(t, 0x302, 40);
  }
  struct sonde_ft_busy_loop *l;
  size_t n;
  CHECK_EQ_I(sonde_ft_find_busy_loops(t, NULL, &l, &n), 0);
  CHECK_EQ_U(n, 1);
  if (n) {
    CHECK_EQ_U(l[0].first_cycle, 105);
    CHECK_EQ_U(l[0].last_cycle, 209);
    CHECK_EQ_U(l[0].head, 0x1a32);
    CHECK_EQ_U(l[0].tail, 0x1a36);
    CHECK_EQ_U(l[0].body_len, 3);
    CHECK_EQ_U(l[0].iterations, 15);
    CHECK_EQ_U(l[0].unrecoverable, 1);
  }
  free(l);
  struct sonde_ft_busy_config c = {8, 2, 1, 0, NULL};
  CHECK_EQ_I(sonde_ft_find_busy_loops(t, &c, &l, &n), 0);
  CHECK_EQ_U(n, 2);
  if (n == 2) {
    CHECK_EQ_U(l[1].head, 0x300);
    CHECK_EQ_U(l[1].iterations, 2);
    CHECK_EQ_U(l[1].first_cycle, 211);
    CHECK_EQ_U(l[1].last_cycle, 370);
  }
  free(l);
  sonde_ft_trace_free(t);
  /* More unrecoverable cycles than max_gap keep the pieces apart. */
  sonde_ft_trace_new(0, &t);
  for (int i = 0; i < 20; i++) {
    put(t, 0x40, 3);
    put(t, 0x42, 1);
    if (i == 9)
      put_state(t, SONDE_FT_LOST, 0, 5);
  }
  c = (struct sonde_ft_busy_config){8, 3, 10, 4, NULL};
  CHECK_EQ_I(sonde_ft_find_busy_loops(t, &c, &l, &n), 0);
  CHECK_EQ_U(n, 2);
  if (n == 2) {
    CHECK_EQ_U(l[0].last_cycle, 39);
    CHECK_EQ_U(l[1].first_cycle, 45);
  }
  free(l);
  c.max_gap = 5;
  CHECK_EQ_I(sonde_ft_find_busy_loops(t, &c, &l, &n), 0);
  CHECK_EQ_U(n, 1);
  if (n == 1) {
    CHECK_EQ_U(l[0].last_cycle, 84);
    CHECK_EQ_U(l[0].unrecoverable, 5);
    CHECK_EQ_U(l[0].iterations, 20);
  }
  free(l);
  sonde_ft_trace_free(t);
}

static void test_insn_stats(void)
{
  struct sonde_ft_trace *t;
  sonde_ft_trace_new(0, &t);
  put(t, 0x10, 1);
  put(t, 0x12, 3);
  put_state(t, SONDE_FT_UNSAMPLED, 0, 5);
  put(t, 0x10, 40);
  put(t, 0x12, 6);
  put_state(t, SONDE_FT_SLEEP, 0, 2);
  struct sonde_ft_insn_stat *s;
  size_t n;
  CHECK_EQ_I(sonde_ft_insn_stats(t, &s, &n), 0);
  CHECK_EQ_U(n, 2);
  CHECK_EQ_U(s[0].pc, 0x10);
  CHECK_EQ_U(s[0].executions, 2);
  CHECK_EQ_U(s[0].cycles, 41);
  CHECK_EQ_U(s[0].min_cycles, 1);
  CHECK_EQ_U(s[0].max_cycles, 40);
  CHECK_EQ_U(s[0].hist[0], 1);
  CHECK_EQ_U(s[0].hist[7], 1);
  CHECK_EQ_U(s[1].cycles, 9);
  CHECK_EQ_U(s[1].hist[2], 1); /* 3 cycles */
  CHECK_EQ_U(s[1].hist[4], 1); /* 6: 5-8 */
  free(s);
  CHECK_EQ_U(sonde_ft_hist_bucket(16), 5);
  CHECK_EQ_U(sonde_ft_hist_bucket(17), 6);
  CHECK_EQ_U(sonde_ft_hist_bucket(33), 7);
  sonde_ft_trace_free(t);
}

static void test_project_and_verify(void)
{
  struct sonde_ft_trace *gt, *p, *st;
  sonde_ft_trace_new(10, &gt);
  put_state(gt, SONDE_FT_EXC_ENTRY, 15, 2); /* before any instruction: no sample */
  put(gt, 0x100, 2);
  put_state(gt, SONDE_FT_EXC_ENTRY, 15, 12);
  put(gt, 0x200, 3);
  put_state(gt, SONDE_FT_TAIL_CHAIN, 11, 6);
  put_state(gt, SONDE_FT_EXC_RETURN, 11, 10);
  put_state(gt, SONDE_FT_SLEEP, 0, 4);
  put_state(gt, SONDE_FT_HALTED, 0, 2);
  put(gt, 0x102, 1);
  CHECK_EQ_I(sonde_ft_project_dwt(gt, &p), 0);
  CHECK_EQ_U(sonde_ft_trace_length(p), 42);
  struct sonde_ft_cell c = sonde_ft_trace_at(p, 10);
  CHECK_EQ_I(c.state, SONDE_FT_UNSAMPLED);
  c = sonde_ft_trace_at(p, 14);
  CHECK(c.state == SONDE_FT_PC && c.pc == 0x100);
  c = sonde_ft_trace_at(p, 29);
  CHECK(c.state == SONDE_FT_PC && c.pc == 0x200); /* tail-chain */
  c = sonde_ft_trace_at(p, 44);
  CHECK(c.state == SONDE_FT_PC && c.pc == 0x200); /* return */
  CHECK_EQ_I(sonde_ft_trace_at(p, 46).state, SONDE_FT_SLEEP);
  CHECK_EQ_I(sonde_ft_trace_at(p, 50).state, SONDE_FT_UNSAMPLED); /* halted */
  CHECK_EQ_U(sonde_ft_trace_at(p, 51).pc, 0x102);
  /* a stitched trace of 11..52 with cycle 20 lost and 30 wrong */
  sonde_ft_trace_new(11, &st);
  for (uint64_t cy = 11; cy < 53; cy++) {
    struct sonde_ft_cell x = sonde_ft_trace_at(p, cy);
    if (cy == 20)
      x = (struct sonde_ft_cell){0, SONDE_FT_LOST};
    if (cy == 30)
      x.pc = 0x204;
    sonde_ft_trace_append(st, x, 1);
  }
  struct sonde_ft_verify_result v;
  CHECK_EQ_I(sonde_ft_verify(st, p, &v), 0);
  CHECK_EQ_U(v.missing, 1);       /* cycle 10 */
  CHECK_EQ_U(v.extra, 1);         /* cycle 52 */
  CHECK_EQ_U(v.unrecoverable, 4); /* 11 (before any instruction), 20 (lost), 49-50 (halted) */
  CHECK_EQ_U(v.different, 1);
  CHECK_EQ_U(v.first_cycle, 30);
  CHECK_EQ_U(v.got.pc, 0x204);
  CHECK_EQ_U(v.want.pc, 0x200);
  sonde_ft_trace_free(st);
  sonde_ft_trace_free(p);
  sonde_ft_trace_free(gt);
}

int main(void)
{
  RUN(test_busy_loops);
  RUN(test_insn_stats);
  RUN(test_project_and_verify);
  return check_summary();
}
