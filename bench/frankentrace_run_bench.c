/* bench_frankentrace_run: FrankenTrace on the VM end to end (all N runs with
 * PC sampling over SWO, ITM decoding, stitching, and the ground-truth run with
 * the comparison) against its floor, N plain runs of the same image without
 * any trace block, measured in the same process. Prints figures and ratios;
 * never fails on time (it fails only if the trace is not verified).
 *   bench_frankentrace_run <fw.elf> [N] [machine] [--interpreted]
 *   (default N 512, cm3; --interpreted: skip the compiled modes)
 * Runner images (target/cortexm/frankentrace linked in): the plan run one VM
 * through every SYSRESETREQ and one preloaded VM per iteration, compiled and
 * interpreted, against a plain run of the same chained image (no capture,
 * no host work: the floor), verified against the ground truth.
 *   bench_frankentrace_run --runner <runner.elf> [machine] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sonde/frankentrace_vm.h"
#include "sonde/sym.h"
#include "sonde/vm.h"

static double now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU seconds of the whole process (all threads): on a shared, loaded host
 * the wall clock of a single-threaded phase stretches with the others' load,
 * its CPU time much less, so --jobs 1 against the floor is also given in CPU
 * time. */
static double cpu(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int quiet(void *ctx, int stream, const void *buf, size_t len)
{
  (void)ctx, (void)stream, (void)buf, (void)len;
  return 0;
}

static void *read_file(const char *path, size_t *len)
{
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  *len = (size_t)ftell(f);
  rewind(f);
  void *b = malloc(*len);
  if (b && fread(b, 1, *len, f) != *len) {
    free(b);
    b = NULL;
  }
  fclose(f);
  return b;
}

static int bench_runner(const char *path, const char *machine)
{
  struct sonde_machine *m;
  struct sonde_sym *sym = NULL;
  size_t len;
  void *elf = read_file(path, &len);
  if (!elf || sonde_machine_builtin(machine, &m) || sonde_sym_open(path, &sym, NULL))
    return 2;
  /* the floor: the chained image once, no capture, no host work */
  double t0 = now();
  struct sonde_vm *vm;
  struct sonde_vm_stop stop;
  struct sonde_vm_stats vs;
  if (sonde_vm_new(m, &vm) || sonde_vm_load_elf(vm, elf, len, "fw"))
    return 2;
  sonde_vm_set_output(vm, quiet, NULL);
  sonde_vm_reset(vm);
  sonde_vm_run(vm, UINT64_MAX, &stop);
  sonde_vm_get_stats(vm, &vs);
  sonde_vm_free(vm);
  double plain = now() - t0;
  t0 = now();
  if (sonde_vm_new(m, &vm) || sonde_vm_load_elf(vm, elf, len, "fw"))
    return 2;
  sonde_vm_set_output(vm, quiet, NULL);
  sonde_vm_set_jit(vm, false);
  sonde_vm_reset(vm);
  sonde_vm_run(vm, UINT64_MAX, &stop);
  sonde_vm_free(vm);
  double plain_i = now() - t0;
  printf("%s (runner image): %llu cycles for the whole chained plan\n", path,
         (unsigned long long)vs.cycles);
  printf("  the plain chained run (the floor):      compiled %7.3f s, interpreted %7.3f s\n", plain,
         plain_i);
  int bad = 0;
  static const struct {
    unsigned jobs;
    bool preload, no_jit;
    const char *what;
  } modes[] = {
      {1, false, false, "--jobs 1 (chained), compiled:   "},
      {1, false, true, "--jobs 1 (chained), interpreted:"},
      {1, true, false, "--preload --jobs 1, compiled:   "},
      {1, true, true, "--preload --jobs 1, interpreted:"},
      {2, true, false, "--jobs 2 (preloaded), compiled: "},
      {2, true, true, "--jobs 2 (preloaded), interp.:  "},
  };
  for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
    struct sonde_ft_vm_runner_config cfg = {.machine = m, .elf = elf, .elf_len = len,
                                            .elf_name = path, .sym = sym, .jobs = modes[i].jobs,
                                            .preload = modes[i].preload,
                                            .no_jit = modes[i].no_jit, .ground_truth = true};
    struct sonde_ft_trace *t = NULL, *gt = NULL;
    struct sonde_ft_runner *r = NULL;
    struct sonde_ft_runner_summary sum;
    struct sonde_ft_vm_runner_stats st;
    struct sonde_diag d = {{0}};
    t0 = now();
    int rc = sonde_ft_vm_runner_run(&cfg, &t, &gt, &sum, &st, &r, &d);
    uint32_t pre;
    uint64_t off;
    struct sonde_ft_verify_result v = {0};
    if (!rc)
      rc = sonde_sym_address(sym, "ft_preamble", &pre, NULL);
    if (!rc)
      rc = sonde_ft_runner_verify(t, gt, pre, &off, &v, &d);
    double sec = now() - t0;
    if (rc) {
      fprintf(stderr, "bench_frankentrace_run: %s\n", d.msg);
      return 1;
    }
    if (v.different || !sum.ok || v.equal != sonde_ft_trace_length(t))
      bad = 1;
    printf("  frankentrace %s %7.3f s  (%.2fx the compiled floor, %.2fx the interpreted; %u "
           "iterations, %u VMs, %llu of %llu cycles %s)\n",
           modes[i].what, sec, sec / plain, sec / plain_i, st.plan, st.vms,
           (unsigned long long)v.equal, (unsigned long long)sonde_ft_trace_length(t),
           v.different ? "NOT VERIFIED" : "verified");
    sonde_ft_trace_free(t);
    sonde_ft_trace_free(gt);
    sonde_ft_runner_free(r);
  }
  sonde_sym_free(sym);
  free(elf);
  sonde_machine_free(m);
  return bad;
}

int main(int argc, char **argv)
{
  if (argc >= 3 && strcmp(argv[1], "--runner") == 0)
    return bench_runner(argv[2], argc > 3 ? argv[3] : "cm3");
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

  bool interp_only = argc > 4 && strcmp(argv[4], "--interpreted") == 0;
  /* the floor: N plain runs, a fresh VM each, compiled and interpreted */
  double plain_x[2] = {0, 0}; /* [0] compiled, [1] interpreted */
  double plain_cpu = 0;       /* interpreted, CPU seconds */
  uint64_t cycles = 0;
  for (int interp = interp_only; interp <= 1; interp++) {
    double t0 = now(), c0 = cpu();
    for (uint32_t i = 0; i < n + 1; i++) {
      struct sonde_vm *vm;
      struct sonde_vm_stop stop;
      if (sonde_vm_new(m, &vm) || sonde_vm_load_elf(vm, elf, len, "fw"))
        return 2;
      sonde_vm_set_output(vm, quiet, NULL);
      if (interp)
        sonde_vm_set_jit(vm, false);
      sonde_vm_reset(vm);
      sonde_vm_run(vm, UINT64_MAX, &stop);
      struct sonde_vm_stats st;
      sonde_vm_get_stats(vm, &st);
      cycles = st.cycles;
      sonde_vm_free(vm);
    }
    plain_x[interp] = now() - t0;
    if (interp)
      plain_cpu = cpu() - c0;
  }
  double plain = interp_only || plain_x[1] < plain_x[0] ? plain_x[1] : plain_x[0];
  printf("%s: %llu cycles per run, N = %u (%u runs with the redundant one)\n", argv[1],
         (unsigned long long)cycles, n, n + 1);
  printf("  %u plain runs (the floor): compiled %7.3f s, interpreted %7.3f s (%.3f s CPU)\n",
         n + 1, plain_x[0], plain_x[1], plain_cpu);

  int bad = 0;
  double tj1 = 0;
  static const struct {
    unsigned jobs;
    int verify, interp;
  } modes[] = {{1, 0, 1}, {1, 1, 1}, {2, 0, 1}, {2, 1, 1}, {1, 0, 0}, {2, 0, 0}};
  double tj1_cpu = 0;
  for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
    if (interp_only && !modes[i].interp)
      continue;
    unsigned jobs = modes[i].jobs;
    int verify = modes[i].verify;
    struct sonde_ft_vm_config cfg = {.machine = m, .elf = elf, .elf_len = len,
                                     .elf_name = argv[1], .n = n,
                                     .baud = sonde_machine_clock_hz(m), .repeat = 1,
                                     .jobs = jobs, .ground_truth = verify,
                                     .no_jit = modes[i].interp};
    struct sonde_ft_trace *t = NULL, *gt = NULL;
    struct sonde_ft_report rep;
    struct sonde_ft_vm_stats st;
    struct sonde_diag d = {{0}};
    double t0 = now(), c0 = cpu();
    int rc = sonde_ft_vm_run(&cfg, &t, verify ? &gt : NULL, &rep, &st, NULL, &d);
    struct sonde_ft_verify_result v = {0};
    if (!rc && verify)
      rc = sonde_ft_verify(t, gt, &v);
    double sec = now() - t0, csec = cpu() - c0;
    if (rc) {
      fprintf(stderr, "bench_frankentrace_run: %s\n", d.msg);
      return 1;
    }
    if (verify && (v.different || v.equal + 1 != cycles))
      bad = 1;
    if (jobs == 1 && !verify && modes[i].interp) {
      tj1 = sec;
      tj1_cpu = csec;
    }
    printf("  frankentrace --jobs %u, %s%s %7.3f s, %.3f s CPU  (%.2fx the faster floor; %.2f M "
           "samples/s end to end%s)\n",
           jobs, modes[i].interp ? "interpreted" : "compiled:  ",
           verify ? ", --verify:" : ":          ", sec, csec, sec / plain,
           (double)(st.pc_packets + st.sleep_packets) / sec / 1e6,
           verify ? (v.different ? ", NOT VERIFIED" : ", verified") : "");
    sonde_ft_trace_free(t);
    sonde_ft_trace_free(gt);
  }
  printf("  --jobs 1 (interpreted, the default) / the faster floor: %.2f (goal <= 1.5); in CPU "
         "time against the interpreted floor: %.3f s / %.3f s = %.2f\n",
         tj1 / plain, tj1_cpu, plain_cpu, tj1_cpu / plain_cpu);
  free(elf);
  sonde_machine_free(m);
  return bad;
}
