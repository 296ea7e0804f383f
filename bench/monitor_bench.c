/* PC polling on the VM link (src/monitor, docs/benchmarks.md "Monitor"):
 * polls per second of host time at several poll periods on mon_bench
 * (227 M cycles), against the same firmware run with no observer in the same
 * process (the VM's fast path: what polling costs), plus the function-table
 * lookup alone. Prints figures; never fails on time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sonde/monitor.h"
#include "sonde/vm.h"

#define ELF SONDE_FIRMWARE_DIR "/mon_bench.elf"

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int quiet(void *ctx, int stream, const void *data, size_t len)
{
  (void)ctx, (void)stream, (void)data, (void)len;
  return 0;
}

static struct sonde_vm *load(const struct sonde_machine *m, const void *img, size_t len)
{
  struct sonde_vm *vm = NULL;
  if (sonde_vm_new(m, &vm) || sonde_vm_load_elf(vm, img, len, ELF) || sonde_vm_reset(vm))
    exit(1);
  sonde_vm_set_output(vm, quiet, NULL);
  return vm;
}

int main(void)
{
  FILE *f = fopen(ELF, "rb");
  if (!f) {
    fprintf(stderr, "bench_monitor: %s missing (build the firmware)\n", ELF);
    return 1;
  }
  fseek(f, 0, SEEK_END);
  size_t len = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  void *img = malloc(len);
  if (fread(img, 1, len, f) != len)
    return 1;
  fclose(f);
  struct sonde_machine *m = NULL;
  sonde_machine_builtin("cm3", &m);
  struct sonde_sym *sym = NULL;
  struct sonde_mon_ftab *ft = NULL;
  if (sonde_sym_open(ELF, &sym, NULL) || sonde_mon_ftab_from_sym(sym, &ft))
    return 1;

  struct sonde_vm *vm = load(m, img, len);
  struct sonde_vm_stop s;
  double t0 = now_s();
  sonde_vm_run(vm, UINT64_MAX, &s);
  double base = now_s() - t0;
  struct sonde_vm_stats st;
  sonde_vm_get_stats(vm, &st);
  sonde_vm_free(vm);
  printf("mon_bench: %llu cycles; unobserved run %.3f s (%.1f M cycles/s)\n",
         (unsigned long long)st.cycles, base, st.cycles / base / 1e6);
  printf("%-8s %-8s %12s %10s %12s %9s %8s\n", "every", "path", "polls", "changes",
         "M polls/s", "host s", "x run");
  static const uint64_t every[] = {1, 4, 16, 64, 256, 1024, 4096};
  for (unsigned i = 0; i < sizeof every / sizeof every[0]; i++) {
    /* the retire hook, and (sparse periods) the VM's PC at cycle T */
    for (int sparse = 0; sparse < 2; sparse++) {
      if (sparse && every[i] < 16)
        continue;
      vm = load(m, img, len);
      struct sonde_mon_link *l = NULL;
      sonde_mon_link_vm(vm, &l);
      struct sonde_mon_pc_opts o = {.every_cycles = every[i], .hooked = !sparse};
      struct sonde_mon_pc_result r;
      if (sparse && every[i] < SONDE_MON_SPARSE_CYCLES) {
        /* below the library's switch-over: measure the sparse path anyway */
        o.hooked = false;
      }
      sonde_mon_pc_poll(l, ft, &o, &r);
      printf("%-8llu %-8s %12llu %10zu %12.1f %9.3f %8.2f\n", (unsigned long long)every[i],
             sparse ? "pc_at" : "hook", (unsigned long long)r.polls, r.nchanges,
             r.polls_per_host_s / 1e6, r.host_ns / 1e9, r.host_ns / 1e9 / base);
      sonde_mon_pc_result_free(&r);
      sonde_mon_link_free(l);
      sonde_vm_free(vm);
    }
  }
  /* the lookup alone: pcs spread over the code */
  uint32_t lo = sonde_mon_ftab_at(ft, 0)->start;
  uint32_t hi = sonde_mon_ftab_at(ft, sonde_mon_ftab_count(ft) - 1)->end;
  volatile long sink = 0;
  uint64_t n = 20000000;
  t0 = now_s();
  for (uint64_t k = 0; k < n; k++)
    sink += sonde_mon_ftab_lookup(ft, lo + (uint32_t)((k * 2654435761u) % (hi - lo)));
  double tl = now_s() - t0;
  printf("ftab lookup (%zu functions): %.1f M lookups/s (checksum %ld)\n",
         sonde_mon_ftab_count(ft), n / tl / 1e6, (long)sink);
  sonde_mon_ftab_free(ft);
  sonde_sym_free(sym);
  sonde_machine_free(m);
  free(img);
  return 0;
}
