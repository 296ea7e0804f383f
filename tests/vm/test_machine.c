/* Machine descriptions (src/vm/machine.c): the built-ins, a full file, and
 * bad files with their exact messages (file name and line). */
#include "check.h"

#include "sonde/vm.h"
#include "vm/bus.h"
#include "vm/machine.h"

static int parse(const char *text, struct sonde_machine **m, struct sonde_diag *d)
{
  sonde_diag_clear(d);
  return sonde_machine_parse(text, strlen(text), "board.machine", m, d);
}

static void test_builtins(void)
{
  const char *const *names = sonde_machine_builtin_names();
  unsigned n = 0;
  for (; names[n]; n++) {
    struct sonde_machine *m = NULL;
    CHECK_EQ_I(sonde_machine_builtin(names[n], &m), 0);
    REQUIRE(m);
    CHECK_EQ_STR(sonde_machine_name(m), names[n]);
    CHECK(m->nperiph == 4);
    sonde_machine_free(m);
  }
  CHECK_EQ_U(n, 5);
  struct sonde_machine *m = NULL;
  CHECK_EQ_I(sonde_machine_builtin("cm7", &m), SONDE_E_NOTFOUND);
  CHECK(m == NULL);

  REQUIRE(sonde_machine_builtin("cm3", &m) == 0);
  CHECK_EQ_U(sonde_machine_core(m), SONDE_VM_CORE_M3);
  CHECK_EQ_U(sonde_machine_clock_hz(m), 48000000);
  CHECK_EQ_U(m->nmem, 2);
  CHECK_EQ_STR(m->mem[0].name, "flash");
  CHECK_EQ_U(m->mem[0].base, 0);
  CHECK_EQ_U(m->mem[0].size, 512 * 1024);
  CHECK_EQ_U(m->mem[0].flags, VM_REGION_READONLY | VM_REGION_EXEC);
  CHECK_EQ_U(m->mem[1].base, 0x20000000);
  CHECK_EQ_U(m->mem[1].size, 128 * 1024);
  CHECK_EQ_U(m->mem[1].flags, VM_REGION_EXEC | VM_REGION_RETAIN);
  CHECK_EQ_U(m->periph[0].type, VM_PERIPH_UART);
  CHECK_EQ_U(m->periph[0].base, 0x400F0000);
  CHECK_EQ_I(m->periph[0].irq, 0);
  CHECK_EQ_I(m->periph[2].irq, 1);
  sonde_machine_free(m);

  REQUIRE(sonde_machine_builtin("cc2650", &m) == 0);
  CHECK_EQ_U(m->num_irqs, 34);
  CHECK_EQ_U(m->prio_bits, 3);
  CHECK_EQ_U(m->mem[0].size, 128 * 1024);
  CHECK_EQ_U(m->mem[2].base, 0x20000000);
  CHECK_EQ_U(m->mem[2].size, 20 * 1024);
  sonde_machine_free(m);

  REQUIRE(sonde_machine_builtin("cm0plus", &m) == 0);
  CHECK_EQ_U(sonde_machine_core(m), SONDE_VM_CORE_M0PLUS);
  CHECK_EQ_U(m->prio_bits, 2);
  CHECK(m->has_mtb);
  sonde_machine_free(m);
  sonde_machine_free(NULL);
}

static void test_full_file(void)
{
  static const char text[] =
      "# a test board\n"
      "machine myboard   # named\n"
      "core m4f\n"
      "clock 80MHz\n"
      "nvic irqs=48 prio-bits=4\n"
      "memory flash 0x08000000 256K access=rx wait=2\n"
      "memory sram  0x20000000 0x10000 wait-write=1 retain\n"
      "memory ro    0x1FFF0000 1K access=r\n"
      "peripheral uart 0x40000000 irq=5 baud=115200 rx=hi\\n\\x41\n"
      "peripheral timer 0x40001000 irq=47\n"
      "swo-baud 2M\n"
      "mtb 0x20010000 4K\n"
      "power run=5000 sleep=2\n";
  struct sonde_machine *m = NULL;
  struct sonde_diag d;
  CHECK_EQ_I(parse(text, &m, &d), 0);
  REQUIRE(m);
  CHECK_EQ_STR(m->name, "myboard");
  CHECK_EQ_U(m->core, SONDE_VM_CORE_M4F);
  CHECK_EQ_U(m->clock_hz, 80000000);
  CHECK_EQ_U(m->num_irqs, 48);
  CHECK_EQ_U(m->prio_bits, 4);
  CHECK_EQ_U(m->nmem, 3);
  CHECK_EQ_U(m->mem[0].base, 0x08000000);
  CHECK_EQ_U(m->mem[0].wait_read, 2);
  CHECK_EQ_U(m->mem[0].wait_write, 2);
  CHECK_EQ_U(m->mem[1].size, 0x10000);
  CHECK_EQ_U(m->mem[1].wait_read, 0);
  CHECK_EQ_U(m->mem[1].wait_write, 1);
  CHECK_EQ_U(m->mem[1].flags, VM_REGION_EXEC | VM_REGION_RETAIN);
  CHECK_EQ_U(m->mem[2].flags, VM_REGION_READONLY);
  CHECK_EQ_U(m->nperiph, 2);
  CHECK_EQ_U(m->periph[0].baud, 115200);
  CHECK_EQ_U(m->periph[0].rx_len, 4);
  CHECK(memcmp(m->periph[0].rx, "hi\nA", 4) == 0);
  CHECK_EQ_I(m->periph[1].irq, 47);
  CHECK_EQ_U(m->swo_baud, 2000000);
  CHECK(m->has_mtb);
  CHECK_EQ_U(m->mtb_base, 0x20010000);
  CHECK_EQ_U(m->mtb_size, 4096);
  CHECK_EQ_U(m->power_run_ua, 5000);
  CHECK_EQ_U(m->power_sleep_ua, 2);
  sonde_machine_free(m);

  /* Defaults: name from the file name, irqs 32, 3 priority bits. */
  static const char minimal[] = "core m3\r\nclock 1000\r\nmemory ram 0 4K\r\n";
  m = NULL;
  CHECK_EQ_I(sonde_machine_parse(minimal, strlen(minimal), "dir/small.machine", &m, NULL), 0);
  REQUIRE(m);
  CHECK_EQ_STR(m->name, "small");
  CHECK_EQ_U(m->num_irqs, 32);
  CHECK_EQ_U(m->prio_bits, 3);
  CHECK_EQ_U(m->clock_hz, 1000);
  CHECK_EQ_U(m->mem[0].flags, VM_REGION_EXEC);
  sonde_machine_free(m);
}

static void bad(const char *text, const char *msg)
{
  struct sonde_machine *m = (struct sonde_machine *)1;
  struct sonde_diag d;
  int rc = parse(text, &m, &d);
  CHECK_EQ_I(rc, SONDE_E_FORMAT);
  CHECK(m == NULL);
  CHECK_EQ_STR(d.msg, msg);
}

#define BASE "core m3\nclock 48MHz\n"

static void test_errors(void)
{
  bad("", "board.machine: no 'core' line");
  bad("core m3\n", "board.machine: no 'clock' line");
  bad(BASE, "board.machine: no 'memory' line");
  bad("core m7\n", "board.machine:1: unknown core 'm7' (expected m0plus, m3, m4, m4f or m33)");
  bad("core m3\ncore m4\n", "board.machine:2: core given twice");
  bad("core\n", "board.machine:1: core: expected one of m0plus, m3, m4, m4f, m33");
  bad("core m3\nclock fast\n", "board.machine:2: clock: bad frequency 'fast' (1 Hz to 4 GHz)");
  bad("core m3\nclock 0\n", "board.machine:2: clock: bad frequency '0' (1 Hz to 4 GHz)");
  bad(BASE "memroy x 0 1K\n",
      "board.machine:3: unknown keyword 'memroy' (expected machine, core, clock, nvic, memory, "
      "peripheral, swo-baud, vtor, mtb, debug-port, memsys or power)");
  bad(BASE "debug-port swd\n",
      "board.machine:3: debug-port: expected 'debug-port jtag [idcode=X] [dpv=0|1]'");
  bad(BASE "debug-port jtag idcode=0x4BA00476\n",
      "board.machine:3: debug-port: idcode=0x4BA00476: idcode is a 32-bit JTAG IDCODE with "
      "bit 0 set, dpv is 0 or 1");
  bad(BASE "debug-port jtag dpv=2\n",
      "board.machine:3: debug-port: dpv=2: idcode is a 32-bit JTAG IDCODE with bit 0 set, "
      "dpv is 0 or 1");
  bad(BASE "memory ram 0x20000000 0\n", "board.machine:3: memory 'ram': size 0 is not allowed");
  bad(BASE "memory ram 0x20000000 12Q\n", "board.machine:3: memory 'ram': bad size '12Q'");
  bad(BASE "memory ram zz 1K\n", "board.machine:3: memory 'ram': bad base address 'zz'");
  bad(BASE "memory ram 0x20000000 1K access=wx\n",
      "board.machine:3: memory 'ram': access must be r, rw, rx or rwx, got 'wx'");
  bad(BASE "memory ram 0x20000000 1K wait=300\n",
      "board.machine:3: memory 'ram': wait must be 0 to 255, got '300'");
  bad(BASE "memory ram 0x20000000 1K fast\n", "board.machine:3: memory 'ram': unknown option 'fast'");
  bad(BASE "memory a 0x20000000 8K\n# comment\nmemory b 0x20001000 8K\n",
      "board.machine:5: memory 'b' overlaps memory 'a'");
  bad(BASE "memory a 0 1K\nmemory a 0x1000 1K\n", "board.machine:4: memory 'a' given twice");
  bad(BASE "memory hi 0xDFFFF000 8K\n",
      "board.machine:3: memory 'hi': 0xdffff000..0xe0000fff reaches the system region at "
      "0xe0000000");
  bad(BASE "memory ram 0 1K\nperipheral lcd 0x40000000\n",
      "board.machine:4: unknown peripheral type 'lcd' (expected uart, gpio, timer or delay)");
  bad(BASE "memory ram 0 1K\nperipheral uart 0x40000002\n",
      "board.machine:4: peripheral uart: bad base address '0x40000002'");
  bad(BASE "memory ram 0 1K\nperipheral uart 0x40000000 irq=5\nnvic irqs=4\n",
      "board.machine:4: peripheral uart at 0x40000000: irq 5 is not below nvic irqs=4");
  bad(BASE "memory ram 0 1K\nperipheral gpio 0x40000000 baud=9600\n",
      "board.machine:4: peripheral gpio: unknown key 'baud'");
  bad(BASE "memory ram 0 1K\nperipheral gpio 0x40000000\nperipheral timer 0x40000800\n",
      "board.machine:5: peripheral timer at 0x40000800 overlaps peripheral gpio at 0x40000000");
  bad(BASE "memory ram 0 8K\nperipheral gpio 0x1000\n",
      "board.machine:4: peripheral gpio at 0x00001000 overlaps memory 'ram'");
  bad(BASE "nvic irqs=0\n", "board.machine:3: nvic: irqs must be 1 to 240, got '0'");
  bad(BASE "nvic prio-bits=9\n", "board.machine:3: nvic: prio-bits must be 2 to 8, got '9'");
  bad(BASE "nvic levels=3\n", "board.machine:3: nvic: unknown key 'levels' (expected irqs, prio-bits)");
  bad("core m0plus\nclock 1M\nmemory r 0 1K\nnvic prio-bits=3\n",
      "board.machine: nvic: a Cortex-M0+ has prio-bits=2 and at most 32 irqs");
  bad(BASE "mtb 0x20000000\n", "board.machine:3: mtb: expected 'mtb BASE SIZE'");
  bad(BASE "power run=lots\n", "board.machine:3: power: expected run=MICROAMPS sleep=MICROAMPS, "
                               "got 'run=lots'");
  bad(BASE "swo-baud 0\n", "board.machine:3: swo-baud: expected a baud rate (2000000, 2M)");
  bad(BASE "vtor 0x10000000\n", "board.machine:3: vtor: only an ARMv8-M core (m33) has a "
                                 "configurable reset VTOR; give 'core m33' first");
  bad("core m33\nvtor 0x10000040\n",
      "board.machine:2: vtor: expected the vector table's reset address, a multiple of 128");
  bad("core m33\nvtor\n",
      "board.machine:2: vtor: expected the vector table's reset address, a multiple of 128");
  bad(BASE "memory ram 0 1K\nperipheral uart 0x40000000 rx=\\q\n",
      "board.machine:4: peripheral uart: bad rx text (at most 128 bytes; escapes \\n \\r \\t \\s "
      "\\\\ \\xHH)");
  char longline[700];
  memset(longline, 'a', sizeof longline - 1);
  longline[sizeof longline - 1] = 0;
  bad(longline, "board.machine:1: line longer than 511 characters");
  const char nul[] = "core m3\nclo\0ck\n";
  struct sonde_machine *m = NULL;
  struct sonde_diag d;
  CHECK_EQ_I(sonde_machine_parse(nul, sizeof nul - 1, "x", &m, &d), SONDE_E_FORMAT);
  CHECK_EQ_STR(d.msg, "x:2: NUL byte in text");
  CHECK_EQ_I(sonde_machine_parse(NULL, 3, "x", &m, &d), SONDE_E_ARG);
}

/* `vtor` (ARMv8-M): the core reads its vector table there at reset, and
 * VTOR reads back that value; without it VTOR resets to 0. */
static void test_reset_vtor(void)
{
  static const char text[] = "core m33\nclock 64M\nvtor 0x10000000\n"
                             "memory code 0x10000000 64K\nmemory sram 0x38000000 64K\n";
  struct sonde_machine *m = NULL;
  struct sonde_diag d;
  REQUIRE(parse(text, &m, &d) == 0);
  CHECK_EQ_U(m->reset_vtor, 0x10000000);
  struct sonde_vm *vm = NULL;
  REQUIRE(sonde_vm_new(m, &vm) == 0);
  /* vector table: SP 0x38001000, reset handler 0x10000101: a branch to itself */
  static const uint8_t img[] = {0x00, 0x10, 0x00, 0x38, 0x01, 0x01, 0x00, 0x10};
  static const uint8_t loop[] = {0xFE, 0xE7};
  REQUIRE(sonde_vm_load_binary(vm, img, sizeof img, 0x10000000) == 0);
  REQUIRE(sonde_vm_load_binary(vm, loop, sizeof loop, 0x10000100) == 0);
  sonde_vm_reset(vm);
  uint32_t pc = 0, sp = 0;
  CHECK(sonde_vm_read_reg(vm, 15, &pc) == 0 && sonde_vm_read_reg(vm, 13, &sp) == 0);
  CHECK_EQ_U(pc, 0x10000100);
  CHECK_EQ_U(sp, 0x38001000);
  uint32_t vtor = 0;
  CHECK(sonde_vm_read_mem(vm, 0xE000ED08u, &vtor, 4) == 0);
  CHECK_EQ_U(vtor, 0x10000000);
  sonde_vm_free(vm);
  sonde_machine_free(m);
}

/* `memsys` statements (machine_memsys.c): the cc2650 built-in declares the
 * chip's memory system, the generic ones none; errors name the statement. */
static void test_memsys(void)
{
  struct sonde_machine *m = NULL;
  REQUIRE(sonde_machine_builtin("cc2650", &m) == 0);
  CHECK(m->tm.on);
  CHECK(m->tm.cache);
  CHECK_EQ_U(m->tm.cache_ctl, 0x40034004);
  CHECK_EQ_U(m->tm.cache_size, 8192);
  CHECK_EQ_U(m->tm.cache_ways, 4);
  CHECK_EQ_U(m->tm.cache_line, 8);
  CHECK_EQ_U(m->tm.flash_wait, 2);
  CHECK_EQ_U(m->tm.flash_line, 8);
  CHECK_EQ_U(m->tm.fetch_depth, 3);
  CHECK(m->tm.nlat >= 4);
  sonde_machine_free(m);
  REQUIRE(sonde_machine_builtin("cm3", &m) == 0);
  CHECK(!m->tm.on);
  sonde_machine_free(m);
  static const char ok[] = BASE "memory flash 0 64K\n"
                           "memsys flash 0 64K wait=1 line=16\n"
                           "memsys latency 0x40000000 0x1000 read=3 write=2\n"
                           "memsys fetch depth=2\n";
  m = NULL;
  CHECK_EQ_I(parse(ok, &m, NULL), 0);
  REQUIRE(m);
  CHECK(m->tm.on && !m->tm.cache);
  CHECK_EQ_U(m->tm.flash_line, 16);
  CHECK_EQ_U(m->tm.lat[0].read, 3);
  CHECK_EQ_U(m->tm.fetch_depth, 2);
  sonde_machine_free(m);
  bad(BASE "memsys flash 0 64K line=8\n",
      "board.machine:3: memsys flash: expected 'memsys flash BASE SIZE wait=N [line=BYTES]' "
      "(wait 0-15, line a power of two up to 64)");
  bad(BASE "memsys cache size=8K ways=4 line=8\n",
      "board.machine:3: memsys cache: ctl, size, ways and line are required; size must be a "
      "multiple of ways x line");
  bad(BASE "memsys fetch depth=9\n",
      "board.machine:3: memsys fetch: expected 'memsys fetch depth=N' (1-8 words)");
  bad(BASE "memsys bus\n",
      "board.machine:3: memsys: unknown 'bus' (expected flash, cache, latency, sram, fetch or "
      "write-buffer)");
}

int main(void)
{
  RUN(test_builtins);
  RUN(test_reset_vtor);
  RUN(test_full_file);
  RUN(test_errors);
  RUN(test_memsys);
  return check_summary();
}
