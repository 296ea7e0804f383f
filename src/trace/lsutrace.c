/* The LSU trace: every data transfer of the core, as CSV with the header
 * `cycle,pc,addr,size,value,rw` (docs/formats.md, "LSU trace"). */
#include "sonde/trace.h"

#include <stdlib.h>
#include <string.h>

#include "trace_io.h"

#define LSU_HEADER "cycle,pc,addr,size,value,rw"

struct sonde_lsutrace_writer {
  struct trace_out out;
  const char *name;
  int err;
  struct sonde_diag diag;
};

int sonde_lsutrace_writer_new(FILE *f, const char *name, struct sonde_lsutrace_writer **out)
{
  *out = NULL;
  if (!f)
    return SONDE_E_ARG;
  struct sonde_lsutrace_writer *w = calloc(1, sizeof *w);
  if (!w || trace_out_init(&w->out, f) < 0) {
    free(w);
    return SONDE_E_NOMEM;
  }
  w->name = name ? name : "lsu trace";
  uint8_t *p = trace_out_reserve(&w->out, sizeof LSU_HEADER);
  memcpy(p, LSU_HEADER "\n", sizeof LSU_HEADER);
  w->out.used += sizeof LSU_HEADER;
  *out = w;
  return 0;
}

int sonde_lsutrace_write(struct sonde_lsutrace_writer *w, const struct sonde_lsutrace_record *rec)
{
  if (w->err)
    return w->err;
  if (rec->size != 1 && rec->size != 2 && rec->size != 4)
    return sonde_diag_set(&w->diag, SONDE_E_ARG, "%s: bad transfer size %u", w->name, rec->size);
  char *p = (char *)trace_out_reserve(&w->out, 80);
  if (!p)
    return w->err = sonde_diag_set(&w->diag, SONDE_E_IO, "%s: write failed", w->name);
  size_t n = trace_fmt_u64(p, rec->cycle);
  p[n++] = ',';
  trace_fmt_hex8(p + n, rec->pc);
  n += 10;
  p[n++] = ',';
  trace_fmt_hex8(p + n, rec->addr);
  n += 10;
  p[n++] = ',';
  p[n++] = (char)('0' + rec->size);
  p[n++] = ',';
  uint32_t v = rec->size == 4 ? rec->value : rec->value & ((1u << (8 * rec->size)) - 1);
  n += trace_fmt_hex(p + n, v);
  p[n++] = ',';
  p[n++] = rec->stacking ? (rec->write ? 'W' : 'R') : (rec->write ? 'w' : 'r');
  p[n++] = '\n';
  w->out.used += n;
  return 0;
}

int sonde_lsutrace_writer_finish(struct sonde_lsutrace_writer *w)
{
  if (w->err)
    return w->err;
  if (trace_out_flush(&w->out) < 0 || fflush(w->out.f) != 0)
    return w->err = sonde_diag_set(&w->diag, SONDE_E_IO, "%s: write failed", w->name);
  return 0;
}

void sonde_lsutrace_writer_free(struct sonde_lsutrace_writer *w)
{
  if (!w)
    return;
  trace_out_free(&w->out);
  free(w);
}

const char *sonde_lsutrace_writer_error_detail(const struct sonde_lsutrace_writer *w)
{
  return w->diag.msg;
}

/* ---- reader --------------------------------------------------------------- */

struct sonde_lsutrace_reader {
  struct trace_in in;
  char name[128];
  uint64_t line;
  int err;
  struct sonde_diag diag;
};

static int lsu_fail(struct sonde_lsutrace_reader *r, int err, uint64_t off, const char *why)
{
  r->err = sonde_diag_set(&r->diag, err, "%s: offset %llu: line %llu: %s", r->name,
                          (unsigned long long)off, (unsigned long long)r->line, why);
  return r->err;
}

static int lsu_start(struct sonde_lsutrace_reader *r, const char *name,
                     struct sonde_lsutrace_reader **out, struct sonde_diag *diag)
{
  snprintf(r->name, sizeof r->name, "%s", name ? name : "lsu trace");
  r->line = 1;
  const char *line;
  size_t n;
  int got = trace_in_line(&r->in, 64, &line, &n);
  int rc = 0;
  if (got == 0)
    rc = lsu_fail(r, SONDE_E_TRUNCATED, 0, "empty file");
  else if (got < 0 || n != sizeof LSU_HEADER - 1 || memcmp(line, LSU_HEADER, n) != 0)
    rc = lsu_fail(r, SONDE_E_FORMAT, 0, "not an LSU trace (expected the header \"" LSU_HEADER "\")");
  if (rc < 0) {
    if (diag)
      *diag = r->diag;
    sonde_lsutrace_reader_free(r);
    return rc;
  }
  r->line = 2;
  *out = r;
  return 0;
}

int sonde_lsutrace_reader_new(FILE *f, const char *name, struct sonde_lsutrace_reader **out,
                              struct sonde_diag *diag)
{
  *out = NULL;
  struct sonde_lsutrace_reader *r = calloc(1, sizeof *r);
  if (!r || trace_in_init_file(&r->in, f) < 0) {
    free(r);
    return SONDE_E_NOMEM;
  }
  return lsu_start(r, name, out, diag);
}

int sonde_lsutrace_reader_new_buffer(const void *data, size_t len, const char *name,
                                     struct sonde_lsutrace_reader **out, struct sonde_diag *diag)
{
  *out = NULL;
  struct sonde_lsutrace_reader *r = calloc(1, sizeof *r);
  if (!r)
    return SONDE_E_NOMEM;
  trace_in_init_buffer(&r->in, data, len);
  return lsu_start(r, name, out, diag);
}

int sonde_lsutrace_next(struct sonde_lsutrace_reader *r, struct sonde_lsutrace_record *rec)
{
  if (r->err)
    return r->err;
  const char *line;
  size_t n;
  uint64_t off = trace_in_offset(&r->in);
  int got = trace_in_line(&r->in, 200, &line, &n);
  if (r->in.io_error)
    return lsu_fail(r, SONDE_E_IO, off, "read error");
  if (got == 0)
    return 0;
  if (got < 0)
    return lsu_fail(r, SONDE_E_FORMAT, off, "line too long");
  /* six comma-separated fields */
  const char *f[6];
  size_t fl[6];
  size_t start = 0;
  unsigned k = 0;
  for (size_t i = 0; i <= n; i++) {
    if (i == n || line[i] == ',') {
      if (k == 6)
        return lsu_fail(r, SONDE_E_FORMAT, off, "more than 6 fields");
      f[k] = line + start;
      fl[k++] = i - start;
      start = i + 1;
    }
  }
  if (k != 6)
    return lsu_fail(r, SONDE_E_FORMAT, off, "expected 6 fields");
  uint64_t cyc, pc, addr, size, value;
  /* FrankenTrace's LSU output (docs/formats.md) adds an empty cycle (a
   * transfer not placed on the PC trace), an empty pc (not known) and `gap`
   * rows (an ITM overflow: transfers of the range at addr lost there). */
  bool gap = fl[5] == 3 && !memcmp(f[5], "gap", 3);
  if (fl[0] == 0)
    cyc = UINT64_MAX;
  else if (!trace_parse_u64(f[0], fl[0], false, &cyc))
    return lsu_fail(r, SONDE_E_FORMAT, off, "bad cycle");
  if (fl[1] == 0)
    pc = UINT32_MAX;
  else if (!trace_parse_u64(f[1], fl[1], true, &pc) || pc > UINT32_MAX)
    return lsu_fail(r, SONDE_E_FORMAT, off + (uint64_t)(f[1] - line), "bad pc");
  if (!trace_parse_u64(f[2], fl[2], true, &addr) || addr > UINT32_MAX)
    return lsu_fail(r, SONDE_E_FORMAT, off + (uint64_t)(f[2] - line), "bad addr");
  if (gap) { /* value: optional, the gap's length in cycles */
    if (fl[3])
      return lsu_fail(r, SONDE_E_FORMAT, off + (uint64_t)(f[3] - line), "a gap row has no size");
    value = 0;
    if (fl[4] && (!trace_parse_u64(f[4], fl[4], true, &value) || value > UINT32_MAX))
      return lsu_fail(r, SONDE_E_FORMAT, off + (uint64_t)(f[4] - line), "bad gap length");
    memset(rec, 0, sizeof *rec);
    rec->value = (uint32_t)value;
    rec->cycle = cyc;
    rec->pc = (uint32_t)pc;
    rec->addr = (uint32_t)addr;
    rec->gap = true;
    r->line++;
    return 1;
  }
  if (!trace_parse_u64(f[3], fl[3], false, &size) || (size != 1 && size != 2 && size != 4))
    return lsu_fail(r, SONDE_E_FORMAT, off + (uint64_t)(f[3] - line), "bad size");
  if (!trace_parse_u64(f[4], fl[4], true, &value) || value > UINT32_MAX ||
      (size < 4 && value >> (8 * size)))
    return lsu_fail(r, SONDE_E_FORMAT, off + (uint64_t)(f[4] - line), "bad value");
  if (fl[5] != 1 || !f[5][0] || !strchr("rwRW", f[5][0]))
    return lsu_fail(r, SONDE_E_FORMAT, off + (uint64_t)(f[5] - line), "rw must be r, w, R, W or gap");
  rec->cycle = cyc;
  rec->pc = (uint32_t)pc;
  rec->addr = (uint32_t)addr;
  rec->size = (unsigned)size;
  rec->value = (uint32_t)value;
  rec->write = f[5][0] == 'w' || f[5][0] == 'W';
  rec->stacking = f[5][0] == 'R' || f[5][0] == 'W';
  rec->gap = false;
  r->line++;
  return 1;
}

const char *sonde_lsutrace_reader_error_detail(const struct sonde_lsutrace_reader *r)
{
  return r->diag.msg;
}

void sonde_lsutrace_reader_free(struct sonde_lsutrace_reader *r)
{
  if (!r)
    return;
  trace_in_free(&r->in);
  free(r);
}
