/* Power model (src/vm/power.c, docs/vm.md "Power model"): a firmware that
 * runs, sleeps in WFI until a timer wakes it, then sends bytes on a UART. The
 * charge must equal the hand formula run*(cycles - sleep) + sleep*sleep_cycles
 * + uart*byte_cycles*bytes exactly, and the current timeline must show each
 * phase with the right current and length. Bad `power` lines name file+line. */
#include "check.h"

#include <stdio.h>
#include <string.h>

#include "sonde/vm.h"

/* 1 MHz core, UART at 100 kbaud: a byte keeps the UART busy 10*1e6/1e5 = 100
 * cycles. Currents in microamps, 3.0 V. */
static const char machine_text[] =
    "core m3\n"
    "clock 1MHz\n"
    "memory flash 0x00000000 64K access=rx\n"
    "memory sram 0x20000000 16K\n"
    "peripheral uart 0x400F0000 baud=100000\n"
    "peripheral timer 0x400F2000 irq=1\n"
    "power run=1000 sleep=100 uart=50 voltage=3000\n";

/* Thumb code at 0x08 (hand-assembled; addresses in the comments):
 *   08 cpsid i            0a ldr r0,=0xE000E100   0c movs r1,#2   0e str r1,[r0]  (ISER: irq 1)
 *   10 ldr r0,=timer      12 ldr r1,=1000         14 str r1,[r0,#4] (LOAD)
 *   16 movs r1,#3         18 str r1,[r0]  (EN|IE, one-shot)        1a wfi
 *   1c movs r1,#0x41      1e ldr r0,=uart  20 str r1,[r0] (byte 1)
 *   22 ldr r2,[r0,#4]     24 lsls r2,r2,#31  26 bpl 22  (wait TXE)
 *   28 str r1,[r0] (byte 2) 2a ldr r2,[r0,#4] 2c lsls r2,r2,#31 2e bpl 2a
 *   30 bkpt #0            32 nop
 *   34 .word 0xE000E100   38 .word 0x400F2000  3c .word 1000  40 .word 0x400F0000 */
static const uint16_t code[] = {
    0xB672, 0x480A, 0x2102, 0x6001, 0x4809, 0x490A, 0x6041, 0x2103, 0x6001, 0xBF30,
    0x2141, 0x4808, 0x6001, 0x6842, 0x07D2, 0xD5FC, 0x6001, 0x6842, 0x07D2, 0xD5FC,
    0xBE00, 0xBF00,
};

struct change {
  uint64_t cycle;
  uint32_t ua;
};
struct timeline {
  struct change c[64];
  unsigned n;
};

static void on_power(void *ctx, uint64_t cycle, uint32_t ua)
{
  struct timeline *t = ctx;
  if (t->n < 64)
    t->c[t->n++] = (struct change){cycle, ua};
}

static int discard(void *ctx, int stream, const void *data, size_t len)
{
  (void)ctx;
  (void)data;
  CHECK_EQ_I(stream, SONDE_VM_STREAM_UART0);
  CHECK_EQ_U(len, 1);
  return 0;
}

static void put32(uint8_t *b, uint32_t v)
{
  memcpy(b, &v, 4); /* little-endian host (x86-64, aarch64) */
}

static struct sonde_vm *boot(const char *text, struct sonde_machine **m, struct timeline *t)
{
  struct sonde_diag d;
  sonde_diag_clear(&d);
  if (sonde_machine_parse(text, strlen(text), "p.machine", m, &d) != 0)
    return NULL;
  struct sonde_vm *vm = NULL;
  if (sonde_vm_new(*m, &vm) != 0)
    return NULL;
  uint8_t img[0x44] = {0};
  put32(img, 0x20004000);
  put32(img + 4, 0x09);
  memcpy(img + 8, code, sizeof code);
  put32(img + 0x34, 0xE000E100);
  put32(img + 0x38, 0x400F2000);
  put32(img + 0x3C, 1000);
  put32(img + 0x40, 0x400F0000);
  if (sonde_vm_load_binary(vm, img, sizeof img, 0) || sonde_vm_reset(vm))
    return NULL;
  sonde_vm_set_output(vm, discard, NULL);
  sonde_vm_set_power(vm, on_power, t);
  return vm;
}

/* The same run with timer=7: the one-shot timer draws 7 uA from its enabling
 * store (cycle 10) to its match (1010), where the sleep also ends. */
static void test_timer_active(void)
{
  static const char text[] =
      "core m3\nclock 1MHz\nmemory flash 0 64K access=rx\nmemory sram 0x20000000 16K\n"
      "peripheral uart 0x400F0000 baud=100000\nperipheral timer 0x400F2000 irq=1\n"
      "power run=1000 sleep=100 uart=50 timer=7 voltage=3000\n";
  struct sonde_machine *m = NULL;
  struct timeline t = {0};
  struct sonde_vm *vm = boot(text, &m, &t);
  REQUIRE(vm);
  struct sonde_vm_stop stop;
  REQUIRE(sonde_vm_run(vm, 100000, &stop) == 0);
  struct sonde_vm_stats st;
  sonde_vm_get_stats(vm, &st);
  CHECK_EQ_U(st.charge_ua_cycles, 340700 + 7 * 1000);
  /* Two changes at 1010 (timer idle, then awake): the later one holds. */
  static const struct change want[] = {{0, 1000}, {10, 1007}, {13, 107}, {1010, 100},
                                       {1010, 1000}, {1013, 1050}, {1113, 1000}, {1120, 1050},
                                       {1220, 1000}};
  REQUIRE(t.n == sizeof want / sizeof want[0]);
  for (unsigned i = 0; i < t.n; i++) {
    CHECK_EQ_U(t.c[i].cycle, want[i].cycle);
    CHECK_EQ_U(t.c[i].ua, want[i].ua);
  }
  sonde_vm_free(vm);
  sonde_machine_free(m);
}

static void test_run_sleep_uart(void)
{
  struct sonde_machine *m = NULL;
  struct sonde_diag d;
  sonde_diag_clear(&d);
  REQUIRE(sonde_machine_parse(machine_text, strlen(machine_text), "p.machine", &m, &d) == 0);
  CHECK_EQ_U(sonde_machine_supply_mv(m), 3000);
  struct sonde_vm *vm = NULL;
  REQUIRE(sonde_vm_new(m, &vm) == 0);
  uint8_t img[0x44] = {0};
  put32(img, 0x20004000);
  put32(img + 4, 0x09);
  memcpy(img + 8, code, sizeof code);
  put32(img + 0x34, 0xE000E100);
  put32(img + 0x38, 0x400F2000);
  put32(img + 0x3C, 1000);
  put32(img + 0x40, 0x400F0000);
  REQUIRE(sonde_vm_load_binary(vm, img, sizeof img, 0) == 0);
  REQUIRE(sonde_vm_reset(vm) == 0);
  sonde_vm_set_output(vm, discard, NULL);
  struct timeline t = {0};
  sonde_vm_set_power(vm, on_power, &t);
  struct sonde_vm_stop stop;
  REQUIRE(sonde_vm_run(vm, 100000, &stop) == 0);
  CHECK_EQ_U(stop.reason, SONDE_VM_STOP_BREAKPOINT);
  CHECK_EQ_U(stop.pc, 0x30);
  struct sonde_vm_stats st;
  sonde_vm_get_stats(vm, &st);
  /* The sleep: from the WFI to exactly 1000 cycles after the enabling store. */
  CHECK(st.sleep_cycles > 900 && st.sleep_cycles < 1000);
  /* Hand formula: every cycle draws run or sleep current, plus 50 uA for each
   * of the 2 x 100 UART cycles (both bytes end before the BKPT). */
  uint64_t want = 1000 * (st.cycles - st.sleep_cycles) + 100 * st.sleep_cycles + 50 * 200;
  CHECK_EQ_U(st.charge_ua_cycles, want);
  CHECK(st.charge_uc == (double)want / 1e6);
  CHECK(st.energy_uj == (double)want / 1e6 * 3.0);

  /* Timeline: run, sleep, run, uart, run, uart, run. */
  /* The figures of this run (M3 cycle model: the enabling store completes at
   * cycle 10, the WFI retires at 13; the bytes start at 1013 and 1120):
   * 1000*13 + 100*997 + 1000*3 + 1050*100 + 1000*7 + 1050*100 + 1000*8. */
  CHECK_EQ_U(st.cycles, 1228);
  CHECK_EQ_U(st.sleep_cycles, 997);
  CHECK_EQ_U(st.charge_ua_cycles, 340700);
  REQUIRE(t.n == 7);
  static const struct change want_tl[7] = {{0, 1000}, {13, 100}, {1010, 1000}, {1013, 1050},
                                           {1113, 1000}, {1120, 1050}, {1220, 1000}};
  for (unsigned i = 0; i < 7; i++) {
    CHECK_EQ_U(t.c[i].cycle, want_tl[i].cycle);
    CHECK_EQ_U(t.c[i].ua, want_tl[i].ua);
  }
  CHECK_EQ_U(t.c[0].cycle, 0);
  CHECK_EQ_U(t.c[0].ua, 1000);
  CHECK_EQ_U(t.c[1].ua, 100);
  CHECK_EQ_U(t.c[2].cycle - t.c[1].cycle, st.sleep_cycles);
  CHECK_EQ_U(t.c[2].ua, 1000);
  CHECK_EQ_U(t.c[3].ua, 1050);
  CHECK_EQ_U(t.c[4].cycle - t.c[3].cycle, 100);
  CHECK_EQ_U(t.c[4].ua, 1000);
  CHECK_EQ_U(t.c[5].ua, 1050);
  CHECK_EQ_U(t.c[6].cycle - t.c[5].cycle, 100);
  CHECK_EQ_U(t.c[6].ua, 1000);
  /* The timer was enabled by the store at 0x18: it wakes the core exactly
   * 1000 cycles after it, and the WFI retires just before the sleep. */
  CHECK(t.c[2].cycle > 1000 && t.c[2].cycle < 1100);
  /* The timeline integrates to the same charge. */
  uint64_t sum = 0;
  for (unsigned i = 0; i < t.n; i++) {
    uint64_t end = i + 1 < t.n ? t.c[i + 1].cycle : st.cycles;
    sum += (uint64_t)t.c[i].ua * (end - t.c[i].cycle);
  }
  CHECK_EQ_U(sum, st.charge_ua_cycles);
  sonde_vm_free(vm);
  sonde_machine_free(m);
}

static void bad(const char *line, const char *msg)
{
  char text[512];
  snprintf(text, sizeof text, "core m3\nclock 1MHz\nmemory flash 0 64K\n%s\n", line);
  struct sonde_machine *m = NULL;
  struct sonde_diag d;
  sonde_diag_clear(&d);
  CHECK_EQ_I(sonde_machine_parse(text, strlen(text), "board.machine", &m, &d), SONDE_E_FORMAT);
  CHECK(m == NULL);
  CHECK_EQ_STR(d.msg, msg);
}

static void test_bad_lines(void)
{
  bad("power run=1 bogus=2", "board.machine:4: power: unknown key 'bogus' (expected run, sleep, "
                             "uart, gpio, timer, delay, voltage)");
  bad("power voltage=0", "board.machine:4: power: voltage is in millivolts, 1 to 100000, got '0'");
  bad("power uart=-3", "board.machine:4: power: expected run=MICROAMPS sleep=MICROAMPS, got "
                       "'uart=-3'");
  bad("power 3.2", "board.machine:4: power: expected run=MICROAMPS sleep=MICROAMPS, got '3.2'");
}

static void test_builtin_defaults(void)
{
  struct sonde_machine *m = NULL;
  REQUIRE(sonde_machine_builtin("cc2650", &m) == 0);
  CHECK_EQ_U(sonde_machine_supply_mv(m), 3000);
  sonde_machine_free(m);
  for (const char *const *n = sonde_machine_builtin_names(); *n; n++) {
    REQUIRE(sonde_machine_builtin(*n, &m) == 0);
    CHECK(sonde_machine_supply_mv(m) > 0);
    sonde_machine_free(m);
  }
}

int main(void)
{
  RUN(test_run_sleep_uart);
  RUN(test_timer_active);
  RUN(test_bad_lines);
  RUN(test_builtin_defaults);
  return check_summary();
}
