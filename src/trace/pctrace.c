/* The PC trace: which instruction occupied every cycle (docs/formats.md,
 * "PC trace", version 1). Binary: a 32-byte header ("SONDEPCT", version,
 * header size, flags, clock, first cycle) and 8-byte records {word, cycles};
 * CSV: `cycle,pc` with one row per cycle. */
#include "sonde/trace.h"

#include <stdlib.h>
#include <string.h>

#include "trace_io.h"

#define PCT_MAGIC "SONDEPCT"
#define PCT_VERSION 1
#define PCT_HEADER_SIZE 32
#define CSV_HEADER "cycle,pc"

static const char *const span_names[] = {NULL, "sleep", "exc_entry", "exc_return",
                                         "tail_chain", "halted", "unknown"};

static void put_le(uint8_t *p, uint64_t v, int n)
{
  for (int i = 0; i < n; i++)
    p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, int n)
{
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; i--)
    v = v << 8 | p[i];
  return v;
}

/* ---- writer --------------------------------------------------------------- */

struct sonde_pctrace_writer {
  struct trace_out out;
  enum sonde_pctrace_format format;
  const char *name;
  uint64_t cycle; /* first cycle of the next record */
  int err;        /* sticky */
  struct sonde_diag diag;
};

static int writer_fail(struct sonde_pctrace_writer *w)
{
  w->err = sonde_diag_set(&w->diag, SONDE_E_IO, "%s: write failed", w->name);
  return w->err;
}

int sonde_pctrace_writer_new(FILE *f, const char *name, enum sonde_pctrace_format format,
                             uint64_t clock_hz, uint64_t first_cycle,
                             struct sonde_pctrace_writer **out)
{
  *out = NULL;
  if (!f || (format != SONDE_PCTRACE_BINARY && format != SONDE_PCTRACE_CSV))
    return SONDE_E_ARG;
  struct sonde_pctrace_writer *w = calloc(1, sizeof *w);
  if (!w)
    return SONDE_E_NOMEM;
  if (trace_out_init(&w->out, f) < 0) {
    free(w);
    return SONDE_E_NOMEM;
  }
  w->format = format;
  w->name = name ? name : "pc trace";
  w->cycle = first_cycle;
  uint8_t *p = trace_out_reserve(&w->out, PCT_HEADER_SIZE);
  if (format == SONDE_PCTRACE_BINARY) {
    memcpy(p, PCT_MAGIC, 8);
    put_le(p + 8, PCT_VERSION, 2);
    put_le(p + 10, PCT_HEADER_SIZE, 2);
    put_le(p + 12, 0, 4);
    put_le(p + 16, clock_hz, 8);
    put_le(p + 24, first_cycle, 8);
    w->out.used += PCT_HEADER_SIZE;
  } else {
    memcpy(p, CSV_HEADER "\n", sizeof CSV_HEADER);
    w->out.used += sizeof CSV_HEADER;
  }
  *out = w;
  return 0;
}

/* CSV: `cycles` identical rows "<cycle>,<label>". */
static int write_csv_rows(struct sonde_pctrace_writer *w, const char *label, size_t label_len,
                          uint32_t cycles)
{
  for (uint32_t i = 0; i < cycles; i++) {
    char *p = (char *)trace_out_reserve(&w->out, 20 + 2 + 32);
    if (!p)
      return writer_fail(w);
    size_t n = trace_fmt_u64(p, w->cycle + i);
    p[n++] = ',';
    memcpy(p + n, label, label_len);
    n += label_len;
    p[n++] = '\n';
    w->out.used += n;
  }
  return 0;
}

static int write_record(struct sonde_pctrace_writer *w, uint32_t word, uint32_t cycles)
{
  if (w->err)
    return w->err;
  if (w->format == SONDE_PCTRACE_BINARY) {
    uint8_t *p = trace_out_reserve(&w->out, 8);
    if (!p)
      return writer_fail(w);
    put_le(p, word, 4);
    put_le(p + 4, cycles, 4);
    w->out.used += 8;
  } else {
    char label[32];
    size_t n;
    if (!(word & 1)) {
      trace_fmt_hex8(label, word);
      n = 10;
    } else {
      unsigned kind = (word >> 1) & 7;
      n = strlen(span_names[kind]);
      memcpy(label, span_names[kind], n);
      if (kind != SONDE_PCTRACE_SLEEP && kind < SONDE_PCTRACE_HALTED) {
        label[n++] = ':';
        n += trace_fmt_u64(label + n, word >> 8);
      }
    }
    int rc = write_csv_rows(w, label, n, cycles);
    if (rc < 0)
      return rc;
  }
  w->cycle += cycles;
  return 0;
}

int sonde_pctrace_write(struct sonde_pctrace_writer *w, uint32_t pc, uint32_t cycles)
{
  if ((pc & 1) || cycles == 0)
    return sonde_diag_set(&w->diag, SONDE_E_ARG, "%s: bad instruction record (pc 0x%08x, %u cycles)",
                          w->name, pc, cycles);
  return write_record(w, pc, cycles);
}

int sonde_pctrace_write_span(struct sonde_pctrace_writer *w, enum sonde_pctrace_kind kind,
                             uint32_t exc, uint32_t cycles)
{
  if (kind < SONDE_PCTRACE_SLEEP || kind > SONDE_PCTRACE_UNKNOWN || cycles == 0 ||
      exc > SONDE_PCTRACE_EXC_MAX)
    return sonde_diag_set(&w->diag, SONDE_E_ARG, "%s: bad span record (kind %d, exc %u, %u cycles)",
                          w->name, (int)kind, exc, cycles);
  if (kind == SONDE_PCTRACE_SLEEP || kind >= SONDE_PCTRACE_HALTED)
    exc = 0;
  return write_record(w, 1u | (uint32_t)kind << 1 | exc << 8, cycles);
}

uint64_t sonde_pctrace_writer_cycle(const struct sonde_pctrace_writer *w) { return w->cycle; }

int sonde_pctrace_writer_finish(struct sonde_pctrace_writer *w)
{
  if (w->err)
    return w->err;
  if (trace_out_flush(&w->out) < 0 || fflush(w->out.f) != 0)
    return writer_fail(w);
  return 0;
}

void sonde_pctrace_writer_free(struct sonde_pctrace_writer *w)
{
  if (!w)
    return;
  trace_out_free(&w->out);
  free(w);
}

const char *sonde_pctrace_writer_error_detail(const struct sonde_pctrace_writer *w)
{
  return w->diag.msg;
}

/* ---- reader --------------------------------------------------------------- */

struct sonde_pctrace_reader {
  struct trace_in in;
  enum sonde_pctrace_format format;
  char name[128];
  uint64_t clock_hz, first_cycle;
  uint64_t cycle;  /* first cycle of the next record */
  uint64_t line;   /* CSV: number of the next line */
  bool have_pending; /* CSV: a row read but not yet returned */
  struct sonde_pctrace_record pending;
  bool done;
  int err;
  struct sonde_diag diag;
};

static int reader_fail(struct sonde_pctrace_reader *r, int err, uint64_t offset, const char *why)
{
  r->err = sonde_diag_set(&r->diag, err, "%s: offset %llu: %s", r->name,
                          (unsigned long long)offset, why);
  return r->err;
}

static int read_header(struct sonde_pctrace_reader *r)
{
  size_t avail = trace_in_fill(&r->in, PCT_HEADER_SIZE);
  const uint8_t *p = r->in.data + r->in.pos;
  if (avail >= 8 && memcmp(p, PCT_MAGIC, 8) == 0) {
    r->format = SONDE_PCTRACE_BINARY;
    if (avail < PCT_HEADER_SIZE)
      return reader_fail(r, SONDE_E_TRUNCATED, avail, "truncated header");
    unsigned version = (unsigned)get_le(p + 8, 2);
    unsigned hsize = (unsigned)get_le(p + 10, 2);
    if (version != PCT_VERSION) {
      char why[64];
      snprintf(why, sizeof why, "unsupported version %u (this reader knows 1)", version);
      return reader_fail(r, SONDE_E_UNSUPPORTED, 8, why);
    }
    if (hsize < PCT_HEADER_SIZE)
      return reader_fail(r, SONDE_E_FORMAT, 10, "header size below 32");
    r->clock_hz = get_le(p + 16, 8);
    r->first_cycle = r->cycle = get_le(p + 24, 8);
    /* skip the header, including any part a later minor revision adds */
    size_t skip = hsize;
    while (skip) {
      size_t got = trace_in_fill(&r->in, skip < 4096 ? skip : 4096);
      if (got == 0)
        return reader_fail(r, SONDE_E_TRUNCATED, trace_in_offset(&r->in), "truncated header");
      size_t n = got < skip ? got : skip;
      r->in.pos += n;
      skip -= n;
    }
    return 0;
  }
  const char *line;
  size_t n;
  if (avail >= sizeof CSV_HEADER - 1 && memcmp(p, CSV_HEADER, sizeof CSV_HEADER - 1) == 0) {
    r->format = SONDE_PCTRACE_CSV;
    if (trace_in_line(&r->in, 64, &line, &n) != 1 || n != sizeof CSV_HEADER - 1)
      return reader_fail(r, SONDE_E_FORMAT, 0, "bad CSV header (expected \"cycle,pc\")");
    r->line = 2;
    return 0;
  }
  if (avail == 0)
    return reader_fail(r, SONDE_E_TRUNCATED, 0, "empty file");
  if (avail < 8 && memcmp(p, PCT_MAGIC, avail) == 0)
    return reader_fail(r, SONDE_E_TRUNCATED, avail, "truncated header");
  return reader_fail(r, SONDE_E_FORMAT, 0,
                     "not a PC trace (no \"SONDEPCT\" magic or \"cycle,pc\" header)");
}

static int reader_start(struct sonde_pctrace_reader *r, const char *name,
                        struct sonde_pctrace_reader **out, struct sonde_diag *diag)
{
  snprintf(r->name, sizeof r->name, "%s", name ? name : "pc trace");
  int rc = read_header(r);
  if (rc < 0) {
    if (diag)
      *diag = r->diag;
    sonde_pctrace_reader_free(r);
    return rc;
  }
  *out = r;
  return 0;
}

int sonde_pctrace_reader_new(FILE *f, const char *name, struct sonde_pctrace_reader **out,
                             struct sonde_diag *diag)
{
  *out = NULL;
  struct sonde_pctrace_reader *r = calloc(1, sizeof *r);
  if (!r || trace_in_init_file(&r->in, f) < 0) {
    free(r);
    return SONDE_E_NOMEM;
  }
  return reader_start(r, name, out, diag);
}

int sonde_pctrace_reader_new_buffer(const void *data, size_t len, const char *name,
                                    struct sonde_pctrace_reader **out, struct sonde_diag *diag)
{
  *out = NULL;
  struct sonde_pctrace_reader *r = calloc(1, sizeof *r);
  if (!r)
    return SONDE_E_NOMEM;
  trace_in_init_buffer(&r->in, data, len);
  return reader_start(r, name, out, diag);
}

static int decode_word(struct sonde_pctrace_record *rec, uint32_t word)
{
  rec->pc = 0;
  rec->exc = 0;
  if (!(word & 1)) {
    rec->kind = SONDE_PCTRACE_INSN;
    rec->pc = word;
    return 0;
  }
  unsigned kind = (word >> 1) & 7;
  if (kind < SONDE_PCTRACE_SLEEP || kind > SONDE_PCTRACE_UNKNOWN || (word & 0xF0) ||
      (kind >= SONDE_PCTRACE_HALTED && (word >> 8)))
    return -1;
  rec->kind = (enum sonde_pctrace_kind)kind;
  rec->exc = word >> 8;
  return 0;
}

static int next_binary(struct sonde_pctrace_reader *r, struct sonde_pctrace_record *rec)
{
  uint64_t off = trace_in_offset(&r->in);
  size_t avail = trace_in_fill(&r->in, 8);
  if (r->in.io_error)
    return reader_fail(r, SONDE_E_IO, trace_in_offset(&r->in), "read error");
  if (avail == 0)
    return 0;
  if (avail < 8)
    return reader_fail(r, SONDE_E_TRUNCATED, off, "truncated record (file ends inside it)");
  const uint8_t *p = r->in.data + r->in.pos;
  uint32_t word = (uint32_t)get_le(p, 4);
  rec->cycles = (uint32_t)get_le(p + 4, 4);
  if (decode_word(rec, word) < 0)
    return reader_fail(r, SONDE_E_FORMAT, off, "bad record word (unknown span kind)");
  if (rec->cycles == 0)
    return reader_fail(r, SONDE_E_FORMAT, off + 4, "record of 0 cycles");
  r->in.pos += 8;
  rec->cycle = r->cycle;
  r->cycle += rec->cycles;
  return 1;
}

/* One CSV row into *rec (1 cycle): 1, 0 at the end, or an error. */
static int csv_row(struct sonde_pctrace_reader *r, struct sonde_pctrace_record *rec)
{
  const char *line;
  size_t n;
  uint64_t off = trace_in_offset(&r->in);
  int got = trace_in_line(&r->in, 200, &line, &n);
  if (r->in.io_error)
    return reader_fail(r, SONDE_E_IO, off, "read error");
  if (got == 0)
    return 0;
  char why[96];
  if (got < 0) {
    snprintf(why, sizeof why, "line %llu: too long", (unsigned long long)r->line);
    return reader_fail(r, SONDE_E_FORMAT, off, why);
  }
  const char *comma = memchr(line, ',', n);
  uint64_t cycle, v;
  if (!comma || !trace_parse_u64(line, (size_t)(comma - line), false, &cycle)) {
    snprintf(why, sizeof why, "line %llu: expected \"<cycle>,<pc>\"", (unsigned long long)r->line);
    return reader_fail(r, SONDE_E_FORMAT, off, why);
  }
  if (r->line == 2)
    r->first_cycle = r->cycle = cycle;
  if (cycle != r->cycle) {
    snprintf(why, sizeof why, "line %llu: cycle %llu, expected %llu (cycles must be contiguous)",
             (unsigned long long)r->line, (unsigned long long)cycle,
             (unsigned long long)r->cycle);
    return reader_fail(r, SONDE_E_FORMAT, off, why);
  }
  const char *t = comma + 1;
  size_t tn = n - (size_t)(t - line);
  memset(rec, 0, sizeof *rec);
  rec->cycle = cycle;
  rec->cycles = 1;
  if (tn > 2 && t[0] == '0' && t[1] == 'x') {
    if (!trace_parse_u64(t, tn, true, &v) || v > UINT32_MAX || (v & 1))
      goto bad_pc;
    rec->kind = SONDE_PCTRACE_INSN;
    rec->pc = (uint32_t)v;
  } else {
    const char *colon = memchr(t, ':', tn);
    size_t kn = colon ? (size_t)(colon - t) : tn;
    unsigned k;
    for (k = 1; k <= SONDE_PCTRACE_UNKNOWN; k++)
      if (strlen(span_names[k]) == kn && memcmp(span_names[k], t, kn) == 0)
        break;
    if (k > SONDE_PCTRACE_UNKNOWN)
      goto bad_pc;
    bool needs_exc = k != SONDE_PCTRACE_SLEEP && k < SONDE_PCTRACE_HALTED;
    if (needs_exc != (colon != NULL))
      goto bad_pc;
    if (colon && (!trace_parse_u64(colon + 1, tn - kn - 1, false, &v) || v > SONDE_PCTRACE_EXC_MAX))
      goto bad_pc;
    rec->kind = (enum sonde_pctrace_kind)k;
    rec->exc = colon ? (uint32_t)v : 0;
  }
  r->line++;
  r->cycle++;
  return 1;
bad_pc:
  snprintf(why, sizeof why, "line %llu: bad pc column", (unsigned long long)r->line);
  return reader_fail(r, SONDE_E_FORMAT, off + (uint64_t)(t - line), why);
}

static int next_csv(struct sonde_pctrace_reader *r, struct sonde_pctrace_record *rec)
{
  if (!r->have_pending) {
    int rc = csv_row(r, &r->pending);
    if (rc <= 0)
      return rc;
  }
  *rec = r->pending;
  r->have_pending = false;
  for (;;) {
    struct sonde_pctrace_record row;
    int rc = csv_row(r, &row);
    if (rc <= 0) /* error is sticky: the next call reports it */
      break;
    if (row.kind != rec->kind || row.pc != rec->pc || row.exc != rec->exc ||
        rec->cycles == UINT32_MAX) {
      r->pending = row;
      r->have_pending = true;
      break;
    }
    rec->cycles++;
  }
  return 1;
}

int sonde_pctrace_next(struct sonde_pctrace_reader *r, struct sonde_pctrace_record *rec)
{
  if (r->err)
    return r->err;
  if (r->done)
    return 0;
  int rc = r->format == SONDE_PCTRACE_BINARY ? next_binary(r, rec) : next_csv(r, rec);
  if (rc == 0)
    r->done = true;
  return rc;
}

enum sonde_pctrace_format sonde_pctrace_reader_format(const struct sonde_pctrace_reader *r)
{
  return r->format;
}
uint64_t sonde_pctrace_reader_clock_hz(const struct sonde_pctrace_reader *r) { return r->clock_hz; }
uint64_t sonde_pctrace_reader_first_cycle(const struct sonde_pctrace_reader *r)
{
  return r->first_cycle;
}
const char *sonde_pctrace_reader_error_detail(const struct sonde_pctrace_reader *r)
{
  return r->diag.msg;
}

void sonde_pctrace_reader_free(struct sonde_pctrace_reader *r)
{
  if (!r)
    return;
  trace_in_free(&r->in);
  free(r);
}
