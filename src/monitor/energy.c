/* Energy attribution (monitor.h): the supply current as a step function of
 * target cycles (the VM's power model reports exactly that; a meter's CSV is
 * read as zero-order hold), integrated exactly in microamp-cycles over
 * labelled intervals. Energy = charge x supply voltage:
 *   uJ = ua_cycles / clock_hz [uC] x supply_mv / 1000 [V]. */
#include "monitor_internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sonde_mon_current_init(struct sonde_mon_current *c, uint64_t clock_hz, uint32_t supply_mv)
{
  memset(c, 0, sizeof *c);
  c->clock_hz = clock_hz;
  c->supply_mv = supply_mv;
}

void sonde_mon_current_free(struct sonde_mon_current *c)
{
  free(c->cycle);
  free(c->ua);
  c->cycle = NULL;
  c->ua = NULL;
  c->n = c->cap = 0;
}

int sonde_mon_current_add(struct sonde_mon_current *c, uint64_t cycle, uint32_t ua)
{
  if (c->n && cycle < c->cycle[c->n - 1])
    return SONDE_E_ARG; /* samples come in time order */
  if (c->n && cycle == c->cycle[c->n - 1]) {
    c->ua[c->n - 1] = ua; /* two changes at one cycle: the later holds */
    return 0;
  }
  if (c->n == c->cap) {
    size_t cap = c->cap ? 2 * c->cap : 256;
    uint64_t *cy = realloc(c->cycle, cap * sizeof *cy);
    if (!cy)
      return SONDE_E_NOMEM;
    c->cycle = cy;
    uint32_t *u = realloc(c->ua, cap * sizeof *u);
    if (!u)
      return SONDE_E_NOMEM;
    c->ua = u;
    c->cap = cap;
  }
  c->cycle[c->n] = cycle;
  c->ua[c->n] = ua;
  c->n++;
  return 0;
}

void sonde_mon_current_vm_fn(void *ctx, uint64_t cycle, uint32_t current_ua)
{
  sonde_mon_current_add(ctx, cycle, current_ua);
}

/* Last sample at or before t, or -1. */
static long at(const struct sonde_mon_current *c, uint64_t t)
{
  size_t lo = 0, hi = c->n;
  while (lo < hi) {
    size_t m = (lo + hi) / 2;
    if (c->cycle[m] <= t)
      lo = m + 1;
    else
      hi = m;
  }
  return (long)lo - 1;
}

uint64_t sonde_mon_charge(const struct sonde_mon_current *c, uint64_t from, uint64_t to)
{
  if (to <= from || !c->n)
    return 0;
  long i = at(c, from);
  if (i < 0) {
    i = 0;
    from = c->cycle[0] > from ? c->cycle[0] : from;
    if (from >= to)
      return 0;
  }
  uint64_t q = 0, t = from;
  while (t < to) {
    uint64_t next = (size_t)i + 1 < c->n ? c->cycle[i + 1] : UINT64_MAX;
    uint64_t e = next < to ? next : to;
    q += (uint64_t)c->ua[i] * (e - t);
    t = e;
    i++;
  }
  return q;
}

double sonde_mon_uj(const struct sonde_mon_current *c, uint64_t ua_cycles)
{
  if (!c->clock_hz)
    return 0;
  return (double)ua_cycles / (double)c->clock_hz * (double)c->supply_mv / 1000.0;
}

void sonde_mon_energy(const struct sonde_mon_current *c, const struct sonde_mon_interval *iv,
                      size_t n, struct sonde_mon_energy_row *rows, size_t nlabels)
{
  memset(rows, 0, nlabels * sizeof *rows);
  for (size_t i = 0; i < nlabels; i++)
    rows[i].label = (uint32_t)i;
  for (size_t i = 0; i < n; i++) {
    if (iv[i].label >= nlabels || iv[i].end < iv[i].start)
      continue;
    struct sonde_mon_energy_row *r = &rows[iv[i].label];
    r->count++;
    r->cycles += iv[i].end - iv[i].start;
    r->ua_cycles += sonde_mon_charge(c, iv[i].start, iv[i].end);
  }
  for (size_t i = 0; i < nlabels; i++)
    rows[i].uj = sonde_mon_uj(c, rows[i].ua_cycles);
}

size_t sonde_mon_intervals_from_changes(const struct sonde_mon_change *ch, size_t n,
                                        uint64_t end_cycle, uint32_t nfunc,
                                        struct sonde_mon_interval *out)
{
  for (size_t i = 0; i < n; i++) {
    out[i].start = ch[i].cycle;
    out[i].end = i + 1 < n ? ch[i + 1].cycle : (end_cycle > ch[i].cycle ? end_cycle : ch[i].cycle);
    out[i].label = ch[i].func < 0 ? nfunc : (uint32_t)ch[i].func;
  }
  return n;
}

/* ---- CSV ------------------------------------------------------------------------- */

static double time_scale(const char *h, size_t len, bool *cycles)
{
  *cycles = false;
  if ((len == 4 && !strncmp(h, "time", 4)) || (len == 6 && !strncmp(h, "time_s", 6)))
    return 1.0;
  if (len == 7 && !strncmp(h, "time_ms", 7))
    return 1e-3;
  if (len == 7 && !strncmp(h, "time_us", 7))
    return 1e-6;
  if (len == 5 && !strncmp(h, "cycle", 5)) {
    *cycles = true;
    return 1.0;
  }
  return 0;
}

static double current_scale(const char *h, size_t len)
{
  if ((len == 7 && !strncmp(h, "current", 7)) || (len == 9 && !strncmp(h, "current_a", 9)))
    return 1e6;
  if (len == 10 && !strncmp(h, "current_ma", 10))
    return 1e3;
  if (len == 10 && !strncmp(h, "current_ua", 10))
    return 1.0;
  return 0;
}

int sonde_mon_current_parse_csv(struct sonde_mon_current *c, const char *text, size_t len,
                                const char *name, struct sonde_diag *diag)
{
  size_t pos = 0, line = 1;
  /* header */
  size_t e = pos;
  while (e < len && text[e] != '\n')
    e++;
  const char *comma = memchr(text, ',', e);
  bool in_cycles = false;
  double ts = 0, cs = 0;
  if (comma) {
    size_t hl = e;
    while (hl > 0 && (text[hl - 1] == '\r' || text[hl - 1] == ' '))
      hl--;
    ts = time_scale(text, (size_t)(comma - text), &in_cycles);
    cs = current_scale(comma + 1, hl - (size_t)(comma + 1 - text));
  }
  if (!comma || ts == 0 || cs == 0)
    return sonde_diag_set(diag, SONDE_E_FORMAT,
                          "%s: line 1 (offset 0): expected a header 'time,current' (time, time_s, "
                          "time_ms, time_us or cycle; current, current_a, current_ma or current_ua)",
                          name);
  if (!in_cycles && !c->clock_hz)
    return sonde_diag_set(diag, SONDE_E_ARG, "%s: times in seconds need the clock frequency",
                          name);
  pos = e < len ? e + 1 : len;
  while (pos < len) {
    line++;
    e = pos;
    while (e < len && text[e] != '\n')
      e++;
    if (e == pos || (e == pos + 1 && text[pos] == '\r')) {
      pos = e + 1;
      continue;
    }
    char buf[128];
    size_t l = e - pos < sizeof buf - 1 ? e - pos : sizeof buf - 1;
    memcpy(buf, text + pos, l);
    buf[l] = 0;
    char *p = buf, *end;
    errno = 0;
    double t = strtod(p, &end);
    bool ok = end != p && *end == ',' && errno == 0 && isfinite(t) && t >= 0;
    double a = 0;
    if (ok) {
      p = end + 1;
      a = strtod(p, &end);
      while (*end == '\r' || *end == ' ')
        end++;
      ok = end != p && !*end && isfinite(a) && a >= 0 && a * cs < 4294967295.0;
    }
    uint64_t cyc = ok ? (uint64_t)llround(in_cycles ? t : t * ts * (double)c->clock_hz) : 0;
    if (ok && c->n && cyc < c->cycle[c->n - 1])
      return sonde_diag_set(diag, SONDE_E_FORMAT, "%s: line %zu (offset %zu): time goes backwards",
                            name, line, pos);
    if (!ok)
      return sonde_diag_set(diag, SONDE_E_FORMAT,
                            "%s: line %zu (offset %zu): expected 'time,current' (two non-negative "
                            "numbers), got '%.40s'",
                            name, line, pos, buf);
    int rc = sonde_mon_current_add(c, cyc, (uint32_t)llround(a * cs));
    if (rc < 0)
      return sonde_diag_set(diag, rc, "%s: line %zu: %s", name, line, sonde_strerror(rc));
    pos = e + 1;
  }
  if (!c->n)
    return sonde_diag_set(diag, SONDE_E_FORMAT, "%s: no samples after the header", name);
  return 0;
}
