/* The exception path's quiet way (exception.c: service_quiet, entry_quiet,
 * pop_basic; issue 20) against its general way. A stacking hook, which
 * never changes the simulated timing, sends every exception entry and
 * return through the general path (exception_entry with push_stack,
 * pop_stack); without it the common ones take the quiet way. The same
 * firmware runs both ways, stopped at the same pseudo-random cycle limits
 * (1 to 700 cycles apart, so limits fall between an interrupt's request and
 * its entry and inside handlers); at every stop the cycle, instruction and
 * exception counts, every core register (r0-r15, xPSR, MSP, PSP, PRIMASK,
 * BASEPRI, FAULTMASK, CONTROL) and the whole SRAM (the stacked frames) must
 * be equal. Run with the block compiler and with --no-jit's interpreter. */
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sonde/vm.h"

#ifndef SONDE_FIRMWARE_DIR
#define SONDE_FIRMWARE_DIR SONDE_BINARY_DIR "/firmware"
#endif

#define SRAM_BASE 0x20000000u
#define SRAM_BYTES 0x8000u /* what the firmwares here use, on every machine below */
#define NREGS 23           /* r0-r15, xPSR, MSP, PSP, PRIMASK, BASEPRI, FAULTMASK, CONTROL */

/* Words stacked ([1]) and unstacked ([0]). */
static void on_stacking(void *ctx, uint64_t cycle, uint32_t pc, uint32_t addr, uint32_t value,
                        bool write)
{
  (void)cycle;
  (void)pc;
  (void)addr;
  (void)value;
  ++((uint64_t *)ctx)[write];
}

/* Cortex-M3 with slow flash (the vector fetch) and a wait state on SRAM
 * writes (the stacking). */
static const char cm3_wait[] = "machine cm3-wait\n"
                               "core m3\n"
                               "clock 48MHz\n"
                               "nvic irqs=64 prio-bits=3\n"
                               "memory flash 0x00000000 512K access=rx wait=3\n"
                               "memory sram  0x20000000 128K access=rwx wait=1 wait-write=2\n"
                               "peripheral uart  0x400F0000 irq=0\n"
                               "peripheral timer 0x400F2000 irq=1\n"
                               "peripheral delay 0x400F3000 irq=2\n";

static int discard(void *ctx, int stream, const void *data, size_t len)
{
  (void)ctx;
  (void)stream;
  (void)data;
  (void)len;
  return 0;
}

struct snap {
  uint64_t cycles, instructions, exceptions;
  uint32_t r[NREGS];
  int reason, exit_code;
  uint32_t sram_hash;
};

static uint32_t fnv1a(const uint8_t *p, size_t n)
{
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; i++)
    h = (h ^ p[i]) * 16777619u;
  return h;
}

/* Run `fw` on `machine` to `total` cycles in steps, a snapshot per stop;
 * `general`: with the stacking hook. Returns the number of stops; the
 * stacked words the hook saw in *stacked. */
static size_t run_steps(const char *fw, const char *machine, bool general, bool jit,
                        uint64_t total, struct snap *out, size_t max, uint64_t stacked[2])
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
  struct sonde_vm *vm = NULL;
  int rc = strchr(machine, '\n')
               ? sonde_machine_parse(machine, strlen(machine), "test", &m, NULL)
               : sonde_machine_builtin(machine, &m);
  if (rc || sonde_vm_new(m, &vm) ||
      sonde_vm_load_elf(vm, buf, len, "fw")) {
    CHECK_FAIL_("%s: cannot set up the VM", fw);
    sonde_vm_free(vm);
    sonde_machine_free(m);
    return 0;
  }
  sonde_vm_set_output(vm, discard, NULL);
  sonde_vm_set_jit(vm, jit);
  sonde_vm_reset(vm);
  stacked[0] = stacked[1] = 0;
  if (general) {
    struct sonde_vm_hooks h = {.ctx = stacked, .stacking = on_stacking};
    sonde_vm_set_hooks(vm, &h);
  }
  static uint8_t sram[SRAM_BYTES];
  uint32_t seed = 4242;
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
    s->exceptions = st.exceptions;
    s->reason = (int)stop.reason;
    s->exit_code = stop.reason == SONDE_VM_STOP_EXIT ? stop.exit_code : 0;
    for (unsigned r = 0; r < NREGS; r++)
      sonde_vm_read_reg(vm, r, &s->r[r]);
    memset(sram, 0, sizeof sram);
    sonde_vm_read_mem(vm, SRAM_BASE, sram, sizeof sram);
    s->sram_hash = fnv1a(sram, sizeof sram);
    if (stop.reason != SONDE_VM_STOP_CYCLE_LIMIT || limit == total)
      break;
  }
  sonde_vm_free(vm);
  sonde_machine_free(m);
  return n;
}

static void compare_jit(const char *fw, const char *machine, uint64_t total, bool jit,
                        int want_exit)
{
  enum { MAX = 8000 };
  static struct snap a[MAX], b[MAX];
  uint64_t sa[2] = {0, 0}, sb[2] = {0, 0};
  size_t na = run_steps(fw, machine, false, jit, total, a, MAX, sa);
  size_t nb = run_steps(fw, machine, true, jit, total, b, MAX, sb);
  const char *mname = strchr(machine, '\n') ? "(wait states)" : machine;
  CHECK_EQ_U(na, nb);
  size_t bad = 0;
  for (size_t i = 0; i < na && i < nb && bad < 3; i++) {
    bool same = a[i].cycles == b[i].cycles && a[i].instructions == b[i].instructions &&
                a[i].exceptions == b[i].exceptions && a[i].reason == b[i].reason &&
                a[i].exit_code == b[i].exit_code &&
                !memcmp(a[i].r, b[i].r, sizeof a[i].r) && a[i].sram_hash == b[i].sram_hash;
    if (!same) {
      bad++;
      unsigned r = 0;
      while (r < NREGS && a[i].r[r] == b[i].r[r])
        r++;
      CHECK_FAIL_("%s on %s%s, stop %zu: quiet at cycle %llu, %llu instructions, %llu "
                  "exceptions, sram %08x; general at cycle %llu, %llu instructions, %llu "
                  "exceptions, sram %08x; first register differing: %u",
                  fw, mname, jit ? "" : " (no jit)", i, (unsigned long long)a[i].cycles,
                  (unsigned long long)a[i].instructions, (unsigned long long)a[i].exceptions,
                  a[i].sram_hash, (unsigned long long)b[i].cycles,
                  (unsigned long long)b[i].instructions, (unsigned long long)b[i].exceptions,
                  b[i].sram_hash, r);
    }
  }
  /* It took exceptions, only the general way called the hook, and there it
   * saw about as many words stacked as unstacked (the difference: frames
   * still stacked at the last stop, a stack limit fault's frame that is never
   * pushed) */
  const uint64_t slack = 8 * 32;
  if (na && a[na - 1].exit_code != want_exit) /* the firmware's own checks (exc_timers) */
    CHECK_FAIL_("%s on %s: exit code %d, not %d", fw, mname, a[na - 1].exit_code, want_exit);
  if (!na || !a[na - 1].exceptions || sa[0] || sa[1] || sb[0] > sb[1] + slack ||
      sb[1] > sb[0] + slack)
    CHECK_FAIL_("%s on %s: %zu stops, %llu exceptions, %llu and %llu words stacked, %llu "
                "and %llu unstacked", fw, mname, na,
                na ? (unsigned long long)a[na - 1].exceptions : 0ull,
                (unsigned long long)sa[1], (unsigned long long)sb[1], (unsigned long long)sa[0],
                (unsigned long long)sb[0]);
}

static void compare_exit(const char *fw, const char *machine, uint64_t total, int want_exit)
{
  compare_jit(fw, machine, total, true, want_exit);
  compare_jit(fw, machine, total, false, want_exit);
}

static void compare(const char *fw, const char *machine, uint64_t total)
{
  compare_exit(fw, machine, total, 0);
}

static void test_quiet_against_general(void)
{
  compare("bench_irq", "cm3", 600000); /* SysTick and a timer IRQ, tail-chains */
  compare("exc_systick_m3", "cm3", 1000000);
  compare("exc_nesting_m3", "cm3", 1000000);
  compare("exc_latearrival_m3", "cm3", 1000000);
  compare("exc_timers_m3", "cm3", 2000000); /* a timer at every offset from SysTick */
  compare("exc_timers_eq_m3", "cm3", 2000000); /* ... at SysTick's priority: no preemption */
  /* SysTick, the timer and the delay due together: timers firing during
   * the stacking and at its last cycle */
  compare("exc_coincide_m3", "cm3", 2000000);
  compare("exc_coincide_m0plus", "cm0plus", 2000000);
  compare("exc_svc_pendsv_m3", "cm3", 1000000);
  /* FreeRTOS: SysTick and PendSV at one (the lowest) priority, so a wrap
   * during a context switch must wait */
  compare("tband_vm_freertos", "cm3", 2000000);
  compare("exc_basepri_m3", "cm3", 1000000);
  compare("exc_faults_m3", "cm3", 1000000);
  compare("ft_lsu_bench", "cm3", 600000); /* returns by POP {..., pc} */
  compare("exc_lazyfp_m4f", "cm4f", 1000000);
  compare("exc_stklim_m33", "cm33", 1000000);
  compare("exc_faults_m33", "cm33", 1000000);
  /* a SysTick entry crossing MSPLIM (STKOF, nothing pushed; the firmware's
   * HardFault handler stops the MTB and exits 3) */
  compare_exit("mtb_stack_m33", "cm33", 1000000, 3);
  compare("mtb_bench_on", "cm33", 600000); /* with an exception observer (the MTB) */
  compare("exc_nesting_m0plus", "cm0plus", 1000000);
  compare("exc_systick_m0plus", "cm0plus", 1000000);
  compare("bench_irq", cm3_wait, 600000);
  compare("exc_systick_m3", cm3_wait, 1000000);
  compare("exc_latearrival_m3", cm3_wait, 1000000);
  compare("exc_timers_m3", cm3_wait, 2000000);
  compare("exc_timers_eq_m3", cm3_wait, 2000000);
  compare("exc_coincide_m3", cm3_wait, 2000000);
}

int main(void)
{
  RUN(test_quiet_against_general);
  return check_summary();
}
