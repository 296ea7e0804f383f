/* FrankenTrace on the VM (issue 15 "Performance"): a verified trace of a
 * 1,000,000-cycle program (firmware/ft/ft_work.c) at N = 512 —
 * `sonde frankentrace run --probe -N 512 --verify` at --jobs 1 and 2 — against
 * the floor measured in the same run: N plain in-process runs of the same
 * program (new VM, load, reset, run to exit; no trace blocks). Prints the
 * times and the ratios; never fails on time. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "sonde/vm.h"

static double now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
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
  if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
    free(b);
    b = NULL;
  }
  fclose(f);
  *len = (size_t)n;
  return b;
}

int main(void)
{
  const char *elf = SONDE_FIRMWARE_DIR "/ft_work.elf";
  const unsigned n = 512;
  size_t len;
  void *img = slurp(elf, &len);
  struct sonde_machine *m;
  if (!img || sonde_machine_builtin("cm3", &m) < 0) {
    fprintf(stderr, "bench_ft_run: cannot load %s\n", elf);
    return 1;
  }
  double t0 = now();
  uint64_t cycles = 0;
  for (unsigned i = 0; i < n; i++) {
    struct sonde_vm *vm;
    struct sonde_vm_stop stop;
    struct sonde_vm_stats st;
    if (sonde_vm_new(m, &vm) < 0 || sonde_vm_load_elf(vm, img, len, elf) < 0 || sonde_vm_reset(vm) < 0)
      return 1;
    sonde_vm_set_output(vm, NULL, NULL);
    sonde_vm_run(vm, UINT64_MAX, &stop);
    sonde_vm_get_stats(vm, &st);
    cycles = st.cycles;
    sonde_vm_free(vm);
  }
  double floor_s = now() - t0;
  printf("floor: %u plain runs of %llu cycles: %.3f s\n", n, (unsigned long long)cycles, floor_s);
  double t[3] = {0};
  for (int j = 1; j <= 2; j++) {
    char cmd[512];
    snprintf(cmd, sizeof cmd,
             "%s frankentrace run --probe -e %s -N %u --jobs %d --verify -o /dev/null", SONDE_BIN, elf,
             n, j);
    double s = now();
    int rc = system(cmd);
    t[j] = now() - s;
    printf("frankentrace run --jobs %d (runs, decode, stitch, verify incl. its ground-truth run): "
           "%.3f s (exit %d)\n", j, t[j], rc);
  }
  printf("ratio --jobs 1 / floor: %.2fx (goal <= 1.5x); --jobs 2: %.3f s (goal < 5 s)\n", t[1] / floor_s,
         t[2]);
  sonde_machine_free(m);
  free(img);
  return 0;
}
