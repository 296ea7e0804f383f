/* Benchmark of src/frankentrace (issue 15): stitching alone, in samples per
 * second (goal >= 50 M/s), for a 1,000,000-cycle program at N = 128, 512 and
 * 5120 (the paper's Table 2 range), with the samples of every iteration ready
 * in memory (no decoding). The floor, measured in the same run, is a plain
 * strided copy of the same samples into one array (what any stitcher must at
 * least do). Also: reading the real CC2650 CSV trace, and check/analyze on it.
 *
 *   bench_frankentrace [cycles]      (default 1000000)
 *
 * Timing never decides anything; figures go to docs/benchmarks.md. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sonde/frankentrace.h"
#include "sonde/sym.h"

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A PC sequence like firmware: runs of 1-4 cycles per instruction, loops. */
static uint32_t *make_truth(uint64_t len)
{
  uint32_t *t = malloc(len * sizeof *t);
  uint64_t s = 0x9e3779b97f4a7c15ull;
  uint32_t pc = 0x1000;
  for (uint64_t c = 0; c < len;) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    unsigned run = 1 + (unsigned)(s & 3);
    for (unsigned k = 0; k < run && c < len; k++)
      t[c++] = (s >> 20) % 50 == 0 ? SONDE_FT_SAMPLE_SLEEP : pc;
    pc = (s >> 8) % 16 == 0 ? 0x1000 + ((uint32_t)(s >> 32) % 4096) * 2 : pc + 2;
  }
  return t;
}

static void bench_stitch(const uint32_t *truth, uint64_t len, uint32_t n, int reps)
{
  /* the iterations' samples, ready */
  uint32_t **ph = malloc(n * sizeof *ph);
  size_t *cnt = malloc(n * sizeof *cnt);
  for (uint32_t i = 0; i < n; i++) {
    cnt[i] = len > i ? (size_t)((len - i + n - 1) / n) : 0;
    ph[i] = malloc((cnt[i] ? cnt[i] : 1) * sizeof **ph);
    for (size_t k = 0; k < cnt[i]; k++)
      ph[i][k] = truth[k * n + i];
  }
  double best = 1e9, best_floor = 1e9;
  uint64_t wrong = 0;
  for (int r = 0; r < reps; r++) {
    double t0 = now_s();
    struct sonde_ft_stitch_config cfg = {n, 0, len, 0};
    struct sonde_ft_stitch *st;
    sonde_ft_stitch_new(&cfg, &st, NULL);
    for (uint32_t i = 0; i < n; i++) {
      struct sonde_ft_iter *it;
      sonde_ft_iter_begin(st, i, i, &it);
      sonde_ft_iter_feed(it, 0, ph[i], cnt[i]);
      struct sonde_ft_iter_end_info e = {true, len};
      sonde_ft_iter_end(it, &e, NULL);
    }
    struct sonde_ft_trace *t;
    sonde_ft_stitch_finish(st, &t, NULL);
    double dt = now_s() - t0;
    if (dt < best)
      best = dt;
    if (r == 0) {
      const uint32_t *pcs = sonde_ft_trace_pcs(t);
      const uint8_t *sts = sonde_ft_trace_states(t);
      for (uint64_t c = 0; c < len; c++)
        wrong += truth[c] == SONDE_FT_SAMPLE_SLEEP ? sts[c] != SONDE_FT_SLEEP
                                                   : sts[c] != SONDE_FT_PC || pcs[c] != truth[c];
    }
    sonde_ft_trace_free(t);
    sonde_ft_stitch_free(st);
    /* floor: scatter the same samples into one array */
    t0 = now_s();
    uint32_t *out = malloc(len * sizeof *out);
    for (uint32_t i = 0; i < n; i++)
      for (size_t k = 0; k < cnt[i]; k++)
        out[k * n + i] = ph[i][k];
    dt = now_s() - t0;
    if (out[len / 2] == 0xdeadbeef)
      puts("");
    free(out);
    if (dt < best_floor)
      best_floor = dt;
  }
  printf("stitch  N=%-5u %9" PRIu64 " samples: %7.1f M samples/s (%.2f ms); floor (strided copy) "
         "%7.1f M/s; ratio %.2fx; wrong cells %" PRIu64 "\n",
         n, len, (double)len / best / 1e6, best * 1e3, (double)len / best_floor / 1e6,
         best / best_floor, wrong);
  for (uint32_t i = 0; i < n; i++)
    free(ph[i]);
  free(ph);
  free(cnt);
}

int main(int argc, char **argv)
{
  uint64_t len = argc > 1 ? strtoull(argv[1], NULL, 0) : 1000000;
  uint32_t *truth = make_truth(len);
  uint32_t ns[] = {128, 512, 5120};
  for (unsigned i = 0; i < 3; i++)
    bench_stitch(truth, len, ns[i], 5);
  free(truth);

  const char *tr = SONDE_TESTDATA "/frankentrace-cc2650/blink_if_see.pc_trace.csv.gz";
  const char *elf = SONDE_TESTDATA "/frankentrace-cc2650/blink_if_see.elf";
  struct sonde_ft_trace *t;
  struct sonde_diag d;
  double t0 = now_s();
  if (sonde_ft_read(tr, SONDE_FT_FORMAT_AUTO, 0, &t, &d)) {
    printf("real trace: %s\n", d.msg);
    return 0;
  }
  double dt = now_s() - t0;
  printf("read    real CSV (136,063 rows, gzip): %.1f ms, %.2f M rows/s\n", dt * 1e3,
         136063 / dt / 1e6);
  struct sonde_sym *sym;
  if (sonde_sym_open(elf, &sym, &d) == 0) {
    t0 = now_s();
    struct sonde_ft_check_result cr;
    sonde_ft_check(t, sym, 10, &cr, &d);
    dt = now_s() - t0;
    printf("check   real trace: %" PRIu64 " transitions in %.1f ms (%.2f M/s), %" PRIu64 " impossible\n",
           cr.transitions, dt * 1e3, (double)cr.transitions / dt / 1e6, cr.impossible);
    sonde_ft_check_result_free(&cr);
    t0 = now_s();
    struct sonde_ft_busy_config bc = {8, 3, 64, 16, sym};
    struct sonde_ft_busy_loop *l;
    size_t n;
    sonde_ft_find_busy_loops(t, &bc, &l, &n);
    dt = now_s() - t0;
    printf("busy    real trace: %zu loops in %.1f ms\n", n, dt * 1e3);
    free(l);
    sonde_sym_free(sym);
  }
  sonde_ft_trace_free(t);
  return 0;
}
