/* Stitching (src/frankentrace/stitch.c) on synthetic plans: a full plan in
 * any feeding order, lost samples, redundant iterations that agree, fill in
 * and disagree, missing phases, cut captures, preamble rejection, run-length
 * conflicts, and misuse. The expected traces are built independently from the
 * "ground truth" arrays below, cycle by cycle. */
#include "check.h"
#include "sonde/frankentrace.h"

#define N 4
#define LEN 20
#define ORIGIN 1000

/* The program's true samples per cycle: PCs, with two sleep cycles. */
static uint32_t gt[LEN];

static void init_gt(void)
{
  for (unsigned c = 0; c < LEN; c++)
    gt[c] = 0x1000 + 2 * (c / 2); /* every instruction takes 2 cycles */
  gt[10] = gt[11] = SONDE_FT_SAMPLE_SLEEP;
}

static struct sonde_ft_stitch *new_stitch(uint64_t length)
{
  struct sonde_ft_stitch_config cfg = {N, ORIGIN, length, 0};
  struct sonde_ft_stitch *st = NULL;
  struct sonde_diag d;
  CHECK_EQ_I(sonde_ft_stitch_new(&cfg, &st, &d), 0);
  return st;
}

/* Run phase `ph` as iteration `id`: samples from gt, with `tweak` applied. */
static struct sonde_ft_iter_result run_phase(struct sonde_ft_stitch *st, uint32_t ph, uint32_t id,
                                             int lost_k, int bad_k, uint32_t bad_val, bool complete,
                                             unsigned max_k)
{
  struct sonde_ft_iter *it;
  struct sonde_ft_iter_result r = {0};
  CHECK_EQ_I(sonde_ft_iter_begin(st, ph, id, &it), 0);
  for (unsigned k = 0; k * N + ph < LEN && k < max_k; k++) {
    uint32_t s = gt[k * N + ph];
    if ((int)k == lost_k)
      s = SONDE_FT_SAMPLE_LOST;
    if ((int)k == bad_k)
      s = bad_val;
    CHECK_EQ_I(sonde_ft_iter_feed(it, k, &s, 1), 0);
  }
  struct sonde_ft_iter_end_info e = {complete, complete ? LEN : 0};
  CHECK_EQ_I(sonde_ft_iter_end(it, &e, &r), 0);
  return r;
}

static void expect_cell(const struct sonde_ft_trace *t, unsigned c, enum sonde_ft_state s,
                        uint32_t pc)
{
  struct sonde_ft_cell x = sonde_ft_trace_at(t, ORIGIN + c);
  if (x.state != s || x.pc != pc)
    CHECK_FAIL_("cycle %u: got %s 0x%x, want %s 0x%x", c, sonde_ft_state_name(x.state), x.pc,
                sonde_ft_state_name(s), pc);
}

static void expect_gt(const struct sonde_ft_trace *t, unsigned c)
{
  if (gt[c] == SONDE_FT_SAMPLE_SLEEP)
    expect_cell(t, c, SONDE_FT_SLEEP, 0);
  else
    expect_cell(t, c, SONDE_FT_PC, gt[c]);
}

static void test_full_plan(void)
{
  struct sonde_ft_stitch *st = new_stitch(0);
  for (uint32_t ph = 0; ph < N; ph++)
    CHECK_EQ_I(run_phase(st, ph, ph, -1, -1, 0, true, 99).status, SONDE_FT_ITER_OK);
  struct sonde_ft_trace *t;
  struct sonde_ft_report rep;
  CHECK_EQ_I(sonde_ft_stitch_finish(st, &t, &rep), 0);
  CHECK_EQ_U(sonde_ft_trace_origin(t), ORIGIN);
  CHECK_EQ_U(sonde_ft_trace_length(t), LEN);
  for (unsigned c = 0; c < LEN; c++)
    expect_gt(t, c);
  CHECK_EQ_U(rep.iterations, 4);
  CHECK_EQ_U(rep.merged, 4);
  CHECK_EQ_U(rep.phases_covered, 4);
  CHECK_EQ_U(rep.phases_redundant, 0);
  CHECK_EQ_U(rep.samples, 20);
  CHECK_EQ_U(rep.conflict_count, 0);
  CHECK_EQ_U(rep.counts.pc, 18);
  CHECK_EQ_U(rep.counts.sleep, 2);
  /* spans: 5 two-cycle instructions, sleep, 4 more */
  uint64_t pos = 0, spans = 0;
  struct sonde_ft_span sp;
  while (sonde_ft_trace_next_span(t, &pos, &sp))
    spans++;
  CHECK_EQ_U(spans, 10);
  uint64_t bad = 1;
  CHECK_EQ_U(sonde_ft_preamble_check(t, ORIGIN, gt, 12, &bad), 0);
  uint32_t wrong[3] = {0x1000, 0x1000, 0x1004};
  CHECK_EQ_U(sonde_ft_preamble_check(t, ORIGIN, wrong, 3, &bad), 1);
  CHECK_EQ_U(bad, ORIGIN + 2);
  sonde_ft_trace_free(t);
  sonde_ft_stitch_free(st);
}

/* All iterations open at once, fed interleaved and ended in reverse order:
 * the same trace as one after the other. */
static void test_order_independent(void)
{
  struct sonde_ft_stitch *st = new_stitch(LEN);
  struct sonde_ft_iter *it[N];
  for (uint32_t ph = 0; ph < N; ph++)
    CHECK_EQ_I(sonde_ft_iter_begin(st, ph, 10 + ph, &it[ph]), 0);
  for (unsigned k = 0; k < LEN / N; k++)
    for (uint32_t ph = 0; ph < N; ph++)
      CHECK_EQ_I(sonde_ft_iter_feed(it[N - 1 - ph], k, &gt[k * N + N - 1 - ph], 1), 0);
  struct sonde_ft_trace *t;
  CHECK_EQ_I(sonde_ft_stitch_finish(st, &t, NULL), SONDE_E_STATE); /* still open */
  CHECK(t == NULL);
  for (int ph = N - 1; ph >= 0; ph--)
    CHECK_EQ_I(sonde_ft_iter_end(it[ph], NULL, NULL), 0);
  CHECK_EQ_I(sonde_ft_stitch_finish(st, &t, NULL), 0);
  for (unsigned c = 0; c < LEN; c++)
    expect_gt(t, c);
  sonde_ft_trace_free(t);
  sonde_ft_stitch_free(st);
}

static void test_lost_then_filled(void)
{
  struct sonde_ft_stitch *st = new_stitch(0);
  for (uint32_t ph = 0; ph < N; ph++) {
    struct sonde_ft_iter_result r = run_phase(st, ph, ph, ph == 1 ? 2 : -1, -1, 0, true, 99);
    CHECK_EQ_U(r.lost, ph == 1 ? 1 : 0);
  }
  struct sonde_ft_trace *t;
  struct sonde_ft_report rep;
  /* A redundant phase 3 and phase 1 with no loss: phase 1 fills cycle 9. */
  CHECK_EQ_I(run_phase(st, 3, 7, 0, -1, 0, true, 99).conflicts, 0); /* LOST hides nothing */
  CHECK_EQ_I(sonde_ft_stitch_finish(st, &t, &rep), 0);
  expect_cell(t, 9, SONDE_FT_LOST, 0);
  CHECK_EQ_U(rep.counts.lost, 1);
  CHECK_EQ_U(rep.samples_lost, 2);
  CHECK_EQ_U(rep.phases_redundant, 1);
  sonde_ft_trace_free(t);
  sonde_ft_stitch_free(st);

  st = new_stitch(0);
  run_phase(st, 1, 0, 2, -1, 0, true, 99);
  run_phase(st, 1, 1, -1, -1, 0, true, 99);
  CHECK_EQ_I(sonde_ft_stitch_finish(st, &t, &rep), 0);
  expect_cell(t, 9, SONDE_FT_PC, gt[9]);
  CHECK_EQ_U(rep.conflict_count, 0);
  sonde_ft_trace_free(t);
  sonde_ft_stitch_free(st);
}

static void test_redundant_disagree(void)
{
  struct sonde_ft_stitch *st = new_stitch(0);
  for (uint32_t ph = 0; ph < N; ph++)
    run_phase(st, ph, ph, -1, -1, 0, true, 99);
  /* Iteration 9 repeats phase 2 and differs at k = 3 (cycle 14), and makes a
   * sleep cycle (10 = k 2) a PC: two disagreeing cycles. */
  struct sonde_ft_iter *it;
  CHECK_EQ_I(sonde_ft_iter_begin(st, 2, 9, &it), 0);
  uint32_t s[5] = {gt[2], gt[6], 0x2000, 0x3000, gt[18]};
  CHECK_EQ_I(sonde_ft_iter_feed(it, 0, s, 5), 0);
  struct sonde_ft_iter_result r;
  CHECK_EQ_I(sonde_ft_iter_end(it, NULL, &r), 0);
  CHECK_EQ_I(r.status, SONDE_FT_ITER_OK);
  CHECK_EQ_U(r.conflicts, 2);
  CHECK_EQ_U(r.first_bad_cycle, ORIGIN + 10);
  /* A third run of phase 2 agreeing with the first: the conflict stays. */
  CHECK_EQ_U(run_phase(st, 2, 11, -1, -1, 0, true, 99).conflicts, 0);
  struct sonde_ft_trace *t;
  struct sonde_ft_report rep;
  CHECK_EQ_I(sonde_ft_stitch_finish(st, &t, &rep), 0);
  expect_cell(t, 10, SONDE_FT_CONFLICT, 0);
  expect_cell(t, 14, SONDE_FT_CONFLICT, gt[14]); /* the first run's value, untrusted */
  expect_gt(t, 18);
  CHECK_EQ_U(rep.counts.conflict, 2);
  CHECK_EQ_U(rep.conflict_count, 1);
  CHECK_EQ_I(rep.conflicts[0].kind, SONDE_FT_CONFLICT_SAMPLES);
  CHECK_EQ_U(rep.conflicts[0].phase, 2);
  CHECK_EQ_U(rep.conflicts[0].iter_a, 2);
  CHECK_EQ_U(rep.conflicts[0].iter_b, 9);
  CHECK_EQ_U(rep.conflicts[0].first_cycle, ORIGIN + 10);
  CHECK_EQ_U(rep.conflicts[0].cycles, 2);
  sonde_ft_trace_free(t);
  sonde_ft_stitch_free(st);
}

static void test_missing_and_cut(void)
{
  struct sonde_ft_stitch *st = new_stitch(0);
  run_phase(st, 0, 0, -1, -1, 0, false, 3); /* cut after k = 2: cycles 12, 16 unsampled */
  run_phase(st, 1, 1, -1, -1, 0, true, 99);
  run_phase(st, 2, 2, -1, -1, 0, true, 3); /* complete but samples 3, 4 never came: LOST */
  uint32_t missing[4];
  CHECK_EQ_U(sonde_ft_stitch_missing_phases(st, missing, 4), 1);
  CHECK_EQ_U(missing[0], 3);
  struct sonde_ft_trace *t;
  struct sonde_ft_report rep;
  CHECK_EQ_I(sonde_ft_stitch_finish(st, &t, &rep), 0);
  CHECK_EQ_U(sonde_ft_trace_length(t), LEN);
  CHECK_EQ_U(rep.cut, 1);
  for (unsigned c = 0; c < LEN; c++) {
    if (c % N == 3 || c == 12 || c == 16)
      expect_cell(t, c, SONDE_FT_UNSAMPLED, 0);
    else if (c == 14 || c == 18)
      expect_cell(t, c, SONDE_FT_LOST, 0);
    else
      expect_gt(t, c);
  }
  CHECK_EQ_U(rep.counts.unsampled, 7);
  CHECK_EQ_U(rep.counts.lost, 2);
  CHECK_EQ_U(rep.phases_covered, 3);
  sonde_ft_trace_free(t);
  sonde_ft_stitch_free(st);
}

static void test_preamble(void)
{
  struct sonde_ft_stitch *st = new_stitch(0);
  CHECK_EQ_I(sonde_ft_stitch_set_preamble(st, ORIGIN, gt, 8), 0);
  /* phase 1 corrupt inside the preamble (k = 1: cycle 5): rejected */
  struct sonde_ft_iter_result r = run_phase(st, 1, 1, -1, 1, 0x4444, true, 99);
  CHECK_EQ_I(r.status, SONDE_FT_ITER_PREAMBLE);
  CHECK_EQ_U(r.first_bad_cycle, ORIGIN + 5);
  /* corrupt after the preamble: accepted */
  CHECK_EQ_I(run_phase(st, 0, 0, -1, 3, 0x4444, true, 99).status, SONDE_FT_ITER_OK);
  /* re-run of phase 1: accepted */
  CHECK_EQ_I(run_phase(st, 1, 5, -1, -1, 0, true, 99).status, SONDE_FT_ITER_OK);
  struct sonde_ft_trace *t;
  struct sonde_ft_report rep;
  CHECK_EQ_I(sonde_ft_stitch_finish(st, &t, &rep), 0);
  CHECK_EQ_U(rep.rejected_preamble, 1);
  CHECK_EQ_U(rep.merged, 2);
  CHECK_EQ_U(rep.preamble_checked, 2 + 2 + 2);
  expect_gt(t, 5);
  expect_cell(t, 12, SONDE_FT_PC, 0x4444);
  CHECK_EQ_I(sonde_ft_stitch_set_preamble(st, ORIGIN, gt, 8), SONDE_E_STATE);
  sonde_ft_trace_free(t);
  sonde_ft_stitch_free(st);
}

static void test_length_conflict_and_misuse(void)
{
  struct sonde_ft_stitch *st = new_stitch(0);
  struct sonde_ft_iter *it;
  CHECK_EQ_I(sonde_ft_iter_begin(st, 4, 0, &it), SONDE_E_ARG);
  CHECK(it == NULL);
  CHECK_EQ_I(sonde_ft_iter_begin(st, 0, 0, &it), 0);
  uint32_t s[3] = {0x10, 0x20, 0x30};
  CHECK_EQ_I(sonde_ft_iter_feed(it, 2, s, 3), 0);
  CHECK_EQ_I(sonde_ft_iter_feed(it, 4, s, 1), SONDE_E_ARG); /* backwards */
  struct sonde_ft_iter_end_info e = {true, 20};
  CHECK_EQ_I(sonde_ft_iter_end(it, &e, NULL), 0);
  CHECK_EQ_I(sonde_ft_iter_begin(st, 1, 1, &it), 0);
  sonde_ft_iter_discard(it);
  CHECK_EQ_I(sonde_ft_iter_begin(st, 2, 2, &it), 0);
  e.length = 23;
  CHECK_EQ_I(sonde_ft_iter_end(it, &e, NULL), 0);
  struct sonde_ft_trace *t;
  struct sonde_ft_report rep;
  CHECK_EQ_I(sonde_ft_stitch_finish(st, &t, &rep), 0);
  CHECK_EQ_U(rep.discarded, 1);
  CHECK_EQ_U(rep.conflict_count, 1);
  CHECK_EQ_I(rep.conflicts[0].kind, SONDE_FT_CONFLICT_LENGTH);
  CHECK_EQ_U(rep.conflicts[0].iter_a, 0);
  CHECK_EQ_U(rep.conflicts[0].iter_b, 2);
  CHECK_EQ_U(rep.conflicts[0].first_cycle, ORIGIN + 20);
  CHECK_EQ_U(rep.conflicts[0].cycles, 3);
  CHECK_EQ_U(sonde_ft_trace_length(t), 23);
  expect_cell(t, 0, SONDE_FT_LOST, 0); /* skipped k = 0, 1 are lost */
  expect_cell(t, 8, SONDE_FT_PC, 0x10);
  expect_cell(t, 16, SONDE_FT_PC, 0x30);
  sonde_ft_trace_free(t);
  sonde_ft_stitch_free(st);

  struct sonde_ft_stitch_config bad = {0, 0, 0, 0};
  struct sonde_diag d;
  CHECK_EQ_I(sonde_ft_stitch_new(&bad, &st, &d), SONDE_E_ARG);
  CHECK_EQ_STR(d.msg, "sampling interval N must be 1..16777216 (got 0)");
  struct sonde_ft_stitch_config small = {4, 0, 0, 100};
  CHECK_EQ_I(sonde_ft_stitch_new(&small, &st, &d), 0);
  CHECK_EQ_I(sonde_ft_iter_begin(st, 3, 0, &it), 0);
  CHECK_EQ_I(sonde_ft_iter_feed(it, 25, s, 1), SONDE_E_LIMIT); /* cycle 103 */
  CHECK_EQ_I(sonde_ft_iter_feed(it, 24, s, 1), 0);              /* cycle 99 */
  sonde_ft_stitch_free(st); /* frees the open iteration too */
  sonde_ft_stitch_free(NULL);
}

/* Samples placed by timestamp: on the grid they are fed, off it or going
 * back they are refused, and the caller discards the iteration. */
static void test_feed_at(void)
{
  struct sonde_ft_stitch *st = new_stitch(0);
  struct sonde_ft_iter *it;
  CHECK_EQ_I(sonde_ft_iter_begin(st, 3, 42, &it), 0);
  CHECK_EQ_I(sonde_ft_iter_feed_at(it, ORIGIN + 3, 0x100), 0);
  CHECK_EQ_I(sonde_ft_iter_feed_at(it, ORIGIN + 11, 0x104), 0); /* k = 2; k = 1 lost */
  CHECK_EQ_I(sonde_ft_iter_feed_at(it, ORIGIN + 13, 0x108), SONDE_E_FORMAT);
  CHECK_EQ_STR(sonde_ft_stitch_error_detail(st),
               "iteration 42: a sample at cycle 1013 is off its grid (cycle 1003 + k*4)");
  CHECK_EQ_I(sonde_ft_iter_feed_at(it, ORIGIN + 7, 0x108), SONDE_E_FORMAT);
  CHECK_EQ_STR(sonde_ft_stitch_error_detail(st),
               "iteration 42: a sample at cycle 1007 does not come after the previous one (cycle 1011)");
  CHECK_EQ_I(sonde_ft_iter_feed_at(it, ORIGIN + 1, 0x108), SONDE_E_FORMAT);
  struct sonde_ft_iter_result r;
  CHECK_EQ_I(sonde_ft_iter_end(it, NULL, &r), 0);
  CHECK_EQ_U(r.samples, 3);
  CHECK_EQ_U(r.lost, 1);
  struct sonde_ft_trace *t;
  CHECK_EQ_I(sonde_ft_stitch_finish(st, &t, NULL), 0);
  expect_cell(t, 3, SONDE_FT_PC, 0x100);
  expect_cell(t, 7, SONDE_FT_LOST, 0);
  expect_cell(t, 11, SONDE_FT_PC, 0x104);
  sonde_ft_trace_free(t);
  sonde_ft_stitch_free(st);
}

/* Large random plans against a reference built cycle by cycle. */
static void test_random_plans(void)
{
  uint64_t seed = 12345;
  for (int round = 0; round < 50; round++) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    uint32_t n = 1 + (uint32_t)(seed >> 40) % 37, len = 1 + (uint32_t)(seed >> 20) % 3000;
    uint32_t *truth = malloc(len * sizeof *truth);
    for (uint32_t c = 0; c < len; c++) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      truth[c] = (seed >> 33) % 10 == 0 ? SONDE_FT_SAMPLE_SLEEP : (uint32_t)(seed >> 40) & ~1u;
    }
    struct sonde_ft_stitch_config cfg = {n, 7, len, 0};
    struct sonde_ft_stitch *st;
    CHECK_EQ_I(sonde_ft_stitch_new(&cfg, &st, NULL), 0);
    for (uint32_t ph = n; ph-- > 0;) {
      struct sonde_ft_iter *it;
      CHECK_EQ_I(sonde_ft_iter_begin(st, ph, ph, &it), 0);
      uint32_t buf[64];
      size_t m = 0;
      uint64_t k0 = 0;
      for (uint64_t c = ph, k = 0; c < len; c += n, k++) {
        buf[m++] = truth[c];
        if (m == 64) {
          CHECK_EQ_I(sonde_ft_iter_feed(it, k0, buf, m), 0);
          k0 += m;
          m = 0;
        }
      }
      CHECK_EQ_I(sonde_ft_iter_feed(it, k0, buf, m), 0);
      struct sonde_ft_iter_end_info e = {true, len};
      CHECK_EQ_I(sonde_ft_iter_end(it, &e, NULL), 0);
    }
    struct sonde_ft_trace *t;
    struct sonde_ft_report rep;
    CHECK_EQ_I(sonde_ft_stitch_finish(st, &t, &rep), 0);
    CHECK_EQ_U(sonde_ft_trace_length(t), len);
    uint64_t wrong = 0;
    for (uint32_t c = 0; c < len; c++) {
      struct sonde_ft_cell x = sonde_ft_trace_at(t, 7 + c);
      bool ok = truth[c] == SONDE_FT_SAMPLE_SLEEP ? x.state == SONDE_FT_SLEEP
                                                  : x.state == SONDE_FT_PC && x.pc == truth[c];
      wrong += !ok;
    }
    CHECK_EQ_U(wrong, 0);
    CHECK_EQ_U(rep.samples, len);
    sonde_ft_trace_free(t);
    sonde_ft_stitch_free(st);
    free(truth);
  }
}

int main(void)
{
  init_gt();
  RUN(test_full_plan);
  RUN(test_order_independent);
  RUN(test_lost_then_filled);
  RUN(test_redundant_disagree);
  RUN(test_missing_and_cut);
  RUN(test_preamble);
  RUN(test_length_conflict_and_misuse);
  RUN(test_feed_at);
  RUN(test_random_plans);
  return check_summary();
}
