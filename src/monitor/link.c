/* The debug link (monitor.h): backend-independent operations, statistics
 * (operations and the host time they took, so each mode can report the rate
 * it really achieved) and the link specification parser. */
#include "monitor_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

uint64_t mon_now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t mon_cyc_extend(struct sonde_mon_link *l, uint32_t cyccnt)
{
  if (l->cyc_have && cyccnt < l->cyc_last)
    l->cyc_hi += 1ull << 32;
  l->cyc_have = true;
  l->cyc_last = cyccnt;
  return l->cyc_hi | cyccnt;
}

int mon_grow(void **arr, size_t *cap, size_t n, size_t elem)
{
  if (n < *cap)
    return 0;
  size_t c = *cap ? 2 * *cap : 256;
  void *p = realloc(*arr, c * elem);
  if (!p)
    return SONDE_E_NOMEM;
  *arr = p;
  *cap = c;
  return 0;
}

static struct sonde_mon_link *link_alloc(enum sonde_mon_link_kind kind)
{
  struct sonde_mon_link *l = calloc(1, sizeof *l);
  if (l) {
    l->kind = kind;
    l->fd = -1;
  }
  return l;
}

static int finish_open(struct sonde_mon_link *l, int rc, struct sonde_mon_link **out,
                       struct sonde_diag *diag)
{
  if (rc < 0) {
    if (diag)
      *diag = l->diag;
    sonde_mon_link_free(l);
    return rc;
  }
  *out = l;
  return 0;
}

int sonde_mon_link_vm(struct sonde_vm *vm, struct sonde_mon_link **out)
{
  *out = NULL;
  if (!vm)
    return SONDE_E_ARG;
  struct sonde_mon_link *l = link_alloc(SONDE_MON_LINK_VM);
  if (!l)
    return SONDE_E_NOMEM;
  return finish_open(l, mon_link_vm_init(l, vm), out, NULL);
}

int sonde_mon_link_openocd(const char *host, unsigned port, unsigned timeout_ms,
                           struct sonde_mon_link **out, struct sonde_diag *diag)
{
  *out = NULL;
  struct sonde_mon_link *l = link_alloc(SONDE_MON_LINK_OPENOCD);
  if (!l)
    return SONDE_E_NOMEM;
  l->timeout_ms = timeout_ms ? timeout_ms : 5000;
  return finish_open(l, mon_link_openocd_init(l, host, port), out, diag);
}

int sonde_mon_link_gdb(const char *host, unsigned port, unsigned timeout_ms,
                       struct sonde_mon_link **out, struct sonde_diag *diag)
{
  *out = NULL;
  struct sonde_mon_link *l = link_alloc(SONDE_MON_LINK_GDB);
  if (!l)
    return SONDE_E_NOMEM;
  l->timeout_ms = timeout_ms ? timeout_ms : 5000;
  return finish_open(l, mon_link_gdb_init(l, host, port), out, diag);
}

int mon_link_from_fd(enum sonde_mon_link_kind kind, int fd, unsigned timeout_ms,
                     struct sonde_mon_link **out, struct sonde_diag *diag)
{
  *out = NULL;
  if (kind == SONDE_MON_LINK_VM)
    return SONDE_E_ARG;
  struct sonde_mon_link *l = link_alloc(kind);
  if (!l)
    return SONDE_E_NOMEM;
  l->fd = fd;
  l->timeout_ms = timeout_ms ? timeout_ms : 5000;
  snprintf(l->name, sizeof l->name, "%s:fd%d", kind == SONDE_MON_LINK_GDB ? "gdb" : "openocd", fd);
  int rc = kind == SONDE_MON_LINK_GDB ? mon_link_gdb_start(l) : mon_link_openocd_start(l);
  return finish_open(l, rc, out, diag);
}

/* "kind:HOST:PORT" -> host, port. */
static int split_host_port(const char *rest, char *host, size_t cap, unsigned *port)
{
  const char *colon = strrchr(rest, ':');
  if (!colon || colon == rest || (size_t)(colon - rest) >= cap)
    return SONDE_E_ARG;
  memcpy(host, rest, (size_t)(colon - rest));
  host[colon - rest] = 0;
  char *end;
  unsigned long p = strtoul(colon + 1, &end, 10);
  if (*end || !colon[1] || p == 0 || p > 65535)
    return SONDE_E_ARG;
  *port = (unsigned)p;
  return 0;
}

int sonde_mon_link_open(const char *spec, struct sonde_vm *vm, unsigned timeout_ms,
                        struct sonde_mon_link **out, struct sonde_diag *diag)
{
  *out = NULL;
  char host[256];
  unsigned port;
  if (!strcmp(spec, "vm")) {
    if (!vm)
      return diag ? sonde_diag_set(diag, SONDE_E_ARG, "link 'vm' needs a loaded VM") : SONDE_E_ARG;
    return sonde_mon_link_vm(vm, out);
  }
  if (!strncmp(spec, "openocd:", 8) && split_host_port(spec + 8, host, sizeof host, &port) == 0)
    return sonde_mon_link_openocd(host, port, timeout_ms, out, diag);
  if (!strncmp(spec, "gdb:", 4) && split_host_port(spec + 4, host, sizeof host, &port) == 0)
    return sonde_mon_link_gdb(host, port, timeout_ms, out, diag);
  return diag ? sonde_diag_set(diag, SONDE_E_ARG,
                               "link '%s': expected vm, openocd:HOST:PORT or gdb:HOST:PORT", spec)
              : SONDE_E_ARG;
}

void sonde_mon_link_free(struct sonde_mon_link *l)
{
  if (!l)
    return;
  if (l->ops && l->ops->close)
    l->ops->close(l);
  free(l->rx);
  free(l);
}

enum sonde_mon_link_kind sonde_mon_link_kind(const struct sonde_mon_link *l)
{
  return l->kind;
}

const char *sonde_mon_link_name(const struct sonde_mon_link *l)
{
  return l ? l->name : "";
}

const char *sonde_mon_link_error(const struct sonde_mon_link *l)
{
  return l ? l->diag.msg : "";
}

bool sonde_mon_link_reads_running(const struct sonde_mon_link *l)
{
  return l && l->reads_running;
}

void sonde_mon_link_stats(const struct sonde_mon_link *l, struct sonde_mon_link_stats *out)
{
  *out = l->stats;
}

/* Time one operation into the statistics. */
#define TIMED(l, expr)                        \
  do {                                        \
    uint64_t t0_ = mon_now_ns();              \
    int rc_ = (expr);                         \
    (l)->stats.ops++;                         \
    (l)->stats.host_ns += mon_now_ns() - t0_; \
    return rc_;                               \
  } while (0)

int sonde_mon_read_words(struct sonde_mon_link *l, uint32_t addr, uint32_t *words, unsigned n)
{
  if (!n || (addr & 3))
    return SONDE_E_ARG;
  TIMED(l, l->ops->read(l, addr, words, n));
}

int sonde_mon_read32(struct sonde_mon_link *l, uint32_t addr, uint32_t *value)
{
  return sonde_mon_read_words(l, addr, value, 1);
}

int sonde_mon_write32(struct sonde_mon_link *l, uint32_t addr, uint32_t value)
{
  TIMED(l, l->ops->write(l, addr, value));
}

int sonde_mon_halt(struct sonde_mon_link *l)
{
  TIMED(l, l->ops->halt(l));
}

int sonde_mon_resume(struct sonde_mon_link *l)
{
  TIMED(l, l->ops->resume(l));
}

int sonde_mon_step(struct sonde_mon_link *l)
{
  TIMED(l, l->ops->step(l));
}

int sonde_mon_read_pc(struct sonde_mon_link *l, uint32_t *pc)
{
  TIMED(l, l->ops->read_pc(l, pc));
}

int sonde_mon_wait(struct sonde_mon_link *l, uint64_t cycles, unsigned timeout_ms)
{
  TIMED(l, l->ops->wait(l, cycles, timeout_ms));
}

int sonde_mon_cycles(struct sonde_mon_link *l, uint64_t *cycles)
{
  TIMED(l, l->ops->cycles(l, cycles));
}
