/* Exception tests on the VM: the firmwares in firmware/tests/exc_*.c (built
 * with arm-none-eabi-gcc) run to completion; their output, exit code, stop
 * reason and the exception trace (hooks) are checked: nesting, tail-chaining
 * (6 cycles from exit to entry), late arrival, BASEPRI/PRIMASK/FAULTMASK,
 * every fault's CFSR bits, SVC/PendSV context switch, SysTick period exact
 * to the cycle while sleeping, peripherals and sleep-on-exit, reset with
 * SRAM retained, lockup, lazy FP stacking; a run split at a cycle limit
 * equals an uninterrupted one. */
#include "check.h"

#include <stdio.h>

#include "sonde/vm.h"
#include "vm/periph.h"
#include "vm/vm_internal.h"

#ifndef SONDE_FIRMWARE_DIR
#define SONDE_FIRMWARE_DIR SONDE_BINARY_DIR "/firmware"
#endif

struct ev {
  uint64_t cycle;
  int ev;
  unsigned exc;
};

struct run {
  char out[4096];
  size_t len;
  char uart[256];
  size_t ulen;
  struct ev ev[4096];
  size_t nev;
  struct sonde_vm_stop stop;
  struct sonde_vm_stats stats;
  int rc;
};

static int on_write(void *ctx, int stream, const void *data, size_t len)
{
  struct run *r = ctx;
  if (stream == SONDE_VM_STREAM_UART0) {
    if (r->ulen + len < sizeof r->uart) {
      memcpy(r->uart + r->ulen, data, len);
      r->ulen += len;
    }
  } else if (r->len + len < sizeof r->out) {
    memcpy(r->out + r->len, data, len);
    r->len += len;
  }
  return 0;
}

static void on_exc(void *ctx, uint64_t cycle, enum sonde_vm_exc_event ev, unsigned exc)
{
  struct run *r = ctx;
  if (r->nev < sizeof r->ev / sizeof r->ev[0])
    r->ev[r->nev++] = (struct ev){cycle, (int)ev, exc};
}

static struct sonde_machine *machine;

/* Load firmware `name` on `mach`; returns the VM (caller frees) or NULL. */
static struct sonde_vm *load(const char *name, const char *mach, struct run *r)
{
  memset(r, 0, sizeof *r);
  char path[512];
  snprintf(path, sizeof path, "%s/%s.elf", SONDE_FIRMWARE_DIR, name);
  FILE *f = fopen(path, "rb");
  if (!f) {
    CHECK_FAIL_("missing firmware %s (build the 'firmware' target)", path);
    return NULL;
  }
  static unsigned char buf[1 << 20];
  size_t n = fread(buf, 1, sizeof buf, f);
  fclose(f);
  sonde_machine_free(machine);
  machine = NULL;
  struct sonde_vm *vm = NULL;
  if (sonde_machine_builtin(mach, &machine) || sonde_vm_new(machine, &vm)) {
    CHECK_FAIL_("cannot make machine %s", mach);
    return NULL;
  }
  if (sonde_vm_load_elf(vm, buf, n, path)) {
    CHECK_FAIL_("load %s: %s", path, sonde_vm_error_detail(vm));
    sonde_vm_free(vm);
    return NULL;
  }
  sonde_vm_set_output(vm, on_write, r);
  struct sonde_vm_hooks h = {.ctx = r, .exception = on_exc};
  sonde_vm_set_hooks(vm, &h);
  sonde_vm_reset(vm);
  return vm;
}

static void finish(struct sonde_vm *vm, struct run *r, uint64_t limit)
{
  r->rc = sonde_vm_run(vm, limit, &r->stop);
  sonde_vm_get_stats(vm, &r->stats);
  r->out[r->len] = 0;
  r->uart[r->ulen] = 0;
}

static bool run_fw(const char *name, const char *mach, struct run *r, struct sonde_vm **keep)
{
  struct sonde_vm *vm = load(name, mach, r);
  if (!vm)
    return false;
  finish(vm, r, 200000000);
  if (keep)
    *keep = vm;
  else
    sonde_vm_free(vm);
  return true;
}

static void expect_exit0(const struct run *r, const char *out)
{
  CHECK_EQ_I(r->rc, 0);
  CHECK_EQ_U(r->stop.reason, SONDE_VM_STOP_EXIT);
  CHECK_EQ_I(r->stop.exit_code, 0);
  CHECK_EQ_STR(r->out, out);
}

/* Cycles of every ENTER of exception `exc`. */
static size_t enters(const struct run *r, unsigned exc, uint64_t *cyc, size_t max)
{
  size_t n = 0;
  for (size_t i = 0; i < r->nev; i++)
    if (r->ev[i].ev == SONDE_VM_EXC_ENTER && r->ev[i].exc == exc && n < max)
      cyc[n++] = r->ev[i].cycle;
  return n;
}

/* Number of tail-chains from `from` into `to`: EXIT(from) directly followed
 * by ENTER(to), 6 cycles later. */
static unsigned tailchains(const struct run *r, unsigned from, unsigned to)
{
  unsigned n = 0;
  for (size_t i = 0; i + 1 < r->nev; i++)
    if (r->ev[i].ev == SONDE_VM_EXC_EXIT && r->ev[i].exc == from &&
        r->ev[i + 1].ev == SONDE_VM_EXC_ENTER && r->ev[i + 1].exc == to) {
      CHECK_EQ_U(r->ev[i + 1].cycle - r->ev[i].cycle, 6);
      n++;
    }
  return n;
}

static struct run R; /* large: static */

static void test_nesting(void)
{
  if (!run_fw("exc_nesting_m3", "cm3", &R, NULL))
    return;
  expect_exit0(&R, "priorities A1x2ab3\nsubpriorities Aab1x23\n");
  CHECK_EQ_U(R.stats.exceptions, 8);
  /* Round 1: IRQ1 returns and IRQ2 tail-chains in; IRQ0 returns into IRQ3.
   * Round 2: IRQ0 -> IRQ1 -> IRQ2 -> IRQ3, all tail-chained. */
  CHECK_EQ_U(tailchains(&R, 17, 18), 2);
  CHECK_EQ_U(tailchains(&R, 16, 19), 1);
  CHECK_EQ_U(tailchains(&R, 16, 17), 1);
  CHECK_EQ_U(tailchains(&R, 18, 19), 1);
  /* IRQ1 preempting IRQ0 in round 1: ENTER(17) while 16 is active, with a
   * full 12-cycle entry (no EXIT in between). */
  bool nested = false;
  for (size_t i = 0; i + 1 < R.nev; i++)
    if (R.ev[i].ev == SONDE_VM_EXC_ENTER && R.ev[i].exc == 16 &&
        R.ev[i + 1].ev == SONDE_VM_EXC_ENTER && R.ev[i + 1].exc == 17)
      nested = true;
  CHECK(nested);

  if (!run_fw("exc_nesting_m0plus", "cm0plus", &R, NULL))
    return;
  expect_exit0(&R, "priorities A1x2ab3\n");
  CHECK_EQ_U(R.stats.exceptions, 4);
}

static void test_basepri(void)
{
  if (!run_fw("exc_basepri_m3", "cm3", &R, NULL))
    return;
  expect_exit0(&R, "basepri=0x80 0\nbasepri=0 12\nprimask \nprimask cleared 0\nfaultmask \n"
                   "faultmask cleared 12\n");
}

static const char faults_out[] =
    "undefinstr: exc 6 cfsr 00010000 hfsr 00000000\n"
    "invstate: exc 6 cfsr 00020000 hfsr 00000000\n"
    "unaligned: exc 6 cfsr 01000000 hfsr 00000000\n"
    "divbyzero: exc 6 cfsr 02000000 hfsr 00000000\n"
    "nocp: exc 6 cfsr 00080000 hfsr 00000000\n"
    "preciserr: exc 5 cfsr 00008200 hfsr 00000000\n"
    "store to flash: exc 5 cfsr 00008200 hfsr 00000000\n"
    "ibuserr: exc 5 cfsr 00000100 hfsr 00000000\n"
    "invpc: exc 6 cfsr 00040000 hfsr 00000000\n"
    "forced: exc 3 cfsr 00010000 hfsr 40000000\n"
    "masked: exc 3 cfsr 02000000 hfsr 40000000\n"
    "faults 11\n";

static void test_faults(void)
{
  if (run_fw("exc_faults_m3", "cm3", &R, NULL))
    expect_exit0(&R, faults_out);
  if (run_fw("exc_faults_m33", "cm33", &R, NULL))
    expect_exit0(&R, faults_out);
}

/* ARMv8-M: a frame that would cross PSPLIM is not pushed, PSP = PSPLIM, and a
 * UsageFault with CFSR.STKOF (0x00100000) is taken before the SVC. */
static void test_stack_limit(void)
{
  if (run_fw("exc_stklim_m33", "cm33", &R, NULL))
    expect_exit0(&R, "cfsr 1048576\n");
}

/* ARMv8-M: PUSH, SUB SP, STR/STRD with writeback, MOV SP and VPUSH that would
 * move SP below MSPLIM/PSPLIM fault with STKOF before writing anything (the
 * firmware checks the stacked PC, SP and memory); at the limit they do not. */
static void test_stack_limit_insn(void)
{
  static const char out[] =
      "msp push faults 1\nmsp sub faults 1\nmsp str faults 1\nmsp strd faults 1\n"
      "msp mov faults 1\nmsp vpush faults 1\nmsp at-limit faults 0\n"
      "psp push faults 1\npsp sub faults 1\npsp str faults 1\npsp strd faults 1\n"
      "psp mov faults 1\npsp vpush faults 1\npsp at-limit faults 0\nfaults 12\n";
  if (run_fw("exc_stklim_insn_m33", "cm33", &R, NULL))
    expect_exit0(&R, out);
}

static void test_svc_pendsv(void)
{
  if (!run_fw("exc_svc_pendsv_m3", "cm3", &R, NULL))
    return;
  expect_exit0(&R, "count_a 5\ncount_b 5\nswitches 9\npendsv lr fffffffd\ncontrol 00000002\n");
  uint64_t c[16];
  CHECK_EQ_U(enters(&R, 11, c, 16), 1);
  CHECK_EQ_U(enters(&R, 14, c, 16), 9);
}

static void check_period(const struct run *r, unsigned exc, size_t count, uint64_t period)
{
  uint64_t c[64];
  size_t n = enters(r, exc, c, 64);
  CHECK_EQ_U(n, count);
  for (size_t i = 1; i < n; i++)
    CHECK_EQ_U(c[i] - c[i - 1], period);
}

static void test_systick(void)
{
  static const char out[] = "ticks 10\ncountflag first read 1\ncountflag second read 0\n"
                            "calib 800752ff\n";
  if (run_fw("exc_systick_m3", "cm3", &R, NULL)) {
    expect_exit0(&R, out);
    check_period(&R, 15, 10, 1000);
    CHECK(R.stats.sleep_cycles > 8000);
  }
  if (run_fw("exc_systick_m0plus", "cm0plus", &R, NULL)) {
    expect_exit0(&R, out);
    check_period(&R, 15, 10, 1000);
  }
}

static void test_wfi_peripherals(void)
{
  struct sonde_vm *vm = NULL;
  if (!run_fw("exc_wfi_m3", "cm3", &R, &vm))
    return;
  expect_exit0(&R, "timer irqs 8\nmain wakeups 5\ndelay done 1\ngpio 0\n");
  CHECK_EQ_STR(R.uart, "uart hello\n");
  /* Timer matches are 5000 cycles apart. Woken from WFI the handler is
   * entered 12 cycles after the match; woken from sleep-on-exit it is
   * tail-chained, 6 cycles after: handler 5 is the first to return into
   * sleep, so the 6th comes 4994 cycles after the 5th. */
  uint64_t c[16];
  REQUIRE(enters(&R, 17, c, 16) == 8);
  static const uint64_t gaps[7] = {5000, 5000, 5000, 5000, 4994, 5000, 5000};
  for (size_t i = 1; i < 8; i++)
    CHECK_EQ_U(c[i] - c[i - 1], gaps[i - 1]);
  /* Sleep-on-exit: after handlers 5..7 no RETURN, the next ENTER directly. */
  unsigned returns = 0, chained = 0;
  for (size_t i = 0; i < R.nev; i++) {
    if (R.ev[i].ev == SONDE_VM_EXC_RETURN)
      returns++;
    if (i + 1 < R.nev && R.ev[i].ev == SONDE_VM_EXC_EXIT && R.ev[i + 1].ev == SONDE_VM_EXC_ENTER)
      chained++;
  }
  CHECK_EQ_U(returns, 5);
  CHECK_EQ_U(chained, 3);
  CHECK(R.stats.sleep_cycles > 7 * 4900);
  const struct vm_gpio_change *ch;
  uint64_t dropped;
  size_t n = vm_gpio_changes(vm, &ch, &dropped);
  CHECK_EQ_U(n, 8);
  CHECK_EQ_U(dropped, 0);
  for (size_t i = 1; i < n && i < 8; i++)
    CHECK_EQ_U(ch[i].cycle - ch[i - 1].cycle, gaps[i - 1]);
  sonde_vm_free(vm);
}

static void test_reset(void)
{
  if (run_fw("exc_reset_m3", "cm3", &R, NULL))
    expect_exit0(&R, "boot 1\nboot 2\nboot 3\n");
  if (run_fw("exc_reset_m0plus", "cm0plus", &R, NULL))
    expect_exit0(&R, "boot 1\nboot 2\nboot 3\n");
  /* VECTRESET: a local reset keeps the GPIO port, SYSRESETREQ resets it */
  if (run_fw("exc_vectreset_m3", "cm3", &R, NULL))
    expect_exit0(&R, "boot 1\nboot 2\nboot 3\n");
}

static void test_lockup(void)
{
  if (!run_fw("exc_lockup_m3", "cm3", &R, NULL))
    return;
  CHECK_EQ_I(R.rc, 0);
  CHECK_EQ_U(R.stop.reason, SONDE_VM_STOP_LOCKUP);
  CHECK_EQ_U(R.stop.pc, 0xEFFFFFFE);
  CHECK_EQ_U(R.stop.cfsr, 0x10000);
  CHECK_EQ_U(R.stop.hfsr, 0x40000000);
  CHECK_EQ_STR(R.out, "start\nin hardfault\n");
}

static void test_late_arrival(void)
{
  if (!run_fw("exc_latearrival_m3", "cm3", &R, NULL))
    return;
  CHECK_EQ_I(R.stop.exit_code, 0);
  /* "classes " + 40 letters: P* L+ N+ with the L window about the 12
   * stacking cycles (plus the cycles of the pending write itself). */
  REQUIRE(strncmp(R.out, "classes ", 8) == 0 && strlen(R.out) == 8 + 40 + 1);
  const char *c = R.out + 8;
  unsigned i = 0, p = 0, l = 0, n = 0;
  while (i < 40 && c[i] == 'P')
    i++, p++;
  while (i < 40 && c[i] == 'L')
    i++, l++;
  while (i < 40 && c[i] == 'N')
    i++, n++;
  CHECK_EQ_U(i, 40);
  CHECK(p >= 1);
  CHECK(l >= 12 && l <= 16);
  CHECK(n >= 10);
  /* In a late arrival the timer's ENTER is the only one of that entry. */
  if (l < 12 || l > 16)
    fprintf(stderr, "classes: %s", R.out);
}

static void test_lazy_fp(void)
{
  if (!run_fw("exc_lazyfp_m4f", "cm4f", &R, NULL))
    return;
  expect_exit0(&R, "exc_return ffffffe9\nfpccr before c0000019\nfpccr after c0000018\n");
}

/* A run split at cycle limits gives the same result as one run, and the
 * limit stops a sleeping core exactly. */
static void test_split_run(void)
{
  static struct run whole;
  if (!run_fw("exc_systick_m3", "cm3", &whole, NULL))
    return;
  struct sonde_vm *vm = load("exc_systick_m3", "cm3", &R);
  if (!vm)
    return;
  uint64_t limits[] = {2500, 2501, 5555, 7000};
  for (size_t k = 0; k < sizeof limits / sizeof limits[0]; k++) {
    CHECK_EQ_I(sonde_vm_run(vm, limits[k], &R.stop), 0);
    CHECK_EQ_U(R.stop.reason, SONDE_VM_STOP_CYCLE_LIMIT);
    sonde_vm_get_stats(vm, &R.stats);
    CHECK_EQ_U(R.stats.cycles, limits[k]); /* asleep in WFI at each limit */
  }
  finish(vm, &R, 200000000);
  CHECK_EQ_STR(R.out, whole.out);
  CHECK_EQ_U(R.stats.cycles, whole.stats.cycles);
  CHECK_EQ_U(R.stats.instructions, whole.stats.instructions);
  CHECK_EQ_U(R.stats.sleep_cycles, whole.stats.sleep_cycles);
  CHECK_EQ_U(R.nev, whole.nev);
  for (size_t i = 0; i < R.nev && i < whole.nev; i++) {
    CHECK_EQ_U(R.ev[i].cycle, whole.ev[i].cycle);
    CHECK_EQ_U(R.ev[i].exc, whole.ev[i].exc);
  }
  sonde_vm_free(vm);
}

int main(void)
{
  RUN(test_nesting);
  RUN(test_basepri);
  RUN(test_faults);
  RUN(test_svc_pendsv);
  RUN(test_systick);
  RUN(test_wfi_peripherals);
  RUN(test_stack_limit);
  RUN(test_stack_limit_insn);
  RUN(test_reset);
  RUN(test_lockup);
  RUN(test_late_arrival);
  RUN(test_lazy_fp);
  RUN(test_split_run);
  sonde_machine_free(machine);
  return check_summary();
}
