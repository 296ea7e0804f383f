/* Decoding a 64 KiB MTB buffer (8192 packets) with full instruction
 * rebuilding and symbols (issue 17 goal: under 50 ms). The buffer is real:
 * firmware/mtb/mtb_trace.c (image mtb_bench64) runs on a cm33 whose MTB is
 * 64 KiB and wraps it several times. Times the median of 7 runs of: packets,
 * rebuild, and function + file:line of every instruction and of both ends of
 * every branch (what `sonde mtb decode --instructions` looks up). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sonde/mtb.h"
#include "sonde/sym.h"
#include "sonde/vm.h"

static const char machine_txt[] =
    "machine cm33_mtb64\n"
    "core m33\n"
    "clock 64MHz\n"
    "nvic irqs=64 prio-bits=3\n"
    "memory flash 0x00000000 1M access=rx\n"
    "memory sram  0x20000000 256K access=rwx retain\n"
    "mtb 0x20040000 64K\n";

static double now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static int quiet(void *ctx, int stream, const void *data, size_t len)
{
  (void)ctx, (void)stream, (void)data, (void)len;
  return 0;
}

int main(void)
{
  const char *elf = SONDE_FIRMWARE_DIR "/mtb_bench64.elf";
  FILE *f = fopen(elf, "rb");
  if (!f) {
    fprintf(stderr, "bench_mtb: cannot open %s\n", elf);
    return 1;
  }
  static unsigned char img[1 << 20];
  size_t n = fread(img, 1, sizeof img, f);
  fclose(f);
  struct sonde_machine *m;
  struct sonde_vm *vm;
  struct sonde_vm_stop stop;
  if (sonde_machine_parse(machine_txt, sizeof machine_txt - 1, "cm33_mtb64", &m, NULL) != 0 ||
      sonde_vm_new(m, &vm) != 0 || sonde_vm_load_elf(vm, img, n, elf) != 0) {
    fprintf(stderr, "bench_mtb: cannot set up the VM\n");
    return 1;
  }
  sonde_vm_set_output(vm, quiet, NULL);
  sonde_vm_reset(vm);
  sonde_vm_run(vm, 100000000, &stop);
  uint32_t regs[4];
  sonde_vm_read_mem(vm, 0xE0043000u, regs, sizeof regs);
  uint32_t size = 16u << (regs[1] & 0x1F);
  unsigned char *buf = malloc(size);
  sonde_vm_read_mem(vm, regs[3], buf, size);
  struct sonde_mtb_raw raw = {buf, size, regs[3], regs[0], regs[1], true};

  double t_open[7], t_rebuild[7], t_all[7];
  size_t np = 0, ni = 0, nissues = 0;
  unsigned long sink = 0;
  for (int r = 0; r < 7; r++) {
    double t0 = now();
    struct sonde_sym *sym;
    if (sonde_sym_open(elf, &sym, NULL) != 0)
      return 1;
    double t1 = now();
    struct sonde_mtb_packet *p;
    struct sonde_mtb_history h;
    sonde_mtb_packets(&raw, &p, &np, NULL);
    sonde_mtb_rebuild(p, np, sym, NULL, &h, NULL);
    double t2 = now();
    for (size_t i = 0; i < h.n; i++) {
      uint32_t off;
      struct sonde_sym_line ln;
      const char *fn = sonde_sym_name(sym, h.ev[i].pc, &off);
      if (sonde_sym_line(sym, h.ev[i].pc, &ln) == 0)
        sink += ln.line;
      if (h.ev[i].kind != SONDE_MTB_INSN && !sonde_mtb_is_exc_return(h.ev[i].dst)) {
        fn = sonde_sym_name(sym, h.ev[i].dst, &off);
        if (sonde_sym_line(sym, h.ev[i].dst, &ln) == 0)
          sink += ln.line;
      }
      sink += fn ? (unsigned char)fn[0] : 0;
    }
    double t3 = now();
    ni = h.instructions;
    nissues = h.nissues;
    sonde_mtb_history_free(&h);
    free(p);
    sonde_sym_free(sym);
    t_open[r] = t1 - t0;
    t_rebuild[r] = t2 - t1;
    t_all[r] = t3 - t0;
  }
  qsort(t_open, 7, sizeof(double), cmp);
  qsort(t_rebuild, 7, sizeof(double), cmp);
  qsort(t_all, 7, sizeof(double), cmp);
  printf("MTB decode, %u-byte buffer (POSITION 0x%08x, wrapped %s): %zu packets, %zu "
         "instructions, %zu issues\n",
         size, regs[0], (regs[0] & 4) ? "yes" : "no", np, ni, nissues);
  printf("  open ELF            %8.2f ms (median of 7)\n", 1e3 * t_open[3]);
  printf("  packets + rebuild   %8.2f ms  (%.1f M instructions/s)\n", 1e3 * t_rebuild[3],
         (double)ni / t_rebuild[3] / 1e6);
  printf("  total with symbols  %8.2f ms  (goal < 50 ms: %s; symbols are %.1fx the rebuild)\n",
         1e3 * t_all[3], t_all[3] < 0.05 ? "met" : "NOT met",
         (t_all[3] - t_open[3] - t_rebuild[3]) / t_rebuild[3]);
  if (sink == 42)
    puts("");
  /* The dump, for timing the command on it (docs/benchmarks.md). */
  FILE *o = fopen("mtb_bench64.bin", "wb");
  if (o) {
    fwrite(buf, 1, size, o);
    fclose(o);
    printf("  wrote mtb_bench64.bin: sonde mtb decode -e %s --raw mtb_bench64.bin --position "
           "0x%x --master 0x%x\n",
           elf, regs[0], regs[1]);
  }
  free(buf);
  sonde_vm_free(vm);
  sonde_machine_free(m);
  return 0;
}
