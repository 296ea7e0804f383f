/* What nondeterminism and a broken capture leave untrusted
 * (src/frankentrace/distrust.c, runner_stitch.c), on synthetic iterations:
 * where the untrusted cycles begin (one interval N before the first sign,
 * never before the origin), that marking keeps every cycle before it and
 * turns every known cycle after it into CONFLICT, and that the runner
 * library reports a gap in the iteration numbers, the missing phase and
 * the untrusted cycles of redundant iterations that disagree. The expected
 * values are worked out by hand in the comments. */
#include "check.h"
#include "sonde/frankentrace_runner.h"
#include "sonde/frankentrace_vm.h"

#include <stdlib.h>
#include <string.h>

#define N 4
#define LEN 24

static void test_untrusted_from(void)
{
  struct sonde_ft_conflict c[2] = {{SONDE_FT_CONFLICT_SAMPLES, 1, 1, 5, 100, 1},
                                   {SONDE_FT_CONFLICT_LENGTH, 2, 0, 6, 90, 3}};
  struct sonde_ft_report rep = {0};
  CHECK_EQ_U(sonde_ft_untrusted_from(&rep, UINT64_MAX, 16, 0), UINT64_MAX); /* no sign */
  rep.conflicts = c;
  rep.conflict_count = 1;
  CHECK_EQ_U(sonde_ft_untrusted_from(&rep, UINT64_MAX, 16, 0), 84);        /* 100 - 16 */
  CHECK_EQ_U(sonde_ft_untrusted_from(&rep, 50, 16, 0), 34);                /* earlier sign */
  rep.conflict_count = 2;
  CHECK_EQ_U(sonde_ft_untrusted_from(&rep, UINT64_MAX, 16, 0), 74);        /* 90 - 16 */
  CHECK_EQ_U(sonde_ft_untrusted_from(&rep, 10, 16, 0), 0);                 /* not before 0 */
  rep.conflict_count = 0;
  CHECK_EQ_U(sonde_ft_untrusted_from(&rep, 1005, 16, 1000), 1000);         /* nor the origin */
  CHECK_EQ_U(sonde_ft_untrusted_from(&rep, 1016, 16, 1000), 1000);
  CHECK_EQ_U(sonde_ft_untrusted_from(&rep, 1017, 16, 1000), 1001);
}

static void test_distrust_from(void)
{
  struct sonde_ft_trace *t = NULL;
  CHECK_EQ_I(sonde_ft_trace_new(10, &t), 0);
  /* cycles 10-13 pc 0x100, 14-15 sleep, 16 lost, 17-19 pc 0x104 */
  sonde_ft_trace_append(t, (struct sonde_ft_cell){0x100, SONDE_FT_PC}, 4);
  sonde_ft_trace_append(t, (struct sonde_ft_cell){0, SONDE_FT_SLEEP}, 2);
  sonde_ft_trace_append(t, (struct sonde_ft_cell){0, SONDE_FT_LOST}, 1);
  sonde_ft_trace_append(t, (struct sonde_ft_cell){0x104, SONDE_FT_PC}, 3);
  sonde_ft_trace_set_clock_hz(t, 48000000);
  CHECK_EQ_I(sonde_ft_distrust_from(&t, 100), 0); /* after the end: nothing */
  CHECK_EQ_U(sonde_ft_trace_at(t, 19).state, SONDE_FT_PC);
  CHECK_EQ_I(sonde_ft_distrust_from(&t, 12), 0); /* inside the first span */
  CHECK_EQ_U(sonde_ft_trace_origin(t), 10);
  CHECK_EQ_U(sonde_ft_trace_length(t), 10);
  CHECK_EQ_U(sonde_ft_trace_clock_hz(t), 48000000);
  static const uint8_t want[10] = {SONDE_FT_PC, SONDE_FT_PC, SONDE_FT_CONFLICT, SONDE_FT_CONFLICT,
                                   SONDE_FT_CONFLICT, SONDE_FT_CONFLICT, SONDE_FT_LOST,
                                   SONDE_FT_CONFLICT, SONDE_FT_CONFLICT, SONDE_FT_CONFLICT};
  for (unsigned i = 0; i < 10; i++)
    CHECK_EQ_U(sonde_ft_trace_at(t, 10 + i).state, want[i]);
  CHECK_EQ_U(sonde_ft_trace_at(t, 13).pc, 0x100); /* the value is kept, untrusted */
  CHECK_EQ_U(sonde_ft_trace_at(t, 18).pc, 0x104);
  struct sonde_ft_counts n;
  sonde_ft_trace_count(t, &n);
  CHECK_EQ_U(n.pc, 2);
  CHECK_EQ_U(n.conflict, 7);
  sonde_ft_trace_free(t);
}

/* The true samples: cycle c holds 0x1000 + 2 * c (one-cycle instructions). */
static uint32_t truth(uint64_t c) { return 0x1000 + 2 * (uint32_t)c; }

/* Add iteration j of phase ph; with bad_k >= 0 its sample k = bad_k differs. */
static void add(struct sonde_ft_runner *r, uint32_t j, uint32_t ph, int bad_k)
{
  struct sonde_ft_runner_iter it;
  memset(&it, 0, sizeof it);
  it.begin = (struct sonde_ftw_record){.type = 1, .run_id = 7, .fw_id = 9, .iteration = j,
                                       .n = N, .phase = ph};
  it.has_end = true;
  it.verdict = SONDE_FT_RUNNER_OK;
  uint32_t v[LEN / N];
  for (unsigned k = 0; k < LEN / N; k++)
    v[k] = (int)k == bad_k ? 0x2000 : truth((uint64_t)k * N + ph);
  it.samples.v = v;
  it.samples.count = LEN / N;
  struct sonde_diag d;
  CHECK_EQ_I(sonde_ft_runner_add(r, &it, &d), 0);
}

static void test_runner_gap_and_conflict(void)
{
  struct sonde_ft_runner_config cfg = {0}; /* no ELF: no code check, no preamble */
  struct sonde_ft_runner *r = NULL;
  CHECK_EQ_I(sonde_ft_runner_new(&cfg, &r), 0);
  /* the plan: phases 0..3 as iterations 0..3, then phase 1 again as 4 and phase 3 as 5;
   * iteration 2 is not in the capture; iteration 5 disagrees at k = 4 (cycle 19) */
  add(r, 0, 0, -1);
  add(r, 1, 1, -1);
  add(r, 3, 3, -1);
  add(r, 4, 1, -1);
  add(r, 5, 3, 4);
  struct sonde_ft_trace *t = NULL;
  struct sonde_ft_runner_summary s;
  struct sonde_diag d;
  CHECK_EQ_I(sonde_ft_runner_finish(r, &t, &s, &d), 0);
  CHECK_EQ_U(s.gap_iterations, 1);
  CHECK_EQ_U(s.first_gap, 2);
  CHECK_EQ_U(s.gap_end, 3);
  CHECK_EQ_U(s.missing, 1);
  CHECK_EQ_U(s.missing_first[0], 2);
  CHECK_EQ_U(s.report.conflict_count, 1);
  CHECK_EQ_U(s.report.conflicts[0].first_cycle, 19);
  CHECK_EQ_U(s.untrusted_from, 15); /* 19 - N */
  CHECK(!s.ok);
  for (uint64_t c = 0; c < LEN; c++) {
    struct sonde_ft_cell x = sonde_ft_trace_at(t, c);
    if (c % N == 2) /* phase 2: nobody sampled it */
      CHECK_EQ_U(x.state, SONDE_FT_UNSAMPLED);
    else if (c >= 15)
      CHECK_EQ_U(x.state, SONDE_FT_CONFLICT);
    else
      CHECK(x.state == SONDE_FT_PC && x.pc == truth(c));
  }
  CHECK_EQ_U(s.report.counts.conflict, 7); /* counts are of what is emitted: 15..23 but 18, 22 */
  sonde_ft_trace_free(t);
  sonde_ft_runner_free(r);
}

int main(void)
{
  RUN(test_untrusted_from);
  RUN(test_distrust_from);
  RUN(test_runner_gap_and_conflict);
  return check_summary();
}
