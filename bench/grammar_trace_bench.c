/* Grammar compression throughput on a real trace file (issue 20: every
 * algorithm >= 20 M symbols/s on VM PC traces): loads the trace once (any
 * format `sonde grammar` reads, e.g. a `sonde run --trace-pc` file), then
 * compresses it with Sequitur, ReSequitur and Cyclitur (loop header found as
 * `sonde grammar --loop-header auto` does without symbols), each 3 times, and
 * prints Size(G) and M symbols/s of thread CPU time (best of 3), so a loaded
 * machine does not count other processes' time. Timing never decides
 * anything; figures go to docs/benchmarks.md.
 *
 *   bench_grammar_trace TRACE [reps [algo]]   (algo: one of the three only) */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sonde/grammar.h"

static double cpu_s(void)
{
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
  if (argc < 2) {
    fprintf(stderr, "usage: bench_grammar_trace TRACE [reps [algo]]\n");
    return 2;
  }
  int reps = argc > 2 ? atoi(argv[2]) : 3;
  if (reps < 1)
    reps = 1;
  static const char *names[] = {"sequitur", "resequitur", "cyclitur"};
  if (argc > 3 && strcmp(argv[3], names[0]) && strcmp(argv[3], names[1]) &&
      strcmp(argv[3], names[2])) {
    fprintf(stderr, "bench_grammar_trace: unknown algorithm '%s' (sequitur, resequitur, cyclitur)\n",
            argv[3]);
    return 2;
  }
  struct sonde_grammar_input *in;
  struct sonde_diag d;
  if (sonde_grammar_input_load(argv[1], NULL, &in, &d)) {
    fprintf(stderr, "bench_grammar_trace: %s\n", d.msg);
    return 1;
  }
  size_t n;
  const uint32_t *w = sonde_grammar_input_symbols(in, &n);
  uint32_t lh = 0;
  int have_lh = sonde_grammar_find_loop_header(w, n, 0, UINT32_MAX, 0x1000, &lh) == 0;
  printf("trace: %s, %zu symbols, loop header %s0x%x\n", argv[1], n, have_lh ? "" : "(none) ",
         lh);
  static const enum sonde_grammar_algo algos[] = {SONDE_GRAMMAR_SEQUITUR, SONDE_GRAMMAR_RESEQUITUR,
                                                  SONDE_GRAMMAR_CYCLITUR};
  for (int a = 0; a < 3; a++) {
    if (argc > 3 && strcmp(argv[3], names[a]))
      continue;
    double best = 1e30;
    uint64_t size = 0;
    for (int r = 0; r < reps; r++) {
      double t0 = cpu_s();
      struct sonde_grammar *g = sonde_grammar_new(algos[a]);
      if (!g)
        return 1;
      if (algos[a] == SONDE_GRAMMAR_CYCLITUR && have_lh)
        sonde_grammar_set_loop_header(g, lh);
      if (sonde_grammar_feed(g, w, n) || sonde_grammar_finish(g)) {
        fprintf(stderr, "bench_grammar_trace: %s failed\n", names[a]);
        return 1;
      }
      double dt = cpu_s() - t0;
      size = sonde_grammar_size(g);
      sonde_grammar_free(g);
      if (dt < best)
        best = dt;
    }
    printf("%-10s Size(G) %10" PRIu64 "  %7.3f s CPU  %6.2f M symbols/s\n", names[a], size, best,
           (double)n / best / 1e6);
  }
  sonde_grammar_input_free(in);
  return 0;
}
