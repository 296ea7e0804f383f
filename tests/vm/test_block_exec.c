/* The block executor (run_block, block.c: what sonde_vm_run uses without
 * observation hooks) against the instruction-at-a-time executor (run_hooked:
 * what ground-truth traces use, forced here by a retire hook). The same
 * firmware runs both ways, stopped at the same pseudo-random cycle limits
 * (1 to 700 cycles apart, so limits fall inside blocks, just before and after
 * them, and between an exception's request and its entry); at every stop the
 * cycle and instruction counts, r0-r15 and xPSR must be equal. The machines
 * include flash and SRAM wait states, which the blocks' cycle bounds must
 * cover; machines with a memory system (cc2650, a VIMS on the cm3 map) run
 * the timing model's block variant, with its memo, against the hooked
 * executor stepping the model without it. Self-modifying code in SRAM (blocks dropped on code writes) is
 * test_vm_cpu's test_smc plus the firmware here that runs from SRAM. */
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sonde/vm.h"
#include "vm/machine.h"

#ifndef SONDE_FIRMWARE_DIR
#define SONDE_FIRMWARE_DIR SONDE_BINARY_DIR "/firmware"
#endif

#define DEMO_PERIPHERALS                                                               \
  "peripheral uart  0x400F0000 irq=0\n"                                                \
  "peripheral gpio  0x400F1000\n"                                                      \
  "peripheral timer 0x400F2000 irq=1\n"                                                \
  "peripheral delay 0x400F3000 irq=2\n"

/* Cortex-M3 with slow flash and a wait state on SRAM writes. */
static const char cm3_wait[] = "machine cm3-wait\n"
                               "core m3\n"
                               "clock 48MHz\n"
                               "nvic irqs=64 prio-bits=3\n"
                               "memory flash 0x00000000 512K access=rx wait=3\n"
                               "memory sram  0x20000000 128K access=rwx wait-write=1\n" DEMO_PERIPHERALS;

/* Cortex-M0+ (BL takes an extra cycle, no load/store pipelining). */
static const char cm0_wait[] = "machine cm0-wait\n"
                               "core m0plus\n"
                               "clock 48MHz\n"
                               "nvic irqs=32 prio-bits=2\n"
                               "memory flash 0x00000000 256K access=rx wait=1\n"
                               "memory sram  0x20000000 32K access=rwx\n" DEMO_PERIPHERALS;

/* The cm3 map with a memory system (docs/vm.md, "Memory-system timing"):
 * flash with wait states behind a line buffer, a VIMS-style cache, a slow
 * peripheral region; the timing model charges every instruction, inside
 * blocks too (run_block_tm, exec.c). */
static const char cm3_memsys[] = "machine vims-cm3\n"
                                 "core m3\n"
                                 "clock 48MHz\n"
                                 "nvic irqs=64 prio-bits=3\n"
                                 "memory flash 0x00000000 512K access=rx\n"
                                 "memory sram  0x20000000 128K access=rwx\n" DEMO_PERIPHERALS
                                 "memsys flash 0x00000000 512K wait=2 line=8\n"
                                 "memsys fetch depth=3\n"
                                 "memsys write-buffer 1\n"
                                 "memsys cache ctl=0x40034004 size=8K ways=4 line=8 tag=1 "
                                 "prefetch=1 mode=1\n"
                                 "memsys latency 0x400F0000 0x10000 read=3 write=2\n";

static void on_retire(void *ctx, uint32_t pc, uint64_t cycle, uint32_t cycles)
{
  (void)pc;
  (void)cycle;
  (void)cycles;
  ++*(uint64_t *)ctx;
}

static int discard(void *ctx, int stream, const void *data, size_t len)
{
  (void)ctx;
  (void)stream;
  (void)data;
  (void)len;
  return 0;
}

struct snap {
  uint64_t cycles, instructions;
  uint32_t r[17];
  int reason;
};

/* The hooked run of a memory-system machine steps the timing model for
 * every instruction, without its memo (tm_memo.c), so that the block run
 * (with it) is checked against the model itself. */
static bool memsys_memo_off;

static struct sonde_vm *make(const char *machine_text, const char *builtin, const void *elf,
                             size_t len, struct sonde_machine **m, bool memo_off)
{
  struct sonde_vm *vm = NULL;
  int rc = builtin ? sonde_machine_builtin(builtin, m)
                   : sonde_machine_parse(machine_text, strlen(machine_text), "test", m, NULL);
  if (!rc)
    (*m)->tm.memo_off = memo_off;
  if (rc || sonde_vm_new(*m, &vm) || sonde_vm_load_elf(vm, elf, len, "fw")) {
    CHECK_FAIL_("cannot set up the VM");
    sonde_vm_free(vm);
    return NULL;
  }
  sonde_vm_set_output(vm, discard, NULL);
  sonde_vm_reset(vm);
  return vm;
}

/* With a memory system, an IT folded onto the instruction before it
 * retires without a cycle and without a report to the retire hook. */
static bool memsys_folds_it;

/* Run `fw` to `total` cycles in steps, recording a snapshot per stop. */
static size_t run_steps(const char *fw, const char *machine_text, const char *builtin,
                        bool hooked, uint64_t total, struct snap *out, size_t max)
{
  char path[512];
  snprintf(path, sizeof path, "%s/%s.elf", SONDE_FIRMWARE_DIR, fw);
  FILE *f = fopen(path, "rb");
  if (!f) {
    CHECK_FAIL_("missing firmware %s (build the 'firmware' target)", path);
    return 0;
  }
  static unsigned char buf[1 << 20];
  size_t len = fread(buf, 1, sizeof buf, f);
  fclose(f);
  struct sonde_machine *m = NULL;
  struct sonde_vm *vm = make(machine_text, builtin, buf, len, &m, hooked && memsys_memo_off);
  if (!vm) {
    sonde_machine_free(m);
    return 0;
  }
  uint64_t retired = 0;
  if (hooked) {
    struct sonde_vm_hooks h = {.ctx = &retired, .retire = on_retire};
    sonde_vm_set_hooks(vm, &h);
  }
  uint32_t seed = 12345;
  uint64_t limit = 0;
  size_t n = 0;
  while (n < max) {
    seed = seed * 1103515245u + 12345u;
    limit += 1 + (seed >> 16) % 700;
    if (limit > total)
      limit = total;
    struct sonde_vm_stop stop;
    if (sonde_vm_run(vm, limit, &stop)) {
      CHECK_FAIL_("%s: sonde_vm_run failed", fw);
      break;
    }
    struct sonde_vm_stats st;
    sonde_vm_get_stats(vm, &st);
    struct snap *s = &out[n++];
    s->cycles = st.cycles;
    s->instructions = st.instructions;
    s->reason = (int)stop.reason;
    for (unsigned r = 0; r < 17; r++)
      sonde_vm_read_reg(vm, r, &s->r[r]); /* r0-r15, then xPSR */
    if (stop.reason != SONDE_VM_STOP_CYCLE_LIMIT || limit == total)
      break;
  }
  if (hooked && !memsys_folds_it)
    CHECK_EQ_U(retired, out[n - 1].instructions);
  else if (hooked) /* a folded IT takes no cycle and is not reported (docs/vm.md) */
    CHECK(retired > 0 && retired <= out[n - 1].instructions);
  sonde_vm_free(vm);
  sonde_machine_free(m);
  return n;
}

static void compare(const char *fw, const char *machine_text, const char *builtin,
                    uint64_t total)
{
  enum { MAX = 20000 };
  static struct snap a[MAX], b[MAX];
  size_t na = run_steps(fw, machine_text, builtin, false, total, a, MAX);
  size_t nb = run_steps(fw, machine_text, builtin, true, total, b, MAX);
  CHECK_EQ_U(na, nb);
  size_t bad = 0;
  for (size_t i = 0; i < na && i < nb && bad < 3; i++) {
    bool same = a[i].cycles == b[i].cycles && a[i].instructions == b[i].instructions &&
                a[i].reason == b[i].reason && !memcmp(a[i].r, b[i].r, sizeof a[i].r);
    if (!same) {
      bad++;
      CHECK_FAIL_("%s on %s, stop %zu: block executor at cycle %llu, %llu instructions, pc "
                  "%08x; one at a time at cycle %llu, %llu instructions, pc %08x",
                  fw, builtin ? builtin : "(wait states)", i, (unsigned long long)a[i].cycles,
                  (unsigned long long)a[i].instructions, a[i].r[15],
                  (unsigned long long)b[i].cycles, (unsigned long long)b[i].instructions,
                  b[i].r[15]);
    }
  }
  CHECK(na > 1); /* it really stopped many times */
}

static void test_builtin_machines(void)
{
  compare("bench_irq", NULL, "cm3", 400000);
  compare("demo", NULL, "cm3", 2000000);
  compare("exc_nesting_m3", NULL, "cm3", 2000000);
  compare("exc_latearrival_m3", NULL, "cm3", 2000000);
  compare("exc_svc_pendsv_m3", NULL, "cm3", 2000000);
  compare("exc_faults_m3", NULL, "cm3", 2000000);
  compare("exc_stklim_insn_m33", NULL, "cm33", 2000000);
  compare("fw_printf_m4f_O2", NULL, "cm4f", 1000000);
  compare("exc_lazyfp_m4f", NULL, "cm4f", 2000000);
  compare("fw_sort_m0plus_O2", NULL, "cm0plus", 1000000);
  compare("exc_nesting_m0plus", NULL, "cm0plus", 2000000);
  /* handlers returning by POP {..., pc} with EXC_RETURN, thousands of times
   * (the block executor's ldm handler takes the return itself) */
  compare("ft_lsu_bench", NULL, "cm3", 1000000);
}

static void test_wait_states(void)
{
  compare("bench_irq", cm3_wait, NULL, 400000);
  compare("bench_cpu", cm3_wait, NULL, 400000);
  compare("exc_systick_m3", cm3_wait, NULL, 2000000);
  compare("fw_crc32_m0plus_O2", cm0_wait, NULL, 1000000);
  compare("exc_systick_m0plus", cm0_wait, NULL, 2000000);
}

/* Machines with a memory system: the block executor's timing-model variant
 * (run_block_tm) against the hooked executor, both charged by the model. */
static void test_memsys_machines(void)
{
  memsys_folds_it = true;
  memsys_memo_off = true;
  compare("dbg_bench_off", NULL, "cc2650", 2000000);
  compare("dbg_printf", NULL, "cc2650", 2000000);
  compare("dbg_excdt", NULL, "cc2650", 2000000);
  compare("dbg_pc1003", NULL, "cc2650", 1000000);
  compare("dbg_gts", NULL, "cc2650", 1000000);
  compare("bench_irq", cm3_memsys, NULL, 400000);
  compare("bench_cpu", cm3_memsys, NULL, 400000);
  compare("exc_systick_m3", cm3_memsys, NULL, 2000000);
  compare("exc_nesting_m3", cm3_memsys, NULL, 2000000);
  compare("demo", cm3_memsys, NULL, 2000000);
  /* code larger than the cache: runs whose lines were evicted must not
   * replay (tm_memo.c) */
  compare("fw_printf_m3_O2", cm3_memsys, NULL, 2000000);
  compare("fw_float_m0plus_O0", cm3_memsys, NULL, 2000000);
  compare("qemu_fw_printf_m0plus", NULL, "cc2650", 2000000);
  memsys_folds_it = false;
  memsys_memo_off = false;
}

/* A loop in SRAM that branches to itself, so its block is linked to itself;
 * a debugger write into it must drop the block and its link. */
static void test_code_written_between_runs(void)
{
  struct sonde_machine *m = NULL;
  struct sonde_vm *vm = NULL;
  REQUIRE(sonde_machine_builtin("cm3", &m) == 0);
  REQUIRE(sonde_vm_new(m, &vm) == 0);
  sonde_vm_set_output(vm, discard, NULL);
  sonde_vm_reset(vm);
  /* movs r0, #1 ; adds r3, r3, r0 ; b .-4 */
  static const uint16_t loop[] = {0x2001, 0x181b, 0xe7fc};
  const uint32_t base = 0x20000000;
  CHECK_EQ_I(sonde_vm_write_mem(vm, base, loop, sizeof loop), 0);
  CHECK_EQ_I(sonde_vm_write_reg(vm, SONDE_VM_REG_PC, base), 0);
  CHECK_EQ_I(sonde_vm_write_reg(vm, SONDE_VM_REG_XPSR, 1u << 24), 0);
  CHECK_EQ_I(sonde_vm_write_reg(vm, 3, 0), 0);
  struct sonde_vm_stop stop;
  struct sonde_vm_stats st;
  sonde_vm_get_stats(vm, &st);
  CHECK_EQ_I(sonde_vm_run(vm, st.cycles + 1000, &stop), 0);
  uint32_t r0 = 0, r3 = 0, r3_before = 0;
  sonde_vm_read_reg(vm, 0, &r0);
  sonde_vm_read_reg(vm, 3, &r3_before);
  CHECK_EQ_U(r0, 1);
  CHECK(r3_before > 100);
  static const uint16_t movs7 = 0x2007; /* movs r0, #7 */
  CHECK_EQ_I(sonde_vm_write_mem(vm, base, &movs7, sizeof movs7), 0);
  CHECK_EQ_I(sonde_vm_write_reg(vm, SONDE_VM_REG_PC, base), 0);
  sonde_vm_get_stats(vm, &st);
  CHECK_EQ_I(sonde_vm_run(vm, st.cycles + 1000, &stop), 0);
  sonde_vm_read_reg(vm, 0, &r0);
  sonde_vm_read_reg(vm, 3, &r3);
  CHECK_EQ_U(r0, 7);
  CHECK(r3 > r3_before + 7 * 100);
  CHECK_EQ_U((r3 - r3_before) % 7, 0);
  sonde_vm_free(vm);
  sonde_machine_free(m);
}

int main(void)
{
  RUN(test_builtin_machines);
  RUN(test_wait_states);
  RUN(test_memsys_machines);
  RUN(test_code_written_between_runs);
  return check_summary();
}
