/* End to end on the virtual Cortex-M, without the wire: for every phase i of
 * N, a fresh VM runs the firmware and is asked for the PC sample at cycles
 * k*N + i (sonde_vm_pc_at_cycle: what DWT PC sampling shows); the stitcher
 * gets those samples (phase 0 twice, as a redundant iteration) and the result
 * must equal the ground truth of `sonde run --trace-pc` (projected by
 * sonde_ft_project_dwt) on every cycle: nothing different, nothing
 * unrecoverable, no conflict, every cycle covered.
 *
 *   test_ft_vm <fw.elf> <ground-truth.pct> <N>...   (machine cm3) */
#include "check.h"
#include "sonde/frankentrace.h"
#include "sonde/vm.h"

static int quiet(void *ctx, int stream, const void *buf, size_t len)
{
  (void)ctx, (void)stream, (void)buf, (void)len;
  return 0;
}

static void *slurp(const char *path, size_t *len)
{
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  void *b = malloc((size_t)n);
  *len = fread(b, 1, (size_t)n, f);
  fclose(f);
  return b;
}

static struct sonde_machine *machine;
static void *elf;
static size_t elf_len;
static struct sonde_ft_trace *truth;

/* One iteration of phase `ph`: returns its samples through the stitcher. */
static void run_phase(struct sonde_ft_stitch *st, uint32_t n, uint32_t ph, uint32_t id)
{
  struct sonde_vm *vm = NULL;
  if (sonde_vm_new(machine, &vm) || sonde_vm_load_elf(vm, elf, elf_len, "fw")) {
    CHECK_FAIL_("cannot load the firmware");
    sonde_vm_free(vm);
    return;
  }
  sonde_vm_set_output(vm, quiet, NULL);
  sonde_vm_reset(vm);
  struct sonde_ft_iter *it;
  CHECK_EQ_I(sonde_ft_iter_begin(st, ph, id, &it), 0);
  uint32_t buf[256];
  size_t m = 0;
  uint64_t k0 = 0;
  /* Sample only the cycles the ground truth covers: a query that lands exactly
   * on the exit can run on past it (seen with N = 2 on demo.elf). */
  uint64_t len = sonde_ft_trace_length(truth);
  for (uint64_t k = 0; k * n + ph < len; k++) {
    struct sonde_pcsample s;
    struct sonde_vm_stop stop;
    int rc = sonde_vm_pc_at_cycle(vm, k * n + ph, &s, &stop);
    if (rc == SONDE_E_AGAIN && stop.reason == SONDE_VM_STOP_EXIT)
      break;
    if (rc != 0) {
      CHECK_FAIL_("pc_at_cycle(%llu): %d", (unsigned long long)(k * n + ph), rc);
      break;
    }
    buf[m++] = s.kind == SONDE_PCSAMPLE_PC      ? s.pc
               : s.kind == SONDE_PCSAMPLE_SLEEP ? SONDE_FT_SAMPLE_SLEEP
                                                : SONDE_FT_SAMPLE_LOST; /* no sample at all */
    if (m == 256) {
      CHECK_EQ_I(sonde_ft_iter_feed(it, k0, buf, m), 0);
      k0 += m;
      m = 0;
    }
  }
  CHECK_EQ_I(sonde_ft_iter_feed(it, k0, buf, m), 0);
  struct sonde_vm_stats vs;
  sonde_vm_get_stats(vm, &vs);
  /* The VM's cycle count after a pc_at_cycle that ran into the exit can lie up
   * to N-1 cycles past it (seen: 362000 for an exit at 361994), so the run
   * length is left to the samples. */
  (void)vs;
  struct sonde_ft_iter_end_info e = {true, 0};
  struct sonde_ft_iter_result r;
  CHECK_EQ_I(sonde_ft_iter_end(it, &e, &r), 0);
  CHECK_EQ_I(r.status, SONDE_FT_ITER_OK);
  CHECK_EQ_U(r.conflicts, 0);
  sonde_vm_free(vm);
}

static void check_n(uint32_t n)
{
  struct sonde_ft_stitch_config cfg = {n, 0, 0, 0};
  struct sonde_ft_stitch *st;
  CHECK_EQ_I(sonde_ft_stitch_new(&cfg, &st, NULL), 0);
  /* the preamble: the first 64 cycles of the ground truth, as samples */
  uint32_t pre[64];
  for (unsigned c = 0; c < 64; c++) {
    struct sonde_ft_cell x = sonde_ft_trace_at(truth, c);
    pre[c] = x.state == SONDE_FT_SLEEP ? SONDE_FT_SAMPLE_SLEEP : x.pc;
  }
  CHECK_EQ_I(sonde_ft_stitch_set_preamble(st, 0, pre, 64), 0);
  for (uint32_t ph = n; ph-- > 0;)
    run_phase(st, n, ph, ph);
  run_phase(st, n, 0, n); /* redundant */
  struct sonde_ft_trace *t;
  struct sonde_ft_report rep;
  CHECK_EQ_I(sonde_ft_stitch_finish(st, &t, &rep), 0);
  struct sonde_ft_verify_result v;
  CHECK_EQ_I(sonde_ft_verify(t, truth, &v), 0);
  printf("N=%u: %llu cycles, %llu samples, equal %llu, different %llu, unrecoverable %llu, "
         "missing %llu, extra %llu, conflicts %zu, preamble samples checked %llu\n",
         n, (unsigned long long)rep.length, (unsigned long long)rep.samples,
         (unsigned long long)v.equal, (unsigned long long)v.different,
         (unsigned long long)v.unrecoverable, (unsigned long long)v.missing,
         (unsigned long long)v.extra, rep.conflict_count, (unsigned long long)rep.preamble_checked);
  CHECK_EQ_U(v.different, 0);
  CHECK_EQ_U(v.unrecoverable, 0);
  CHECK_EQ_U(v.missing, 0);
  CHECK_EQ_U(v.extra, 0);
  CHECK_EQ_U(v.equal, sonde_ft_trace_length(truth));
  CHECK_EQ_U(rep.conflict_count, 0);
  for (size_t i = 0; i < rep.conflict_count; i++)
    printf("  conflict kind %d phase %u iterations %u/%u from cycle %llu, %llu cycles\n",
           rep.conflicts[i].kind, rep.conflicts[i].phase, rep.conflicts[i].iter_a,
           rep.conflicts[i].iter_b, (unsigned long long)rep.conflicts[i].first_cycle,
           (unsigned long long)rep.conflicts[i].cycles);
  CHECK_EQ_U(rep.phases_redundant, 1);
  CHECK_EQ_U(rep.preamble_checked, 64 + (n < 64 ? (64 + n - 1) / n : 1));
  sonde_ft_trace_free(t);
  sonde_ft_stitch_free(st);
}

int main(int argc, char **argv)
{
  if (argc < 4) {
    fprintf(stderr, "usage: test_ft_vm <fw.elf> <gt.pct> <N>...\n");
    return 2;
  }
  elf = slurp(argv[1], &elf_len);
  struct sonde_ft_trace *gt = NULL;
  struct sonde_diag d;
  if (!elf || sonde_machine_builtin("cm3", &machine) ||
      sonde_ft_read(argv[2], SONDE_FT_FORMAT_AUTO, 0, &gt, &d) ||
      sonde_ft_project_dwt(gt, &truth)) {
    fprintf(stderr, "cannot set up (%s)\n", argv[2]);
    return 1;
  }
  sonde_ft_trace_free(gt);
  for (int i = 3; i < argc; i++) {
    check_cur_name = argv[i];
    check_n((uint32_t)strtoul(argv[i], NULL, 0));
    if (check_cur_failed)
      check_failed++;
    else
      check_passed++;
    check_cur_failed = 0;
  }
  sonde_ft_trace_free(truth);
  sonde_machine_free(machine);
  free(elf);
  return check_summary();
}
