/* Real OpenOCD (Debian's 0.12) against the virtual chip's JTAG debug port
 * (issue 16): this program holds the VM and its JTAG server
 * (sonde_jtag_poll in its own loop), starts `openocd -f
 * scripts/openocd/sonde-vm.cfg` on free ports, and drives OpenOCD through its
 * Tcl RPC port. Every OpenOCD result is compared with what the library API
 * reads from the same VM at that moment: registers, memory, the FPB and DWT
 * comparators OpenOCD programmed, the reset vector, a 64 KiB image.
 * The firmware is firmware/jtag/jtag_demo.c (a counter loop). */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "sonde/jtag.h"
#include "sonde/sym.h"
#include "sonde/vm.h"

extern char **environ;

static struct sonde_machine *M;
static struct sonde_vm *vm;
static struct sonde_jtag *J;
static struct sonde_sym *S;
static int rpc_fd = -1;
static pid_t ocd = -1;
static char logpath[256];
static char reply[1 << 16];

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void on_alarm(int sig)
{
  (void)sig;
  if (ocd > 0)
    kill(ocd, SIGKILL);
  static const char m[] = "test_jtag_openocd: timed out\n";
  (void)!write(2, m, sizeof m - 1);
  _exit(1);
}

static unsigned free_port(void)
{
  int s = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t sl = sizeof sa;
  if (bind(s, (struct sockaddr *)&sa, sizeof sa) < 0 || getsockname(s, (struct sockaddr *)&sa, &sl) < 0)
    abort();
  close(s);
  return ntohs(sa.sin_port);
}

static uint32_t sym(const char *name)
{
  uint32_t a = 0;
  if (sonde_sym_address(S, name, &a, NULL) != 0)
    CHECK_FAIL_("no symbol %s", name);
  return a;
}

static uint32_t lib_word(uint32_t addr)
{
  uint32_t v = 0;
  CHECK_EQ_I(sonde_vm_read_mem(vm, addr, &v, 4), 0);
  return v;
}

static uint32_t lib_reg(unsigned r)
{
  uint32_t v = 0;
  CHECK_EQ_I(sonde_vm_read_reg(vm, r, &v), 0);
  return v;
}

/* Serve the JTAG port for `ms` milliseconds. */
static void pump(double ms)
{
  double end = now_s() + ms / 1000;
  while (now_s() < end)
    sonde_jtag_poll(J, 1);
}

/* One Tcl RPC command through `capture`, serving the JTAG port meanwhile. */
static const char *rpc(const char *cmd)
{
  char req[1024];
  int n = snprintf(req, sizeof req, "capture {%s}\x1a", cmd);
  if (send(rpc_fd, req, (size_t)n, MSG_NOSIGNAL) != n) {
    CHECK_FAIL_("rpc send: %s", cmd);
    return "";
  }
  size_t len = 0;
  double t0 = now_s();
  while (now_s() - t0 < 30) {
    sonde_jtag_poll(J, 0);
    ssize_t k = recv(rpc_fd, reply + len, sizeof reply - 1 - len, MSG_DONTWAIT);
    if (k == 0)
      break;
    if (k > 0)
      len += (size_t)k;
    if (len && reply[len - 1] == 0x1a) {
      reply[len - 1] = 0;
      return reply;
    }
    if (k < 0) {
      struct pollfd pf = {rpc_fd, POLLIN, 0};
      poll(&pf, 1, 1);
    }
  }
  CHECK_FAIL_("no answer to '%s'", cmd);
  reply[0] = 0;
  return reply;
}

/* The value OpenOCD prints after "NAME (/32): " or "ADDR: " */
static uint32_t rpc_value(const char *cmd)
{
  const char *r = rpc(cmd), *p = strstr(r, ": ");
  unsigned long v = 0;
  if (!p || sscanf(p + 2, "%lx", &v) != 1)
    CHECK_FAIL_("'%s' answered '%s'", cmd, r);
  return (uint32_t)v;
}

static void wait_state(const char *want)
{
  double t0 = now_s();
  char cur[64] = "";
  while (now_s() - t0 < 10) {
    snprintf(cur, sizeof cur, "%s", rpc("sonde.cpu curstate"));
    if (!strcmp(cur, want))
      return;
    pump(20);
  }
  CHECK_FAIL_("target state '%s', expected '%s'", cur, want);
}

static bool log_has(const char *text)
{
  FILE *f = fopen(logpath, "r");
  char line[512];
  bool found = false;
  while (f && !found && fgets(line, sizeof line, f))
    found = strstr(line, text) != NULL;
  if (f)
    fclose(f);
  return found;
}

static bool start_openocd(void)
{
  unsigned tcl = free_port();
  char env_port[32], cmds[160];
  snprintf(env_port, sizeof env_port, "%u", sonde_jtag_port(J));
  setenv("SONDE_JTAG_PORT", env_port, 1);
  snprintf(cmds, sizeof cmds, "gdb_port disabled; telnet_port disabled; tcl_port %u", tcl);
  snprintf(logpath, sizeof logpath, "%s/jtag_openocd_%d.log", SONDE_BINARY_DIR, (int)getpid());
  char *argv[] = {"openocd", "-l", logpath, "-c", cmds, "-f",
                  SONDE_SOURCE_DIR "/scripts/openocd/sonde-vm.cfg", NULL};
  if (posix_spawnp(&ocd, "openocd", NULL, NULL, argv, environ) != 0) {
    CHECK_FAIL_("cannot start openocd (scripts/install-deps installs it)");
    return false;
  }
  double t0 = now_s();
  while (now_s() - t0 < 20) { /* OpenOCD scans the chain before it opens its ports */
    pump(20);
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)tcl),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int fl = fcntl(s, F_GETFL);
    fcntl(s, F_SETFL, fl | O_NONBLOCK);
    int rc = connect(s, (struct sockaddr *)&sa, sizeof sa);
    if (rc < 0 && errno == EINPROGRESS) {
      struct pollfd pf = {s, POLLOUT, 0};
      for (int i = 0; i < 100 && poll(&pf, 1, 0) == 0; i++)
        sonde_jtag_poll(J, 1);
      int err = 0;
      socklen_t el = sizeof err;
      getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &el);
      rc = err ? -1 : 0;
    }
    if (rc == 0) {
      rpc_fd = s;
      return true;
    }
    close(s);
  }
  CHECK_FAIL_("OpenOCD's Tcl port %u did not open", tcl);
  return false;
}

static void stop_openocd(void)
{
  if (rpc_fd >= 0) {
    send(rpc_fd, "shutdown\x1a", 9, MSG_NOSIGNAL);
    close(rpc_fd);
    rpc_fd = -1;
  }
  int st;
  double t0 = now_s();
  while (ocd > 0 && waitpid(ocd, &st, WNOHANG) == 0) {
    sonde_jtag_poll(J, 1);
    if (now_s() - t0 > 5) {
      kill(ocd, SIGKILL);
      waitpid(ocd, &st, 0);
      break;
    }
  }
  ocd = -1;
}

/* ---- the checks ---------------------------------------------------------------- */

static void test_attach(void)
{
  CHECK(log_has("tap/device found: 0x4ba00477 (mfg: 0x23b (ARM Ltd)"));
  CHECK(log_has("[sonde.cpu] Cortex-M4 r0p1 processor detected"));
  CHECK(log_has("[sonde.cpu] target has 6 breakpoints, 4 watchpoints"));
  const char *r = rpc("dap info");
  static const char *const want[] = {
      "AP ID register 0x24770011", "Type is MEM-AP AHB3", "MEM-AP BASE 0xe00ff003",
      "Part is 0x4c4, Cortex-M4 ROM (ROM Table)", "ROMTABLE[0x0] = 0xfff0f003",
      "Part is 0x00c, Cortex-M4 SCS (System Control Space)",
      "Part is 0x002, Cortex-M3 DWT (Data Watchpoint and Trace)",
      "Part is 0x003, Cortex-M3 FPB (Flash Patch and Breakpoint)",
      "Part is 0x001, Cortex-M3 ITM (Instrumentation Trace Module)",
      "Part is 0x9a1, Cortex-M4 TPIU (Trace Port Interface Unit)", "End of ROM table"};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
    if (!strstr(r, want[i]))
      CHECK_FAIL_("dap info lacks '%s':\n%s", want[i], r);
}

static void test_running(void)
{
  CHECK_EQ_STR(rpc("sonde.cpu curstate"), "running");
  char cmd[64];
  snprintf(cmd, sizeof cmd, "mdw 0x%08x", sym("counter"));
  uint32_t prev = 0;
  for (int i = 0; i < 3; i++) {
    uint32_t v = rpc_value(cmd);
    CHECK(v > prev); /* the counter runs between two reads */
    CHECK(lib_word(sym("counter")) >= v);
    prev = v;
    pump(5);
  }
  CHECK_EQ_STR(rpc("sonde.cpu curstate"), "running"); /* mdw did not halt the core */
  uint32_t pcsr = rpc_value("mdw 0xE000101C"); /* DWT_PCSR while running */
  CHECK(pcsr >= sym("tick") && pcsr < sym("main") + 0x40);
}

static void test_halt_regs_mem(void)
{
  rpc("halt");
  wait_state("halted");
  static const char *const names[] = {"r0", "r1", "r2", "r3", "sp", "lr", "pc", "xPSR", "msp"};
  static const unsigned regs[] = {0, 1, 2, 3, 13, 14, 15, 16, 17};
  char cmd[96];
  for (size_t i = 0; i < sizeof regs / sizeof regs[0]; i++) {
    snprintf(cmd, sizeof cmd, "reg %s", names[i]);
    CHECK_EQ_U(rpc_value(cmd), lib_reg(regs[i]));
  }
  snprintf(cmd, sizeof cmd, "mdw 0x%08x", sym("counter"));
  CHECK_EQ_U(rpc_value(cmd), lib_word(sym("counter")));
  /* step: one instruction, as the library counts them */
  struct sonde_vm_stats a, b;
  sonde_vm_get_stats(vm, &a);
  rpc("step");
  sonde_vm_get_stats(vm, &b);
  CHECK_EQ_U(b.instructions, a.instructions + 1);
  CHECK_EQ_U(rpc_value("reg pc"), lib_reg(15));
  /* writes of each size land in the VM's memory, in the right byte lanes */
  rpc("mww 0x20001000 0xdeadbeef");
  CHECK_EQ_U(lib_word(0x20001000), 0xdeadbeef);
  rpc("mwh 0x20001002 0x1234");
  CHECK_EQ_U(lib_word(0x20001000), 0x1234beef);
  rpc("mwb 0x20001001 0x56");
  CHECK_EQ_U(lib_word(0x20001000), 0x123456ef);
  CHECK_EQ_U(rpc_value("mdb 0x20001002"), 0x34);
  CHECK_EQ_U(rpc_value("mdh 0x20001002"), 0x1234);
  /* registers written through OpenOCD read back through the library */
  rpc("reg r4 0x600dcafe"); /* OpenOCD writes it back (DCRSR) before the next step */
  rpc("step");
  CHECK_EQ_U(lib_reg(4), 0x600dcafe); /* tick() and main() do not use r4 */
  rpc("resume");
  pump(20);
  CHECK_EQ_STR(rpc("sonde.cpu curstate"), "running");
}

static void test_breakpoints(void)
{
  char cmd[96];
  uint32_t tick = sym("tick");
  /* hardware: an FPB comparator */
  snprintf(cmd, sizeof cmd, "bp 0x%08x 2 hw", tick);
  rpc(cmd);
  CHECK_EQ_U(lib_word(0xE0002000) & 1, 1); /* FP_CTRL.ENABLE */
  bool found = false;
  for (unsigned i = 0; i < 6; i++) {
    uint32_t c = lib_word(0xE0002008 + 4 * i);
    found |= (c & 1) && (c & 0x1FFFFFFCu) == (tick & ~3u);
  }
  CHECK(found);
  wait_state("halted");
  CHECK_EQ_U(lib_reg(15), tick);
  CHECK_EQ_U(rpc_value("reg pc"), tick);
  snprintf(cmd, sizeof cmd, "rbp 0x%08x", tick);
  rpc(cmd);
  for (unsigned i = 0; i < 6; i++)
    CHECK_EQ_U(lib_word(0xE0002008 + 4 * i) & 1, 0);
  /* software: a BKPT written over the code, and the code put back */
  uint16_t orig = 0, now = 0;
  sonde_vm_read_mem(vm, tick, &orig, 2);
  snprintf(cmd, sizeof cmd, "bp 0x%08x 2", tick);
  rpc(cmd);
  sonde_vm_read_mem(vm, tick, &now, 2);
  CHECK_EQ_U(now >> 8, 0xBE); /* BKPT */
  rpc("resume");
  wait_state("halted");
  CHECK_EQ_U(lib_reg(15), tick);
  snprintf(cmd, sizeof cmd, "rbp 0x%08x", tick);
  rpc(cmd);
  sonde_vm_read_mem(vm, tick, &now, 2);
  CHECK_EQ_U(now, orig);
}

static void test_watchpoint(void)
{
  char cmd[96];
  uint32_t w = sym("watched");
  uint32_t before = lib_word(w);
  snprintf(cmd, sizeof cmd, "wp 0x%08x 4 w", w);
  rpc(cmd);
  rpc("resume"); /* OpenOCD programs the DWT comparator when it resumes */
  wait_state("halted");
  CHECK_EQ_U(lib_word(w), before + 1);
  CHECK(log_has("halted due to watchpoint"));
  CHECK_EQ_U(lib_word(0xE0001020), w);       /* DWT_COMP0 */
  CHECK_EQ_U(lib_word(0xE0001028) & 0xF, 6); /* DWT_FUNCTION0: write */
  snprintf(cmd, sizeof cmd, "rwp 0x%08x", w);
  rpc(cmd);
  CHECK_EQ_U(lib_word(0xE0001028) & 0xF, 0);
}

static void test_load_verify(void)
{
  static uint8_t img[65536], back[65536];
  uint32_t x = 12345;
  for (size_t i = 0; i < sizeof img; i++) {
    x = x * 1103515245u + 12345u;
    img[i] = (uint8_t)(x >> 16);
  }
  char path[300], cmd[400];
  snprintf(path, sizeof path, "%s/jtag_img_%d.bin", SONDE_BINARY_DIR, (int)getpid());
  FILE *f = fopen(path, "wb");
  CHECK(f && fwrite(img, 1, sizeof img, f) == sizeof img);
  if (f)
    fclose(f);
  snprintf(cmd, sizeof cmd, "load_image %s 0x20010000 bin", path);
  CHECK(strstr(rpc(cmd), "65536 bytes written at address 0x20010000") != NULL);
  CHECK_EQ_I(sonde_vm_read_mem(vm, 0x20010000, back, sizeof back), 0);
  CHECK(!memcmp(img, back, sizeof img));
  snprintf(cmd, sizeof cmd, "verify_image %s 0x20010000 bin", path);
  const char *r = rpc(cmd);
  if (!strstr(r, "verified 65536 bytes")) /* through OpenOCD's on-target CRC algorithm */
    CHECK_FAIL_("verify_image: %s", r);
  remove(path);
}

static void test_reset_and_exit(void)
{
  rpc("reset halt");
  wait_state("halted");
  uint32_t reset_pc = lib_word(4) & ~1u;
  CHECK_EQ_U(lib_reg(15), reset_pc);
  CHECK_EQ_U(rpc_value("reg pc"), reset_pc);
  CHECK_EQ_U(rpc_value("reg msp"), lib_word(0));
  /* run to main (startup zeroes .bss), ask the firmware to exit with 42 */
  char cmd[96];
  snprintf(cmd, sizeof cmd, "bp 0x%08x 2 hw", sym("main"));
  rpc(cmd);
  rpc("resume");
  wait_state("halted");
  CHECK_EQ_U(lib_reg(15), sym("main"));
  snprintf(cmd, sizeof cmd, "rbp 0x%08x", sym("main"));
  rpc(cmd);
  snprintf(cmd, sizeof cmd, "mww 0x%08x 42", sym("stop_request"));
  rpc(cmd);
  rpc("resume");
  wait_state("halted"); /* the exit leaves the core halted at the semihosting call */
  stop_openocd();
  struct sonde_vm_stop stop;
  memset(&stop, 0, sizeof stop);
  CHECK_EQ_I(sonde_jtag_serve(J, UINT64_MAX, 2000, &stop), 0); /* returns: ended, client gone */
  CHECK_EQ_I(stop.reason, SONDE_VM_STOP_EXIT);
  CHECK_EQ_I(stop.exit_code, 42);
  struct sonde_jtag_stats st;
  sonde_jtag_get_stats(J, &st);
  CHECK_EQ_U(st.bus_errors, 0);
  CHECK(st.batches > 0 && st.bytes_in > st.batches); /* bytes come in batches */
}

static void load(const char *machine, const char *elf)
{
  if (sonde_machine_builtin(machine, &M) != 0 || sonde_vm_new(M, &vm) != 0)
    abort();
  FILE *f = fopen(elf, "rb");
  static uint8_t buf[1 << 20];
  size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
  if (f)
    fclose(f);
  if (!n || sonde_vm_load_elf(vm, buf, n, elf) != 0 || sonde_vm_reset(vm) != 0 ||
      sonde_sym_open(elf, &S, NULL) != 0) {
    fprintf(stderr, "cannot load %s\n", elf);
    exit(1);
  }
  if (sonde_jtag_new(vm, NULL, 0, &J) != 0)
    abort();
  sonde_jtag_configure(J, UINT64_MAX, 5000);
}

int main(void)
{
  signal(SIGALRM, on_alarm);
  signal(SIGPIPE, SIG_IGN);
  alarm(240); /* nothing may hang CI */
  load("cm4f", SONDE_FIRMWARE_DIR "/jtag_demo_m4f.elf");
  if (!start_openocd())
    return check_summary();
  pump(300); /* OpenOCD examines the target */
  RUN(test_attach);
  RUN(test_running);
  RUN(test_halt_regs_mem);
  RUN(test_breakpoints);
  RUN(test_watchpoint);
  RUN(test_load_verify);
  RUN(test_reset_and_exit);
  stop_openocd();
  if (!check_failed)
    remove(logpath);
  else
    fprintf(stderr, "OpenOCD log: %s\n", logpath);
  sonde_jtag_free(J);
  sonde_vm_free(vm);
  sonde_machine_free(M);
  sonde_sym_free(S);
  return check_summary();
}
