/* MTB registers through the debugger's view (src/vm/dbg_mtb.c; MTB-M0+ TRM
 * 3.3): reset values, BASE read-only, M33-only registers, no MTB where the
 * machine has none, and machine-file errors. No firmware needed. */
#include "check.h"

#include <stdio.h>
#include <string.h>

#include "sonde/vm.h"

static uint32_t rd(struct sonde_vm *vm, uint32_t a)
{
  uint32_t v = 0xdeadbeef;
  CHECK_EQ_I(sonde_vm_read_mem(vm, a, &v, 4), 0);
  return v;
}

static void wr(struct sonde_vm *vm, uint32_t a, uint32_t v)
{
  CHECK_EQ_I(sonde_vm_write_mem(vm, a, &v, 4), 0);
}

static void regs(const char *machine, uint32_t sfr, uint32_t base, bool m33)
{
  struct sonde_machine *m = NULL;
  struct sonde_vm *vm = NULL;
  REQUIRE(sonde_machine_builtin(machine, &m) == 0);
  REQUIRE(sonde_vm_new(m, &vm) == 0);
  CHECK_EQ_U(rd(vm, sfr + 0x0), 0);
  CHECK_EQ_U(rd(vm, sfr + 0x4), 0);
  CHECK_EQ_U(rd(vm, sfr + 0x8), 0);
  CHECK_EQ_U(rd(vm, sfr + 0xC), base);
  wr(vm, sfr + 0xC, 0x12345678); /* read-only */
  CHECK_EQ_U(rd(vm, sfr + 0xC), base);
  wr(vm, sfr + 0x0, 0x00000FFF); /* POINTER[31:3], WRAP[2] */
  CHECK_EQ_U(rd(vm, sfr + 0x0), 0xFFCu);
  wr(vm, sfr + 0x8, 0x0000004F); /* WATERMARK, AUTOHALT, AUTOSTOP */
  CHECK_EQ_U(rd(vm, sfr + 0x8), 0x4Bu);
  wr(vm, sfr + 0x10, 0xF);
  CHECK_EQ_U(rd(vm, sfr + 0x10), m33 ? 0xFu : 0u);
  /* The buffer is readable and writable memory at BASE. */
  wr(vm, base, 0xCAFEF00D);
  CHECK_EQ_U(rd(vm, base), 0xCAFEF00Du);
  sonde_vm_free(vm);
  sonde_machine_free(m);
}

static void test_m33(void) { regs("cm33", 0xE0043000u, 0x20040000u, true); }
static void test_m0p(void) { regs("cm0plus", 0xF0000000u, 0x20008000u, false); }

static void test_absent(void)
{
  struct sonde_machine *m = NULL;
  struct sonde_vm *vm = NULL;
  REQUIRE(sonde_machine_builtin("cm4f", &m) == 0);
  REQUIRE(sonde_vm_new(m, &vm) == 0);
  uint32_t v;
  CHECK(sonde_vm_read_mem(vm, 0xE004300Cu, &v, 4) != 0 || v != 0x20040000u);
  sonde_vm_free(vm);
  sonde_machine_free(m);
}

static void test_bad_size(void)
{
  const char *txt = "machine bad\ncore m0plus\nclock 48MHz\n"
                    "memory flash 0x00000000 64K access=rx\n"
                    "memory sram 0x20000000 16K access=rwx\n"
                    "mtb 0x20008000 3000\n";
  struct sonde_machine *m = NULL;
  struct sonde_vm *vm = NULL;
  REQUIRE(sonde_machine_parse(txt, strlen(txt), "bad.machine", &m, NULL) == 0);
  CHECK_EQ_I(sonde_vm_new(m, &vm), SONDE_E_RANGE);
  CHECK(vm == NULL);
  sonde_machine_free(m);
}

/* `mtb BASE SIZE regs=ADDR` places the M0+ register block; the M33's is fixed. */
static void test_regs_key(void)
{
  const char *txt = "machine r\ncore m0plus\nclock 48MHz\n"
                    "memory flash 0x00000000 64K access=rx\n"
                    "memory sram 0x20000000 16K access=rwx\n"
                    "mtb 0x20003000 4K regs=0x41006000\n";
  struct sonde_machine *m = NULL;
  struct sonde_vm *vm = NULL;
  REQUIRE(sonde_machine_parse(txt, strlen(txt), "r.machine", &m, NULL) == 0);
  REQUIRE(sonde_vm_new(m, &vm) == 0);
  CHECK_EQ_U(rd(vm, 0x4100600Cu), 0x20003000u); /* BASE */
  wr(vm, 0x41006000u, 0x18);
  CHECK_EQ_U(rd(vm, 0x41006000u), 0x18u);
  uint32_t v = 0;
  CHECK(sonde_vm_read_mem(vm, 0xF000000Cu, &v, 4) != 0 || v != 0x20003000u);
  sonde_vm_free(vm);
  sonde_machine_free(m);
  /* Errors: a bad key or address; regs= on an M33. */
  static const char *bad[] = {"mtb 0x20003000 4K regs=0x41006004\n", "mtb 0x20003000 4K base=1\n",
                              "mtb 0x20003000 4K regs=0x41006000 x\n"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char t[512];
    snprintf(t, sizeof t, "machine r\ncore m0plus\nclock 48MHz\n"
                          "memory sram 0x20000000 16K access=rwx\n%s", bad[i]);
    struct sonde_diag d = {0};
    m = NULL;
    CHECK(sonde_machine_parse(t, strlen(t), "r.machine", &m, &d) < 0);
    CHECK(strstr(d.msg, "r.machine:5: mtb: expected") != NULL);
    sonde_machine_free(m);
  }
  const char *m33 = "machine r\ncore m33\nclock 48MHz\n"
                    "memory sram 0x20000000 16K access=rwx\n"
                    "mtb 0x20003000 4K regs=0x41006000\n";
  m = NULL;
  vm = NULL;
  REQUIRE(sonde_machine_parse(m33, strlen(m33), "r.machine", &m, NULL) == 0);
  CHECK_EQ_I(sonde_vm_new(m, &vm), SONDE_E_RANGE);
  CHECK(vm == NULL);
  sonde_machine_free(m);
}

int main(void)
{
  RUN(test_m33);
  RUN(test_m0p);
  RUN(test_absent);
  RUN(test_bad_size);
  RUN(test_regs_key);
  return check_summary();
}
