/* OpenOCD's remote_bitbang protocol on a TCP socket (include/sonde/jtag.h),
 * driving the TAP of jtag_tap.c, while the VM runs between scans.
 *
 * Bytes are handled in batches: one recv() takes whatever OpenOCD has sent
 * (it buffers its pin writes and 'R' requests), every byte is decoded, and
 * the TDO answers of the batch go back in one send(). While the core runs
 * and the socket is quiet the VM runs in short slices, polling the socket
 * between them, so a scan waits at most one slice.
 *
 * The core's state for the loop: it runs unless it is halted (DHCSR S_HALT,
 * dbg_halt.c), held in reset (SRST), locked up, or the firmware has ended
 * (semihosting exit, the cycle limit). An exit leaves the core halted, as at
 * a BKPT; a debugger that resumes or resets it makes it run again. */
#define _GNU_SOURCE /* ppoll */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "jtag.h"
#include "sonde/jtag.h"
#include "vm_internal.h"

#define BATCH 65536
#define SLICE_CYCLES 50000u       /* a free-running slice between two looks at the socket */
#define SLICE_ACTIVE_CYCLES 2000u /* ... while the debugger is talking */
#define ACTIVE_S 0.005            /* "talking": a batch came within the last 5 ms */
#define TALK_WAIT_US 100          /* ... then wait this long for the next one */
#define IDLE_POLL_MS 100

struct sonde_jtag {
  struct sonde_vm *vm;
  int lfd, cfd;
  unsigned port;
  struct vm_jtag_tap tap;
  struct vm_jtag_dp dp;
  uint32_t cycles_per_tck;
  uint64_t owed;         /* cycles the core owes the TCKs (cycles_per_tck mode) */
  bool tck;              /* TCK level of the last pin write */
  bool srst;             /* SRST asserted: the core is held in reset */
  bool ended;            /* the firmware exited or reached the cycle limit */
  bool ended_seen;       /* ... and a client was connected since */
  volatile sig_atomic_t stop_req;
  struct sonde_vm_stop last;
  uint64_t max_cycles;
  unsigned timeout_ms;
  double idle_since;     /* the client's last byte */
  struct sonde_jtag_stats st;
  struct sonde_diag diag;
  uint8_t in[BATCH];
  char out[BATCH];
};

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}



/* ---- the core ---------------------------------------------------------------- */

static bool reset_pending(const struct sonde_jtag *j)
{
  return j->vm->sys.reset_request != VM_RESET_NONE;
}

static bool core_runs(const struct sonde_jtag *j)
{
  const struct sonde_vm *vm = j->vm;
  if (j->srst || j->stop_req)
    return false;
  if (reset_pending(j))
    return true; /* a debugger's AIRCR reset is taken even while halted */
  return !(vm->dbgh && vm->dbgh->halted) && !j->ended && !vm->cpu.locked_up &&
         vm->cpu.cycles < j->max_cycles;
}

/* Run the core up to `limit` (absolute) and note how it stopped. */
static int run_to(struct sonde_jtag *j, uint64_t limit)
{
  struct sonde_vm *vm = j->vm;
  if (limit > j->max_cycles)
    limit = j->max_cycles;
  if (reset_pending(j) && limit <= vm->cpu.cycles)
    limit = vm->cpu.cycles + 1; /* take the reset now */
  struct sonde_vm_stop s;
  int rc = sonde_vm_run(vm, limit, &s);
  if (rc < 0)
    return sonde_diag_set(&j->diag, rc, "the VM stopped: %s", sonde_vm_error_detail(vm));
  j->last = s;
  switch (s.reason) {
  case SONDE_VM_STOP_CYCLE_LIMIT:
    if (vm->cpu.cycles >= j->max_cycles)
      j->ended = true;
    break;
  case SONDE_VM_STOP_EXIT:
    j->ended = true;
    vm_dbgh_set_halted(vm, true); /* stopped at the exit call, as at a BKPT */
    vm->sys.dfsr |= DFSR_BKPT;
    break;
  case SONDE_VM_STOP_BREAKPOINT:
  case SONDE_VM_STOP_HALT:
    if (vm->dbgh && !vm->dbgh->halted)
      vm_dbgh_set_halted(vm, true); /* a BKPT without halting debug: the core stops */
    break;
  default: break;
  }
  if (j->ended && j->cfd >= 0)
    j->ended_seen = true;
  return 0;
}

/* cycles_per_tck mode: run the cycles the TCKs so far owe (dp->sync). */
static void catch_up(void *ctx)
{
  struct sonde_jtag *j = ctx;
  if (!j->cycles_per_tck)
    return;
  uint64_t owed = j->owed;
  j->owed = 0;
  if (core_runs(j) && (owed || reset_pending(j)))
    run_to(j, j->vm->cpu.cycles + owed);
}

/* Resuming or resetting the core through the debug port starts it again
 * after an exit. */
static void note_restart(struct sonde_jtag *j)
{
  if (j->ended && (reset_pending(j) || (j->vm->dbgh && !j->vm->dbgh->halted))) {
    j->ended = false;
    j->ended_seen = false;
  }
}

static void set_reset(struct sonde_jtag *j, bool trst, bool srst)
{
  if (trst)
    vm_jtag_tap_reset(&j->tap);
  if (j->srst && !srst) { /* SRST released: a system reset (debug state kept) */
    j->vm->sys.reset_request = VM_RESET_SYSTEM;
    j->vm->attention |= VM_ATTN_EXCEPTION;
  }
  j->srst = srst;
}

/* ---- the protocol ------------------------------------------------------------ */

/* Decode a batch; the TDO answers go to j->out. Returns the answer length, or
 * -1 after 'Q'. */
static long decode(struct sonde_jtag *j, const uint8_t *b, size_t n)
{
  long o = 0;
  bool quit = false;
  uint64_t edges = 0;
  for (size_t i = 0; i < n && !quit; i++) {
    unsigned c = b[i];
    if (c >= '0' && c <= '7') {
      unsigned v = c - '0';
      bool tck = v & 4;
      if (tck && !j->tck) {
        vm_jtag_tap_clock(&j->tap, v & 2, v & 1);
        edges++;
        j->owed += j->cycles_per_tck;
      }
      j->tck = tck;
    } else if (c == 'R') {
      j->out[o++] = vm_jtag_tap_tdo(&j->tap) ? '1' : '0';
    } else if (c >= 'r' && c <= 'u') {
      set_reset(j, (c - 'r') & 2, (c - 'r') & 1);
    } else if (c == 'Q') {
      quit = true;
    } else if (c != 'B' && c != 'b') {
      j->st.ignored_bytes++; /* not a command: ignored, as a pin glitch would be */
    }
  }
  j->st.tck += edges;
  catch_up(j);
  note_restart(j);
  return quit ? -1 - o : o;
}

static void drop_client(struct sonde_jtag *j)
{
  if (j->cfd >= 0)
    close(j->cfd);
  j->cfd = -1;
  j->tck = false;
  vm_jtag_tap_reset(&j->tap); /* the next client starts from Test-Logic-Reset */
  j->dp.wait_scan = false;
}

/* Send the answers; a client that does not read them in time is dropped. */
static bool send_all(struct sonde_jtag *j, const char *p, size_t n)
{
  while (n && j->cfd >= 0) {
    ssize_t k = send(j->cfd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (k > 0) {
      p += k;
      n -= (size_t)k;
      continue;
    }
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
      struct pollfd pf = {j->cfd, POLLOUT, 0};
      if (poll(&pf, 1, (int)j->timeout_ms) > 0)
        continue;
    }
    drop_client(j);
    return false;
  }
  return j->cfd >= 0;
}

/* Wait up to `wait_us` for bytes from the client and handle them; true when
 * a batch was handled. */
static bool serve_client(struct sonde_jtag *j, long wait_us)
{
  struct pollfd pf = {j->cfd, POLLIN, 0};
  struct timespec ts = {wait_us / 1000000, (wait_us % 1000000) * 1000};
  int r = ppoll(&pf, 1, &ts, NULL);
  if (r <= 0) {
    /* a client stalled in the middle of a scan is dropped */
    bool mid_scan = j->tap.state != TAP_IDLE && j->tap.state != TAP_RESET;
    if (r == 0 && mid_scan && now_s() - j->idle_since > j->timeout_ms / 1000.0)
      drop_client(j);
    return false;
  }
  ssize_t k = recv(j->cfd, j->in, sizeof j->in, 0);
  if (k <= 0) {
    drop_client(j);
    return false;
  }
  double t0 = now_s();
  j->idle_since = t0;
  j->st.batches++;
  j->st.bytes_in += (uint64_t)k;
  long o = decode(j, j->in, (size_t)k);
  j->st.decode_s += now_s() - t0;
  bool quit = o < 0;
  if (quit)
    o = -1 - o;
  if (o > 0)
    send_all(j, j->out, (size_t)o);
  if (quit)
    drop_client(j);
  j->st.protocol_s += now_s() - t0;
  return true;
}

static void accept_client(struct sonde_jtag *j, int wait_ms)
{
  struct pollfd pf = {j->lfd, POLLIN, 0};
  if (poll(&pf, 1, wait_ms) <= 0)
    return;
  int c = accept(j->lfd, NULL, NULL);
  if (c < 0)
    return;
  int one = 1;
  fcntl(c, F_SETFD, FD_CLOEXEC);
  setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  j->cfd = c;
  j->st.clients++;
  j->idle_since = now_s();
  if (j->ended)
    j->ended_seen = true;
}

/* ---- API ------------------------------------------------------------------------ */

int sonde_jtag_new(struct sonde_vm *vm, const char *addr, unsigned port, struct sonde_jtag **out)
{
  if (!vm || !out || port > 65535)
    return SONDE_E_ARG;
  *out = NULL;
  struct sonde_jtag *j = calloc(1, sizeof *j);
  if (!j)
    return SONDE_E_NOMEM;
  j->vm = vm;
  j->cfd = -1;
  j->max_cycles = UINT64_MAX;
  j->timeout_ms = 10000;
  j->last.reason = SONDE_VM_STOP_HALT;
  vm_jtag_dp_init(&j->dp, vm);
  j->dp.sync = catch_up;
  j->dp.sync_ctx = j;
  vm_jtag_tap_init(&j->tap, &j->dp);
  struct sockaddr_in sa;
  memset(&sa, 0, sizeof sa);
  sa.sin_family = AF_INET;
  sa.sin_port = htons((uint16_t)port);
  if (inet_pton(AF_INET, addr ? addr : "127.0.0.1", &sa.sin_addr) != 1) {
    free(j);
    return SONDE_E_ARG;
  }
  j->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  if (j->lfd < 0 || setsockopt(j->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
      bind(j->lfd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(j->lfd, 4) < 0) {
    if (j->lfd >= 0)
      close(j->lfd);
    free(j);
    return SONDE_E_IO;
  }
  socklen_t sl = sizeof sa;
  getsockname(j->lfd, (struct sockaddr *)&sa, &sl);
  j->port = ntohs(sa.sin_port);
  *out = j;
  return 0;
}

void sonde_jtag_free(struct sonde_jtag *j)
{
  if (!j)
    return;
  if (j->cfd >= 0)
    close(j->cfd);
  if (j->lfd >= 0)
    close(j->lfd);
  free(j);
}

unsigned sonde_jtag_port(const struct sonde_jtag *j)
{
  return j ? j->port : 0;
}

const char *sonde_jtag_error_detail(const struct sonde_jtag *j)
{
  return j && j->diag.msg[0] ? j->diag.msg : "no error";
}

void sonde_jtag_set_cycles_per_tck(struct sonde_jtag *j, uint32_t cycles)
{
  if (j)
    j->cycles_per_tck = cycles;
}

void sonde_jtag_set_ap_busy(struct sonde_jtag *j, unsigned tck)
{
  if (j)
    j->dp.ap_busy_tck = tck;
}

void sonde_jtag_configure(struct sonde_jtag *j, uint64_t max_cycles, unsigned timeout_ms)
{
  if (!j)
    return;
  j->max_cycles = max_cycles;
  j->timeout_ms = timeout_ms ? timeout_ms : 10000;
}

void sonde_jtag_stop(struct sonde_jtag *j)
{
  if (j)
    j->stop_req = 1;
}

void sonde_jtag_get_stats(const struct sonde_jtag *j, struct sonde_jtag_stats *out)
{
  if (!out)
    return;
  memset(out, 0, sizeof *out);
  if (!j)
    return;
  *out = j->st;
  out->dp_reads = j->dp.dp_reads;
  out->dp_writes = j->dp.dp_writes;
  out->ap_reads = j->dp.ap_reads;
  out->ap_writes = j->dp.ap_writes;
  out->waits = j->dp.waits;
  out->bus_errors = j->dp.bus_errors;
}

int sonde_jtag_poll(struct sonde_jtag *j, int wait_ms)
{
  if (!j)
    return SONDE_E_ARG;
  if (j->ended && j->ended_seen && j->cfd < 0)
    return 1; /* the firmware ended and the client that saw it left */
  bool run = core_runs(j) && !j->cycles_per_tck;
  /* While the debugger talks, its next batch comes within microseconds of
   * the last answer: the server waits a little for it (leaving the host's
   * CPU to the debugger) and then runs the core in short slices, so that a
   * batch never waits long for the core nor the core for the debugger. */
  bool talking = j->cfd >= 0 && now_s() - j->idle_since < ACTIVE_S;
  if (j->cfd < 0)
    accept_client(j, run ? 0 : wait_ms);
  else
    serve_client(j, !run ? wait_ms * 1000L : talking ? TALK_WAIT_US : 0);
  int rc = 0;
  talking = j->cfd >= 0 && now_s() - j->idle_since < ACTIVE_S;
  if (run && core_runs(j))
    rc = run_to(j, j->vm->cpu.cycles + (talking ? SLICE_ACTIVE_CYCLES : SLICE_CYCLES));
  else if (j->cycles_per_tck && reset_pending(j) && core_runs(j))
    rc = run_to(j, j->vm->cpu.cycles); /* an SRST release takes effect at once */
  return rc;
}

int sonde_jtag_serve(struct sonde_jtag *j, uint64_t max_cycles, unsigned timeout_ms,
                     struct sonde_vm_stop *stop)
{
  if (!j)
    return SONDE_E_ARG;
  sonde_jtag_configure(j, max_cycles, timeout_ms);
  int rc = 0;
  while (!j->stop_req && rc == 0)
    rc = sonde_jtag_poll(j, IDLE_POLL_MS);
  if (!j->ended) { /* stopped from outside while the firmware still ran */
    j->last.reason = SONDE_VM_STOP_HALT;
    j->last.pc = j->vm->cpu.r[15];
  }
  if (stop)
    *stop = j->last;
  return rc < 0 ? rc : 0;
}

/* Fuzzing entry (fuzz/fuzz_jtag.c): `data` is what a client sends, decoded in
 * chunks of 64 bytes with the core advancing `cycles_per_tck` per TCK (the
 * answers are dropped). Not part of the public API. */
int vm_jtag_fuzz(struct sonde_vm *vm, const uint8_t *data, size_t len, uint32_t cycles_per_tck,
                 uint64_t max_cycles);
int vm_jtag_fuzz(struct sonde_vm *vm, const uint8_t *data, size_t len, uint32_t cycles_per_tck,
                 uint64_t max_cycles)
{
  struct sonde_jtag *j = calloc(1, sizeof *j);
  if (!j)
    return SONDE_E_NOMEM;
  j->vm = vm;
  j->lfd = j->cfd = -1;
  j->cycles_per_tck = cycles_per_tck;
  j->max_cycles = vm->cpu.cycles + max_cycles;
  vm_jtag_dp_init(&j->dp, vm);
  j->dp.ap_busy_tck = len ? data[0] & 3 : 0;
  j->dp.sync = catch_up;
  j->dp.sync_ctx = j;
  vm_jtag_tap_init(&j->tap, &j->dp);
  for (size_t i = 0; i < len; i += 64)
    decode(j, data + i, len - i < 64 ? len - i : 64);
  free(j);
  return 0;
}
