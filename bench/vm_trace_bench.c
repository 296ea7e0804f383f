/* Cost of the debug and trace blocks on the VM (issue 3, "Performance"):
 * the same workload with PC sampling every 128 cycles, exception trace and
 * the MTB all on, and with none of them (firmware/dbg.cmake,
 * dbg_bench_all_{on,off}, cm33); then each part alone (MTB: mtb_bench_*,
 * cm33; PC sampling + exception trace: dbg_bench_*, cc2650). Runs alternate
 * off/on so both see the same machine load; the best of N runs of each is
 * compared. The SWO bytes go nowhere (no callback), as in `sonde run`
 * without --swo. Then sonde_vm_pc_at_cycle() polling every C cycles
 * against a plain run. Figures only: timing never fails anything.
 *
 *   bench_vm_trace [firmware-dir] [repeats]     (docs/benchmarks.md) */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "sonde/vm.h"

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static unsigned char *read_file(const char *path, size_t *len)
{
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *buf = n > 0 ? malloc((size_t)n) : NULL;
  *len = buf ? fread(buf, 1, (size_t)n, f) : 0;
  fclose(f);
  return buf;
}

static int discard(void *ctx, int stream, const void *data, size_t len)
{
  (void)ctx, (void)stream, (void)data, (void)len;
  return 0;
}

/* One run to the firmware's exit; MIPS, or a negative value on failure. */
static double run_once(const char *machine, const unsigned char *elf, size_t len,
                       const char *name, unsigned long long *insns)
{
  struct sonde_machine *m;
  struct sonde_vm *vm;
  if (sonde_machine_builtin(machine, &m) || sonde_vm_new(m, &vm))
    return -1;
  sonde_vm_set_output(vm, discard, NULL);
  double mips = -1;
  if (sonde_vm_load_elf(vm, elf, len, name) == 0 && sonde_vm_reset(vm) == 0) {
    struct sonde_vm_stop stop;
    double t0 = now_s();
    int rc = sonde_vm_run(vm, 20000000000ull, &stop);
    double dt = now_s() - t0;
    struct sonde_vm_stats st;
    sonde_vm_get_stats(vm, &st);
    *insns = st.instructions;
    if (rc == 0 && stop.reason == SONDE_VM_STOP_EXIT && stop.exit_code == 0 && dt > 0)
      mips = (double)st.instructions / dt / 1e6;
    else
      fprintf(stderr, "bench_vm_trace: %s did not exit cleanly (stop %d, pc 0x%08x)\n", name,
              (int)stop.reason, stop.pc);
  } else {
    fprintf(stderr, "bench_vm_trace: %s: %s\n", name, sonde_vm_error_detail(vm));
  }
  sonde_vm_free(vm);
  sonde_machine_free(m);
  return mips;
}

/* sonde_vm_pc_at_cycle() polling every C cycles (a debugger reading
 * DWT_PCSR periodically, the monitor's use) against one plain run of the
 * same cycles: bench_cpu on cm3, 20 M cycles. */
static double poll_once(const unsigned char *elf, size_t len, uint64_t every, uint64_t *polls)
{
  struct sonde_machine *m;
  struct sonde_vm *vm;
  if (sonde_machine_builtin("cm3", &m) || sonde_vm_new(m, &vm))
    return -1;
  sonde_vm_set_output(vm, discard, NULL);
  double mips = -1;
  const uint64_t end = 20000000;
  if (sonde_vm_load_elf(vm, elf, len, "bench_cpu") == 0 && sonde_vm_reset(vm) == 0) {
    struct sonde_vm_stop stop;
    struct sonde_pcsample s;
    uint64_t sum = 0, n = 0;
    double t0 = now_s();
    int rc = 0;
    if (!every) {
      rc = sonde_vm_run(vm, end, &stop);
    } else {
      for (uint64_t t = every; t < end && rc == 0; t += every, n++) {
        rc = sonde_vm_pc_at_cycle(vm, t, &s, &stop);
        sum += s.pc;
      }
    }
    double dt = now_s() - t0;
    struct sonde_vm_stats st;
    sonde_vm_get_stats(vm, &st);
    *polls = n + (sum & 0); /* sum keeps the loop honest */
    if (rc == 0 && dt > 0)
      mips = (double)st.instructions / dt / 1e6;
  }
  sonde_vm_free(vm);
  sonde_machine_free(m);
  return mips;
}

static int bench_pc_at(const char *dir, int repeats)
{
  char path[4096];
  snprintf(path, sizeof path, "%s/bench_cpu.elf", dir);
  size_t len;
  unsigned char *elf = read_file(path, &len);
  if (!elf) {
    fprintf(stderr, "bench_vm_trace: cannot read %s (build the firmware first)\n", path);
    return 1;
  }
  static const uint64_t every[] = {0, 100000, 10000, 1000, 100};
  double best[5] = {0};
  uint64_t polls[5] = {0};
  for (int i = 0; i < repeats; i++)
    for (unsigned k = 0; k < 5; k++) {
      double mips = poll_once(elf, len, every[k], &polls[k]);
      if (mips < 0) {
        free(elf);
        return 1;
      }
      if (mips > best[k])
        best[k] = mips;
    }
  printf("\n%-36s %9s %9s %8s\n", "sonde_vm_pc_at_cycle (bench_cpu, cm3)", "polls", "MIPS",
         "/plain");
  for (unsigned k = 0; k < 5; k++) {
    char what[64];
    if (every[k])
      snprintf(what, sizeof what, "every %llu cycles", (unsigned long long)every[k]);
    else
      snprintf(what, sizeof what, "plain run (no polling)");
    printf("%-36s %9llu %9.1f %8.2f\n", what, (unsigned long long)polls[k], best[k],
           best[k] / best[0]);
  }
  free(elf);
  return 0;
}

int main(int argc, char **argv)
{
  const char *dir = argc > 1 ? argv[1] : SONDE_FIRMWARE_DIR;
  int repeats = argc > 2 ? atoi(argv[2]) : 5;
  if (repeats < 1)
    repeats = 1;
  static const struct {
    const char *what, *machine, *image;
  } pairs[] = {
      {"PC sampling + exception trace + MTB", "cm33", "dbg_bench_all"},
      {"MTB alone", "cm33", "mtb_bench"},
      {"PC sampling + exception trace alone", "cc2650", "dbg_bench"},
  };
  printf("%-36s %-7s %13s %9s %9s %8s\n", "trace blocks", "machine", "instructions", "off MIPS",
         "on MIPS", "on/off");
  int status = 0;
  for (unsigned k = 0; k < sizeof pairs / sizeof pairs[0]; k++) {
    unsigned char *elf[2];
    size_t len[2];
    char path[2][4096];
    for (int on = 0; on < 2; on++) {
      snprintf(path[on], sizeof path[on], "%s/%s_%s.elf", dir, pairs[k].image, on ? "on" : "off");
      elf[on] = read_file(path[on], &len[on]);
      if (!elf[on]) {
        fprintf(stderr, "bench_vm_trace: cannot read %s (build the firmware first)\n", path[on]);
        return 1;
      }
    }
    double best[2] = {0, 0};
    unsigned long long insns[2] = {0, 0};
    for (int i = 0; i < repeats && status == 0; i++)
      for (int on = 0; on < 2; on++) {
        double mips = run_once(pairs[k].machine, elf[on], len[on], path[on], &insns[on]);
        if (mips < 0)
          status = 1;
        else if (mips > best[on])
          best[on] = mips;
      }
    if (status == 0)
      printf("%-36s %-7s %13llu %9.1f %9.1f %8.2f\n", pairs[k].what, pairs[k].machine, insns[1],
             best[0], best[1], best[1] / best[0]);
    free(elf[0]);
    free(elf[1]);
  }
  if (status == 0)
    status = bench_pc_at(dir, repeats);
  return status;
}
