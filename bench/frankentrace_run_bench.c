/* bench_frankentrace_run: FrankenTrace on the VM end to end (all N runs with
 * PC sampling over SWO, ITM decoding, stitching, and the ground-truth run with
 * the comparison) against its floor, N plain runs of the same image without
 * any trace block, measured in the same process. Prints figures and ratios;
 * never fails on time (it fails only if the trace is not verified).
 *   bench_frankentrace_run <fw.elf> [N] [machine]   (default N 512, cm3) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sonde/frankentrace_vm.h"
#include "sonde/vm.h"

static double now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int quiet(void *ctx, int stream, const void *buf, size_t len)
{
  (void)ctx, (void)stream, (void)buf, (void)len;
  return 0;
}

int main(int argc, char **argv)
{
  if (argc < 2) {
    fprintf(stderr, "usage: bench_frankentrace_run <fw.elf> [N] [machine]\n");
    return 2;
  }
  uint32_t n = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 0) : 512;
  struct sonde_machine *m;
  if (sonde_machine_builtin(argc > 3 ? argv[3] : "cm3", &m))
    return 2;
  FILE *f = fopen(argv[1], "rb");
  if (!f)
    return 2;
  fseek(f, 0, SEEK_END);
  size_t len = (size_t)ftell(f);
  rewind(f);
  void *elf = malloc(len);
  if (!elf || fread(elf, 1, len, f) != len)
    return 2;
  fclose(f);

  /* the floor: N plain runs, a fresh VM each */
  double t0 = now();
  uint64_t cycles = 0;
  for (uint32_t i = 0; i < n + 1; i++) {
    struct sonde_vm *vm;
    struct sonde_vm_stop stop;
    if (sonde_vm_new(m, &vm) || sonde_vm_load_elf(vm, elf, len, "fw"))
      return 2;
    sonde_vm_set_output(vm, quiet, NULL);
    sonde_vm_reset(vm);
    sonde_vm_run(vm, UINT64_MAX, &stop);
    struct sonde_vm_stats st;
    sonde_vm_get_stats(vm, &st);
    cycles = st.cycles;
    sonde_vm_free(vm);
  }
  double plain = now() - t0;
  printf("%s: %llu cycles per run, N = %u (%u runs with the redundant one)\n", argv[1],
         (unsigned long long)cycles, n, n + 1);
  printf("  %u plain runs (the floor):               %7.3f s\n", n + 1, plain);

  int bad = 0;
  double tj1 = 0;
  for (unsigned jobs = 1; jobs <= 2; jobs++) {
    for (int verify = 0; verify <= 1; verify++) {
      struct sonde_ft_vm_config cfg = {.machine = m, .elf = elf, .elf_len = len,
                                       .elf_name = argv[1], .n = n,
                                       .baud = sonde_machine_clock_hz(m), .repeat = 1,
                                       .jobs = jobs, .ground_truth = verify};
      struct sonde_ft_trace *t = NULL, *gt = NULL;
      struct sonde_ft_report rep;
      struct sonde_ft_vm_stats st;
      struct sonde_diag d = {{0}};
      t0 = now();
      int rc = sonde_ft_vm_run(&cfg, &t, verify ? &gt : NULL, &rep, &st, NULL, &d);
      struct sonde_ft_verify_result v = {0};
      if (!rc && verify)
        rc = sonde_ft_verify(t, gt, &v);
      double s = now() - t0;
      if (rc) {
        fprintf(stderr, "bench_frankentrace_run: %s\n", d.msg);
        return 1;
      }
      if (verify && (v.different || v.equal + 1 != cycles))
        bad = 1;
      if (jobs == 1 && !verify)
        tj1 = s;
      printf("  frankentrace --jobs %u%s %7.3f s  (%.2fx the floor; %.2f M samples/s end to end%s)\n",
             jobs, verify ? " with --verify:" : ":              ", s, s / plain,
             (double)(st.pc_packets + st.sleep_packets) / s / 1e6,
             verify ? (v.different ? ", NOT VERIFIED" : ", verified") : "");
      sonde_ft_trace_free(t);
      sonde_ft_trace_free(gt);
    }
  }
  printf("  --jobs 1 / floor: %.2f (goal <= 1.5)\n", tj1 / plain);
  free(elf);
  sonde_machine_free(m);
  return bad;
}
