/* Fuzz target: the LSU trace reader (src/trace/lsutrace.c). Every input is
 * read to its end or its first error, which must carry a detail; every
 * transfer read is written again by the LSU trace writer and read back, and
 * must come back the same (gap rows, which the writer does not produce, are
 * checked for their fixed fields instead). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sonde/trace.h"

static bool same(const struct sonde_lsutrace_record *a, const struct sonde_lsutrace_record *b)
{
  return a->cycle == b->cycle && a->pc == b->pc && a->addr == b->addr && a->size == b->size &&
         a->value == b->value && a->write == b->write && a->stacking == b->stacking &&
         a->gap == b->gap;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct sonde_lsutrace_reader *r;
  struct sonde_diag d;
  if (sonde_lsutrace_reader_new_buffer(data, size, "fuzz", &r, &d) < 0) {
    if (!d.msg[0])
      abort();
    return 0;
  }
  char *text = NULL;
  size_t text_len = 0;
  FILE *f = open_memstream(&text, &text_len);
  struct sonde_lsutrace_writer *w = NULL;
  if (!f || sonde_lsutrace_writer_new(f, "fuzz out", &w) < 0)
    abort();
  enum { MAX = 4096 };
  static struct sonde_lsutrace_record recs[MAX];
  size_t n = 0;
  struct sonde_lsutrace_record rec;
  int rc;
  while ((rc = sonde_lsutrace_next(r, &rec)) == 1) {
    if (rec.gap) {
      if (rec.size || rec.write || rec.stacking)
        abort();
      continue;
    }
    if ((rec.size != 1 && rec.size != 2 && rec.size != 4) ||
        (rec.size < 4 && rec.value >> (8 * rec.size)))
      abort();
    if (n < MAX) {
      recs[n++] = rec;
      if (sonde_lsutrace_write(w, &rec) < 0)
        abort();
    }
  }
  if (rc < 0 && sonde_lsutrace_reader_error_detail(r)[0] == '\0')
    abort();
  /* an error stays: the reader does not go on past it */
  if (rc < 0 && sonde_lsutrace_next(r, &rec) != rc)
    abort();
  sonde_lsutrace_reader_free(r);
  if (sonde_lsutrace_writer_finish(w) < 0)
    abort();
  sonde_lsutrace_writer_free(w);
  fclose(f);
  if (sonde_lsutrace_reader_new_buffer(text, text_len, "fuzz again", &r, &d) < 0)
    abort();
  for (size_t i = 0; i < n; i++)
    if (sonde_lsutrace_next(r, &rec) != 1 || !same(&rec, &recs[i]))
      abort();
  if (sonde_lsutrace_next(r, &rec) != 0)
    abort();
  sonde_lsutrace_reader_free(r);
  free(text);
  return 0;
}
