/* The JTAG debug port (src/vm/jtag_*.c) driven through its socket with the
 * remote_bitbang protocol, bit by bit, as OpenOCD would: the TAP (IDCODE,
 * BYPASS, IR capture), the JTAG-DP (power-up handshake, SELECT, RDBUFF,
 * sticky errors, WAIT, ABORT, DPIDR on a DPv1), the AHB-AP (CSW, TAR
 * auto-increment, DRW byte lanes, BD0-3, BASE, IDR) checked against the
 * library's reads of the same VM, SRST, the cycles-per-TCK mode, and a
 * server that survives garbage, disconnects mid-scan, a stalled client and a
 * second client waiting. */
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "sonde/jtag.h"
#include "sonde/vm.h"

static struct sonde_machine *M;
static struct sonde_vm *vm;
static struct sonde_jtag *J;
static int cfd = -1;

/* bytes to send, and how many TDO answers they ask for */
static char tx[1 << 16];
static size_t ntx, nread;

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void setup(const char *machine_text)
{
  struct sonde_diag d;
  if (sonde_machine_parse(machine_text, strlen(machine_text), "t.machine", &M, &d) != 0 ||
      sonde_vm_new(M, &vm) != 0)
    abort();
  /* vectors: SP 0x20001000, reset 0x41; code: movs r0,#1; adds r0,#1; b . */
  static const uint32_t vt[2] = {0x20001000, 0x41};
  static const uint16_t code[3] = {0x2001, 0x3001, 0xE7FE};
  sonde_vm_write_mem(vm, 0, vt, sizeof vt);
  sonde_vm_write_mem(vm, 0x40, code, sizeof code);
  sonde_vm_reset(vm);
  if (sonde_jtag_new(vm, NULL, 0, &J) != 0)
    abort();
  sonde_jtag_configure(J, UINT64_MAX, 300);
}

static void teardown(void)
{
  if (cfd >= 0)
    close(cfd);
  cfd = -1;
  sonde_jtag_free(J);
  sonde_vm_free(vm);
  sonde_machine_free(M);
}

static int connect_client(void)
{
  int s = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)sonde_jtag_port(J)),
                           .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  if (connect(s, (struct sockaddr *)&sa, sizeof sa) < 0)
    abort();
  return s;
}

static void pump(double ms)
{
  double end = now_s() + ms / 1000;
  while (now_s() < end)
    sonde_jtag_poll(J, 1);
}

/* ---- building bit streams ------------------------------------------------------- */

static void clk(int tms, int tdi, bool read)
{
  tx[ntx++] = (char)('0' + (tms << 1 | tdi));
  if (read) {
    tx[ntx++] = 'R';
    nread++;
  }
  tx[ntx++] = (char)('0' + (4 | tms << 1 | tdi));
}

static void tap_reset(void)
{
  for (int i = 0; i < 5; i++)
    clk(1, 0, false);
  clk(0, 0, false); /* Run-Test/Idle */
}

/* From Run-Test/Idle: shift `len` bits (LSB first) through IR or DR, back to
 * Run-Test/Idle; the bits shifted out are read. */
static void scan(bool ir, uint64_t v, unsigned len)
{
  clk(1, 0, false);
  if (ir)
    clk(1, 0, false);
  clk(0, 0, false); /* Capture */
  clk(0, 0, false); /* Shift */
  for (unsigned i = 0; i < len; i++)
    clk(i == len - 1, (v >> i) & 1, true);
  clk(1, 0, false); /* Update */
  clk(0, 0, false); /* Idle */
}

static void idle(unsigned n)
{
  for (unsigned i = 0; i < n; i++)
    clk(0, 0, false);
}

/* Send what was built, serve it, return the TDO answers as bits. */
static char rx[1 << 14];
static void flush(void)
{
  if (cfd < 0)
    cfd = connect_client();
  CHECK_EQ_I(send(cfd, tx, ntx, MSG_NOSIGNAL), (long long)ntx);
  size_t got = 0;
  double t0 = now_s();
  while (got < nread && now_s() - t0 < 5) {
    sonde_jtag_poll(J, 1);
    ssize_t k = recv(cfd, rx + got, sizeof rx - got, MSG_DONTWAIT);
    if (k > 0)
      got += (size_t)k;
  }
  CHECK_EQ_U(got, nread);
  ntx = 0;
  nread = 0;
}

/* The i-th shifted-out value of `len` bits in rx, from bit offset `off`. */
static uint64_t bits(size_t off, unsigned len)
{
  uint64_t v = 0;
  for (unsigned i = 0; i < len; i++)
    v |= (uint64_t)(rx[off + i] == '1') << i;
  return v;
}

enum { IR_ABORT = 8, IR_DPACC = 10, IR_APACC = 11, IR_IDCODE = 14, IR_BYPASS = 15 };

static uint64_t req(unsigned a, bool read, uint32_t data)
{
  return (uint64_t)data << 3 | (uint64_t)(a >> 2 & 3) << 1 | read;
}

/* One DPACC/APACC access, then an RDBUFF read to fetch its result; returns
 * the result (bits 34:3 of the second scan) and the first ACK in *ack. */
static uint32_t xfer(unsigned ir, unsigned a, bool read, uint32_t data, unsigned *ack)
{
  scan(true, ir, 4);
  scan(false, req(a, read, data), 35);
  scan(true, IR_DPACC, 4);
  scan(false, req(0xC, true, 0), 35);
  flush();
  /* rx: 4 IR bits, 35, 4 IR bits, 35 */
  if (ack)
    *ack = (unsigned)bits(4, 3);
  return (uint32_t)(bits(4 + 35 + 4, 35) >> 3);
}

static uint32_t dp_read(unsigned a) { return xfer(IR_DPACC, a, true, 0, NULL); }
static void dp_write(unsigned a, uint32_t v) { xfer(IR_DPACC, a, false, v, NULL); }
static uint32_t ap_read(unsigned reg)
{
  dp_write(0x8, reg & 0xF0); /* SELECT: AP 0, bank */
  return xfer(IR_APACC, reg & 0xC, true, 0, NULL);
}
static void ap_write(unsigned reg, uint32_t v)
{
  dp_write(0x8, reg & 0xF0);
  xfer(IR_APACC, reg & 0xC, false, v, NULL);
}

static uint32_t lib_word(uint32_t addr)
{
  uint32_t v = 0;
  CHECK_EQ_I(sonde_vm_read_mem(vm, addr, &v, 4), 0);
  return v;
}

#define CM3 "core m3\nclock 48MHz\nmemory flash 0 64K access=rx\nmemory sram 0x20000000 64K\n"

/* ---- tests ---------------------------------------------------------------------- */

static void test_tap(void)
{
  setup(CM3);
  tap_reset();
  scan(false, 0, 32); /* after reset IR = IDCODE */
  scan(true, IR_BYPASS, 4);
  scan(false, 0xA5, 8);
  flush();
  CHECK_EQ_U(bits(0, 32), 0x4BA00477);
  CHECK_EQ_U(bits(32, 4), 0x1);          /* IR capture 0b0001 */
  CHECK_EQ_U(bits(36, 8), (0xA5 << 1) & 0xFF); /* BYPASS: one bit of delay, captures 0 */
  scan(true, IR_IDCODE, 4);
  scan(false, 0, 32);
  scan(true, 0x3, 4); /* an unknown instruction selects BYPASS */
  scan(false, 0x3, 4);
  flush();
  CHECK_EQ_U(bits(4, 32), 0x4BA00477);
  CHECK_EQ_U(bits(40, 4), 0x6);
  teardown();
}

static void test_dp_power_sticky(void)
{
  setup(CM3);
  tap_reset();
  flush();
  unsigned ack = 0;
  xfer(IR_DPACC, 0x4, true, 0, &ack);
  CHECK_EQ_U(ack, 2); /* OK/FAULT */
  CHECK_EQ_U(dp_read(0x4), 0);
  CHECK_EQ_U(dp_read(0x0), 0); /* DPv0: no DPIDR */
  /* an AP access before the power-up handshake: STICKYERR */
  ap_read(0xFC);
  CHECK_EQ_U(dp_read(0x4), 1u << 5);
  dp_write(0x4, (1u << 5) | (1u << 28) | (1u << 30)); /* clear STICKYERR, power-up requests */
  CHECK_EQ_U(dp_read(0x4), 0xF0000000u);              /* requests and their ACKs */
  dp_write(0x8, 0x000000F0);
  CHECK_EQ_U(dp_read(0x8), 0xF0);
  CHECK_EQ_U(ap_read(0xFC), 0x24770011); /* IDR: AHB-AP */
  CHECK_EQ_U(ap_read(0xF8), 0xE00FF003); /* BASE: the ROM table */
  CHECK_EQ_U(ap_read(0xF4), 0);          /* CFG */
  dp_write(0x8, 0x01000000);             /* AP 1 does not exist: reads zero */
  CHECK_EQ_U(xfer(IR_APACC, 0xC, true, 0, NULL), 0);
  /* words with auto-increment, checked through the library */
  ap_write(0x00, 0x23000012); /* CSW: word, single increment */
  CHECK_EQ_U(ap_read(0x00), 0x23000052); /* DeviceEn reads 1 */
  ap_write(0x04, 0x20000100);
  xfer(IR_APACC, 0xC, false, 0x11111111, NULL);
  xfer(IR_APACC, 0xC, false, 0x22222222, NULL);
  CHECK_EQ_U(lib_word(0x20000100), 0x11111111);
  CHECK_EQ_U(lib_word(0x20000104), 0x22222222);
  CHECK_EQ_U(ap_read(0x04), 0x20000108);
  /* TAR wraps inside its 4 KiB block */
  ap_write(0x04, 0x20000FFC);
  xfer(IR_APACC, 0xC, false, 0x33333333, NULL);
  CHECK_EQ_U(ap_read(0x04), 0x20000000);
  /* bytes and halfwords in their lanes */
  ap_write(0x00, 0x23000010); /* byte */
  ap_write(0x04, 0x20000101);
  xfer(IR_APACC, 0xC, false, 0x0000AB00, NULL);
  CHECK_EQ_U(lib_word(0x20000100), 0x1111AB11);
  ap_write(0x04, 0x20000102);
  CHECK_EQ_U(xfer(IR_APACC, 0xC, true, 0, NULL), 0x00110000);
  ap_write(0x00, 0x23000011); /* halfword */
  ap_write(0x04, 0x20000102);
  xfer(IR_APACC, 0xC, false, 0xBEEF0000, NULL);
  CHECK_EQ_U(lib_word(0x20000100), 0xBEEFAB11);
  /* BD0-3: the words of TAR's 16-byte block */
  ap_write(0x00, 0x23000002);
  ap_write(0x04, 0x20000104);
  dp_write(0x8, 0x10);
  CHECK_EQ_U(xfer(IR_APACC, 0x0, true, 0, NULL), 0xBEEFAB11);
  CHECK_EQ_U(xfer(IR_APACC, 0x4, true, 0, NULL), 0x22222222);
  xfer(IR_APACC, 0xC, false, 0x44444444, NULL);
  CHECK_EQ_U(lib_word(0x2000010C), 0x44444444);
  /* an access out of the memory map: STICKYERR, and AP requests are ignored until cleared */
  ap_write(0x04, 0x60000000);
  CHECK_EQ_U(xfer(IR_APACC, 0xC, true, 0, NULL), 0);
  CHECK_EQ_U(dp_read(0x4) & (1u << 5), 1u << 5);
  ap_write(0x04, 0x20000100);
  xfer(IR_APACC, 0xC, false, 0x55555555, NULL);
  CHECK_EQ_U(lib_word(0x20000100), 0xBEEFAB11); /* not performed */
  dp_write(0x4, (1u << 5) | (1u << 28) | (1u << 30));
  CHECK_EQ_U(dp_read(0x4), 0xF0000000u);
  ap_write(0x04, 0x20000100);
  xfer(IR_APACC, 0xC, false, 0x55555555, NULL);
  CHECK_EQ_U(lib_word(0x20000100), 0x55555555);
  struct sonde_jtag_stats st;
  sonde_jtag_get_stats(J, &st);
  CHECK_EQ_U(st.bus_errors, 2); /* the powered-down access and the unmapped one */
  teardown();
}

static void test_wait_abort(void)
{
  setup(CM3);
  sonde_jtag_set_ap_busy(J, 20);
  tap_reset();
  flush();
  dp_write(0x4, (1u << 28) | (1u << 30));
  dp_write(0x8, 0xF0);
  /* APACC read of IDR, then at once a DPACC scan: WAIT, its request ignored */
  scan(true, IR_APACC, 4);
  scan(false, req(0xC, true, 0), 35);
  scan(true, IR_DPACC, 4);
  scan(false, req(0x8, false, 0x12345678), 35); /* would set SELECT */
  idle(30);                                      /* the AP finishes */
  scan(false, req(0xC, true, 0), 35);
  flush();
  CHECK_EQ_U(bits(4 + 35 + 4, 3), 1);                    /* WAIT */
  CHECK_EQ_U(bits(4 + 35 + 4 + 35, 3), 2);               /* OK */
  CHECK_EQ_U(bits(4 + 35 + 4 + 35, 35) >> 3, 0x24770011); /* IDR, from the pipeline */
  idle(30);
  flush();
  CHECK_EQ_U(dp_read(0x8), 0xF0); /* the WAITed write was not done */
  /* DAPABORT ends a busy AP at once */
  scan(true, IR_APACC, 4);
  scan(false, req(0xC, true, 0), 35);
  scan(true, IR_ABORT, 4);
  scan(false, req(0x0, false, 1), 35);
  scan(true, IR_DPACC, 4);
  scan(false, req(0xC, true, 0), 35);
  flush();
  CHECK_EQ_U(bits(4 + 35 + 4 + 35 + 4, 3), 2);
  /* with ORUNDETECT a WAIT sets STICKYORUN */
  idle(30);
  dp_write(0x4, (1u << 28) | (1u << 30) | 1u);
  idle(30);
  flush();
  scan(true, IR_APACC, 4);
  scan(false, req(0xC, true, 0), 35);
  scan(true, IR_DPACC, 4);
  scan(false, req(0xC, true, 0), 35);
  idle(30);
  flush();
  CHECK_EQ_U(dp_read(0x4) & 2, 2);
  struct sonde_jtag_stats st;
  sonde_jtag_get_stats(J, &st);
  CHECK(st.waits >= 2);
  teardown();
}

static void test_dpv1_idcode(void)
{
  setup(CM3 "debug-port jtag idcode=0x6BA02477 dpv=1\n");
  tap_reset();
  scan(false, 0, 32);
  flush();
  CHECK_EQ_U(bits(0, 32), 0x6BA02477);
  CHECK_EQ_U(dp_read(0x0), 0x6BA02477); /* DPIDR */
  teardown();
}

static void test_cycles_per_tck_and_srst(void)
{
  uint64_t cycles[2];
  for (int run = 0; run < 2; run++) {
    setup(CM3);
    sonde_jtag_set_cycles_per_tck(J, 10);
    tap_reset();      /* 6 TCKs */
    scan(false, 0, 32); /* 37 TCKs */
    flush();
    pump(20); /* nothing more runs without TCKs */
    struct sonde_vm_stats st;
    sonde_vm_get_stats(vm, &st);
    cycles[run] = st.cycles;
    teardown();
  }
  CHECK_EQ_U(cycles[0], cycles[1]); /* the same bits, the same cycles */
  if (cycles[0] < 430 || cycles[0] >= 434) /* 43 TCKs, then the instruction in flight */
    CHECK_FAIL_("%llu cycles after 43 TCKs of 10 cycles", (unsigned long long)cycles[0]);
  /* SRST: the core stops while it is asserted and restarts from reset */
  setup(CM3);
  flush();
  pump(20);
  tx[ntx++] = 's';
  flush();
  pump(5);
  struct sonde_vm_stats a, b;
  sonde_vm_get_stats(vm, &a);
  pump(20);
  sonde_vm_get_stats(vm, &b);
  CHECK_EQ_U(a.cycles, b.cycles);
  uint32_t r0 = 7;
  sonde_vm_write_reg(vm, 0, 99);
  tx[ntx++] = 'r';
  flush();
  pump(20);
  sonde_vm_read_reg(vm, 0, &r0);
  CHECK_EQ_U(r0, 2); /* ran the reset handler again: movs r0,#1; adds r0,#1 */
  teardown();
}

static void test_robust(void)
{
  setup(CM3);
  /* garbage: every byte value, then a valid IDCODE scan on the same client */
  for (int i = 0; i < 256; i++)
    if (i != 'Q' && i != 'R')
      tx[ntx++] = (char)i;
  flush();
  tap_reset();
  scan(false, 0, 32);
  flush();
  CHECK_EQ_U(bits(0, 32), 0x4BA00477);
  /* a client that leaves in the middle of a scan; the next one starts afresh */
  clk(1, 0, false);
  clk(0, 0, false);
  clk(0, 0, false);
  clk(0, 1, true);
  flush();
  close(cfd);
  cfd = -1;
  pump(20);
  clk(0, 0, false);   /* Test-Logic-Reset -> Run-Test/Idle */
  scan(false, 0, 32); /* IR = IDCODE again */
  flush();
  CHECK_EQ_U(bits(0, 32), 0x4BA00477);
  /* a stalled client (mid-scan, 300 ms timeout) is dropped; the waiting one is served */
  clk(1, 0, false);
  clk(0, 0, false);
  clk(0, 0, false);
  flush();
  int first = cfd;
  cfd = connect_client();
  tap_reset();
  scan(false, 0, 32);
  send(cfd, tx, ntx, MSG_NOSIGNAL);
  pump(100);
  char buf[64];
  CHECK_EQ_I(recv(cfd, buf, sizeof buf, MSG_DONTWAIT), -1); /* still waiting */
  pump(400);
  CHECK_EQ_I(recv(first, buf, sizeof buf, MSG_DONTWAIT), 0); /* the stalled one was closed */
  close(first);
  ntx = 0;
  nread = 32;
  flush();
  CHECK_EQ_U(bits(0, 32), 0x4BA00477);
  /* 'Q' ends a client */
  tx[ntx++] = 'Q';
  flush();
  pump(20);
  CHECK_EQ_I(recv(cfd, buf, sizeof buf, MSG_DONTWAIT), 0);
  struct sonde_jtag_stats st;
  sonde_jtag_get_stats(J, &st);
  CHECK_EQ_U(st.clients, 3);
  CHECK(st.ignored_bytes >= 240);
  CHECK(st.batches < st.bytes_in / 10); /* bytes are handled in batches */
  teardown();
}

int main(void)
{
  signal(SIGPIPE, SIG_IGN);
  alarm(120);
  RUN(test_tap);
  RUN(test_dp_power_sticky);
  RUN(test_wait_abort);
  RUN(test_dpv1_idcode);
  RUN(test_cycles_per_tck_and_srst);
  RUN(test_robust);
  return check_summary();
}
