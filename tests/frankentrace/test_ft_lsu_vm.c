/* LSU ordering and alignment against the VM's ground truth: the transfers of
 * `sonde run --trace-lsu` are split into their 64 KiB ranges; for every pair
 * of ranges a "run" keeps only the transfers of those two (what two DWT
 * comparators see) with timestamps made useless (invasive delays); the total
 * order rebuilt from all pairs must be the ground truth's order, transfer for
 * transfer. Then each transfer, aligned by PC to the DWT view of the PC trace,
 * must land on the execution of its instruction that holds its true cycle.
 *
 *   test_ft_lsu_vm <gt.pct> <gt.lsu.csv> <fw.elf> */
#include "check.h"
#include "sonde/frankentrace.h"
#include "sonde/sym.h"

#define MAXR 16

int main(int argc, char **argv)
{
  if (argc != 4) {
    fprintf(stderr, "usage: test_ft_lsu_vm <gt.pct> <gt.lsu.csv> <fw.elf>\n");
    return 2;
  }
  struct sonde_diag d;
  struct sonde_ft_trace *gt = NULL, *pc = NULL;
  struct sonde_ft_xfer *x = NULL;
  size_t n = 0;
  if (sonde_ft_read(argv[1], SONDE_FT_FORMAT_AUTO, 0, &gt, &d) || sonde_ft_project_dwt(gt, &pc) ||
      sonde_ft_lsu_read(argv[2], &x, &n, &d)) {
    fprintf(stderr, "cannot read: %s\n", d.msg);
    return 1;
  }
  struct sonde_sym *sym = NULL;
  if (sonde_sym_open(argv[3], &sym, &d)) {
    fprintf(stderr, "cannot read: %s\n", d.msg);
    return 1;
  }
  check_cur_name = "lsu_vm";
  /* ranges: the distinct addr >> 16 in order of first use */
  uint32_t base[MAXR];
  unsigned nr = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned r;
    for (r = 0; r < nr && base[r] != x[i].addr >> 16; r++)
      ;
    if (r == nr) {
      if (nr == MAXR) {
        fprintf(stderr, "more than %d ranges\n", MAXR);
        return 1;
      }
      base[nr++] = x[i].addr >> 16;
    }
    x[i].range = r;
  }
  printf("%zu transfers in %u ranges\n", n, nr);
  CHECK(nr >= 4);
  struct sonde_ft_lsu_order *o;
  CHECK_EQ_I(sonde_ft_lsu_order_new(nr, &o), 0);
  struct sonde_ft_xfer *run = malloc(n * sizeof *run);
  uint32_t id = 0;
  for (unsigned a = 0; a < nr; a++)
    for (unsigned b = a + 1; b < nr; b++) {
      size_t m = 0;
      for (size_t i = 0; i < n; i++)
        if (x[i].range == a || x[i].range == b) {
          run[m] = x[i];
          run[m].ts = 1000000 * (uint64_t)id + 1000 * m; /* delays: not comparable */
          run[m].cycle = UINT64_MAX;
          m++;
        }
      CHECK_EQ_I(sonde_ft_lsu_order_add_run(o, id++, a, b, run, m), 0);
    }
  struct sonde_ft_xfer *out;
  size_t cnt;
  CHECK_EQ_I(sonde_ft_lsu_order_finish(o, &out, &cnt), 0);
  CHECK_EQ_U(cnt, n);
  size_t wrong = 0;
  for (size_t i = 0; i < cnt && i < n; i++)
    wrong += out[i].addr != x[i].addr || out[i].pc != x[i].pc || out[i].value != x[i].value ||
             out[i].write != x[i].write;
  CHECK_EQ_U(wrong, 0);
  /* alignment by PC (invasive mode) */
  int64_t unplaced = sonde_ft_lsu_align(pc, sym, out, cnt, false);
  CHECK_EQ_I(unplaced, 0);
  size_t misplaced = 0;
  for (size_t i = 0; i < cnt && i < n; i++) {
    uint64_t c = out[i].cycle, t = x[i].cycle; /* x[i].cycle: the true cycle */
    bool ok = c != UINT64_MAX && c <= t;
    for (uint64_t k = c; ok && k <= t; k++) {
      struct sonde_ft_cell cell = sonde_ft_trace_at(pc, k);
      ok = cell.state == SONDE_FT_PC && cell.pc == out[i].pc;
    }
    if (!ok && misplaced++ < 5)
      printf("  transfer %zu (pc 0x%08x addr 0x%08x): aligned to %llu, true cycle %llu\n", i,
             out[i].pc, out[i].addr, (unsigned long long)c, (unsigned long long)t);
  }
  printf("ordered %zu transfers from %u pair runs: %zu out of order; aligned: %lld unplaced, "
         "%zu not on the execution holding their cycle\n",
         cnt, id, wrong, (long long)unplaced, misplaced);
  CHECK_EQ_U(misplaced, 0);
  /* noninvasive mode: the timestamps are the true cycles */
  for (size_t i = 0; i < cnt && i < n; i++)
    out[i].ts = x[i].cycle;
  CHECK_EQ_I(sonde_ft_lsu_align(pc, sym, out, cnt, true), 0);
  sonde_sym_free(sym);
  free(out);
  free(run);
  free(x);
  sonde_ft_lsu_order_free(o);
  sonde_ft_trace_free(pc);
  sonde_ft_trace_free(gt);
  if (check_cur_failed)
    check_failed++;
  else
    check_passed++;
  return check_summary();
}
