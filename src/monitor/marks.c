/* The monitor's own CSV outputs read back (monitor.h): `cycle,pc,function`
 * (sonde monitor pc --format csv) and `cycle,trigger,pc,value` (sonde monitor
 * watch --format csv), for `sonde energy`. Labels (function or trigger
 * names) are interned; rows must come in cycle order. */
#include "monitor_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int intern(struct sonde_mon_marks *m, const char *s, size_t len, uint32_t *out)
{
  for (size_t i = 0; i < m->nnames; i++)
    if (strlen(m->names[i]) == len && !memcmp(m->names[i], s, len)) {
      *out = (uint32_t)i;
      return 0;
    }
  char **p = realloc(m->names, (m->nnames + 1) * sizeof *p);
  if (!p)
    return SONDE_E_NOMEM;
  m->names = p;
  char *c = malloc(len + 1);
  if (!c)
    return SONDE_E_NOMEM;
  memcpy(c, s, len);
  c[len] = 0;
  m->names[m->nnames] = c;
  *out = (uint32_t)m->nnames++;
  return 0;
}

static int add(struct sonde_mon_marks *m, size_t *cap, uint64_t cycle, uint32_t label,
               uint32_t value)
{
  if (m->n == *cap) {
    size_t c = *cap ? 2 * *cap : 256;
    uint64_t *cy = realloc(m->cycle, c * sizeof *cy);
    if (!cy)
      return SONDE_E_NOMEM;
    m->cycle = cy;
    uint32_t *l = realloc(m->label, c * sizeof *l);
    if (!l)
      return SONDE_E_NOMEM;
    m->label = l;
    uint32_t *v = realloc(m->value, c * sizeof *v);
    if (!v)
      return SONDE_E_NOMEM;
    m->value = v;
    *cap = c;
  }
  m->cycle[m->n] = cycle;
  m->label[m->n] = label;
  m->value[m->n] = value;
  m->n++;
  return 0;
}

/* Split a line into at most 4 comma-separated fields. */
static unsigned fields(const char *s, size_t len, const char **f, size_t *fl)
{
  unsigned n = 0;
  size_t start = 0;
  for (size_t i = 0; i <= len && n < 5; i++) {
    if (i == len || s[i] == ',') {
      if (n < 4) {
        f[n] = s + start;
        fl[n] = i - start;
      }
      n++;
      start = i + 1;
    }
  }
  return n;
}

static bool number(const char *s, size_t len, int base, uint64_t *out)
{
  char buf[32];
  if (!len || len >= sizeof buf)
    return false;
  memcpy(buf, s, len);
  buf[len] = 0;
  if (buf[0] == '-' || buf[0] == '+' || buf[0] == ' ')
    return false;
  char *e;
  unsigned long long v = strtoull(buf, &e, base);
  if (*e)
    return false;
  *out = v;
  return true;
}

int sonde_mon_marks_parse_csv(struct sonde_mon_marks *m, const char *text, size_t len,
                              const char *name, struct sonde_diag *diag)
{
  memset(m, 0, sizeof *m);
  size_t cap = 0, pos = 0, line = 0;
  int kind = -1; /* 0: cycle,pc,function; 1: cycle,trigger,pc,value */
  while (pos < len) {
    size_t e = pos;
    while (e < len && text[e] != '\n')
      e++;
    size_t l = e - pos;
    if (l && text[pos + l - 1] == '\r')
      l--;
    line++;
    const char *f[4];
    size_t fl[4];
    if (kind < 0) {
      if (l == 17 && !memcmp(text + pos, "cycle,pc,function", 17))
        kind = 0;
      else if (l == 22 && !memcmp(text + pos, "cycle,trigger,pc,value", 22))
        kind = 1;
      else
        return sonde_diag_set(diag, SONDE_E_FORMAT,
                              "%s: line 1 (offset 0): expected the header 'cycle,pc,function' "
                              "(monitor pc) or 'cycle,trigger,pc,value' (monitor watch)",
                              name);
    } else if (l) {
      unsigned nf = fields(text + pos, l, f, fl);
      uint64_t cyc, pc, val = 0;
      uint32_t lab;
      bool ok = nf == (kind ? 4u : 3u) && number(f[0], fl[0], 10, &cyc) &&
                number(f[kind ? 2 : 1], fl[kind ? 2 : 1], 16, &pc) &&
                (!kind || number(f[3], fl[3], 10, &val)) && val <= 0xFFFFFFFFu &&
                fl[kind ? 1 : 2] > 0;
      if (!ok)
        return sonde_diag_set(diag, SONDE_E_FORMAT, "%s: line %zu (offset %zu): expected '%s'",
                              name, line, pos, kind ? "cycle,trigger,pc,value" : "cycle,pc,function");
      if (m->n && cyc < m->cycle[m->n - 1])
        return sonde_diag_set(diag, SONDE_E_FORMAT, "%s: line %zu (offset %zu): cycle goes backwards",
                              name, line, pos);
      int rc = intern(m, f[kind ? 1 : 2], fl[kind ? 1 : 2], &lab);
      if (rc == 0)
        rc = add(m, &cap, cyc, lab, (uint32_t)val);
      if (rc < 0)
        return sonde_diag_set(diag, rc, "%s: %s", name, sonde_strerror(rc));
    }
    pos = e < len ? e + 1 : len;
  }
  if (kind < 0)
    return sonde_diag_set(diag, SONDE_E_FORMAT, "%s: empty", name);
  m->events = kind == 1;
  return 0;
}

void sonde_mon_marks_free(struct sonde_mon_marks *m)
{
  if (!m)
    return;
  for (size_t i = 0; i < m->nnames; i++)
    free(m->names[i]);
  free(m->names);
  free(m->cycle);
  free(m->label);
  free(m->value);
  memset(m, 0, sizeof *m);
}
