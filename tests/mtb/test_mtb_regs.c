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

/* The MTBDWT of the built-in cm0plus (dbg_mtbdwt.c, as on Kinetis KL at
 * 0xF0001000): reset values, read-only fields, IDs, the ROM table entry,
 * MATCHED cleared by a read; absent from a machine that does not declare it;
 * `mtbdwt=` refused on an M33. */
static void test_mtbdwt_regs(void)
{
  const uint32_t W = 0xF0001000u;
  struct sonde_machine *m = NULL;
  struct sonde_vm *vm = NULL;
  REQUIRE(sonde_machine_builtin("cm0plus", &m) == 0);
  REQUIRE(sonde_vm_new(m, &vm) == 0);
  CHECK_EQ_U(rd(vm, W + 0x000), 0x2F000000u); /* CTRL: NUMCMP 2 */
  CHECK_EQ_U(rd(vm, W + 0x200), 0x20000000u); /* TBCTRL: NUMCOMP 2 */
  CHECK_EQ_U(rd(vm, W + 0xFC8), 0);          /* DEVICECFG */
  CHECK_EQ_U(rd(vm, W + 0xFCC), 4);          /* DEVICETYPID */
  static const uint32_t id[12] = {0, 0, 0, 0, 0x00, 0xE0, 0x08, 0, 0x0D, 0x90, 0x05, 0xB1};
  for (unsigned i = 0; i < 12; i++)
    CHECK_EQ_U(rd(vm, W + 0xFD0 + 4 * i), id[i]);
  wr(vm, W + 0x000, 0);
  CHECK_EQ_U(rd(vm, W + 0x000), 0x2F000000u); /* read-only */
  wr(vm, W + 0x020, 0x12345679);
  CHECK_EQ_U(rd(vm, W + 0x020), 0x12345679u); /* COMP0 */
  wr(vm, W + 0x024, 0xFFFFFFFF);
  CHECK_EQ_U(rd(vm, W + 0x024), 0x1Fu); /* MASK[4:0] */
  wr(vm, W + 0x028, 0xFFFFFFFF);
  CHECK_EQ_U(rd(vm, W + 0x028), 0xFD0Fu); /* FUNCTION, DATAVMATCH, DATAVSIZE, DATAVADDR0 */
  wr(vm, W + 0x038, 0xFFFFFFFF);
  CHECK_EQ_U(rd(vm, W + 0x038), 0xFu); /* FCT1: FUNCTION only */
  wr(vm, W + 0x200, 0xFFFFFFFF);
  CHECK_EQ_U(rd(vm, W + 0x200), 0x20000003u); /* ACOMP1, ACOMP0 */
  /* The ROM table lists it after the MTB (signed offset, present). */
  bool mtb = false, dwt = false;
  for (unsigned i = 0; i < 8; i++) {
    uint32_t e = rd(vm, 0xE00FF000u + 4 * i);
    mtb |= e == ((0xF0000000u - 0xE00FF000u) | 3u);
    dwt |= e == ((W - 0xE00FF000u) | 3u);
  }
  CHECK(mtb && dwt);
  sonde_vm_free(vm);
  sonde_machine_free(m);
  /* Not on a machine without the key (m0p_regs-like), refused on an M33. */
  const char *none = "machine r\ncore m0plus\nclock 48MHz\n"
                     "memory sram 0x20000000 16K access=rwx\nmtb 0x20003000 4K\n";
  REQUIRE(sonde_machine_parse(none, strlen(none), "r.machine", &m, NULL) == 0);
  REQUIRE(sonde_vm_new(m, &vm) == 0);
  uint32_t v = 0;
  CHECK(sonde_vm_read_mem(vm, W, &v, 4) != 0 || v != 0x2F000000u);
  sonde_vm_free(vm);
  sonde_machine_free(m);
  const char *m33 = "machine r\ncore m33\nclock 48MHz\n"
                    "memory sram 0x20000000 16K access=rwx\nmtb 0x20003000 4K mtbdwt=0xF0001000\n";
  REQUIRE(sonde_machine_parse(m33, strlen(m33), "r.machine", &m, NULL) == 0);
  struct sonde_diag d = {0};
  vm = NULL;
  CHECK_EQ_I(sonde_vm_new(m, &vm), SONDE_E_RANGE);
  CHECK(vm == NULL);
  sonde_machine_free(m);
  const char *bad = "machine r\ncore m0plus\nclock 48MHz\n"
                    "memory sram 0x20000000 16K access=rwx\nmtb 0x20003000 4K mtbdwt=0xF0001004\n";
  m = NULL;
  CHECK(sonde_machine_parse(bad, strlen(bad), "r.machine", &m, &d) < 0);
  CHECK(strstr(d.msg, "r.machine:5: mtb: expected regs=ADDR or mtbdwt=ADDR") != NULL);
  sonde_machine_free(m);
}

/* A three-branch loop in flash (0x40: b 0x44; 0x44: b 0x48; 0x48: b 0x40)
 * on cm0plus, its MTB and MTBDWT programmed by the debugger. */
static struct sonde_vm *loop_vm(struct sonde_machine **m)
{
  static const uint16_t code[] = {0xE000, 0xBF00, 0xE000, 0xBF00, 0xE7FA};
  uint32_t vec[2] = {0x20004000u, 0x41u};
  struct sonde_vm *vm = NULL;
  *m = NULL;
  if (sonde_machine_builtin("cm0plus", m) != 0 || sonde_vm_new(*m, &vm) != 0 ||
      sonde_vm_load_binary(vm, vec, sizeof vec, 0) != 0 ||
      sonde_vm_load_binary(vm, code, sizeof code, 0x40) != 0) {
    CHECK_FAIL_("cannot set up the loop on cm0plus");
    sonde_vm_free(vm);
    return NULL;
  }
  sonde_vm_reset(vm);
  return vm;
}

/* MTBDWT comparator 0 starts at 0x40 (instruction fetch), comparator 1 stops
 * at `stop` (0: off); POSITION 0 and FLOW `flow` on the MTB. */
static void arm(struct sonde_vm *vm, uint32_t stop, uint32_t flow)
{
  const uint32_t W = 0xF0001000u, S = 0xF0000000u;
  wr(vm, W + 0x020, 0x40);
  wr(vm, W + 0x028, 4);
  wr(vm, W + 0x030, stop);
  wr(vm, W + 0x038, stop ? 4 : 0);
  wr(vm, W + 0x200, 1); /* comparator 0 starts, 1 stops */
  wr(vm, S + 0x0, 0);
  wr(vm, S + 0x8, flow);
}

static uint32_t pkt(struct sonde_vm *vm, uint32_t off, unsigned word)
{
  return rd(vm, 0x20008000u + off + 4 * word);
}

/* TSTART at 0x40, TSTOP at 0x48: every pass is a session of two packets,
 * (0x40 -> 0x44 | S) and (0x44 -> 0x48): the start's own branch is traced,
 * the stop's is not; FCT0/FCT1.MATCHED are set and cleared by a read. */
static void test_mtbdwt_sessions(void)
{
  struct sonde_machine *m;
  struct sonde_vm *vm = loop_vm(&m);
  if (!vm) {
    sonde_machine_free(m);
    return;
  }
  const uint32_t W = 0xF0001000u, S = 0xF0000000u;
  arm(vm, 0x48, 0);
  wr(vm, S + 0x4, (1u << 5) | (1u << 6) | 2u); /* TSTARTEN, TSTOPEN, 64 bytes, EN clear */
  struct sonde_vm_stop st;
  sonde_vm_run(vm, 200, &st);
  uint32_t pos = rd(vm, S + 0x0);
  CHECK(pos & 4); /* wrapped: many sessions */
  for (uint32_t off = 0; off < 64; off += 16) {
    CHECK_EQ_U(pkt(vm, off, 0), 0x40u);
    CHECK_EQ_U(pkt(vm, off, 1), 0x45u); /* S-bit: a session starts */
    CHECK_EQ_U(pkt(vm, off + 8, 0), 0x44u);
    CHECK_EQ_U(pkt(vm, off + 8, 1), 0x48u);
  }
  CHECK(rd(vm, W + 0x028) & (1u << 24)); /* MATCHED */
  CHECK_EQ_U(rd(vm, W + 0x028) & (1u << 24), 0); /* cleared by the read */
  CHECK(rd(vm, W + 0x038) & (1u << 24));
  sonde_vm_free(vm);
  sonde_machine_free(m);
}

/* After a watermark AUTOSTOP, TSTART does not set EN again until software
 * moves POINTER or WATERMARK or clears AUTOSTOP (MTB-M0+ TRM 3.3.2, MASTER.EN
 * note); then the next start writes a packet with the S-bit. */
static void test_mtbdwt_autostop(void)
{
  struct sonde_machine *m;
  struct sonde_vm *vm = loop_vm(&m);
  if (!vm) {
    sonde_machine_free(m);
    return;
  }
  const uint32_t S = 0xF0000000u;
  arm(vm, 0, 0x10 | 1u); /* WATERMARK 0x10, AUTOSTOP */
  wr(vm, S + 0x4, (1u << 5) | 2u); /* TSTARTEN, 64 bytes */
  struct sonde_vm_stop st;
  sonde_vm_run(vm, 300, &st);
  CHECK_EQ_U(rd(vm, S + 0x0), 0x10u); /* two packets, then stopped for good */
  CHECK_EQ_U(rd(vm, S + 0x4) >> 31, 0);
  CHECK_EQ_U(pkt(vm, 0, 1), 0x45u);
  CHECK_EQ_U(pkt(vm, 8, 0), 0x44u);
  sonde_vm_run(vm, 600, &st); /* (an absolute cycle count) */
  CHECK_EQ_U(rd(vm, S + 0x0), 0x10u); /* still stopped */
  wr(vm, S + 0x8, 0x30 | 1u); /* a new WATERMARK: TSTART may start again */
  sonde_vm_run(vm, 900, &st);
  CHECK_EQ_U(rd(vm, S + 0x0), 0x30u); /* a session of four packets to the new mark */
  CHECK_EQ_U(rd(vm, S + 0x4) >> 31, 0);
  CHECK_EQ_U(pkt(vm, 0x10, 0), 0x40u);
  CHECK_EQ_U(pkt(vm, 0x10, 1), 0x45u); /* S-bit: a new session */
  CHECK_EQ_U(pkt(vm, 0x18, 1), 0x48u);
  CHECK_EQ_U(pkt(vm, 0x20, 1), 0x40u); /* no S-bit: the same session */
  sonde_vm_free(vm);
  sonde_machine_free(m);
}

/* Data comparators: a loop in flash that stores r0 = 1 to 0x20000100 (at
 * 0x44), branches (0x46 -> 0x4a), loads 0x20000104 (0x4a) and branches back
 * (0x4c -> 0x40):
 *   0x40 movs r0, #1; 0x42 ldr r1, =0x20000100; 0x44 str r0, [r1];
 *   0x46 b 0x4a; 0x48 nop; 0x4a ldr r2, [r1, #4]; 0x4c b 0x40; 0x50 literal.
 * A write match at 0x20000100 starts, a read match at 0x20000104 stops:
 * every pass writes one packet, (0x46 -> 0x4a | S). */
static struct sonde_vm *data_vm(struct sonde_machine **m)
{
  static const uint16_t code[] = {0x2001, 0x4903, 0x6008, 0xE000, 0xBF00,
                                  0x684A, 0xE7F8, 0xBF00, 0x0100, 0x2000};
  uint32_t vec[2] = {0x20004000u, 0x41u};
  struct sonde_vm *vm = NULL;
  *m = NULL;
  if (sonde_machine_builtin("cm0plus", m) != 0 || sonde_vm_new(*m, &vm) != 0 ||
      sonde_vm_load_binary(vm, vec, sizeof vec, 0) != 0 ||
      sonde_vm_load_binary(vm, code, sizeof code, 0x40) != 0) {
    CHECK_FAIL_("cannot set up the data loop on cm0plus");
    sonde_vm_free(vm);
    return NULL;
  }
  sonde_vm_reset(vm);
  return vm;
}

static void test_mtbdwt_data(void)
{
  const uint32_t W = 0xF0001000u, S = 0xF0000000u;
  struct sonde_machine *m;
  struct sonde_vm *vm = data_vm(&m);
  if (!vm) {
    sonde_machine_free(m);
    return;
  }
  wr(vm, W + 0x020, 0x20000100u);
  wr(vm, W + 0x028, 6); /* data write */
  wr(vm, W + 0x030, 0x20000104u);
  wr(vm, W + 0x038, 5); /* data read */
  wr(vm, W + 0x200, 1); /* comparator 0 starts, 1 stops */
  wr(vm, S + 0x0, 0);
  wr(vm, S + 0x4, (1u << 5) | (1u << 6) | 2u); /* TSTARTEN, TSTOPEN, 64 bytes */
  struct sonde_vm_stop st;
  sonde_vm_run(vm, 300, &st);
  uint32_t pos = rd(vm, S + 0x0);
  CHECK(pos & 4); /* wrapped: one packet per pass, many passes */
  for (uint32_t off = 0; off < 64; off += 8) {
    CHECK_EQ_U(pkt(vm, off, 0), 0x46u);
    CHECK_EQ_U(pkt(vm, off, 1), 0x4Bu); /* 0x4a with the S-bit: each pass a session */
  }
  CHECK(rd(vm, W + 0x028) & (1u << 24));
  CHECK(rd(vm, W + 0x038) & (1u << 24));
  sonde_vm_free(vm);
  sonde_machine_free(m);

  /* Data value: comparator 0 matches a word write of COMP0 at comparator 1's
   * address (DATAVMATCH, DATAVSIZE word, DATAVADDR0 = 1); r0 is 1. */
  for (uint32_t want = 1; want <= 2; want++) {
    vm = data_vm(&m);
    if (!vm) {
      sonde_machine_free(m);
      return;
    }
    wr(vm, W + 0x020, want);
    wr(vm, W + 0x028, 6 | (1u << 8) | (2u << 10) | (1u << 12));
    wr(vm, W + 0x030, 0x20000100u);
    wr(vm, W + 0x038, 0);
    wr(vm, W + 0x200, 1);
    wr(vm, S + 0x0, 0);
    wr(vm, S + 0x4, (1u << 5) | 8u); /* TSTARTEN only, 4 KiB: runs on once started */
    sonde_vm_run(vm, 300, &st);
    CHECK_EQ_U(rd(vm, S + 0x4) >> 31, want == 1); /* started only by the value 1 */
    CHECK_EQ_U(pkt(vm, 0, 0), want == 1 ? 0x46u : 0u);
    CHECK_EQ_U(pkt(vm, 0, 1), want == 1 ? 0x4Bu : 0u);
    sonde_vm_free(vm);
    sonde_machine_free(m);
  }
}

int main(void)
{
  RUN(test_m33);
  RUN(test_m0p);
  RUN(test_absent);
  RUN(test_bad_size);
  RUN(test_regs_key);
  RUN(test_mtbdwt_regs);
  RUN(test_mtbdwt_sessions);
  RUN(test_mtbdwt_autostop);
  RUN(test_mtbdwt_data);
  return check_summary();
}
