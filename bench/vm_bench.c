/* VM throughput benchmark (issue 2, "Performance"): MIPS of the virtual
 * Cortex-M (cycle model on, no observation hooks) on a CPU-bound and an
 * interrupt-heavy firmware, and in the same run the same images on Unicorn
 * with a per-instruction UC_HOOK_CODE hook counting instructions — the way a
 * Unicorn-based emulator must run to keep a cycle count. Unicorn has no NVIC
 * or SysTick, so on it the interrupt-heavy image runs without its interrupts
 * (main's instruction stream only); its MIPS is still per executed
 * instruction. The VM runs with its block compiler (the default, "VM
 * MIPS"), without it ("interp": every instruction interpreted, as on a
 * non-x86-64 host or with --no-jit) and with a retire hook counting
 * instructions (its traced path, "hooked"); the three must agree on
 * instructions, cycles and exceptions.
 *
 * Then, when qemu-system-arm is on the PATH, whole processes against QEMU
 * (issue 20): `sonde run -m cm3 ELF` and `qemu-system-arm -M mps2-an385
 * -icount shift=0 -kernel ELF` (same memory map; QEMU counts instructions but
 * has no cycle model) on bench_long (~1.2 G instructions) and bench_cpu (50
 * times shorter). The long run is what a user sees; the difference of the two
 * takes out both programs' start-up and prints the speed of execution alone.
 * Figures only: timing never fails anything.
 *
 *   bench_vm [firmware-dir] [repeats]     (make bench; docs/benchmarks.md) */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>

#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <unicorn/unicorn.h>

#include "sonde/vm.h"

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint8_t *read_file(const char *path, size_t *len)
{
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *buf = malloc((size_t)n);
  *len = buf ? fread(buf, 1, (size_t)n, f) : 0;
  fclose(f);
  return buf;
}

static uint32_t rd32(const uint8_t *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }

struct result {
  uint64_t instructions, cycles, exceptions;
  double seconds;
};

static int discard(void *ctx, int stream, const void *data, size_t len)
{
  (void)ctx, (void)stream, (void)data, (void)len;
  return 0;
}

static void count_retire(void *ctx, uint32_t pc, uint64_t cycle, uint32_t cycles)
{
  (void)pc, (void)cycle, (void)cycles;
  ++*(uint64_t *)ctx;
}

/* `hooked`: with a retire hook counting instructions (the traced path that
 * `sonde run --trace-pc` uses), like Unicorn's per-instruction hook. */
static int run_vm(const uint8_t *elf, size_t len, const char *name, bool hooked, bool jit,
                  struct result *r)
{
  struct sonde_machine *m;
  struct sonde_vm *vm;
  if (sonde_machine_builtin("cm3", &m) || sonde_vm_new(m, &vm))
    return -1;
  sonde_vm_set_output(vm, discard, NULL);
  sonde_vm_set_jit(vm, jit);
  uint64_t retired = 0;
  if (hooked) {
    struct sonde_vm_hooks h = {.ctx = &retired, .retire = count_retire};
    sonde_vm_set_hooks(vm, &h);
  }
  if (sonde_vm_load_elf(vm, elf, len, name) || sonde_vm_reset(vm)) {
    fprintf(stderr, "bench_vm: %s\n", sonde_vm_error_detail(vm));
    return -1;
  }
  struct sonde_vm_stop stop;
  double t0 = now_s();
  int rc = sonde_vm_run(vm, 20000000000ull, &stop);
  r->seconds = now_s() - t0;
  struct sonde_vm_stats st;
  sonde_vm_get_stats(vm, &st);
  r->instructions = st.instructions;
  r->cycles = st.cycles;
  r->exceptions = st.exceptions;
  if (hooked && retired != st.instructions) {
    fprintf(stderr, "bench_vm: %s: retire hook saw %llu of %llu instructions\n", name,
            (unsigned long long)retired, (unsigned long long)st.instructions);
    rc = -1;
  }
  if (rc < 0 || stop.reason != SONDE_VM_STOP_EXIT || stop.exit_code != 0) {
    fprintf(stderr, "bench_vm: %s did not exit cleanly on the VM (stop %d, pc 0x%08x)\n", name,
            (int)stop.reason, stop.pc);
    rc = -1;
  }
  sonde_vm_free(vm);
  sonde_machine_free(m);
  return rc < 0 ? -1 : 0;
}

static void hook_code(uc_engine *uc, uint64_t addr, uint32_t size, void *user)
{
  (void)uc, (void)addr, (void)size;
  ++*(uint64_t *)user;
}

static void hook_intr(uc_engine *uc, uint32_t intno, void *user)
{
  (void)intno, (void)user;
  uc_emu_stop(uc); /* the semihosting BKPT 0xAB of SYS_EXIT: the end */
}

static int run_unicorn(const uint8_t *elf, size_t len, struct result *r)
{
  uc_engine *uc;
  if (uc_open(UC_ARCH_ARM, UC_MODE_THUMB | UC_MODE_MCLASS, &uc) != UC_ERR_OK)
    return -1;
  uc_ctl_set_cpu_model(uc, UC_CPU_ARM_CORTEX_M3);
  /* the cm3 memory map; the system control space and the demo peripherals as
   * plain memory so the images' register writes land somewhere */
  uc_mem_map(uc, 0x00000000, 512 * 1024, UC_PROT_ALL);
  uc_mem_map(uc, 0x20000000, 128 * 1024, UC_PROT_ALL);
  uc_mem_map(uc, 0x400F0000, 0x10000, UC_PROT_READ | UC_PROT_WRITE);
  uc_mem_map(uc, 0xE000E000, 0x1000, UC_PROT_READ | UC_PROT_WRITE);
  /* PT_LOAD segments at their physical addresses (validated by the VM run) */
  uint32_t phoff = rd32(elf + 28), phnum = elf[44] | elf[45] << 8, phentsize = elf[42] | elf[43] << 8;
  for (uint32_t i = 0; i < phnum; i++) {
    const uint8_t *ph = elf + phoff + i * phentsize;
    if ((uint64_t)phoff + (uint64_t)(i + 1) * phentsize > len)
      break;
    if (rd32(ph) != 1 || rd32(ph + 16) == 0 || (uint64_t)rd32(ph + 4) + rd32(ph + 16) > len)
      continue;
    uc_mem_write(uc, rd32(ph + 12), elf + rd32(ph + 4), rd32(ph + 16));
  }
  uint32_t vec[2];
  uc_mem_read(uc, 0, vec, sizeof vec);
  uc_reg_write(uc, UC_ARM_REG_SP, &vec[0]);
  uint64_t count = 0;
  uc_hook h1, h2;
  uc_hook_add(uc, &h1, UC_HOOK_CODE, (void *)hook_code, &count, 1, 0);
  uc_hook_add(uc, &h2, UC_HOOK_INTR, (void *)hook_intr, NULL, 1, 0);
  double t0 = now_s();
  uc_err e = uc_emu_start(uc, vec[1] | 1u, 0xFFFFFFFFu, 0, 0);
  r->seconds = now_s() - t0;
  r->instructions = count;
  uc_close(uc);
  if (e != UC_ERR_OK) {
    fprintf(stderr, "bench_vm: unicorn: %s\n", uc_strerror(e));
    return -1;
  }
  return 0;
}

extern char **environ;

/* One process to its end: wall-clock seconds and its CPU seconds (user +
 * system, from wait4), stdout and stderr to /dev/null. -1 when it could not
 * start or did not exit with 0. */
static int time_process(char *const argv[], double *wall, double *cpu)
{
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid;
  double t0 = now_s();
  int e = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (e != 0)
    return -1;
  int st;
  struct rusage ru;
  if (wait4(pid, &st, 0, &ru) != pid)
    return -1;
  *wall = now_s() - t0;
  *cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
         ru.ru_stime.tv_usec * 1e-6;
  return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static bool on_path(const char *prog)
{
  const char *path = getenv("PATH");
  char buf[4096];
  while (path && *path) {
    size_t n = strcspn(path, ":");
    snprintf(buf, sizeof buf, "%.*s/%s", (int)n, path, prog);
    if (access(buf, X_OK) == 0)
      return true;
    path += n + (path[n] == ':');
  }
  return false;
}

struct ptime {
  double wall, cpu;
};

/* Best of `repeats` (by CPU time) of `sonde run` and of QEMU on one image. */
static int time_both(const char *elf, int repeats, struct ptime *vm, struct ptime *qemu)
{
  char *const vm_argv[] = {SONDE_CLI, "run", "-m", "cm3", (char *)elf, NULL};
  char *const q_argv[] = {"qemu-system-arm", "-M", "mps2-an385", "-nographic", "-monitor", "none",
                          "-serial", "none", "-semihosting-config", "enable=on,target=native",
                          "-icount", "shift=0", "-kernel", (char *)elf, NULL};
  for (int i = 0; i < repeats; i++) {
    struct ptime a, b;
    if (time_process(vm_argv, &a.wall, &a.cpu) < 0) {
      fprintf(stderr, "bench_vm: %s run -m cm3 %s failed\n", SONDE_CLI, elf);
      return -1;
    }
    if (time_process(q_argv, &b.wall, &b.cpu) < 0) {
      fprintf(stderr, "bench_vm: qemu-system-arm on %s failed\n", elf);
      return -1;
    }
    if (i == 0 || a.cpu < vm->cpu)
      *vm = a;
    if (i == 0 || b.cpu < qemu->cpu)
      *qemu = b;
  }
  return 0;
}

/* `sonde run` against QEMU -icount shift=0, whole processes. */
static int bench_qemu(const char *dir, int repeats)
{
  if (!on_path("qemu-system-arm")) {
    printf("\nqemu-system-arm not on the PATH: no QEMU comparison (scripts/install-deps installs it)\n");
    return 0;
  }
  char long_elf[4096], short_elf[4096];
  snprintf(long_elf, sizeof long_elf, "%s/bench_long.elf", dir);
  snprintf(short_elf, sizeof short_elf, "%s/bench_cpu.elf", dir);
  struct ptime vl, ql, vs, qs;
  if (time_both(long_elf, repeats, &vl, &ql) < 0 || time_both(short_elf, repeats, &vs, &qs) < 0)
    return 1;
  printf("\nwhole processes, best of %d by CPU time: %s run -m cm3 ELF / qemu-system-arm -M "
         "mps2-an385 -icount shift=0\n",
         repeats, SONDE_CLI);
  printf("%-26s %10s %10s %10s %10s | %14s %14s\n", "firmware", "sonde s", "sonde cpu", "qemu s",
         "qemu cpu", "qemu/sonde wall", "qemu/sonde cpu");
  printf("%-26s %10.3f %10.3f %10.3f %10.3f | %13.2fx %13.2fx\n", "bench_long", vl.wall, vl.cpu,
         ql.wall, ql.cpu, ql.wall / vl.wall, ql.cpu / vl.cpu);
  printf("%-26s %10.3f %10.3f %10.3f %10.3f | %13.2fx %13.2fx\n", "bench_cpu", vs.wall, vs.cpu,
         qs.wall, qs.cpu, qs.wall / vs.wall, qs.cpu / vs.cpu);
  double dv = vl.cpu - vs.cpu, dq = ql.cpu - qs.cpu;
  printf("%-26s %10s %10.3f %10s %10.3f | %14s %13.2fx\n", "long - short (no start-up)", "", dv,
         "", dq, "", dv > 0 ? dq / dv : 0.0);
  return 0;
}

int main(int argc, char **argv)
{
  const char *dir = argc > 1 ? argv[1] : SONDE_FIRMWARE_DIR;
  int repeats = argc > 2 ? atoi(argv[2]) : 3;
  static const char *const images[] = {"bench_cpu", "bench_irq"};
  printf("%-10s %12s %12s %10s %8s %8s %8s | %12s %8s | %6s %6s %6s\n", "firmware",
         "instructions", "cycles", "exceptions", "VM MIPS", "interp", "hooked", "unicorn ins",
         "UC MIPS", "ratio", "interp", "hooked");
  int status = 0;
  for (unsigned k = 0; k < 2; k++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.elf", dir, images[k]);
    size_t len;
    uint8_t *elf = read_file(path, &len);
    if (!elf) {
      fprintf(stderr, "bench_vm: cannot read %s (build the firmware first)\n", path);
      return 1;
    }
    struct result vm = {0}, vmi = {0}, vmh = {0}, uc = {0}, t;
    for (int i = 0; i < repeats; i++) { /* best of N: the least disturbed run */
      if (run_vm(elf, len, path, false, true, &t) < 0) {
        status = 1;
        break;
      }
      if (i == 0 || t.seconds < vm.seconds)
        vm = t;
      if (run_vm(elf, len, path, false, false, &t) < 0) {
        status = 1;
        break;
      }
      if (i == 0 || t.seconds < vmi.seconds)
        vmi = t;
      if (run_vm(elf, len, path, true, true, &t) < 0) {
        status = 1;
        break;
      }
      if (i == 0 || t.seconds < vmh.seconds)
        vmh = t;
      if (run_unicorn(elf, len, &t) < 0) {
        status = 1;
        break;
      }
      if (i == 0 || t.seconds < uc.seconds)
        uc = t;
    }
    double vm_mips = vm.instructions / vm.seconds / 1e6, uc_mips = uc.instructions / uc.seconds / 1e6;
    double vmh_mips = vmh.instructions / vmh.seconds / 1e6;
    double vmi_mips = vmi.instructions / vmi.seconds / 1e6;
    printf("%-10s %12llu %12llu %10llu %8.1f %8.1f %8.1f | %12llu %8.1f | %5.1fx %5.1fx %5.1fx\n",
           images[k], (unsigned long long)vm.instructions, (unsigned long long)vm.cycles,
           (unsigned long long)vm.exceptions, vm_mips, vmi_mips, vmh_mips,
           (unsigned long long)uc.instructions, uc_mips, vm_mips / uc_mips, vmi_mips / uc_mips,
           vmh_mips / uc_mips);
    if (vm.instructions != vmi.instructions || vm.cycles != vmi.cycles ||
        vm.exceptions != vmi.exceptions || vm.instructions != vmh.instructions ||
        vm.cycles != vmh.cycles || vm.exceptions != vmh.exceptions) {
      fprintf(stderr, "bench_vm: %s: the three VM runs disagree\n", images[k]);
      status = 1;
    }
    free(elf);
  }
  if (status == 0)
    status = bench_qemu(dir, repeats);
  return status;
}
