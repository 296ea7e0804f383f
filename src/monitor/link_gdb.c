/* The GDB backend of the debug link (monitor.h): a client of the GDB remote
 * serial protocol (GDB manual, appendix E "Remote Protocol": packets
 * $data#checksum with +/- acknowledgement until QStartNoAckMode, run-length
 * encoding, m/M memory, p register, c/s, the interrupt byte 0x03, stop
 * replies T/S/W/X and console output O). Servers: J-Link GDB server, Black
 * Magic Probe, `sonde run --gdb`. Halting mode: memory and registers are read
 * only while the core is stopped, so PC polling halts, reads and resumes. */
#include "monitor_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PKT_MAX 8192

static const char hexd[] = "0123456789abcdef";

static int hexval(int c)
{
  return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                        : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static int g_send(struct sonde_mon_link *l, const char *data)
{
  size_t n = strlen(data);
  char *buf = malloc(n + 5);
  if (!buf)
    return SONDE_E_NOMEM;
  uint8_t cs = 0;
  for (size_t i = 0; i < n; i++)
    cs = (uint8_t)(cs + (uint8_t)data[i]);
  buf[0] = '$';
  memcpy(buf + 1, data, n);
  buf[n + 1] = '#';
  buf[n + 2] = hexd[cs >> 4];
  buf[n + 3] = hexd[cs & 15];
  int rc = mon_net_send(l, buf, n + 4);
  free(buf);
  return rc;
}

/* Take one packet from the input within timeout_ms: 1 and the payload in
 * out, 0 on timeout, or an error (checksum, garbage, closed). Acks ('+')
 * and noise before '$' are skipped. */
static int g_recv(struct sonde_mon_link *l, char *out, size_t cap, unsigned timeout_ms)
{
  uint64_t deadline = mon_now_ns() + (uint64_t)timeout_ms * 1000000u;
  for (;;) {
    size_t i = 0;
    while (i < l->rxlen && l->rx[i] != '$')
      i++;
    if (i)
      mon_net_consume(l, i);
    char *hash = l->rxlen ? memchr(l->rx, '#', l->rxlen) : NULL;
    if (hash && (size_t)(hash - l->rx) + 3 <= l->rxlen) {
      size_t len = (size_t)(hash - l->rx) - 1;
      uint8_t cs = 0;
      for (size_t k = 0; k < len; k++)
        cs = (uint8_t)(cs + (uint8_t)l->rx[1 + k]);
      int h1 = hexval(hash[1]), h2 = hexval(hash[2]);
      if (h1 < 0 || h2 < 0 || (uint8_t)(h1 << 4 | h2) != cs)
        return sonde_diag_set(&l->diag, SONDE_E_FORMAT, "%s: packet with a bad checksum '%.*s'",
                              l->name, (int)(len + 4 < 40 ? len + 4 : 40), l->rx);
      /* run-length decoding: "x*n" repeats x (n - 29) more times */
      size_t o = 0;
      for (size_t k = 0; k < len; k++) {
        char c = l->rx[1 + k];
        if (c == '*' && o && k + 1 < len) {
          int rep = (uint8_t)l->rx[2 + k] - 29;
          for (int r = 0; r < rep && o + 1 < cap; r++, o++)
            out[o] = out[o - 1];
          k++;
        } else if (o + 1 < cap) {
          out[o++] = c;
        }
      }
      out[o] = 0;
      mon_net_consume(l, len + 4);
      if (!l->noack) {
        int rc = mon_net_send(l, "+", 1);
        if (rc < 0)
          return rc;
      }
      return 1;
    }
    if (l->rxlen >= PKT_MAX)
      return sonde_diag_set(&l->diag, SONDE_E_FORMAT, "%s: garbage instead of a packet", l->name);
    uint64_t now = mon_now_ns();
    if (now >= deadline)
      return 0;
    int rc = mon_net_recv(l, (unsigned)((deadline - now) / 1000000u) + 1);
    if (rc < 0 && rc != SONDE_E_AGAIN)
      return rc;
  }
}

/* A command with one reply (console output 'O' packets skipped). */
static int g_cmd(struct sonde_mon_link *l, const char *cmd, char *reply, size_t cap)
{
  int rc = g_send(l, cmd);
  if (rc < 0)
    return rc;
  for (;;) {
    rc = g_recv(l, reply, cap, l->timeout_ms);
    if (rc < 0)
      return rc;
    if (rc == 0)
      return sonde_diag_set(&l->diag, SONDE_E_IO, "%s: '%.20s': no answer within %u ms", l->name,
                            cmd, l->timeout_ms);
    if (reply[0] != 'O' || !reply[1] || !strcmp(reply, "OK"))
      return 0;
  }
}

static int g_error(struct sonde_mon_link *l, const char *cmd, const char *reply)
{
  return sonde_diag_set(&l->diag, reply[0] == 'E' ? SONDE_E_IO : SONDE_E_FORMAT,
                        "%s: '%.24s': %s '%.60s'", l->name, cmd,
                        reply[0] == 'E' ? "the server refused:" : "unexpected answer", reply);
}

static int need_halted(struct sonde_mon_link *l, const char *op)
{
  if (l->running)
    return sonde_diag_set(&l->diag, SONDE_E_STATE, "%s: %s: the core runs (halting mode)",
                          l->name, op);
  if (l->exited)
    return sonde_diag_set(&l->diag, SONDE_E_STATE, "%s: %s: the target exited", l->name, op);
  return 0;
}

/* One 'm' packet: its reply (two hex digits a byte) must fit PKT_MAX. */
static int g_read_packet(struct sonde_mon_link *l, uint32_t addr, uint32_t *words, unsigned n)
{
  int rc;
  char cmd[48], reply[PKT_MAX];
  snprintf(cmd, sizeof cmd, "m%x,%x", (unsigned)addr, 4u * n);
  if ((rc = g_cmd(l, cmd, reply, sizeof reply)) < 0)
    return rc;
  if (strlen(reply) != 8u * n)
    return g_error(l, cmd, reply);
  for (unsigned w = 0; w < n; w++) {
    uint32_t v = 0;
    for (unsigned b = 0; b < 4; b++) {
      int h = hexval(reply[8 * w + 2 * b]), lo = hexval(reply[8 * w + 2 * b + 1]);
      if (h < 0 || lo < 0)
        return g_error(l, cmd, reply);
      v |= (uint32_t)(h << 4 | lo) << (8 * b);
    }
    words[w] = v;
  }
  return 0;
}

/* Reads of more than 2 KiB (an MTB buffer) go in several packets. */
#define READ_WORDS_MAX 512u
static int g_read(struct sonde_mon_link *l, uint32_t addr, uint32_t *words, unsigned n)
{
  int rc = need_halted(l, "read");
  for (unsigned done = 0; rc >= 0 && done < n; done += READ_WORDS_MAX) {
    unsigned k = n - done < READ_WORDS_MAX ? n - done : READ_WORDS_MAX;
    rc = g_read_packet(l, addr + 4u * done, words + done, k);
  }
  return rc < 0 ? rc : 0;
}

static int g_write(struct sonde_mon_link *l, uint32_t addr, uint32_t value)
{
  int rc = need_halted(l, "write");
  if (rc < 0)
    return rc;
  char cmd[48], reply[PKT_MAX];
  snprintf(cmd, sizeof cmd, "M%x,4:%02x%02x%02x%02x", (unsigned)addr, value & 0xFF,
           (value >> 8) & 0xFF, (value >> 16) & 0xFF, value >> 24);
  if ((rc = g_cmd(l, cmd, reply, sizeof reply)) < 0)
    return rc;
  return strcmp(reply, "OK") ? g_error(l, cmd, reply) : 0;
}

/* A stop reply: HALTED or EXITED (W/X), else garbage. */
static int stop_reply(struct sonde_mon_link *l, const char *reply)
{
  l->running = false;
  if (reply[0] == 'T' || reply[0] == 'S')
    return SONDE_MON_HALTED;
  if (reply[0] == 'W' || reply[0] == 'X') {
    l->exited = true;
    l->exit_code = (int)strtol(reply + 1, NULL, 16);
    return SONDE_MON_EXITED;
  }
  return g_error(l, "stop reply", reply);
}

static int g_wait(struct sonde_mon_link *l, uint64_t cycles, unsigned timeout_ms)
{
  (void)cycles;
  if (l->exited)
    return SONDE_MON_EXITED;
  if (!l->running)
    return SONDE_MON_HALTED;
  char reply[PKT_MAX];
  uint64_t deadline = mon_now_ns() + (uint64_t)timeout_ms * 1000000u;
  for (;;) {
    uint64_t now = mon_now_ns();
    unsigned left = now >= deadline ? 0 : (unsigned)((deadline - now) / 1000000u);
    int rc = g_recv(l, reply, sizeof reply, left);
    if (rc < 0)
      return rc;
    if (rc == 0)
      return SONDE_MON_RUNNING;
    if (reply[0] == 'O' && reply[1] && strcmp(reply, "OK"))
      continue; /* console output */
    return stop_reply(l, reply);
  }
}

static int g_halt(struct sonde_mon_link *l)
{
  if (!l->running)
    return l->exited ? need_halted(l, "halt") : 0;
  int rc = mon_net_send(l, "\x03", 1);
  if (rc < 0)
    return rc;
  rc = g_wait(l, 0, l->timeout_ms);
  if (rc == SONDE_MON_RUNNING)
    return sonde_diag_set(&l->diag, SONDE_E_IO, "%s: halt: no stop reply within %u ms", l->name,
                          l->timeout_ms);
  return rc < 0 ? rc : 0;
}

static int g_resume(struct sonde_mon_link *l)
{
  int rc = need_halted(l, "resume");
  if (rc < 0)
    return rc;
  if ((rc = g_send(l, "c")) < 0)
    return rc;
  l->running = true;
  return 0;
}

static int g_step(struct sonde_mon_link *l)
{
  int rc = need_halted(l, "step");
  if (rc < 0)
    return rc;
  char reply[PKT_MAX];
  if ((rc = g_cmd(l, "s", reply, sizeof reply)) < 0)
    return rc;
  rc = stop_reply(l, reply);
  return rc < 0 ? rc : 0;
}

static int g_read_pc(struct sonde_mon_link *l, uint32_t *pc)
{
  int rc = need_halted(l, "read pc");
  if (rc < 0)
    return rc;
  char reply[PKT_MAX];
  if ((rc = g_cmd(l, "pf", reply, sizeof reply)) < 0)
    return rc;
  uint32_t v = 0;
  for (unsigned b = 0; b < 4; b++) {
    int h = hexval(reply[2 * b]), lo = h < 0 ? -1 : hexval(reply[2 * b + 1]);
    if (h < 0 || lo < 0)
      return g_error(l, "pf", reply);
    v |= (uint32_t)(h << 4 | lo) << (8 * b);
  }
  *pc = v;
  return 0;
}

static int g_cycles(struct sonde_mon_link *l, uint64_t *cycles)
{
  uint32_t v;
  int rc = g_read(l, SONDE_MON_DWT_CYCCNT, &v, 1);
  if (rc < 0)
    return rc;
  *cycles = mon_cyc_extend(l, v);
  return 0;
}

static void g_close(struct sonde_mon_link *l)
{
  if (l->fd < 0)
    return;
  if (!l->exited) {
    if (l->running)
      g_halt(l);
    g_send(l, "D"); /* detach: the server lets the target run on */
  }
  close(l->fd);
  l->fd = -1;
}

static const struct mon_link_ops gdb_ops = {g_read, g_write, g_halt, g_resume, g_step,
                                            g_read_pc, g_wait, g_cycles, g_close};

int mon_link_gdb_init(struct sonde_mon_link *l, const char *host, unsigned port)
{
  snprintf(l->name, sizeof l->name, "gdb:%s:%u", host, port);
  l->ops = &gdb_ops;
  l->reads_running = false;
  int rc = mon_net_connect(l, host, port);
  if (rc < 0)
    return rc;
  return mon_link_gdb_start(l);
}

int mon_link_gdb_start(struct sonde_mon_link *l)
{
  l->ops = &gdb_ops;
  l->reads_running = false;
  char reply[PKT_MAX];
  int rc;
  if ((rc = g_cmd(l, "qSupported:swbreak+;hwbreak+", reply, sizeof reply)) < 0)
    return rc;
  if ((rc = g_cmd(l, "QStartNoAckMode", reply, sizeof reply)) < 0)
    return rc;
  if (!strcmp(reply, "OK"))
    l->noack = true;
  if ((rc = g_cmd(l, "?", reply, sizeof reply)) < 0)
    return rc;
  rc = stop_reply(l, reply);
  return rc < 0 ? rc : 0;
}
