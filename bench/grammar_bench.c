/* Benchmark of src/grammar (issue 6): symbols per second for Sequitur,
 * ReSequitur and Cyclitur, peak memory, and the compressed size next to
 * gzip -9, xz -9 and zstd -19 of the same symbol stream, all in one run, on
 * (1) a synthetic cyclic firmware trace of >= 10 M symbols and (2) the real
 * FrankenTrace CC2650 trace from tests/data.
 *
 *   bench_grammar [symbols]        (default 12000000)
 *
 * Each algorithm runs in a forked child so its peak RSS (wait4) is its own;
 * the "input only" row is a child that only touches the input, to subtract.
 * Timing never decides anything; figures go to docs/benchmarks.md. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sonde/grammar.h"

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t rs = 0x853c49e6748fea9bull;
static uint32_t rnd(void)
{
  rs ^= rs << 13;
  rs ^= rs >> 7;
  rs ^= rs << 17;
  return (uint32_t)(rs >> 16);
}

/* A cyclic "firmware": main loop at 0x1000 reads a sensor (a function), polls
 * a peripheral ready flag a variable number of times, takes one of a few
 * branches (mostly the same), sometimes calls a logger, sometimes an ISR
 * interrupts. PCs advance by 2 or 4 like Thumb code. */
static void emit_fn(uint32_t **w, uint32_t base, int len)
{
  uint32_t pc = base;
  for (int k = 0; k < len; k++) {
    *(*w)++ = pc;
    pc += (k % 3 == 1) ? 4 : 2;
  }
}

static size_t synth(uint32_t *w0, size_t n)
{
  uint32_t *w = w0, *end = w0 + n - 2000;
  while (w < end) {
    emit_fn(&w, 0x1000, 12);                    /* loop header + body start */
    emit_fn(&w, 0x2000, 40);                    /* read_sensor() */
    int polls = 2 + (int)(rnd() % 4 == 0 ? rnd() % 6 : 1);
    for (int p = 0; p < polls; p++)         /* while (!(REG & READY)) */
      emit_fn(&w, 0x1030, 3);
    uint32_t r = rnd() % 100;
    if (r < 80)
      emit_fn(&w, 0x1040, 25); /* common branch */
    else if (r < 95)
      emit_fn(&w, 0x1080, 30);
    else
      emit_fn(&w, 0x10c0, 18);
    if (rnd() % 10 == 0)
      emit_fn(&w, 0x3000, 120); /* log_value() */
    if (rnd() % 50 == 0) {      /* an interrupt somewhere in the cycle */
      emit_fn(&w, 0x4000, 35);
    }
    emit_fn(&w, 0x10f0, 6); /* back branch to 0x1000 */
  }
  return (size_t)(w - w0);
}

static double cpu_s(void)
{
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
         (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

/* The same program driven by time instead of chance: a 1 kHz tick decides
 * the branches (a counter), the logger runs every 16th cycle, a timer ISR
 * every 37 cycles, the busy-wait lasts 2 or 3 polls depending on the phase. */
static size_t synth_periodic(uint32_t *w0, size_t n)
{
  uint32_t *w = w0, *end = w0 + n - 2000;
  for (uint32_t it = 0; w < end; it++) {
    emit_fn(&w, 0x1000, 12);
    emit_fn(&w, 0x2000, 40);
    int polls = 2 + (it % 3 == 0);
    for (int p = 0; p < polls; p++)
      emit_fn(&w, 0x1030, 3);
    if (it % 10 < 8)
      emit_fn(&w, 0x1040, 25);
    else if (it % 10 == 8)
      emit_fn(&w, 0x1080, 30);
    else
      emit_fn(&w, 0x10c0, 18);
    if (it % 16 == 0)
      emit_fn(&w, 0x3000, 120);
    if (it % 37 == 0)
      emit_fn(&w, 0x4000, 35);
    emit_fn(&w, 0x10f0, 6);
  }
  return (size_t)(w - w0);
}

struct result {
  double secs, cpu;
  uint64_t size, rules, bytes, cycles;
  int ok;
};

static void run_child(int algo, const uint32_t *w, size_t n, uint32_t lh, int fd)
{
  struct result r = {0};
  if (algo < 0) { /* input only: touch it */
    volatile uint32_t s = 0;
    for (size_t i = 0; i < n; i += 1024)
      s += w[i];
    (void)s;
    r.ok = 1;
  } else {
    struct sonde_grammar *g = sonde_grammar_new((enum sonde_grammar_algo)algo);
    if (algo == SONDE_GRAMMAR_CYCLITUR)
      sonde_grammar_set_loop_header(g, lh);
    double t0 = now_s(), c0 = cpu_s();
    int rc = sonde_grammar_feed(g, w, n);
    if (!rc)
      rc = sonde_grammar_finish(g);
    r.secs = now_s() - t0;
    r.cpu = cpu_s() - c0;
    if (!rc) {
      r.size = sonde_grammar_size(g);
      r.rules = sonde_grammar_rule_count(g);
      uint8_t *b;
      size_t len;
      sonde_grammar_serialize(g, &b, &len);
      r.bytes = len;
      free(b);
      if (algo == SONDE_GRAMMAR_CYCLITUR) {
        struct sonde_grammar_cycle *c;
        size_t nc;
        sonde_grammar_cycles(g, &c, &nc, &r.cycles);
        free(c);
      }
      r.ok = 1;
    }
    sonde_grammar_free(g);
  }
  if (write(fd, &r, sizeof r) != (ssize_t)sizeof r)
    _exit(1);
  _exit(0);
}

static int measure(int algo, const uint32_t *w, size_t n, uint32_t lh, struct result *r,
                   long *maxrss_kb)
{
  int p[2];
  if (pipe(p))
    return -1;
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    close(p[0]);
    run_child(algo, w, n, lh, p[1]);
  }
  close(p[1]);
  ssize_t got = read(p[0], r, sizeof *r);
  close(p[0]);
  int st;
  struct rusage ru;
  wait4(pid, &st, 0, &ru);
  *maxrss_kb = ru.ru_maxrss;
  return got == (ssize_t)sizeof *r && r->ok ? 0 : -1;
}

static long tool_size(const char *cmd, const char *file, double *secs)
{
  char buf[1024];
  snprintf(buf, sizeof buf, "%s < '%s' | wc -c", cmd, file);
  double t0 = now_s();
  FILE *p = popen(buf, "r");
  long v = -1;
  if (p) {
    if (fscanf(p, "%ld", &v) != 1)
      v = -1;
    pclose(p);
  }
  *secs = now_s() - t0;
  return v;
}

static void bench(const char *title, const uint32_t *w, size_t n, uint32_t lh)
{
  printf("\n== %s: %zu symbols, loop header 0x%x ==\n", title, n, lh);
  uint32_t auto_lh;
  if (!sonde_grammar_find_loop_header(w, n, 0, UINT32_MAX, 0x1000, &auto_lh))
    printf("auto loop header (no ELF): 0x%x\n", auto_lh);
  static const char *const names[] = {"sequitur", "resequitur", "cyclitur"};
  struct result in, res[3];
  long rss_in, rss[3];
  measure(-1, w, n, lh, &in, &rss_in);
  printf("%-12s %8s %8s %12s %9s %8s %11s %9s %9s\n", "algorithm", "wall s", "CPU s",
         "Msym/s (CPU)", "Size(G)", "rules", "Comp(G)", "file B", "RSS MiB");
  printf("%-12s %8s %8s %12s %9s %8s %11s %9s %9.1f\n", "(input only)", "", "", "", "", "", "", "",
         rss_in / 1024.0);
  for (int a = 0; a < 3; a++) {
    if (measure(a, w, n, lh, &res[a], &rss[a])) {
      printf("%-12s failed\n", names[a]);
      continue;
    }
    printf("%-12s %8.3f %8.3f %12.2f %9" PRIu64 " %8" PRIu64 " %11.3e %9" PRIu64 " %9.1f\n",
           names[a], res[a].secs, res[a].cpu, (double)n / res[a].cpu / 1e6, res[a].size,
           res[a].rules, (double)res[a].size / (double)n, res[a].bytes, rss[a] / 1024.0);
  }
  printf("cyclitur: %" PRIu64 " cycles; Size(G) %.1f%% smaller than sequitur's, %.1f%% than "
         "resequitur's\n",
         res[2].cycles, 100.0 * (1.0 - (double)res[2].size / (double)res[0].size),
         100.0 * (1.0 - (double)res[2].size / (double)res[1].size));
  /* the same symbol stream, little-endian 32-bit, through the general compressors */
  char file[] = "/tmp/sonde_grammar_benchXXXXXX";
  int fd = mkstemp(file);
  if (fd < 0)
    return;
  size_t off = 0;
  while (off < n * 4) {
    ssize_t k = write(fd, (const char *)w + off, n * 4 - off);
    if (k <= 0)
      break;
    off += (size_t)k;
  }
  close(fd);
  printf("raw stream %zu bytes; binary grammar files: sequitur %" PRIu64 ", resequitur %" PRIu64
         ", cyclitur %" PRIu64 "\n",
         n * 4, res[0].bytes, res[1].bytes, res[2].bytes);
  static const char *const tools[][2] = {
      {"gzip -9", "gzip -9 -c"}, {"xz -9", "xz -9 -c -T1"}, {"zstd -19", "zstd -19 -c -q -T1"}};
  for (int t = 0; t < 3; t++) {
    double secs;
    long sz = tool_size(tools[t][1], file, &secs);
    printf("%-9s %10ld bytes (%.2f s, %.1f Msymbols/s); cyclitur file is %.2fx its size\n",
           tools[t][0], sz, secs, (double)n / secs / 1e6, sz > 0 ? (double)res[2].bytes / (double)sz : 0);
  }
  unlink(file);
}

int main(int argc, char **argv)
{
  size_t n = argc > 1 ? (size_t)strtoull(argv[1], NULL, 0) : 12000000;
  uint32_t *w = malloc(n * sizeof *w);
  if (!w)
    return 1;
  size_t n1 = synth(w, n);
  bench("synthetic cyclic firmware trace, random branches", w, n1, 0x1000);
  size_t n2 = synth_periodic(w, n);
  bench("synthetic cyclic firmware trace, time-driven branches", w, n2, 0x1000);
  /* Worst case for every grammar: no structure at all (64 random symbols). */
  size_t n3 = n / 6;
  for (size_t i = 0; i < n3; i++)
    w[i] = rnd() % 64;
  bench("random symbols (worst case), 64-symbol alphabet", w, n3, 7);
  free(w);
  const char *real = SONDE_TESTDATA "/frankentrace-cc2650/blink_if_see.pc_trace.csv.gz";
  struct sonde_grammar_input *in;
  struct sonde_diag d;
  if (sonde_grammar_input_load(real, NULL, &in, &d)) {
    fprintf(stderr, "%s\n", d.msg);
    return 1;
  }
  size_t rn;
  const uint32_t *rw = sonde_grammar_input_symbols(in, &rn);
  bench("real CC2650 trace (blink_if_see, FrankenTrace)", rw, rn, 0x319c);
  sonde_grammar_input_free(in);
  return 0;
}
