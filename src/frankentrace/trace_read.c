/* Reading cycle-level PC traces: Sonde's pct (binary or `cycle,pc` CSV,
 * through src/trace) and FrankenTrace's CSV `ts,val,valid,label,short_instr`
 * (one row per cycle, gaps in ts allowed, valid=false rows). */
#include <stdlib.h>
#include <string.h>

#include "csv_fields.h"
#include "ft_internal.h"
#include "load_file.h"
#include "sonde/trace.h"

int sonde_ft_format_parse(const char *s, enum sonde_ft_format *out)
{
  static const char *const names[] = {"auto", "pct", "csv", "perfetto"};
  for (unsigned i = 0; i < 4; i++)
    if (s && strcmp(s, names[i]) == 0) {
      *out = (enum sonde_ft_format)i;
      return 0;
    }
  return SONDE_E_ARG;
}

static int read_pct(const void *data, size_t len, const char *name, uint64_t max,
                    struct sonde_ft_trace **out, struct sonde_diag *diag)
{
  struct sonde_pctrace_reader *r;
  int rc = sonde_pctrace_reader_new_buffer(data, len, name, &r, diag);
  if (rc)
    return rc;
  struct sonde_ft_trace *t;
  rc = sonde_ft_trace_new(sonde_pctrace_reader_first_cycle(r), &t);
  if (rc) {
    sonde_pctrace_reader_free(r);
    return sonde_diag_set(diag, rc, "%s: out of memory", name);
  }
  t->clock_hz = sonde_pctrace_reader_clock_hz(r);
  struct sonde_pctrace_record rec;
  while ((rc = sonde_pctrace_next(r, &rec)) == 1) {
    static const uint8_t state_of[] = {SONDE_FT_PC,         SONDE_FT_SLEEP,
                                       SONDE_FT_EXC_ENTRY,  SONDE_FT_EXC_RETURN,
                                       SONDE_FT_TAIL_CHAIN, SONDE_FT_HALTED,
                                       SONDE_FT_UNSAMPLED};
    struct sonde_ft_cell c = {rec.kind == SONDE_PCTRACE_INSN ? rec.pc : rec.exc,
                              (enum sonde_ft_state)state_of[rec.kind]};
    if (t->length + rec.cycles > max) {
      rc = sonde_diag_set(diag, SONDE_E_LIMIT, "%s: record at cycle %llu: more than %llu cycles",
                          name, (unsigned long long)rec.cycle, (unsigned long long)max);
      break;
    }
    if ((rc = sonde_ft_trace_append(t, c, rec.cycles))) {
      sonde_diag_set(diag, rc, "%s: out of memory", name);
      break;
    }
  }
  if (rc < 0) {
    if (rc != SONDE_E_NOMEM && rc != SONDE_E_LIMIT)
      sonde_diag_set(diag, rc, "%s", sonde_pctrace_reader_error_detail(r));
    sonde_ft_trace_free(t);
    t = NULL;
  }
  sonde_pctrace_reader_free(r);
  *out = t;
  return rc < 0 ? rc : 0;
}

/* The val column: 0xPC, empty (unknown), or a pct CSV span name. */
static bool parse_val(const struct ft_csv *c, struct sonde_ft_cell *cell)
{
  const char *s = c->data + c->start[1];
  size_t n = c->flen[1];
  uint64_t v;
  if (n == 0 || (n == 7 && memcmp(s, "unknown", 7) == 0)) {
    *cell = (struct sonde_ft_cell){0, SONDE_FT_UNSAMPLED};
    return true;
  }
  if (n > 2 && s[0] == '0' && s[1] == 'x') {
    if (!ft_csv_u64(c, 1, true, &v) || v > UINT32_MAX)
      return false;
    /* An odd value cannot be a Thumb instruction address: a sample corrupted
     * on the wire (the real CC2650 trace has four). Kept, but untrusted. */
    *cell = (struct sonde_ft_cell){(uint32_t)v, (v & 1) ? SONDE_FT_INVALID : SONDE_FT_PC};
    return true;
  }
  static const struct {
    const char *name;
    enum sonde_ft_state state;
    bool exc;
  } spans[] = {{"sleep", SONDE_FT_SLEEP, false},         {"halted", SONDE_FT_HALTED, false},
               {"exc_entry", SONDE_FT_EXC_ENTRY, true},   {"exc_return", SONDE_FT_EXC_RETURN, true},
               {"tail_chain", SONDE_FT_TAIL_CHAIN, true}};
  const char *colon = memchr(s, ':', n);
  size_t kn = colon ? (size_t)(colon - s) : n;
  for (unsigned i = 0; i < sizeof spans / sizeof spans[0]; i++) {
    if (strlen(spans[i].name) != kn || memcmp(spans[i].name, s, kn) != 0)
      continue;
    if (spans[i].exc != (colon != NULL))
      return false;
    v = 0;
    if (colon) {
      struct ft_csv sub = *c;
      sub.start[1] += kn + 1;
      sub.flen[1] -= kn + 1;
      if (!ft_csv_u64(&sub, 1, false, &v) || v > 0xFFFFFF)
        return false;
    }
    *cell = (struct sonde_ft_cell){(uint32_t)v, spans[i].state};
    return true;
  }
  return false;
}

static int read_ftcsv(const char *data, size_t len, const char *name, uint64_t max,
                      struct sonde_ft_trace **out, struct sonde_diag *diag)
{
  struct ft_csv c = {.data = data, .len = len};
  *out = NULL;
  int got = ft_csv_next(&c);
  if (got != 1 || !ft_csv_is(&c, 0, "ts") || !ft_csv_is(&c, 1, "val") || !ft_csv_is(&c, 2, "valid"))
    return sonde_diag_set(diag, SONDE_E_FORMAT,
                          "%s: offset 0: not a FrankenTrace CSV (header must start with ts,val,valid)",
                          name);
  struct sonde_ft_trace *t = NULL;
  uint64_t next_ts = 0;
  int rc = 0;
  const char *why = NULL;
  while ((got = ft_csv_next(&c)) == 1) {
    if (c.nfields == 1 && c.flen[0] == 0)
      continue; /* blank line */
    uint64_t ts;
    struct sonde_ft_cell cell;
    if (c.nfields < 3) {
      why = "expected at least ts,val,valid";
      break;
    }
    if (!ft_csv_u64(&c, 0, false, &ts)) {
      why = "bad ts (a decimal cycle number)";
      break;
    }
    if (!parse_val(&c, &cell)) {
      why = "bad val (0x<hex address>, empty, or a span name)";
      break;
    }
    bool valid;
    if (ft_csv_is(&c, 2, "true") || ft_csv_is(&c, 2, "True") || ft_csv_is(&c, 2, "1"))
      valid = true;
    else if (ft_csv_is(&c, 2, "false") || ft_csv_is(&c, 2, "False") || ft_csv_is(&c, 2, "0"))
      valid = false;
    else {
      why = "bad valid (true or false)";
      break;
    }
    if (!valid && !sonde_ft_state_unrecoverable(cell.state))
      cell.state = SONDE_FT_INVALID;
    if (!t) {
      if ((rc = sonde_ft_trace_new(ts, &t)))
        break;
      next_ts = ts;
    }
    if (ts < next_ts) {
      why = "ts goes backwards or repeats (rows must be in increasing ts)";
      break;
    }
    if (ts - t->origin >= max) {
      rc = SONDE_E_LIMIT;
      break;
    }
    if (ts > next_ts &&
        (rc = sonde_ft_trace_append(t, (struct sonde_ft_cell){0, SONDE_FT_UNSAMPLED}, ts - next_ts)))
      break;
    if ((rc = sonde_ft_trace_append(t, cell, 1)))
      break;
    next_ts = ts + 1;
  }
  if (got < 0)
    why = "unterminated quote, text after a quote, or too many fields";
  if (why || rc) {
    sonde_ft_trace_free(t);
    if (rc == SONDE_E_LIMIT)
      return sonde_diag_set(diag, rc, "%s: line %llu, offset %zu: more than %llu cycles after the first row",
                            name, (unsigned long long)c.line, c.row_offset, (unsigned long long)max);
    if (rc)
      return sonde_diag_set(diag, rc, "%s: out of memory", name);
    return sonde_diag_set(diag, SONDE_E_FORMAT, "%s: line %llu, offset %zu: %s", name,
                          (unsigned long long)c.line, c.row_offset, why);
  }
  if (!t && (rc = sonde_ft_trace_new(0, &t)))
    return sonde_diag_set(diag, rc, "%s: out of memory", name);
  *out = t;
  return 0;
}

int sonde_ft_read_buffer(const void *data, size_t len, const char *name,
                         enum sonde_ft_format format, uint64_t max_cycles,
                         struct sonde_ft_trace **out, struct sonde_diag *diag)
{
  *out = NULL;
  if (!max_cycles)
    max_cycles = SONDE_FT_READ_MAX;
  if (!name)
    name = "<buffer>";
  if (format == SONDE_FT_FORMAT_AUTO) {
    if (len >= 3 && memcmp(data, "ts,", 3) == 0)
      format = SONDE_FT_FORMAT_CSV;
    else
      format = SONDE_FT_FORMAT_PCT;
  }
  if (format == SONDE_FT_FORMAT_CSV)
    return read_ftcsv(data, len, name, max_cycles, out, diag);
  if (format == SONDE_FT_FORMAT_PCT)
    return read_pct(data, len, name, max_cycles, out, diag);
  return sonde_diag_set(diag, SONDE_E_ARG, "%s: cannot read this format", name);
}

int sonde_ft_read(const char *path, enum sonde_ft_format format, uint64_t max_cycles,
                  struct sonde_ft_trace **out, struct sonde_diag *diag)
{
  return sonde_ft_read_progress(path, format, max_cycles, NULL, NULL, out, diag);
}

int sonde_ft_read_progress(const char *path, enum sonde_ft_format format, uint64_t max_cycles,
                           sonde_ft_progress_fn fn, void *ctx, struct sonde_ft_trace **out,
                           struct sonde_diag *diag)
{
  char *data;
  size_t len;
  *out = NULL;
  int rc = ft_load_file_progress(path, &data, &len, fn, ctx, diag);
  if (rc)
    return rc;
  rc = sonde_ft_read_buffer(data, len, path, format, max_cycles, out, diag);
  free(data);
  return rc;
}
