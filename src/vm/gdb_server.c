/* GDB remote serial protocol server for the virtual Cortex-M
 * (include/sonde/gdb.h). Protocol: GDB manual, appendix "Remote Protocol"
 * (packets $data#cs with acks, QStartNoAckMode, qSupported, qXfer:features
 * target descriptions, g/G/p/P, m/M/X, Z0-Z4, c/s/vCont, ?, k, D, qRcmd,
 * interrupt byte 0x03). Target description: features org.gnu.gdb.arm.m-profile
 * (r0-r12 sp lr pc xpsr), org.gnu.gdb.arm.m-system (msp psp),
 * org.gnu.gdb.arm.vfp (d0-d15 fpscr) on cores with an FPU, and the special
 * registers primask basepri faultmask control.
 *
 * Debug access is a MEM-AP's: host reads and writes of memory and registers
 * go through sonde_vm_read_mem/_write_mem (no effect on the target's timing
 * or state). Breakpoints and stepping use the halting-debug model of
 * dbg_halt.c/dbg_fpb.c (DHCSR.C_DEBUGEN is set while a client is attached). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "sonde/gdb.h"
#include "vm_internal.h"

#define PKT_MAX 16384
#define RUN_SLICE_CYCLES 2000000ull
#define MAX_WATCH 4 /* as the DWT's four comparators */
#define DWT_PCSR 0xE000101Cu
#define DHCSR_ADDR 0xE000EDF0u

struct watch {
  uint32_t addr, len;
  int type; /* 2 write, 3 read, 4 access */
};

struct sonde_gdb {
  struct sonde_vm *vm;
  int lfd, cfd;
  unsigned port;
  bool noack;
  /* receive state */
  uint8_t rx[PKT_MAX + 8];
  size_t rxlen;
  int rxstate; /* 0 idle, 1 in packet, 2/3 checksum chars */
  uint8_t cs_calc, cs_got;
  double rx_since; /* time the current packet began */
  bool interrupt;  /* 0x03 seen */
  /* target */
  bool running, exited, killed, detached;
  int exit_code;
  struct sonde_vm_stop last;
  uint64_t max_cycles;
  unsigned timeout_ms;
  /* watchpoints through the transfer hook, chained with the user's hooks */
  struct watch watch[MAX_WATCH];
  unsigned nwatch;
  bool watch_hit;
  uint32_t watch_addr;
  int watch_type;
  struct sonde_vm_hooks user;
  bool wrapped;
  char out[2 * PKT_MAX + 64];
  struct sonde_diag diag;
};

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- hooks (watchpoints) ---------------------------------------------------- */

static void h_retire(void *ctx, uint32_t pc, uint64_t cycle, uint32_t cycles)
{
  struct sonde_gdb *g = ctx;
  if (g->user.retire)
    g->user.retire(g->user.ctx, pc, cycle, cycles);
}

static void h_exception(void *ctx, uint64_t cycle, enum sonde_vm_exc_event ev, unsigned exc)
{
  struct sonde_gdb *g = ctx;
  if (g->user.exception)
    g->user.exception(g->user.ctx, cycle, ev, exc);
}

static void h_stacking(void *ctx, uint64_t cycle, uint32_t pc, uint32_t addr, uint32_t value,
                       bool write)
{
  struct sonde_gdb *g = ctx;
  g->user.stacking(g->user.ctx, cycle, pc, addr, value, write);
}

static void h_transfer(void *ctx, uint64_t cycle, uint32_t pc, uint32_t addr, unsigned size,
                       uint32_t value, bool write)
{
  struct sonde_gdb *g = ctx;
  if (g->user.transfer)
    g->user.transfer(g->user.ctx, cycle, pc, addr, size, value, write);
  for (unsigned i = 0; i < g->nwatch && !g->watch_hit; i++) {
    const struct watch *w = &g->watch[i];
    if (addr + size <= w->addr || addr >= w->addr + w->len)
      continue;
    if ((w->type == 2 && !write) || (w->type == 3 && write))
      continue;
    g->watch_hit = true;
    g->watch_addr = addr < w->addr ? w->addr : addr;
    g->watch_type = w->type;
    sonde_vm_halt(g->vm); /* stops after this instruction, as a DWT watchpoint */
  }
}

static void update_hooks(struct sonde_gdb *g)
{
  if (g->nwatch && !g->wrapped) {
    g->user = g->vm->hooks;
    struct sonde_vm_hooks h = {g, h_retire, h_transfer, h_exception, h_stacking};
    if (!g->user.retire)
      h.retire = NULL;
    if (!g->user.exception)
      h.exception = NULL;
    if (!g->user.stacking)
      h.stacking = NULL;
    sonde_vm_set_hooks(g->vm, &h);
    g->wrapped = true;
  } else if (!g->nwatch && g->wrapped) {
    sonde_vm_set_hooks(g->vm, &g->user);
    g->wrapped = false;
  }
}

/* ---- socket ---------------------------------------------------------------- */

int sonde_gdb_new(struct sonde_vm *vm, const char *addr, unsigned port, struct sonde_gdb **out)
{
  if (!vm || !out || port > 65535)
    return SONDE_E_ARG;
  *out = NULL;
  struct sonde_gdb *g = calloc(1, sizeof *g);
  if (!g)
    return SONDE_E_NOMEM;
  g->vm = vm;
  g->cfd = -1;
  struct sockaddr_in sa;
  memset(&sa, 0, sizeof sa);
  sa.sin_family = AF_INET;
  sa.sin_port = htons((uint16_t)port);
  if (inet_pton(AF_INET, addr ? addr : "127.0.0.1", &sa.sin_addr) != 1) {
    free(g);
    return SONDE_E_ARG;
  }
  g->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  if (g->lfd < 0 || setsockopt(g->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
      bind(g->lfd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(g->lfd, 1) < 0) {
    if (g->lfd >= 0)
      close(g->lfd);
    free(g);
    return SONDE_E_IO;
  }
  socklen_t sl = sizeof sa;
  getsockname(g->lfd, (struct sockaddr *)&sa, &sl);
  g->port = ntohs(sa.sin_port);
  *out = g;
  return 0;
}

void sonde_gdb_free(struct sonde_gdb *g)
{
  if (!g)
    return;
  if (g->wrapped)
    sonde_vm_set_hooks(g->vm, &g->user);
  if (g->cfd >= 0)
    close(g->cfd);
  if (g->lfd >= 0)
    close(g->lfd);
  free(g);
}

unsigned sonde_gdb_port(const struct sonde_gdb *g)
{
  return g ? g->port : 0;
}

const char *sonde_gdb_error_detail(const struct sonde_gdb *g)
{
  return g && g->diag.msg[0] ? g->diag.msg : "no error";
}

static void drop_client(struct sonde_gdb *g)
{
  if (g->cfd >= 0)
    close(g->cfd);
  g->cfd = -1;
  g->rxstate = 0;
  g->rxlen = 0;
  g->noack = false;
  g->interrupt = false;
  g->running = false; /* the target stays halted for the next client */
}

/* Send all bytes; a client that does not read within the timeout is dropped. */
static bool send_all(struct sonde_gdb *g, const char *p, size_t n)
{
  while (n && g->cfd >= 0) {
    ssize_t k = send(g->cfd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (k > 0) {
      p += k;
      n -= (size_t)k;
      continue;
    }
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
      struct pollfd pf = {g->cfd, POLLOUT, 0};
      if (poll(&pf, 1, (int)g->timeout_ms) > 0)
        continue;
    }
    drop_client(g);
    return false;
  }
  return g->cfd >= 0;
}

static const char hexd[] = "0123456789abcdef";

static void put_packet(struct sonde_gdb *g, const char *data)
{
  size_t n = strlen(data);
  if (n > sizeof g->out - 4)
    n = sizeof g->out - 4;
  char *o = malloc(n + 5);
  if (!o)
    return;
  uint8_t cs = 0;
  o[0] = '$';
  for (size_t i = 0; i < n; i++) {
    o[1 + i] = data[i];
    cs = (uint8_t)(cs + (uint8_t)data[i]);
  }
  o[n + 1] = '#';
  o[n + 2] = hexd[cs >> 4];
  o[n + 3] = hexd[cs & 15];
  send_all(g, o, n + 4);
  free(o);
}

/* ---- helpers ----------------------------------------------------------------- */

static int hexval(int c)
{
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/* Parse hex up to a non-hex char; *end points after it. False if none. */
static bool parse_hex(const char *s, const char **end, uint64_t *v)
{
  uint64_t x = 0;
  int n = 0;
  while (hexval((unsigned char)*s) >= 0 && n < 17) {
    x = x * 16 + (uint64_t)hexval((unsigned char)*s++);
    n++;
  }
  *end = s;
  *v = x;
  return n > 0 && n <= 16;
}

static void put_hex32(char *o, uint32_t v) /* little-endian target order */
{
  for (int i = 0; i < 4; i++) {
    uint8_t b = (uint8_t)(v >> (8 * i));
    o[2 * i] = hexd[b >> 4];
    o[2 * i + 1] = hexd[b & 15];
  }
  o[8] = 0;
}

static bool get_hex_le(const char *s, unsigned nbytes, uint64_t *v)
{
  uint64_t x = 0;
  for (unsigned i = 0; i < nbytes; i++) {
    int h = hexval((unsigned char)s[2 * i]), l = hexval((unsigned char)s[2 * i + 1]);
    if (h < 0 || l < 0)
      return false;
    x |= (uint64_t)(h * 16 + l) << (8 * i);
  }
  *v = x;
  return true;
}

/* GDB register numbers: 0-15 r0-pc, 16 xpsr, 17 msp, 18 psp, 19 primask,
 * 20 basepri, 21 faultmask, 22 control; with an FPU 23-38 d0-d15 (8 bytes),
 * 39 fpscr. */
static unsigned nregs(const struct sonde_gdb *g)
{
  return g->vm->has_fpu ? 40 : 23;
}

static unsigned reg_size(unsigned r)
{
  return r >= 23 && r <= 38 ? 8 : 4;
}

static bool read_gdb_reg(struct sonde_gdb *g, unsigned r, uint64_t *v)
{
  uint32_t a = 0, b = 0;
  if (r < 23)
    return sonde_vm_read_reg(g->vm, r, &a) == 0 ? (*v = a, true) : false;
  if (r <= 38) {
    if (sonde_vm_read_reg(g->vm, SONDE_VM_REG_S0 + 2 * (r - 23), &a) < 0 ||
        sonde_vm_read_reg(g->vm, SONDE_VM_REG_S0 + 2 * (r - 23) + 1, &b) < 0)
      return false;
    *v = a | (uint64_t)b << 32;
    return true;
  }
  if (r == 39 && sonde_vm_read_reg(g->vm, SONDE_VM_REG_FPSCR, &a) == 0) {
    *v = a;
    return true;
  }
  return false;
}

static bool write_gdb_reg(struct sonde_gdb *g, unsigned r, uint64_t v)
{
  if (r < 23)
    return sonde_vm_write_reg(g->vm, r, (uint32_t)v) == 0;
  if (r <= 38)
    return sonde_vm_write_reg(g->vm, SONDE_VM_REG_S0 + 2 * (r - 23), (uint32_t)v) == 0 &&
           sonde_vm_write_reg(g->vm, SONDE_VM_REG_S0 + 2 * (r - 23) + 1, (uint32_t)(v >> 32)) == 0;
  if (r == 39)
    return sonde_vm_write_reg(g->vm, SONDE_VM_REG_FPSCR, (uint32_t)v) == 0;
  return false;
}

static void target_xml(const struct sonde_gdb *g, char *o, size_t cap)
{
  size_t n = (size_t)snprintf(
      o, cap,
      "<?xml version=\"1.0\"?><!DOCTYPE target SYSTEM \"gdb-target.dtd\">"
      "<target version=\"1.0\"><architecture>arm</architecture>"
      "<feature name=\"org.gnu.gdb.arm.m-profile\">");
  static const char *const rn[] = {"r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8",
                                   "r9", "r10", "r11", "r12"};
  for (unsigned i = 0; i < 13; i++)
    n += (size_t)snprintf(o + n, cap - n,
                          "<reg name=\"%s\" bitsize=\"32\" regnum=\"%u\" type=\"uint32\"/>",
                          rn[i], i);
  n += (size_t)snprintf(
      o + n, cap - n,
      "<reg name=\"sp\" bitsize=\"32\" regnum=\"13\" type=\"data_ptr\"/>"
      "<reg name=\"lr\" bitsize=\"32\" regnum=\"14\" type=\"uint32\"/>"
      "<reg name=\"pc\" bitsize=\"32\" regnum=\"15\" type=\"code_ptr\"/>"
      "<reg name=\"xpsr\" bitsize=\"32\" regnum=\"16\" type=\"uint32\"/></feature>"
      "<feature name=\"org.gnu.gdb.arm.m-system\">"
      "<reg name=\"msp\" bitsize=\"32\" regnum=\"17\" type=\"data_ptr\" group=\"system\"/>"
      "<reg name=\"psp\" bitsize=\"32\" regnum=\"18\" type=\"data_ptr\" group=\"system\"/>"
      "</feature><feature name=\"org.sonde.cortexm.special\">"
      "<reg name=\"primask\" bitsize=\"32\" regnum=\"19\" type=\"uint32\" group=\"system\"/>"
      "<reg name=\"basepri\" bitsize=\"32\" regnum=\"20\" type=\"uint32\" group=\"system\"/>"
      "<reg name=\"faultmask\" bitsize=\"32\" regnum=\"21\" type=\"uint32\" group=\"system\"/>"
      "<reg name=\"control\" bitsize=\"32\" regnum=\"22\" type=\"uint32\" group=\"system\"/>"
      "</feature>");
  if (g->vm->has_fpu) {
    n += (size_t)snprintf(o + n, cap - n, "<feature name=\"org.gnu.gdb.arm.vfp\">");
    for (unsigned i = 0; i < 16; i++)
      n += (size_t)snprintf(o + n, cap - n,
                            "<reg name=\"d%u\" bitsize=\"64\" regnum=\"%u\" type=\"ieee_double\" "
                            "group=\"float\"/>", i, 23 + i);
    n += (size_t)snprintf(o + n, cap - n,
                          "<reg name=\"fpscr\" bitsize=\"32\" regnum=\"39\" type=\"int\" "
                          "group=\"float\"/></feature>");
  }
  snprintf(o + n, cap - n, "</target>");
}

/* ---- stop replies ------------------------------------------------------------ */

static void stop_reply(struct sonde_gdb *g)
{
  char buf[96];
  const struct sonde_vm_stop *s = &g->last;
  if (g->exited) {
    snprintf(buf, sizeof buf, "W%02x", (unsigned)g->exit_code & 0xFF);
  } else if (g->watch_hit) {
    static const char *const kind[] = {"", "", "watch", "rwatch", "awatch"};
    snprintf(buf, sizeof buf, "T05%s:%08x;thread:1;", kind[g->watch_type], g->watch_addr);
  } else if (s->reason == SONDE_VM_STOP_BREAKPOINT) {
    uint32_t pc = g->vm->cpu.r[15];
    bool sw = false;
    for (unsigned i = 0; i < g->vm->dbgh->nhost_bp; i++)
      sw |= g->vm->dbgh->host_bp[i] == (pc & ~1u);
    snprintf(buf, sizeof buf, "T05%sthread:1;", sw ? "swbreak:;" : "hwbreak:;");
  } else if (s->reason == SONDE_VM_STOP_HALT && g->interrupt) {
    snprintf(buf, sizeof buf, "T02thread:1;");
  } else if (s->reason == SONDE_VM_STOP_LOCKUP) {
    snprintf(buf, sizeof buf, "T0bthread:1;"); /* SIGSEGV */
  } else {
    snprintf(buf, sizeof buf, "T05thread:1;");
  }
  put_packet(g, buf);
}

static void note_stop(struct sonde_gdb *g, const struct sonde_vm_stop *s)
{
  g->last = *s;
  g->running = false;
  vm_dbgh_set_halted(g->vm, true);
  if (s->reason == SONDE_VM_STOP_EXIT) {
    g->exited = true;
    g->exit_code = s->exit_code;
  }
}

/* ---- monitor commands ------------------------------------------------------ */

static void mon_out(struct sonde_gdb *g, const char *text)
{
  size_t n = strlen(text);
  char *o = malloc(2 * n + 2);
  if (!o)
    return;
  o[0] = 'O';
  for (size_t i = 0; i < n; i++) {
    o[1 + 2 * i] = hexd[(uint8_t)text[i] >> 4];
    o[2 + 2 * i] = hexd[(uint8_t)text[i] & 15];
  }
  o[1 + 2 * n] = 0;
  put_packet(g, o);
  free(o);
}

static void monitor(struct sonde_gdb *g, const char *cmd)
{
  char line[256];
  struct sonde_vm_stats st;
  sonde_vm_get_stats(g->vm, &st);
  if (!strcmp(cmd, "help") || !*cmd) {
    mon_out(g, "monitor commands:\n"
               "  pcsr          read DWT_PCSR through the debug bus (no halt)\n"
               "  sample N C    run N x C cycles, printing what DWT_PCSR shows every C\n"
               "                cycles (PC, or sleep) without halting the core in\n"
               "                between; halts at the end\n"
               "  stats         cycles, instructions and exceptions so far\n"
               "  reset         system reset (the core stays halted at the reset vector)\n");
  } else if (!strcmp(cmd, "pcsr")) {
    uint32_t v = 0;
    if (sonde_vm_read_mem(g->vm, DWT_PCSR, &v, 4) == 0)
      snprintf(line, sizeof line, "DWT_PCSR = 0x%08x (core pc 0x%08x, cycle %llu%s)\n", v,
               g->vm->cpu.r[15], (unsigned long long)st.cycles,
               v == 0xFFFFFFFFu ? "; halted: PCSR reads all ones in Debug state, see sample"
                                : "");
    else
      snprintf(line, sizeof line, "no DWT on this machine; core pc 0x%08x (cycle %llu)\n",
               g->vm->cpu.r[15], (unsigned long long)st.cycles);
    mon_out(g, line);
  } else if (!strncmp(cmd, "sample", 6)) {
    unsigned long n = 0, every = 0;
    if (sscanf(cmd + 6, "%lu %lu", &n, &every) != 2 || !n || !every || n > 1000) {
      mon_out(g, "usage: monitor sample N CYCLES (N <= 1000)\n");
      put_packet(g, "OK");
      return;
    }
    /* What DWT_PCSR shows at cycles t0 + C, t0 + 2C, ... (the rule of the
     * DWT's PC samples, sonde_vm_pc_at_cycle): the core runs in between. */
    vm_dbgh_set_halted(g->vm, false);
    uint32_t probe = 0;
    bool dwt = sonde_vm_read_mem(g->vm, DWT_PCSR, &probe, 4) == 0;
    uint64_t t = st.cycles;
    for (unsigned long i = 0; i < n && !g->exited; i++) {
      struct sonde_vm_stop s;
      if (g->max_cycles - t <= every) {
        sonde_vm_run(g->vm, g->max_cycles, &s);
        note_stop(g, &s);
        break;
      }
      t += every;
      struct sonde_pcsample ps;
      int rc = sonde_vm_pc_at_cycle(g->vm, t, &ps, &s);
      if (rc < 0) {
        note_stop(g, &s);
        break;
      }
      if (ps.kind == SONDE_PCSAMPLE_PC)
        snprintf(line, sizeof line, "cycle %llu %s 0x%08x\n", (unsigned long long)t,
                 dwt ? "pcsr" : "pc", ps.pc);
      else
        snprintf(line, sizeof line, "cycle %llu %s\n", (unsigned long long)t,
                 ps.kind == SONDE_PCSAMPLE_SLEEP ? "sleep" : "none");
      mon_out(g, line);
    }
    vm_dbgh_set_halted(g->vm, true);
  } else if (!strcmp(cmd, "stats")) {
    snprintf(line, sizeof line, "cycles %llu instructions %llu exceptions %llu\n",
             (unsigned long long)st.cycles, (unsigned long long)st.instructions,
             (unsigned long long)st.exceptions);
    mon_out(g, line);
  } else if (!strcmp(cmd, "reset")) {
    sonde_vm_reset(g->vm);
    g->exited = false;
    mon_out(g, "reset\n");
  } else {
    snprintf(line, sizeof line, "unknown monitor command '%.100s' (monitor help)\n", cmd);
    mon_out(g, line);
  }
  put_packet(g, "OK");
}

/* ---- packet handling ---------------------------------------------------------- */

static void resume(struct sonde_gdb *g, bool step)
{
  g->watch_hit = false;
  g->interrupt = false;
  if (g->exited) {
    stop_reply(g);
    return;
  }
  if (step) {
    struct sonde_vm_stop s;
    vm_dbgh_step(g->vm, true, &s);
    note_stop(g, &s);
    if (s.reason == SONDE_VM_STOP_HALT)
      g->last.reason = SONDE_VM_STOP_HALT;
    stop_reply(g);
    return;
  }
  vm_dbgh_set_halted(g->vm, false);
  g->running = true;
}

static void handle_mem_read(struct sonde_gdb *g, const char *p)
{
  uint64_t addr, len;
  const char *e;
  if (!parse_hex(p, &e, &addr) || *e != ',' || !parse_hex(e + 1, &e, &len) || addr > 0xFFFFFFFFu) {
    put_packet(g, "E01");
    return;
  }
  if (len > PKT_MAX / 2 - 8)
    len = PKT_MAX / 2 - 8;
  uint8_t buf[PKT_MAX / 2];
  size_t got = 0;
  if (sonde_vm_read_mem(g->vm, (uint32_t)addr, buf, len) == 0) {
    got = len;
  } else { /* as much as is mapped */
    while (got < len && sonde_vm_read_mem(g->vm, (uint32_t)(addr + got), buf + got, 1) == 0)
      got++;
  }
  if (!got && len) {
    put_packet(g, "E01");
    return;
  }
  for (size_t i = 0; i < got; i++) {
    g->out[2 * i] = hexd[buf[i] >> 4];
    g->out[2 * i + 1] = hexd[buf[i] & 15];
  }
  g->out[2 * got] = 0;
  put_packet(g, g->out);
}

/* M addr,len:hex  or  X addr,len:binary (len raw bytes, already unescaped). */
static void handle_mem_write(struct sonde_gdb *g, const char *p, size_t plen, bool binary)
{
  uint64_t addr, len;
  const char *e;
  if (!parse_hex(p, &e, &addr) || *e != ',' || !parse_hex(e + 1, &e, &len) || *e != ':' ||
      addr > 0xFFFFFFFFu || len > PKT_MAX) {
    put_packet(g, "E01");
    return;
  }
  const char *d = e + 1;
  size_t avail = plen - (size_t)(d - p);
  uint8_t buf[PKT_MAX];
  if (binary) {
    if (avail < len) {
      put_packet(g, "E01");
      return;
    }
    memcpy(buf, d, len);
  } else {
    if (avail < 2 * len) {
      put_packet(g, "E01");
      return;
    }
    for (size_t i = 0; i < len; i++) {
      int h = hexval((unsigned char)d[2 * i]), l = hexval((unsigned char)d[2 * i + 1]);
      if (h < 0 || l < 0) {
        put_packet(g, "E01");
        return;
      }
      buf[i] = (uint8_t)(h * 16 + l);
    }
  }
  put_packet(g, len == 0 || sonde_vm_write_mem(g->vm, (uint32_t)addr, buf, len) == 0 ? "OK"
                                                                                     : "E01");
}

static void handle_z(struct sonde_gdb *g, const char *p, bool insert)
{
  uint64_t type, addr, kind;
  const char *e;
  if (!parse_hex(p, &e, &type) || *e != ',' || !parse_hex(e + 1, &e, &addr) || *e != ',' ||
      !parse_hex(e + 1, &e, &kind) || addr > 0xFFFFFFFFu) {
    put_packet(g, "E01");
    return;
  }
  int rc = 0;
  if (type == 0) {
    rc = vm_dbgh_host_bp(g->vm, (uint32_t)addr, insert);
  } else if (type == 1) {
    rc = vm_dbgh_fpb_bp(g->vm, (uint32_t)addr, insert);
  } else if (type >= 2 && type <= 4) {
    unsigned i;
    for (i = 0; i < g->nwatch; i++)
      if (g->watch[i].addr == addr && g->watch[i].len == kind && g->watch[i].type == (int)type)
        break;
    if (insert && i == g->nwatch) {
      if (g->nwatch >= MAX_WATCH || !kind || kind > 0x10000) {
        rc = SONDE_E_RANGE;
      } else {
        g->watch[g->nwatch++] = (struct watch){(uint32_t)addr, (uint32_t)kind, (int)type};
      }
    } else if (!insert && i < g->nwatch) {
      g->watch[i] = g->watch[--g->nwatch];
    }
    update_hooks(g);
  } else {
    put_packet(g, ""); /* unsupported type */
    return;
  }
  put_packet(g, rc == 0 ? "OK" : "E01");
}

static void handle_packet(struct sonde_gdb *g, char *p, size_t n)
{
  p[n] = 0;
  char *o = g->out;
  switch (p[0]) {
  case '?':
    stop_reply(g);
    return;
  case 'g': {
    size_t k = 0;
    for (unsigned r = 0; r < nregs(g); r++) {
      uint64_t v = 0;
      read_gdb_reg(g, r, &v);
      put_hex32(o + k, (uint32_t)v);
      k += 8;
      if (reg_size(r) == 8) {
        put_hex32(o + k, (uint32_t)(v >> 32));
        k += 8;
      }
    }
    o[k] = 0;
    put_packet(g, o);
    return;
  }
  case 'G': {
    const char *s = p + 1;
    size_t left = n - 1;
    for (unsigned r = 0; r < nregs(g) && left >= 2 * reg_size(r); r++) {
      uint64_t v;
      if (!get_hex_le(s, reg_size(r), &v)) {
        put_packet(g, "E01");
        return;
      }
      write_gdb_reg(g, r, v);
      s += 2 * reg_size(r);
      left -= 2 * reg_size(r);
    }
    put_packet(g, "OK");
    return;
  }
  case 'p': {
    uint64_t r, v;
    const char *e;
    if (!parse_hex(p + 1, &e, &r) || r >= nregs(g) || !read_gdb_reg(g, (unsigned)r, &v)) {
      put_packet(g, "E01");
      return;
    }
    put_hex32(o, (uint32_t)v);
    if (reg_size((unsigned)r) == 8)
      put_hex32(o + 8, (uint32_t)(v >> 32));
    put_packet(g, o);
    return;
  }
  case 'P': {
    uint64_t r, v;
    const char *e;
    if (!parse_hex(p + 1, &e, &r) || *e != '=' || r >= nregs(g) ||
        strlen(e + 1) < 2 * reg_size((unsigned)r) || !get_hex_le(e + 1, reg_size((unsigned)r), &v) ||
        !write_gdb_reg(g, (unsigned)r, v)) {
      put_packet(g, "E01");
      return;
    }
    put_packet(g, "OK");
    return;
  }
  case 'm': handle_mem_read(g, p + 1); return;
  case 'M': handle_mem_write(g, p + 1, n - 1, false); return;
  case 'X': handle_mem_write(g, p + 1, n - 1, true); return;
  case 'Z': handle_z(g, p + 1, true); return;
  case 'z': handle_z(g, p + 1, false); return;
  case 'c': case 'C': resume(g, false); return;
  case 's': case 'S': resume(g, true); return;
  case 'H': case 'T': put_packet(g, "OK"); return;
  case 'k':
    g->killed = true;
    drop_client(g);
    return;
  case 'D':
    put_packet(g, "OK");
    g->detached = true;
    drop_client(g);
    return;
  case 'v':
    if (!strncmp(p, "vCont?", 6)) {
      put_packet(g, "vCont;c;C;s;S");
    } else if (!strncmp(p, "vCont;", 6)) {
      resume(g, p[6] == 's' || p[6] == 'S');
    } else if (!strncmp(p, "vKill", 5)) {
      put_packet(g, "OK");
      g->killed = true;
      drop_client(g);
    } else {
      put_packet(g, "");
    }
    return;
  case 'q':
    if (!strncmp(p, "qSupported", 10)) {
      snprintf(o, 200, "PacketSize=%x;qXfer:features:read+;QStartNoAckMode+;swbreak+;hwbreak+;"
                       "vContSupported+", PKT_MAX);
      put_packet(g, o);
    } else if (!strncmp(p, "qXfer:features:read:target.xml:", 31)) {
      uint64_t off, len;
      const char *e;
      if (!parse_hex(p + 31, &e, &off) || *e != ',' || !parse_hex(e + 1, &e, &len)) {
        put_packet(g, "E01");
        return;
      }
      static char xml[8192];
      target_xml(g, xml, sizeof xml);
      size_t xl = strlen(xml);
      if (len > PKT_MAX - 16)
        len = PKT_MAX - 16;
      if (off >= xl) {
        put_packet(g, "l");
        return;
      }
      size_t k = xl - off < len ? xl - off : len;
      o[0] = off + k >= xl ? 'l' : 'm';
      memcpy(o + 1, xml + off, k);
      o[k + 1] = 0;
      put_packet(g, o);
    } else if (!strncmp(p, "qXfer:", 6)) {
      put_packet(g, "");
    } else if (!strcmp(p, "qC")) {
      put_packet(g, "QC1");
    } else if (!strcmp(p, "qfThreadInfo")) {
      put_packet(g, "m1");
    } else if (!strcmp(p, "qsThreadInfo")) {
      put_packet(g, "l");
    } else if (!strncmp(p, "qAttached", 9)) {
      put_packet(g, "1");
    } else if (!strncmp(p, "qRcmd,", 6)) {
      char cmd[256];
      size_t k = 0;
      for (const char *s = p + 6; s[0] && s[1] && k < sizeof cmd - 1; s += 2) {
        int h = hexval((unsigned char)s[0]), l = hexval((unsigned char)s[1]);
        if (h < 0 || l < 0)
          break;
        cmd[k++] = (char)(h * 16 + l);
      }
      cmd[k] = 0;
      monitor(g, cmd);
    } else if (!strncmp(p, "qSymbol", 7)) {
      put_packet(g, "OK");
    } else {
      put_packet(g, "");
    }
    return;
  case 'Q':
    if (!strcmp(p, "QStartNoAckMode")) {
      put_packet(g, "OK");
      g->noack = true;
    } else {
      put_packet(g, "");
    }
    return;
  default:
    put_packet(g, "");
    return;
  }
}

/* Feed received bytes to the framing state machine. */
static void feed(struct sonde_gdb *g, const uint8_t *b, size_t n)
{
  for (size_t i = 0; i < n && g->cfd >= 0; i++) {
    uint8_t c = b[i];
    switch (g->rxstate) {
    case 0:
      if (c == '$') {
        g->rxstate = 1;
        g->rxlen = 0;
        g->cs_calc = 0;
        g->rx_since = now_s();
      } else if (c == 0x03) {
        g->interrupt = true;
        if (g->running)
          sonde_vm_halt(g->vm);
      } /* '+', '-' and garbage between packets are ignored */
      break;
    case 1:
      if (c == '#') {
        g->rxstate = 2;
      } else if (c == '$') { /* a new packet inside a packet: restart */
        g->rxlen = 0;
        g->cs_calc = 0;
      } else if (g->rxlen >= PKT_MAX) {
        g->rxstate = 0; /* too long: dropped, gdb will resend on '-' */
        if (!g->noack)
          send_all(g, "-", 1);
      } else {
        g->rx[g->rxlen++] = c;
        g->cs_calc = (uint8_t)(g->cs_calc + c);
      }
      break;
    case 2:
    case 3: {
      int h = hexval(c);
      if (h < 0) {
        g->rxstate = 0;
        if (!g->noack)
          send_all(g, "-", 1);
        break;
      }
      g->cs_got = (uint8_t)(g->rxstate == 2 ? h << 4 : g->cs_got | h);
      if (g->rxstate == 2) {
        g->rxstate = 3;
        break;
      }
      g->rxstate = 0;
      if (g->cs_got != g->cs_calc) {
        if (!g->noack)
          send_all(g, "-", 1);
        break;
      }
      if (!g->noack && !send_all(g, "+", 1))
        break;
      /* unescape binary data ('}' x^0x20) */
      size_t k = 0;
      for (size_t j = 0; j < g->rxlen; j++) {
        if (g->rx[j] == '}' && j + 1 < g->rxlen)
          g->rx[k++] = g->rx[++j] ^ 0x20;
        else
          g->rx[k++] = g->rx[j];
      }
      if (g->running && g->rx[0] != 0x03)
        break; /* all-stop: only an interrupt is expected while running */
      handle_packet(g, (char *)g->rx, k);
      break;
    }
    }
  }
}

/* Read what the client sent within `wait_ms`; false when it left. */
static bool poll_client(struct sonde_gdb *g, int wait_ms)
{
  struct pollfd pf = {g->cfd, POLLIN, 0};
  int r = poll(&pf, 1, wait_ms);
  if (r < 0)
    return errno == EINTR;
  if (r == 0) {
    if (g->rxstate && now_s() - g->rx_since > g->timeout_ms / 1000.0) {
      drop_client(g); /* stalled inside a packet */
      return false;
    }
    return true;
  }
  uint8_t buf[4096];
  ssize_t k = recv(g->cfd, buf, sizeof buf, 0);
  if (k <= 0) {
    drop_client(g);
    return false;
  }
  feed(g, buf, (size_t)k);
  return g->cfd >= 0;
}

int sonde_gdb_serve(struct sonde_gdb *g, uint64_t max_cycles, unsigned timeout_ms,
                    struct sonde_vm_stop *stop)
{
  if (!g)
    return SONDE_E_ARG;
  g->max_cycles = max_cycles;
  g->timeout_ms = timeout_ms ? timeout_ms : 10000;
  struct sonde_vm *vm = g->vm;
  /* Halting debug is on while a debugger may be attached (DHCSR.C_DEBUGEN). */
  uint32_t dh = (0xA05Fu << 16) | 1u;
  sonde_vm_write_mem(vm, DHCSR_ADDR, &dh, 4);
  vm_dbgh_set_halted(vm, true);
  memset(&g->last, 0, sizeof g->last);
  g->last.reason = SONDE_VM_STOP_HALT;
  while (!g->killed && !g->detached) {
    if (g->cfd < 0) {
      if (g->exited)
        break; /* the firmware ended and the client left */
      int c = accept(g->lfd, NULL, NULL);
      if (c < 0) {
        if (errno == EINTR)
          continue;
        return sonde_diag_set(&g->diag, SONDE_E_IO, "accept: %s", strerror(errno));
      }
      int one = 1;
      fcntl(c, F_SETFD, FD_CLOEXEC);
      setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      g->cfd = c;
      continue;
    }
    if (!g->running) {
      poll_client(g, 200);
      continue;
    }
    /* Running: one slice, then look at the socket (Ctrl-C). */
    struct sonde_vm_stats st;
    sonde_vm_get_stats(vm, &st);
    uint64_t limit = g->max_cycles - st.cycles > RUN_SLICE_CYCLES ? st.cycles + RUN_SLICE_CYCLES
                                                                  : g->max_cycles;
    struct sonde_vm_stop s;
    int rc = sonde_vm_run(vm, limit, &s);
    if (rc < 0 && s.reason != SONDE_VM_STOP_ERROR)
      s.reason = SONDE_VM_STOP_ERROR;
    bool slice_end = s.reason == SONDE_VM_STOP_CYCLE_LIMIT && limit != g->max_cycles;
    if (!slice_end) {
      note_stop(g, &s);
      stop_reply(g);
      continue;
    }
    if (!poll_client(g, 0))
      continue;
    if (g->interrupt && g->running) {
      s.reason = SONDE_VM_STOP_HALT;
      s.pc = vm->cpu.r[15];
      note_stop(g, &s);
      stop_reply(g);
    }
  }
  if (g->detached && !g->exited) {
    /* Detach: the firmware runs on to its end, without the debugger. */
    uint32_t off = 0xA05Fu << 16;
    sonde_vm_write_mem(vm, DHCSR_ADDR, &off, 4);
    vm_dbgh_set_halted(vm, false);
    struct sonde_vm_stop s;
    sonde_vm_run(vm, g->max_cycles, &s);
    note_stop(g, &s);
  }
  if (stop)
    *stop = g->last;
  return 0;
}

/* Fuzzing entry (fuzz/fuzz_gdb.c): `data` is what a client sends; the client
 * is one end of a socketpair whose replies are drained and dropped. The run
 * is bounded by `max_cycles` cycles from now. Not part of the public API. */
int vm_gdb_fuzz(struct sonde_vm *vm, const uint8_t *data, size_t len, uint64_t max_cycles);
int vm_gdb_fuzz(struct sonde_vm *vm, const uint8_t *data, size_t len, uint64_t max_cycles)
{
  struct sonde_gdb *g = calloc(1, sizeof *g);
  int sv[2];
  if (!g)
    return SONDE_E_NOMEM;
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0) {
    free(g);
    return SONDE_E_IO;
  }
  fcntl(sv[1], F_SETFL, O_NONBLOCK);
  g->vm = vm;
  g->lfd = -1;
  g->cfd = sv[0];
  g->timeout_ms = 1;
  g->max_cycles = vm->cpu.cycles + max_cycles;
  for (size_t i = 0; i < len && g->cfd >= 0; i += 64) {
    feed(g, data + i, len - i < 64 ? len - i : 64);
    uint8_t junk[4096];
    while (recv(sv[1], junk, sizeof junk, 0) > 0) {
    }
  }
  close(sv[1]);
  g->lfd = -1;
  sonde_gdb_free(g); /* closes cfd, restores the hooks */
  return 0;
}
