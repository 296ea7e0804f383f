/* The OpenOCD backend of the debug link (monitor.h): OpenOCD's Tcl RPC server
 * (OpenOCD User's Guide, "Tcl RPC server": a command is a Tcl string ended by
 * the byte 0x1a, the answer is its result ended by 0x1a). Commands used, as
 * OpenOCD 0.12 answers them (tests/monitor/openocd_transcript.txt):
 *   version                       "Open On-Chip Debugger 0.12.0"
 *   mdw ADDR N                    "0xADDR: w0 w1 ... w7 \n0xADDR+32: ..." (hex)
 *   mww ADDR VALUE                ""
 *   halt / resume / step          "" (the log gets the messages)
 *   reg pc                        "pc (/32): 0x000001a4"
 *   [target current] curstate     "running" | "halted" | "reset" | ...
 * Memory reads work while the core runs (the MEM-AP), so PC polling does not
 * stop the core. Any other answer is garbage: an error that quotes it. */
#include "monitor_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ANSWER_MAX 4096

/* Send one command and take its answer (NUL-terminated, 0x1a removed). */
static int o_cmd(struct sonde_mon_link *l, const char *cmd, char *ans, size_t cap)
{
  char buf[256];
  int n = snprintf(buf, sizeof buf, "%s\x1a", cmd);
  int rc = mon_net_send(l, buf, (size_t)n);
  if (rc < 0)
    return rc;
  uint64_t deadline = mon_now_ns() + (uint64_t)l->timeout_ms * 1000000u;
  for (;;) {
    char *end = l->rx ? memchr(l->rx, 0x1a, l->rxlen) : NULL;
    if (end) {
      size_t len = (size_t)(end - l->rx);
      if (len >= cap)
        len = cap - 1;
      memcpy(ans, l->rx, len);
      ans[len] = 0;
      mon_net_consume(l, (size_t)(end - l->rx) + 1);
      return 0;
    }
    uint64_t now = mon_now_ns();
    if (now >= deadline)
      return sonde_diag_set(&l->diag, SONDE_E_IO, "%s: '%s': no answer within %u ms", l->name,
                            cmd, l->timeout_ms);
    rc = mon_net_recv(l, (unsigned)((deadline - now) / 1000000u) + 1);
    if (rc < 0 && rc != SONDE_E_AGAIN)
      return rc;
  }
}

static bool is_error_answer(const char *a)
{
  return strstr(a, "invalid command") || strstr(a, "Error") || strstr(a, "error") ||
         strstr(a, "not halted") || strstr(a, "failed");
}

static int garbage(struct sonde_mon_link *l, const char *cmd, const char *ans)
{
  return sonde_diag_set(&l->diag, SONDE_E_FORMAT, "%s: '%s': unexpected answer '%.120s'", l->name,
                        cmd, ans);
}

/* A command whose answer must be empty (or harmless text without an error). */
static int o_simple(struct sonde_mon_link *l, const char *cmd)
{
  char ans[ANSWER_MAX];
  int rc = o_cmd(l, cmd, ans, sizeof ans);
  if (rc < 0)
    return rc;
  return is_error_answer(ans) ? garbage(l, cmd, ans) : 0;
}

/* One mdw: its answer (about 84 characters per 8 words) must fit ANSWER_MAX. */
static int o_read_chunk(struct sonde_mon_link *l, uint32_t addr, uint32_t *words, unsigned n)
{
  char cmd[64], ans[ANSWER_MAX];
  snprintf(cmd, sizeof cmd, "mdw 0x%08x %u", (unsigned)addr, n);
  int rc = o_cmd(l, cmd, ans, sizeof ans);
  if (rc < 0)
    return rc;
  /* Lines "0xADDR: hex hex ...". Every line's address must be where we are. */
  unsigned got = 0;
  char *p = ans;
  while (*p && got < n) {
    while (*p == '\n' || *p == '\r' || *p == ' ')
      p++;
    if (!*p)
      break;
    char *e;
    unsigned long a = strtoul(p, &e, 16);
    if (e == p || *e != ':' || a != addr + 4u * got)
      return garbage(l, cmd, ans);
    p = e + 1;
    while (*p == ' ') {
      while (*p == ' ')
        p++;
      if (!*p || *p == '\n')
        break;
      unsigned long v = strtoul(p, &e, 16);
      if (e == p || (*e && *e != ' ' && *e != '\n' && *e != '\r') || got >= n)
        return garbage(l, cmd, ans);
      words[got++] = (uint32_t)v;
      p = e;
    }
  }
  if (got != n)
    return garbage(l, cmd, ans);
  return 0;
}

/* Reads of more than 1 KiB (an MTB buffer) go in several mdw commands. */
#define READ_WORDS_MAX 256u
static int o_read(struct sonde_mon_link *l, uint32_t addr, uint32_t *words, unsigned n)
{
  for (unsigned done = 0; done < n; done += READ_WORDS_MAX) {
    unsigned k = n - done < READ_WORDS_MAX ? n - done : READ_WORDS_MAX;
    int rc = o_read_chunk(l, addr + 4u * done, words + done, k);
    if (rc < 0)
      return rc;
  }
  return 0;
}

static int o_write(struct sonde_mon_link *l, uint32_t addr, uint32_t value)
{
  char cmd[64];
  snprintf(cmd, sizeof cmd, "mww 0x%08x 0x%08x", (unsigned)addr, (unsigned)value);
  return o_simple(l, cmd);
}

static int o_halt(struct sonde_mon_link *l)
{
  return o_simple(l, "halt");
}

static int o_resume(struct sonde_mon_link *l)
{
  return o_simple(l, "resume");
}

static int o_step(struct sonde_mon_link *l)
{
  return o_simple(l, "step");
}

static int o_read_pc(struct sonde_mon_link *l, uint32_t *pc)
{
  char ans[ANSWER_MAX];
  int rc = o_cmd(l, "reg pc", ans, sizeof ans);
  if (rc < 0)
    return rc;
  const char *p = strstr(ans, "): 0x");
  if (strncmp(ans, "pc ", 3) || !p)
    return garbage(l, "reg pc", ans);
  *pc = (uint32_t)strtoul(p + 3, NULL, 16);
  return 0;
}

static int o_state(struct sonde_mon_link *l)
{
  char ans[ANSWER_MAX];
  int rc = o_cmd(l, "[target current] curstate", ans, sizeof ans);
  if (rc < 0)
    return rc;
  if (!strcmp(ans, "halted"))
    return SONDE_MON_HALTED;
  if (!strcmp(ans, "running") || !strcmp(ans, "reset") || !strcmp(ans, "debug-running"))
    return SONDE_MON_RUNNING;
  return garbage(l, "[target current] curstate", ans);
}

static int o_wait(struct sonde_mon_link *l, uint64_t cycles, unsigned timeout_ms)
{
  (void)cycles;
  uint64_t deadline = mon_now_ns() + (uint64_t)timeout_ms * 1000000u;
  for (;;) {
    int st = o_state(l);
    if (st != SONDE_MON_RUNNING || mon_now_ns() >= deadline)
      return st;
    usleep(1000);
  }
}

static int o_cycles(struct sonde_mon_link *l, uint64_t *cycles)
{
  uint32_t v;
  int rc = o_read(l, SONDE_MON_DWT_CYCCNT, &v, 1);
  if (rc < 0)
    return rc;
  *cycles = mon_cyc_extend(l, v);
  return 0;
}

static void o_close(struct sonde_mon_link *l)
{
  if (l->fd >= 0)
    close(l->fd);
  l->fd = -1;
}

static const struct mon_link_ops openocd_ops = {o_read, o_write, o_halt, o_resume, o_step,
                                                o_read_pc, o_wait, o_cycles, o_close};

int mon_link_openocd_init(struct sonde_mon_link *l, const char *host, unsigned port)
{
  snprintf(l->name, sizeof l->name, "openocd:%s:%u", host, port);
  l->ops = &openocd_ops;
  l->reads_running = true;
  int rc = mon_net_connect(l, host, port);
  if (rc < 0)
    return rc;
  return mon_link_openocd_start(l);
}

int mon_link_openocd_start(struct sonde_mon_link *l)
{
  l->ops = &openocd_ops;
  l->reads_running = true;
  char ans[ANSWER_MAX];
  int rc = o_cmd(l, "version", ans, sizeof ans);
  if (rc < 0)
    return rc;
  if (strncmp(ans, "Open On-Chip Debugger", 21))
    return sonde_diag_set(&l->diag, SONDE_E_FORMAT,
                          "%s: not OpenOCD's Tcl port: 'version' answered '%.80s'", l->name, ans);
  return 0;
}
