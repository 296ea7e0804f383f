/* Fuzz target: the stitcher (src/frankentrace/stitch.c) driven by a plan read
 * from the input: N, then operations (open an iteration on a phase, feed
 * samples from a small alphabet, end it complete or cut, discard it). A
 * reference kept here records every sample merged into every cycle; after
 * finish, each cell must be what the reference says: the agreed value, LOST
 * if only lost samples came, CONFLICT where merged samples disagreed,
 * UNSAMPLED where none came. Nothing is ever guessed. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sonde/frankentrace.h"

#define MAXLEN 2048
#define MAXOPEN 4

struct ref {
  uint32_t first;  /* first known sample merged */
  bool known, lost, conflict;
};

struct open_iter {
  struct sonde_ft_iter *it;
  uint32_t phase;
  uint32_t samples[MAXLEN];
  size_t n;
};

static uint32_t sample_of(uint8_t b)
{
  switch (b & 7) {
  case 0: return SONDE_FT_SAMPLE_LOST;
  case 1: return SONDE_FT_SAMPLE_SLEEP;
  default: return 0x1000u + 2u * (b >> 3);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  if (size < 1)
    return 0;
  uint32_t N = 1 + data[0] % 16;
  struct sonde_ft_stitch_config cfg = {N, 0, 0, MAXLEN};
  struct sonde_ft_stitch *st;
  if (sonde_ft_stitch_new(&cfg, &st, NULL))
    abort();
  static struct ref ref[MAXLEN];
  static struct open_iter op[MAXOPEN];
  memset(ref, 0, sizeof ref);
  for (int i = 0; i < MAXOPEN; i++)
    op[i].it = NULL;
  uint32_t id = 0;
  for (size_t p = 1; p + 1 < size; p += 2) {
    uint8_t a = data[p], b = data[p + 1];
    struct open_iter *o = &op[a % MAXOPEN];
    switch ((a >> 2) & 3) {
    case 0: /* open */
      if (o->it)
        break;
      o->phase = b % N;
      o->n = 0;
      if (sonde_ft_iter_begin(st, o->phase, id++, &o->it))
        abort();
      break;
    case 1: { /* feed one sample */
      if (!o->it || (o->n * N + o->phase) >= MAXLEN)
        break;
      uint32_t s = sample_of(b);
      if (sonde_ft_iter_feed(o->it, o->n, &s, 1))
        abort();
      o->samples[o->n++] = s;
      break;
    }
    case 2: { /* end: complete (merged as fed) or cut */
      if (!o->it)
        break;
      struct sonde_ft_iter_end_info e = {(b & 1) != 0, 0};
      struct sonde_ft_iter_result r;
      if (sonde_ft_iter_end(o->it, &e, &r) || r.status > SONDE_FT_ITER_CUT)
        abort();
      o->it = NULL;
      for (size_t k = 0; k < o->n; k++) {
        struct ref *c = &ref[k * N + o->phase];
        uint32_t s = o->samples[k];
        if (s == SONDE_FT_SAMPLE_LOST) {
          c->lost = true;
        } else if (!c->known) {
          c->known = true;
          c->first = s;
        } else if (c->first != s) {
          c->conflict = true;
        }
      }
      break;
    }
    default: /* discard */
      if (o->it)
        sonde_ft_iter_discard(o->it);
      o->it = NULL;
      break;
    }
  }
  for (int i = 0; i < MAXOPEN; i++)
    if (op[i].it)
      sonde_ft_iter_discard(op[i].it);
  struct sonde_ft_trace *t;
  struct sonde_ft_report rep;
  if (sonde_ft_stitch_finish(st, &t, &rep))
    abort();
  uint64_t len = sonde_ft_trace_length(t);
  if (len > MAXLEN)
    abort();
  for (uint64_t c = 0; c < MAXLEN; c++) {
    struct sonde_ft_cell x = sonde_ft_trace_at(t, c);
    const struct ref *r = &ref[c];
    enum sonde_ft_state want;
    if (r->conflict)
      want = SONDE_FT_CONFLICT;
    else if (r->known)
      want = r->first == SONDE_FT_SAMPLE_SLEEP ? SONDE_FT_SLEEP : SONDE_FT_PC;
    else
      want = r->lost ? SONDE_FT_LOST : SONDE_FT_UNSAMPLED;
    if (x.state != want)
      abort();
    if ((want == SONDE_FT_PC || want == SONDE_FT_CONFLICT) && r->first != SONDE_FT_SAMPLE_SLEEP &&
        x.pc != r->first)
      abort();
    if ((r->known || r->lost) && c >= len)
      abort();
  }
  sonde_ft_trace_free(t);
  sonde_ft_stitch_free(st);
  return 0;
}
