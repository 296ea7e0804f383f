/* The runner's LSU iterations into one LSU trace (lsu_runs.c): the three
 * packet kinds of a pair joined, pairs ordered; what cannot be used is
 * refused with the reason. And the data phase, the writer's gap rows and the
 * gap-aware comparison (lsu_write.c). */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "sonde/frankentrace_runner.h"

/* The true order of 9 transfers over the ranges 0x2000, 0x4000, 0x400f. */
static const uint32_t truth_r16[9] = {0x2000, 0x4000, 0x400f, 0x2000, 0x2000,
                                      0x400f, 0x4000, 0x2000, 0x400f};

static struct sonde_ft_xfer truth(unsigned i)
{
  struct sonde_ft_xfer x = {0};
  x.pc = 0x200 + 4 * i;
  x.addr = (truth_r16[i] << 16) | (0x10 * i);
  x.value = i % 2 ? 0xAB : 0x12345678u + i;
  x.size = i % 2 ? 1 : 4;
  x.write = i % 3 == 0;
  return x;
}

/* The packets of the iteration tracing (a, b) with one kind; `drop` leaves
 * one transfer out, `overflow` adds an overflow packet. */
static void iteration(uint32_t iter, uint32_t a, uint32_t b, unsigned kind, int drop, bool overflow,
                      struct sonde_itm_packet *p, struct sonde_ftw_iteration *it)
{
  size_t n = 0;
  for (unsigned i = 0; i < 9; i++) {
    if (truth_r16[i] != a && truth_r16[i] != b)
      continue;
    if ((int)i == drop)
      continue;
    struct sonde_ft_xfer t = truth(i);
    struct sonde_itm_packet q = {0};
    q.port = truth_r16[i] == a ? 0 : 1;
    if (kind == SONDE_FT_LSU_ADDR) {
      q.type = SONDE_ITM_DT_ADDR;
      q.size = 2;
      q.value = t.addr & 0xFFFF;
    } else if (kind == SONDE_FT_LSU_DATA) {
      q.type = SONDE_ITM_DT_DATA;
      q.size = t.size;
      q.value = t.value;
      q.flags = t.write ? SONDE_ITM_DT_WRITE : 0;
    } else {
      q.type = SONDE_ITM_DT_PC;
      q.size = 4;
      q.value = t.pc;
    }
    p[n++] = q;
    if (overflow && n == 2)
      p[n++] = (struct sonde_itm_packet){.type = SONDE_ITM_OVERFLOW};
  }
  memset(it, 0, sizeof *it);
  it->begin = (struct sonde_ftw_record){.type = 1, .iteration = iter, .n = 128, .kind = 1,
                                        .lsu_kind = kind, .range_a = a, .range_b = b};
  it->end = it->begin;
  it->end.type = 2;
  it->has_end = true;
  it->packets = p;
  it->count = n;
}

static const uint32_t pairs[3][2] = {{0x2000, 0x4000}, {0x2000, 0x400f}, {0x4000, 0x400f}};

static int add_all(struct sonde_ft_lsu_runs *r, int skip_pair, int drop_in_kind1,
                   struct sonde_diag *d)
{
  struct sonde_itm_packet p[32];
  struct sonde_ftw_iteration it;
  uint32_t iter = 100;
  for (int q = 0; q < 3; q++)
    for (unsigned k = 0; k < SONDE_FT_LSU_KINDS; k++, iter++) {
      if (q == skip_pair && k == SONDE_FT_LSU_PC)
        continue;
      iteration(iter, pairs[q][0], pairs[q][1], k, k == 1 ? drop_in_kind1 : -1, false, p, &it);
      int rc = sonde_ft_lsu_runs_add(r, &it, d);
      if (rc < 0)
        return rc;
    }
  return 0;
}

static void test_runs_order(void)
{
  struct sonde_ft_lsu_runs *r;
  REQUIRE(sonde_ft_lsu_runs_new(&r) == 0);
  struct sonde_diag d = {{0}};
  CHECK_EQ_I(add_all(r, -1, -1, &d), 0);
  struct sonde_ft_xfer *x;
  size_t n;
  struct sonde_ft_lsu_summary s;
  CHECK_EQ_I(sonde_ft_lsu_runs_finish(r, &x, &n, &s, &d), 0);
  CHECK_EQ_U(s.nranges, 3);
  CHECK_EQ_U(s.ranges[0], 0x2000);
  CHECK_EQ_U(s.ranges[2], 0x400f);
  CHECK_EQ_U(s.pairs, 3);
  CHECK_EQ_U(n, 9);
  for (unsigned i = 0; i < n && i < 9; i++) {
    struct sonde_ft_xfer t = truth(i);
    CHECK_EQ_U(x[i].pc, t.pc);
    CHECK_EQ_U(x[i].addr, t.addr);
    CHECK_EQ_U(x[i].value, t.value);
    CHECK_EQ_U(x[i].size, t.size);
    CHECK_EQ_I(x[i].write, t.write);
    CHECK_EQ_U(s.ranges[x[i].range], truth_r16[i]);
  }
  free(x);
  sonde_ft_lsu_runs_free(r);
}

static void test_runs_errors(void)
{
  struct sonde_ft_lsu_runs *r;
  struct sonde_ft_xfer *x;
  size_t n;
  struct sonde_ft_lsu_summary s;
  struct sonde_diag d = {{0}};
  /* a kind missing */
  REQUIRE(sonde_ft_lsu_runs_new(&r) == 0);
  CHECK_EQ_I(add_all(r, 1, -1, &d), 0);
  CHECK_EQ_I(sonde_ft_lsu_runs_finish(r, &x, &n, &s, &d), SONDE_E_FORMAT);
  CHECK(strstr(d.msg, "ranges 0x2000+0x400f: no sound iteration with pc packets") != NULL);
  sonde_ft_lsu_runs_free(r);
  /* the data run saw one transfer fewer: nondeterminism */
  REQUIRE(sonde_ft_lsu_runs_new(&r) == 0);
  CHECK_EQ_I(add_all(r, -1, 4, &d), 0);
  CHECK_EQ_I(sonde_ft_lsu_runs_finish(r, &x, &n, &s, &d), SONDE_E_FORMAT);
  CHECK(strstr(d.msg, "ranges 0x2000+0x4000: iterations 100 (address) and 101 (data) disagree") !=
        NULL);
  sonde_ft_lsu_runs_free(r);
  /* an overflow, a cut, a packet of another kind */
  REQUIRE(sonde_ft_lsu_runs_new(&r) == 0);
  struct sonde_itm_packet p[32];
  struct sonde_ftw_iteration it;
  iteration(7, 0x2000, 0x4000, SONDE_FT_LSU_DATA, -1, true, p, &it);
  CHECK_EQ_I(sonde_ft_lsu_runs_add(r, &it, &d), SONDE_E_FORMAT);
  CHECK(strstr(d.msg, "iteration 7 (ranges 0x2000+0x4000, data packets): ITM overflow") != NULL);
  iteration(8, 0x2000, 0x4000, SONDE_FT_LSU_DATA, -1, false, p, &it);
  it.has_end = false;
  CHECK_EQ_I(sonde_ft_lsu_runs_add(r, &it, &d), SONDE_E_AGAIN);
  iteration(9, 0x2000, 0x4000, SONDE_FT_LSU_DATA, -1, false, p, &it);
  it.begin.lsu_kind = SONDE_FT_LSU_PC;
  CHECK_EQ_I(sonde_ft_lsu_runs_add(r, &it, &d), SONDE_E_FORMAT);
  CHECK(strstr(d.msg, "a data-trace packet of another kind") != NULL);
  CHECK_EQ_I(sonde_ft_lsu_runs_finish(r, &x, &n, &s, &d), SONDE_E_FORMAT); /* the pair, none usable */
  sonde_ft_lsu_runs_free(r);
}

/* Data phase: transfer i of an instruction at s + min(i + 1, L - 1). */
static void test_data_phase_and_verify(void)
{
  struct sonde_ft_trace *t;
  REQUIRE(sonde_ft_trace_new(0, &t) == 0);
  sonde_ft_trace_append(t, (struct sonde_ft_cell){0x100, SONDE_FT_PC}, 1);
  sonde_ft_trace_append(t, (struct sonde_ft_cell){0x102, SONDE_FT_PC}, 2); /* ldr: 1..2 */
  sonde_ft_trace_append(t, (struct sonde_ft_cell){0x104, SONDE_FT_PC}, 3); /* ldm x3: 3..5 */
  struct sonde_ft_xfer x[4] = {
      {.pc = 0x102, .addr = 0x20000000, .size = 4, .cycle = 1},
      {.pc = 0x104, .addr = 0x20000010, .size = 4, .cycle = 3},
      {.pc = 0x104, .addr = 0x20000014, .size = 4, .cycle = 3},
      {.pc = 0x104, .addr = 0x20000018, .size = 4, .cycle = 3},
  };
  sonde_ft_lsu_data_phase(t, x, 4);
  CHECK_EQ_U(x[0].cycle, 2);
  CHECK_EQ_U(x[1].cycle, 4);
  CHECK_EQ_U(x[2].cycle, 5);
  CHECK_EQ_U(x[3].cycle, 5); /* clamped to the last cycle */
  /* the ground truth at +100 cycles has a fifth transfer the trace marks as a gap */
  struct sonde_ft_xfer gt[5];
  for (int i = 0; i < 4; i++) {
    gt[i] = x[i];
    gt[i].cycle += 100;
  }
  gt[4] = (struct sonde_ft_xfer){.pc = 0x104, .addr = 0x20000020, .size = 4, .cycle = 106};
  uint32_t ranges[1] = {0x2000};
  struct sonde_ft_lsu_verify_result v;
  sonde_ft_lsu_verify(x, 4, gt, 5, ranges, 1, 100, 200, 100, true, &v);
  CHECK(v.differs);
  CHECK_EQ_U(v.equal, 4);
  struct sonde_ft_xfer y[5];
  memcpy(y, x, sizeof x);
  y[4] = (struct sonde_ft_xfer){.addr = 0x20000000, .gap = true, .value = 2, .cycle = 5};
  sonde_ft_lsu_verify(y, 5, gt, 5, ranges, 1, 100, 200, 100, true, &v);
  CHECK(!v.differs);
  CHECK_EQ_U(v.in_gaps, 1);
  CHECK_EQ_U(v.gaps, 1);
  sonde_ft_trace_free(t);
}

int main(void)
{
  RUN(test_runs_order);
  RUN(test_runs_errors);
  RUN(test_data_phase_and_verify);
  return check_summary();
}
