/* Splitting a FrankenTrace capture into iterations by the runner's begin/end
 * records on stimulus port 31 (sonde/ftwire.h). */
#include <stdlib.h>

#include "sonde/ftwire.h"

struct sonde_ftw_splitter {
  sonde_ftw_iter_fn fn;
  void *ctx;
  uint32_t words[SONDE_FTW_RECORD_WORDS];
  unsigned nwords;
  uint64_t rec_offset;
  bool open; /* inside an iteration */
  struct sonde_ftw_iteration it;
  struct sonde_itm_packet *buf;
  size_t count, cap;
  uint64_t stray, bad_records;
  struct sonde_diag first_bad;
};

int sonde_ftw_splitter_new(sonde_ftw_iter_fn fn, void *ctx, struct sonde_ftw_splitter **out)
{
  *out = calloc(1, sizeof **out);
  if (!*out)
    return SONDE_E_NOMEM;
  (*out)->fn = fn;
  (*out)->ctx = ctx;
  return 0;
}

void sonde_ftw_splitter_free(struct sonde_ftw_splitter *s)
{
  if (!s)
    return;
  free(s->buf);
  free(s);
}

uint64_t sonde_ftw_splitter_bad_records(const struct sonde_ftw_splitter *s, const char **first)
{
  if (first)
    *first = s->first_bad.msg;
  return s->bad_records;
}

/* A corrupt record: counted, its iteration marked, splitting goes on. */
static int bad_record(struct sonde_ftw_splitter *s, struct sonde_diag *d)
{
  if (!s->bad_records++)
    s->first_bad = *d;
  if (s->open)
    s->it.wire_errors++;
  s->nwords = 0;
  return 0;
}

uint64_t sonde_ftw_splitter_stray(const struct sonde_ftw_splitter *s)
{
  return s->stray;
}

static int deliver(struct sonde_ftw_splitter *s, bool has_end)
{
  s->it.has_end = has_end;
  s->it.packets = s->buf;
  s->it.count = s->count;
  s->open = false;
  s->count = 0;
  int rc = s->fn(s->ctx, &s->it);
  s->it.wire_errors = 0;
  return rc;
}

static int record(struct sonde_ftw_splitter *s, struct sonde_diag *diag)
{
  struct sonde_ftw_record r;
  int rc = sonde_ftw_record_decode(s->words, &r, diag);
  if (rc < 0) {
    struct sonde_diag d2 = *diag;
    sonde_diag_set(diag, rc, "offset %llu: %s", (unsigned long long)s->rec_offset, d2.msg);
    return bad_record(s, diag);
  }
  if (r.type == 1) {
    if (s->open && (rc = deliver(s, false)) < 0) /* cut: no end record */
      return rc;
    s->it.begin = r;
    s->it.offset = s->rec_offset;
    s->open = true;
    return 0;
  }
  if (!s->open) {
    sonde_diag_set(diag, SONDE_E_FORMAT, "offset %llu: end record of iteration %u without its begin",
                   (unsigned long long)s->rec_offset, r.iteration);
    return bad_record(s, diag);
  }
  if (r.iteration != s->it.begin.iteration || r.run_id != s->it.begin.run_id ||
      r.fw_id != s->it.begin.fw_id || r.n != s->it.begin.n || r.phase != s->it.begin.phase ||
      r.kind != s->it.begin.kind)
  {
    sonde_diag_set(diag, SONDE_E_FORMAT,
                   "offset %llu: end record (iteration %u) does not match its begin (iteration %u)",
                   (unsigned long long)s->rec_offset, r.iteration, s->it.begin.iteration);
    bad_record(s, diag);
    return deliver(s, false);
  }
  s->it.end = r;
  return deliver(s, true);
}

int sonde_ftw_splitter_feed(struct sonde_ftw_splitter *s, const struct sonde_itm_packet *p, size_t n,
                            struct sonde_diag *diag)
{
  for (size_t i = 0; i < n; i++) {
    if (p[i].type == SONDE_ITM_SW && p[i].port == SONDE_FTW_PORT) {
      if (p[i].size != 4) {
        sonde_diag_set(diag, SONDE_E_FORMAT, "offset %llu: a %u-byte write to port 31 (records are 4-byte words)",
                       (unsigned long long)p[i].offset, p[i].size);
        bad_record(s, diag);
        continue;
      }
      if (s->nwords == 0) {
        if ((p[i].value >> 16) != SONDE_FTW_MAGIC) {
          sonde_diag_set(diag, SONDE_E_FORMAT,
                         "offset %llu: word 0x%08llx on port 31 does not start a record (a word was lost?)",
                         (unsigned long long)p[i].offset, (unsigned long long)p[i].value);
          bad_record(s, diag);
          continue;
        }
        s->rec_offset = p[i].offset;
      }
      s->words[s->nwords++] = (uint32_t)p[i].value;
      if (s->nwords == SONDE_FTW_RECORD_WORDS) {
        s->nwords = 0;
        int rc = record(s, diag);
        if (rc < 0)
          return rc;
      }
      continue;
    }
    if (s->nwords && (p[i].type == SONDE_ITM_PC || p[i].type == SONDE_ITM_PC_SLEEP)) {
      sonde_diag_set(diag, SONDE_E_FORMAT, "offset %llu: a PC sample inside a metadata record",
                     (unsigned long long)p[i].offset);
      bad_record(s, diag);
    }
    if (!s->open) {
      if (p[i].type == SONDE_ITM_PC || p[i].type == SONDE_ITM_PC_SLEEP)
        s->stray++;
      continue;
    }
    if (s->count == s->cap) {
      size_t cap = s->cap ? 2 * s->cap : 4096;
      struct sonde_itm_packet *nb = realloc(s->buf, cap * sizeof *nb);
      if (!nb)
        return SONDE_E_NOMEM;
      s->buf = nb;
      s->cap = cap;
    }
    s->buf[s->count++] = p[i];
  }
  return 0;
}

int sonde_ftw_splitter_finish(struct sonde_ftw_splitter *s, struct sonde_diag *diag)
{
  if (s->nwords) {
    sonde_diag_set(diag, SONDE_E_FORMAT, "offset %llu: the capture ends inside a metadata record",
                   (unsigned long long)s->rec_offset);
    bad_record(s, diag);
  }
  return s->open ? deliver(s, false) : 0;
}
