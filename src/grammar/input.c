/* Symbol streams for grammar compression (docs/grammar.md, "Inputs"):
 *  - Sonde PC traces (docs/formats.md "PC trace", binary or `cycle,pc` CSV),
 *    read with src/trace: one symbol per instruction record; spans that are not
 *    instructions become their odd record word (kind << 1 | 1 | exc << 8);
 *  - CSV traces with a header naming a PC column `val` or `pc` (the layout of
 *    FrankenTrace's `ts,val,valid,label,short_instr`): one row per cycle,
 *    collapsed to one symbol per executed instruction (consecutive rows with
 *    the same PC); rows with valid=false are dropped (FrankenTrace could not
 *    reconstruct that cycle) and a jump in `ts` is counted as a gap and, on
 *    request, marked with SONDE_GRAMMAR_GAP_SYM;
 *  - text lists of whitespace-separated tokens: decimal, 0x hex, or names.
 * gzip input is undone transparently (zlib). */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "grammar_internal.h"
#ifdef SONDE_HAVE_TRACE
#include "sonde/trace.h"
#endif

struct sonde_grammar_input {
  enum sonde_grammar_input_kind kind;
  uint32_t *syms;
  size_t n, cap;
  uint64_t invalid_rows, gaps, rows;
  /* interned names: names[k] is symbol NAME_BASE + k */
  char **names;
  size_t nnames, namecap;
  uint32_t *nh; /* open addressing: k + 1 */
  size_t nhmask;
};

static int push(struct sonde_grammar_input *in, uint32_t s)
{
  if (in->n == in->cap) {
    size_t cap = in->cap ? in->cap * 2 : 4096;
    uint32_t *ns = realloc(in->syms, cap * sizeof *ns);
    if (!ns)
      return SONDE_E_NOMEM;
    in->syms = ns;
    in->cap = cap;
  }
  in->syms[in->n++] = s;
  return 0;
}

static uint64_t str_hash(const char *s)
{
  uint64_t h = 1469598103934665603ull;
  while (*s)
    h = (h ^ (uint8_t)*s++) * 1099511628211ull;
  return h;
}

static size_t name_slot(const struct sonde_grammar_input *in, const char *s)
{
  size_t h = (size_t)str_hash(s) & in->nhmask;
  while (in->nh[h] && strcmp(in->names[in->nh[h] - 1], s))
    h = (h + 1) & in->nhmask;
  return h;
}

static int intern(struct sonde_grammar_input *in, const char *s, uint32_t *out)
{
  if (!in->nh) {
    in->nhmask = 255;
    if (!(in->nh = calloc(in->nhmask + 1, sizeof *in->nh)))
      return SONDE_E_NOMEM;
  }
  size_t h = name_slot(in, s);
  if (in->nh[h]) {
    *out = SONDE_GRAMMAR_NAME_BASE + in->nh[h] - 1;
    return 0;
  }
  if (in->nnames >= 0x0FFFFFFEu)
    return SONDE_E_LIMIT;
  if (in->nnames == in->namecap) {
    size_t cap = in->namecap ? in->namecap * 2 : 64;
    char **nn = realloc(in->names, cap * sizeof *nn);
    if (!nn)
      return SONDE_E_NOMEM;
    in->names = nn;
    in->namecap = cap;
  }
  if (!(in->names[in->nnames] = strdup(s)))
    return SONDE_E_NOMEM;
  in->nh[h] = (uint32_t)++in->nnames;
  *out = SONDE_GRAMMAR_NAME_BASE + (uint32_t)in->nnames - 1;
  if (in->nnames * 2 > in->nhmask) {
    size_t cap = (in->nhmask + 1) * 2;
    uint32_t *old = in->nh;
    if (!(in->nh = calloc(cap, sizeof *in->nh))) {
      in->nh = old;
      return SONDE_E_NOMEM;
    }
    in->nhmask = cap - 1;
    for (size_t k = 0; k < in->nnames; k++)
      in->nh[name_slot(in, in->names[k])] = (uint32_t)k + 1;
    free(old);
  }
  return 0;
}

int sonde_grammar_input_lookup(const struct sonde_grammar_input *in, const char *name,
                               uint32_t *value)
{
  if (!in->nh)
    return SONDE_E_NOTFOUND;
  size_t h = name_slot(in, name);
  if (!in->nh[h])
    return SONDE_E_NOTFOUND;
  *value = SONDE_GRAMMAR_NAME_BASE + in->nh[h] - 1;
  return 0;
}

int sonde_grammar_input_name(void *ctx, uint32_t sym, char *buf, size_t len)
{
  const struct sonde_grammar_input *in = ctx;
  if (!in)
    return 0;
  if (sym == SONDE_GRAMMAR_GAP_SYM && in->kind == SONDE_GRAMMAR_INPUT_CSV) {
    snprintf(buf, len, "<gap>");
    return 1;
  }
  if (sym >= SONDE_GRAMMAR_NAME_BASE && sym - SONDE_GRAMMAR_NAME_BASE < in->nnames) {
    snprintf(buf, len, "%s", in->names[sym - SONDE_GRAMMAR_NAME_BASE]);
    return 1;
  }
  if (in->kind == SONDE_GRAMMAR_INPUT_PCTRACE && (sym & 1)) {
    static const char *const kinds[] = {"?", "sleep", "exc_entry", "exc_return", "tail_chain",
                                        "halted", "?", "?"};
    unsigned k = (sym >> 1) & 7;
    if (k == 1 || k == 5)
      snprintf(buf, len, "<%s>", kinds[k]);
    else
      snprintf(buf, len, "<%s:%u>", kinds[k], sym >> 8);
    return 1;
  }
  return 0;
}

/* ---- parsing helpers ----------------------------------------------------- */

static int parse_u32(const char *s, size_t n, uint32_t *out)
{
  uint64_t v = 0;
  size_t i = 0;
  int base = 10;
  if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    i = 2;
  }
  if (i == n)
    return -1;
  for (; i < n; i++) {
    int d;
    char c = s[i];
    if (c >= '0' && c <= '9')
      d = c - '0';
    else if (base == 16 && c >= 'a' && c <= 'f')
      d = c - 'a' + 10;
    else if (base == 16 && c >= 'A' && c <= 'F')
      d = c - 'A' + 10;
    else
      return -1;
    v = v * (uint64_t)base + (uint64_t)d;
    if (v > UINT32_MAX)
      return -2;
  }
  *out = (uint32_t)v;
  return 0;
}

#define FAIL(code, ...)                                                             \
  do {                                                                             \
    rc = sonde_diag_set(diag, (code), __VA_ARGS__);                                \
    goto out;                                                                      \
  } while (0)

static int load_text(struct sonde_grammar_input *in, const char *p, size_t len, const char *name,
                     const struct sonde_grammar_input_opts *o, struct sonde_diag *diag)
{
  int rc = 0;
  size_t line = 1, i = 0;
  char tok[256];
  while (i < len) {
    char c = p[i];
    if (c == '\n') {
      line++;
      i++;
      continue;
    }
    if (isspace((unsigned char)c)) {
      i++;
      continue;
    }
    if (c == '#') {
      while (i < len && p[i] != '\n')
        i++;
      continue;
    }
    size_t s = i;
    while (i < len && !isspace((unsigned char)p[i]))
      i++;
    size_t n = i - s;
    uint32_t v;
    if (isdigit((unsigned char)p[s])) {
      int e = parse_u32(p + s, n, &v);
      if (e)
        FAIL(SONDE_E_FORMAT, "%s:%zu: '%.*s' is %s", name, line, (int)(n > 40 ? 40 : n), p + s,
             e == -2 ? "larger than 32 bits" : "not a number");
    } else {
      if (n >= sizeof tok)
        FAIL(SONDE_E_FORMAT, "%s:%zu: name longer than %zu bytes", name, line, sizeof tok - 1);
      if (memchr(p + s, '\0', n))
        FAIL(SONDE_E_FORMAT, "%s:%zu: NUL byte in a name", name, line);
      memcpy(tok, p + s, n);
      tok[n] = 0;
      if (!o || !o->resolve || o->resolve(o->resolve_ctx, tok, &v)) {
        rc = intern(in, tok, &v);
        if (rc)
          FAIL(rc, "%s:%zu: too many distinct names", name, line);
      }
    }
    if ((rc = push(in, v)))
      FAIL(rc, "%s: out of memory", name);
  }
out:
  return rc;
}

/* Split one CSV line (no trailing newline) into fields, honouring "quotes".
 * Returns the number of fields (up to max), or -1 on an unterminated quote. */
static int csv_fields(const char *p, size_t n, const char **f, size_t *fl, int max)
{
  int k = 0;
  size_t i = 0;
  for (;;) {
    const char *start = p + i;
    size_t l = 0;
    if (i < n && p[i] == '"') {
      i++;
      start = p + i;
      while (i < n && !(p[i] == '"' && (i + 1 >= n || p[i + 1] != '"')))
        i += p[i] == '"' ? 2 : 1;
      if (i >= n)
        return -1;
      l = (size_t)(p + i - start);
      i++;
    } else {
      while (i < n && p[i] != ',')
        i++;
      l = (size_t)(p + i - start);
    }
    if (k < max) {
      f[k] = start;
      fl[k] = l;
    }
    k++;
    if (i >= n)
      break;
    if (p[i] != ',')
      return -1;
    i++;
  }
  return k;
}

static int field_is(const char *f, size_t l, const char *name)
{
  return strlen(name) == l && !strncmp(f, name, l);
}

static int load_csv(struct sonde_grammar_input *in, const char *p, size_t len, const char *name,
                    const struct sonde_grammar_input_opts *o, struct sonde_diag *diag)
{
  int rc = 0;
  const char *f[64];
  size_t fl[64];
  size_t pos = 0, line = 0;
  int col_pc = -1, col_ts = -1, col_valid = -1, ncols = 0;
  bool have_prev = false, have_ts = false, pending_gap = false;
  uint32_t prev_pc = 0;
  uint64_t prev_ts = 0;
  bool keep_invalid = o && o->keep_invalid, mark_gaps = o && o->mark_gaps,
       cycle_level = o && o->cycle_level;
  while (pos < len) {
    size_t s = pos;
    while (pos < len && p[pos] != '\n')
      pos++;
    size_t n = pos - s;
    pos++;
    line++;
    if (n && p[s + n - 1] == '\r')
      n--;
    if (!n)
      continue;
    int k = csv_fields(p + s, n, f, fl, 64);
    if (k < 0)
      FAIL(SONDE_E_FORMAT, "%s:%zu: unterminated quoted field", name, line);
    if (col_pc < 0) { /* header */
      for (int c = 0; c < k && c < 64; c++) {
        if (field_is(f[c], fl[c], "val") || field_is(f[c], fl[c], "pc"))
          col_pc = c;
        else if (field_is(f[c], fl[c], "ts") || field_is(f[c], fl[c], "cycle"))
          col_ts = c;
        else if (field_is(f[c], fl[c], "valid"))
          col_valid = c;
      }
      if (col_pc < 0)
        FAIL(SONDE_E_FORMAT, "%s:%zu: CSV header has no 'val' or 'pc' column", name, line);
      ncols = k;
      continue;
    }
    if (k != ncols)
      FAIL(SONDE_E_FORMAT, "%s:%zu: %d fields, the header has %d", name, line, k, ncols);
    in->rows++;
    bool valid = true;
    if (col_valid >= 0) {
      if (field_is(f[col_valid], fl[col_valid], "true") || field_is(f[col_valid], fl[col_valid], "1"))
        valid = true;
      else if (field_is(f[col_valid], fl[col_valid], "false") ||
               field_is(f[col_valid], fl[col_valid], "0"))
        valid = false;
      else
        FAIL(SONDE_E_FORMAT, "%s:%zu: 'valid' is '%.*s', not true or false", name, line,
             (int)(fl[col_valid] > 20 ? 20 : fl[col_valid]), f[col_valid]);
    }
    uint32_t pc;
    if (parse_u32(f[col_pc], fl[col_pc], &pc))
      FAIL(SONDE_E_FORMAT, "%s:%zu: PC '%.*s' is not a 32-bit number", name, line,
           (int)(fl[col_pc] > 20 ? 20 : fl[col_pc]), f[col_pc]);
    if (col_ts >= 0) {
      uint64_t ts = 0;
      size_t i;
      for (i = 0; i < fl[col_ts] && isdigit((unsigned char)f[col_ts][i]); i++) {
        if (ts > (UINT64_MAX - 9) / 10)
          break;
        ts = ts * 10 + (uint64_t)(f[col_ts][i] - '0');
      }
      if (!fl[col_ts] || i != fl[col_ts])
        FAIL(SONDE_E_FORMAT, "%s:%zu: time '%.*s' is not a cycle number", name, line,
             (int)(fl[col_ts] > 20 ? 20 : fl[col_ts]), f[col_ts]);
      if (have_ts && ts <= prev_ts)
        FAIL(SONDE_E_FORMAT, "%s:%zu: time %llu does not increase (previous %llu)", name, line,
             (unsigned long long)ts, (unsigned long long)prev_ts);
      /* Every row, valid or not, accounts for its cycle: a gap is a jump in ts. */
      if (have_ts && ts != prev_ts + 1) {
        in->gaps++;
        pending_gap = true;
      }
      have_ts = true;
      prev_ts = ts;
    }
    if (!valid) {
      in->invalid_rows++;
      if (!keep_invalid)
        continue;
    }
    if (pending_gap && mark_gaps) {
      if ((rc = push(in, SONDE_GRAMMAR_GAP_SYM)))
        FAIL(rc, "%s: out of memory", name);
      have_prev = false;
    }
    pending_gap = false;
    if (!cycle_level && have_prev && pc == prev_pc)
      continue;
    if ((rc = push(in, pc)))
      FAIL(rc, "%s: out of memory", name);
    have_prev = true;
    prev_pc = pc;
  }
  if (col_pc < 0)
    FAIL(SONDE_E_FORMAT, "%s: empty CSV (no header)", name);
out:
  return rc;
}

#ifdef SONDE_HAVE_TRACE
static int read_pctrace(struct sonde_grammar_input *in, struct sonde_pctrace_reader *r,
                        const struct sonde_grammar_input_opts *o, struct sonde_diag *diag)
{
  struct sonde_pctrace_record rec;
  int rc;
  while ((rc = sonde_pctrace_next(r, &rec)) == 1) {
    uint32_t s = rec.kind == SONDE_PCTRACE_INSN
                     ? rec.pc
                     : (rec.exc << 8) | ((uint32_t)rec.kind << 1) | 1u;
    uint32_t reps = o && o->cycle_level ? rec.cycles : 1;
    in->rows++;
    for (uint32_t k = 0; k < reps; k++)
      if ((rc = push(in, s)))
        break;
    if (rc)
      break;
  }
  if (rc < 0 && diag)
    sonde_diag_set(diag, rc, "%s", rc == SONDE_E_NOMEM ? "out of memory"
                                                       : sonde_pctrace_reader_error_detail(r));
  sonde_pctrace_reader_free(r);
  return rc < 0 ? rc : 0;
}

static int load_pctrace(struct sonde_grammar_input *in, const void *data, size_t len,
                        const char *name, const struct sonde_grammar_input_opts *o,
                        struct sonde_diag *diag)
{
  struct sonde_pctrace_reader *r = NULL;
  int rc = sonde_pctrace_reader_new_buffer(data, len, name, &r, diag);
  if (rc)
    return rc;
  return read_pctrace(in, r, o, diag);
}
#endif

int sonde_grammar_input_load_buffer(const void *data, size_t len, const char *name,
                                    const struct sonde_grammar_input_opts *opts,
                                    struct sonde_grammar_input **out, struct sonde_diag *diag)
{
  struct sonde_diag tmp;
  if (!diag)
    diag = &tmp;
  *out = NULL;
  struct sonde_grammar_input *in = calloc(1, sizeof *in);
  if (!in)
    return SONDE_E_NOMEM;
  const char *p = data;
  int rc;
  if (opts && opts->share_names) {
    for (size_t k = 0; k < opts->share_names->nnames; k++) {
      uint32_t v;
      if ((rc = intern(in, opts->share_names->names[k], &v))) {
        sonde_grammar_input_free(in);
        return sonde_diag_set(diag, rc, "%s: out of memory", name);
      }
    }
  }
  /* first line, for detection */
  size_t fl = 0;
  while (fl < len && p[fl] != '\n')
    fl++;
  size_t fl2 = fl && p[fl - 1] == '\r' ? fl - 1 : fl;
  if (len >= 8 && !memcmp(p, "SONDEPCT", 8)) {
    in->kind = SONDE_GRAMMAR_INPUT_PCTRACE;
  } else if (fl2 == 8 && !memcmp(p, "cycle,pc", 8)) {
    in->kind = SONDE_GRAMMAR_INPUT_PCTRACE;
  } else if (fl && memchr(p, ',', fl)) {
    in->kind = SONDE_GRAMMAR_INPUT_CSV;
  } else {
    in->kind = SONDE_GRAMMAR_INPUT_TEXT;
  }
  switch (in->kind) {
  case SONDE_GRAMMAR_INPUT_PCTRACE:
#ifdef SONDE_HAVE_TRACE
    rc = load_pctrace(in, data, len, name, opts, diag);
#else
    rc = sonde_diag_set(diag, SONDE_E_UNSUPPORTED, "%s: PC traces need src/trace", name);
#endif
    break;
  case SONDE_GRAMMAR_INPUT_CSV:
    rc = load_csv(in, p, len, name, opts, diag);
    break;
  default:
    rc = load_text(in, p, len, name, opts, diag);
    break;
  }
  if (rc) {
    sonde_grammar_input_free(in);
    return rc;
  }
  *out = in;
  return 0;
}

/* Text inputs are read whole; these bound what that may cost. */
#define SNIFF_BYTES ((size_t)1 << 16)
#define MAX_INPUT_BYTES ((size_t)4 << 30)

int sonde_grammar_read_file(const char *path, void **data, size_t *len, struct sonde_diag *diag)
{
  struct sonde_diag tmp;
  if (!diag)
    diag = &tmp;
  *data = NULL;
  *len = 0;
  bool is_stdin = !strcmp(path, "-");
  const char *name = is_stdin ? "stdin" : path;
  errno = 0;
  gzFile z = is_stdin ? gzdopen(dup(0), "rb") : gzopen(path, "rb");
  if (!z)
    return sonde_diag_set(diag, SONDE_E_IO, "%s: %s", name, strerror(errno ? errno : ENOENT));
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  int rc = 0;
  for (;;) {
    if (!buf) {
      rc = sonde_diag_set(diag, SONDE_E_NOMEM, "%s: out of memory", name);
      break;
    }
    if (n == cap) {
      char *nb = realloc(buf, cap * 2);
      if (!nb) {
        free(buf);
        buf = NULL;
        continue;
      }
      buf = nb;
      cap *= 2;
    }
    unsigned want = (unsigned)((cap - n) > (1u << 30) ? (1u << 30) : (cap - n));
    int got = gzread(z, buf + n, want);
    if (got < 0) {
      int e;
      const char *m = gzerror(z, &e);
      rc = sonde_diag_set(diag, e == Z_ERRNO ? SONDE_E_IO : SONDE_E_FORMAT, "%s: %s", name,
                          e == Z_ERRNO ? strerror(errno) : m);
      break;
    }
    if (got == 0)
      break;
    size_t before = n;
    n += (size_t)got;
    /* Look at the start before reading on: every input this reads is text
     * (CSV, one symbol a line) or starts with a Sonde magic (PC trace, grammar
     * file); anything else with a NUL byte (a disk image, /dev/zero) is
     * refused at once instead of being read whole. */
    if (before < SNIFF_BYTES && (n >= SNIFF_BYTES || got < (int)want)) {
      bool magic = n >= 8 && (!memcmp(buf, "SONDEPCT", 8) || !memcmp(buf, "SONDEGRM", 8));
      const char *nul = magic ? NULL : memchr(buf, 0, n < SNIFF_BYTES ? n : SNIFF_BYTES);
      if (nul) {
        rc = sonde_diag_set(diag, SONDE_E_FORMAT,
                            "%s: byte offset %zu: a NUL byte: not a text or CSV trace, a PC "
                            "trace or a grammar file", name, (size_t)(nul - buf));
        break;
      }
    }
    if (n > MAX_INPUT_BYTES) {
      rc = sonde_diag_set(diag, SONDE_E_LIMIT, "%s: larger than %u MiB (uncompressed): split it, "
                          "or give a binary PC trace, which is streamed", name,
                          (unsigned)(MAX_INPUT_BYTES >> 20));
      break;
    }
  }
  gzclose(z);
  if (rc) {
    free(buf);
    return rc;
  }
  *data = buf;
  *len = n;
  return 0;
}

int sonde_grammar_input_load(const char *path, const struct sonde_grammar_input_opts *opts,
                             struct sonde_grammar_input **out, struct sonde_diag *diag)
{
  void *buf;
  size_t n;
  *out = NULL;
#ifdef SONDE_HAVE_TRACE
  /* An uncompressed binary PC trace streams through src/trace: only the
   * symbols are kept (4 bytes per instruction instead of the file's 8 more). */
  if (strcmp(path, "-") && !(opts && opts->share_names)) {
    FILE *f = fopen(path, "rb");
    char magic[8];
    if (f && fread(magic, 1, 8, f) == 8 && !memcmp(magic, "SONDEPCT", 8) && !fseek(f, 0, SEEK_SET)) {
      struct sonde_diag tmp;
      struct sonde_grammar_input *in = calloc(1, sizeof *in);
      struct sonde_pctrace_reader *r = NULL;
      int rc = in ? sonde_pctrace_reader_new(f, path, &r, diag ? diag : &tmp) : SONDE_E_NOMEM;
      if (!rc)
        rc = read_pctrace(in, r, opts, diag ? diag : &tmp);
      fclose(f);
      if (rc) {
        sonde_grammar_input_free(in);
        return rc;
      }
      in->kind = SONDE_GRAMMAR_INPUT_PCTRACE;
      *out = in;
      return 0;
    }
    if (f)
      fclose(f);
  }
#endif
  int rc = sonde_grammar_read_file(path, &buf, &n, diag);
  if (rc)
    return rc;
  rc = sonde_grammar_input_load_buffer(buf, n, strcmp(path, "-") ? path : "stdin", opts, out,
                                       diag);
  free(buf);
  return rc;
}

void sonde_grammar_input_free(struct sonde_grammar_input *in)
{
  if (!in)
    return;
  for (size_t k = 0; k < in->nnames; k++)
    free(in->names[k]);
  free(in->names);
  free(in->nh);
  free(in->syms);
  free(in);
}

enum sonde_grammar_input_kind sonde_grammar_input_kind(const struct sonde_grammar_input *in)
{
  return in->kind;
}

const uint32_t *sonde_grammar_input_symbols(const struct sonde_grammar_input *in, size_t *n)
{
  *n = in->n;
  return in->syms;
}

uint64_t sonde_grammar_input_invalid_rows(const struct sonde_grammar_input *in) { return in->invalid_rows; }
uint64_t sonde_grammar_input_gaps(const struct sonde_grammar_input *in) { return in->gaps; }
uint64_t sonde_grammar_input_rows(const struct sonde_grammar_input *in) { return in->rows; }
