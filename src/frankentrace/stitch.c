/* Stitching PC samples from many runs into one cycle-level trace (FrankenTrace
 * paper, 4.1 and 4.4).
 *
 * Iteration i (phase) samples cycles origin + k*N + i. Each open iteration
 * keeps its own samples (about length/N of them) until sonde_ft_iter_end(),
 * which validates it (preamble, length) and merges it into the one trace. A
 * merge never overwrites a known cell with a different value: the cell becomes
 * CONFLICT and the disagreement is recorded, so nondeterminism is reported,
 * never resolved. A LOST sample never hides a known one; a known sample fills
 * a cell an earlier run lost. */
#include <stdlib.h>
#include <string.h>

#include "ft_internal.h"

#define DEFAULT_MAX_LENGTH (1ull << 30)

struct sonde_ft_iter {
  struct sonde_ft_stitch *st;
  struct sonde_ft_iter *prev, *next; /* the stitcher's open iterations */
  uint32_t phase, id;
  uint32_t *samples; /* samples[k] */
  size_t n, cap;
};

struct sonde_ft_stitch {
  struct sonde_ft_stitch_config cfg;
  struct sonde_diag diag;
  struct sonde_ft_trace *trace;
  /* per phase: merged iterations and the first one's id */
  uint32_t *phase_merged, *phase_first;
  uint32_t *preamble;
  size_t preamble_n;
  uint64_t preamble_first; /* relative to origin */
  bool preamble_set;
  uint64_t len_ref; /* first run length reported (0: none) */
  uint32_t len_ref_id;
  uint64_t len_max;
  struct sonde_ft_conflict *conflicts;
  size_t nconflicts, cap_conflicts;
  unsigned open;
  struct sonde_ft_iter *open_list; /* freed with the stitcher */
  struct sonde_ft_report rep;
};

/* Take an iteration off the open list and free it. */
static void iter_close(struct sonde_ft_iter *it)
{
  struct sonde_ft_stitch *st = it->st;
  if (it->prev)
    it->prev->next = it->next;
  else
    st->open_list = it->next;
  if (it->next)
    it->next->prev = it->prev;
  st->open--;
  free(it->samples);
  free(it);
}

int sonde_ft_stitch_new(const struct sonde_ft_stitch_config *cfg, struct sonde_ft_stitch **out,
                        struct sonde_diag *diag)
{
  *out = NULL;
  if (!cfg || cfg->n == 0 || cfg->n > (1u << 24))
    return sonde_diag_set(diag, SONDE_E_ARG, "sampling interval N must be 1..16777216 (got %u)",
                          cfg ? cfg->n : 0);
  struct sonde_ft_stitch *st = calloc(1, sizeof *st);
  if (!st)
    return sonde_diag_set(diag, SONDE_E_NOMEM, "out of memory");
  st->cfg = *cfg;
  if (!st->cfg.max_length)
    st->cfg.max_length = DEFAULT_MAX_LENGTH;
  st->phase_merged = calloc(cfg->n, sizeof *st->phase_merged);
  st->phase_first = calloc(cfg->n, sizeof *st->phase_first);
  if (!st->phase_merged || !st->phase_first || sonde_ft_trace_new(cfg->origin, &st->trace)) {
    sonde_ft_stitch_free(st);
    return sonde_diag_set(diag, SONDE_E_NOMEM, "out of memory");
  }
  if (cfg->length) {
    if (cfg->length > st->cfg.max_length) {
      sonde_ft_stitch_free(st);
      return sonde_diag_set(diag, SONDE_E_LIMIT, "trace length %llu exceeds the limit %llu",
                            (unsigned long long)cfg->length,
                            (unsigned long long)st->cfg.max_length);
    }
    if (ft_trace_resize(st->trace, cfg->length)) {
      sonde_ft_stitch_free(st);
      return sonde_diag_set(diag, SONDE_E_NOMEM, "out of memory");
    }
  }
  st->rep.n = cfg->n;
  st->rep.origin = cfg->origin;
  *out = st;
  return 0;
}

void sonde_ft_stitch_free(struct sonde_ft_stitch *st)
{
  if (!st)
    return;
  while (st->open_list)
    iter_close(st->open_list);
  sonde_ft_trace_free(st->trace);
  free(st->phase_merged);
  free(st->phase_first);
  free(st->preamble);
  free(st->conflicts);
  free(st);
}

const char *sonde_ft_stitch_error_detail(const struct sonde_ft_stitch *st)
{
  return st ? st->diag.msg : "";
}

int sonde_ft_stitch_set_preamble(struct sonde_ft_stitch *st, uint64_t first_cycle,
                                 const uint32_t *expected, size_t n)
{
  if (!st || (n && !expected))
    return SONDE_E_ARG;
  if (st->rep.iterations || st->open)
    return sonde_diag_set(&st->diag, SONDE_E_STATE, "preamble set after the first iteration");
  if (first_cycle < st->cfg.origin)
    return sonde_diag_set(&st->diag, SONDE_E_ARG, "preamble starts before the trace origin");
  uint32_t *copy = malloc((n ? n : 1) * sizeof *copy);
  if (!copy)
    return SONDE_E_NOMEM;
  memcpy(copy, expected, n * sizeof *copy);
  free(st->preamble);
  st->preamble = copy;
  st->preamble_n = n;
  st->preamble_first = first_cycle - st->cfg.origin;
  st->preamble_set = true;
  st->rep.preamble_set = true;
  return 0;
}

int sonde_ft_iter_begin(struct sonde_ft_stitch *st, uint32_t phase, uint32_t id,
                        struct sonde_ft_iter **out)
{
  *out = NULL;
  if (!st)
    return SONDE_E_ARG;
  if (phase >= st->cfg.n)
    return sonde_diag_set(&st->diag, SONDE_E_ARG, "iteration %u: phase %u is not below N = %u",
                          id, phase, st->cfg.n);
  struct sonde_ft_iter *it = calloc(1, sizeof *it);
  if (!it)
    return SONDE_E_NOMEM;
  it->st = st;
  it->phase = phase;
  it->id = id;
  it->next = st->open_list;
  if (it->next)
    it->next->prev = it;
  st->open_list = it;
  st->open++;
  *out = it;
  return 0;
}

static int iter_reserve(struct sonde_ft_iter *it, size_t n)
{
  if (n <= it->cap)
    return 0;
  size_t cap = it->cap ? it->cap : 1024;
  while (cap < n)
    cap *= 2;
  uint32_t *s = realloc(it->samples, cap * sizeof *s);
  if (!s)
    return SONDE_E_NOMEM;
  it->samples = s;
  it->cap = cap;
  return 0;
}

/* Fill samples n.. end-1 with LOST. */
static int iter_pad_lost(struct sonde_ft_iter *it, uint64_t end)
{
  if (end <= it->n)
    return 0;
  int rc = iter_reserve(it, (size_t)end);
  if (rc)
    return rc;
  for (size_t k = it->n; k < end; k++)
    it->samples[k] = SONDE_FT_SAMPLE_LOST;
  it->n = (size_t)end;
  return 0;
}

int sonde_ft_iter_feed(struct sonde_ft_iter *it, uint64_t k0, const uint32_t *samples, size_t n)
{
  if (!it || (n && !samples))
    return SONDE_E_ARG;
  struct sonde_ft_stitch *st = it->st;
  if (k0 < it->n)
    return sonde_diag_set(&st->diag, SONDE_E_ARG,
                          "iteration %u: sample %llu fed after sample %llu (k goes backwards)",
                          it->id, (unsigned long long)k0, (unsigned long long)it->n - 1);
  uint64_t end = k0 + n;
  if (end && (end - 1) * st->cfg.n + it->phase >= st->cfg.max_length)
    return sonde_diag_set(&st->diag, SONDE_E_LIMIT,
                          "iteration %u: sample %llu lies beyond the trace limit of %llu cycles",
                          it->id, (unsigned long long)end - 1,
                          (unsigned long long)st->cfg.max_length);
  int rc = iter_pad_lost(it, k0);
  if (!rc)
    rc = iter_reserve(it, (size_t)end);
  if (rc)
    return sonde_diag_set(&st->diag, rc, "out of memory");
  if (n) /* an iteration may have no sample at all (a run shorter than its phase) */
    memcpy(it->samples + it->n, samples, n * sizeof *samples);
  it->n = (size_t)end;
  return 0;
}

int sonde_ft_iter_feed_at(struct sonde_ft_iter *it, uint64_t cycle, uint32_t sample)
{
  if (!it)
    return SONDE_E_ARG;
  struct sonde_ft_stitch *st = it->st;
  uint64_t N = st->cfg.n, first = st->cfg.origin + it->phase;
  if (cycle < first || (cycle - first) % N)
    return sonde_diag_set(&st->diag, SONDE_E_FORMAT,
                          "iteration %u: a sample at cycle %llu is off its grid (cycle %llu + k*%llu)",
                          it->id, (unsigned long long)cycle, (unsigned long long)first,
                          (unsigned long long)N);
  uint64_t k = (cycle - first) / N;
  if (k < it->n)
    return sonde_diag_set(&st->diag, SONDE_E_FORMAT,
                          "iteration %u: a sample at cycle %llu does not come after the previous "
                          "one (cycle %llu)",
                          it->id, (unsigned long long)cycle,
                          (unsigned long long)(first + (it->n - 1) * N));
  return sonde_ft_iter_feed(it, k, &sample, 1);
}

void sonde_ft_iter_discard(struct sonde_ft_iter *it)
{
  if (!it)
    return;
  it->st->rep.iterations++;
  it->st->rep.discarded++;
  iter_close(it);
}

static int add_conflict(struct sonde_ft_stitch *st, const struct sonde_ft_conflict *c)
{
  if (st->nconflicts == st->cap_conflicts) {
    size_t cap = st->cap_conflicts ? 2 * st->cap_conflicts : 16;
    struct sonde_ft_conflict *p = realloc(st->conflicts, cap * sizeof *p);
    if (!p)
      return SONDE_E_NOMEM;
    st->conflicts = p;
    st->cap_conflicts = cap;
  }
  st->conflicts[st->nconflicts++] = *c;
  return 0;
}

/* A sample's cell state. */
static inline uint8_t sample_state(uint32_t s)
{
  if (!(s & 1))
    return SONDE_FT_PC;
  return s == SONDE_FT_SAMPLE_SLEEP ? SONDE_FT_SLEEP : SONDE_FT_LOST;
}

/* Compare the iteration's samples that fall into the preamble; returns the
 * number of mismatches and the first mismatching relative cycle. */
static uint64_t check_preamble(const struct sonde_ft_iter *it, uint64_t *first_bad,
                               uint64_t *checked)
{
  const struct sonde_ft_stitch *st = it->st;
  uint64_t N = st->cfg.n, lo = st->preamble_first, hi = lo + st->preamble_n, bad = 0;
  uint64_t k = lo > it->phase ? (lo - it->phase + N - 1) / N : 0;
  for (; k < it->n; k++) {
    uint64_t c = k * N + it->phase;
    if (c >= hi)
      break;
    uint32_t s = it->samples[k];
    if (s == SONDE_FT_SAMPLE_LOST)
      continue;
    (*checked)++;
    if (s != st->preamble[c - lo] && !bad++)
      *first_bad = c;
  }
  return bad;
}

int sonde_ft_iter_end(struct sonde_ft_iter *it, const struct sonde_ft_iter_end_info *info,
                      struct sonde_ft_iter_result *result)
{
  if (!it)
    return SONDE_E_ARG;
  struct sonde_ft_stitch *st = it->st;
  struct sonde_ft_iter_result r = {0};
  struct sonde_ft_iter_end_info e = info ? *info : (struct sonde_ft_iter_end_info){true, 0};
  uint64_t N = st->cfg.n, ph = it->phase;
  int rc = 0;

  /* A complete run of known length owes a sample for every k with
   * k*N + phase < length: those never received were lost on the way. */
  if (e.complete && e.length > ph) {
    uint64_t due = (e.length - ph + N - 1) / N;
    if ((rc = iter_pad_lost(it, due)))
      goto out;
  }
  r.samples = it->n;
  for (size_t k = 0; k < it->n; k++)
    r.lost += it->samples[k] == SONDE_FT_SAMPLE_LOST;
  st->rep.iterations++;
  st->rep.samples += r.samples;
  st->rep.samples_lost += r.lost;

  if (st->preamble_set) {
    uint64_t bad_at = 0;
    if (check_preamble(it, &bad_at, &st->rep.preamble_checked)) {
      r.status = SONDE_FT_ITER_PREAMBLE;
      r.first_bad_cycle = st->cfg.origin + bad_at;
      st->rep.rejected_preamble++;
      goto out;
    }
  }

  if (e.length) {
    if (e.length > st->len_max)
      st->len_max = e.length;
    if (!st->len_ref) {
      st->len_ref = e.length;
      st->len_ref_id = it->id;
    } else if (e.length != st->len_ref) {
      uint64_t lo = e.length < st->len_ref ? e.length : st->len_ref;
      struct sonde_ft_conflict c = {SONDE_FT_CONFLICT_LENGTH, it->phase, st->len_ref_id, it->id,
                                    st->cfg.origin + lo,
                                    e.length > st->len_ref ? e.length - st->len_ref
                                                           : st->len_ref - e.length};
      if ((rc = add_conflict(st, &c)))
        goto out;
    }
  }

  /* Merge. */
  if (it->n) {
    uint64_t last = (uint64_t)(it->n - 1) * N + ph;
    if (last + 1 > st->trace->length && (rc = ft_trace_resize(st->trace, last + 1)))
      goto out;
  }
  uint32_t *pcs = st->trace->pcs;
  uint8_t *states = st->trace->states;
  uint64_t first_conflict = 0;
  for (size_t k = 0; k < it->n; k++) {
    uint64_t c = (uint64_t)k * N + ph;
    uint32_t s = it->samples[k];
    uint8_t ns = sample_state(s), os = states[c];
    if (os == SONDE_FT_UNSAMPLED || (os == SONDE_FT_LOST && ns != SONDE_FT_LOST)) {
      states[c] = ns;
      pcs[c] = ns == SONDE_FT_PC ? s : 0;
    } else if (ns != SONDE_FT_LOST && os != SONDE_FT_LOST && os != SONDE_FT_CONFLICT &&
               (os != ns || (ns == SONDE_FT_PC && pcs[c] != s))) {
      if (!r.conflicts++)
        first_conflict = c;
      states[c] = SONDE_FT_CONFLICT;
    }
  }
  if (r.conflicts) {
    r.first_bad_cycle = st->cfg.origin + first_conflict;
    struct sonde_ft_conflict c = {SONDE_FT_CONFLICT_SAMPLES, it->phase,
                                  st->phase_first[it->phase], it->id, r.first_bad_cycle,
                                  r.conflicts};
    if ((rc = add_conflict(st, &c)))
      goto out;
  }
  if (!st->phase_merged[ph]++)
    st->phase_first[ph] = it->id;
  st->rep.merged++;
  r.status = e.complete ? SONDE_FT_ITER_OK : SONDE_FT_ITER_CUT;
  if (!e.complete)
    st->rep.cut++;
out:
  iter_close(it);
  if (rc)
    return sonde_diag_set(&st->diag, rc, "out of memory");
  if (result)
    *result = r;
  return 0;
}

size_t sonde_ft_stitch_missing_phases(const struct sonde_ft_stitch *st, uint32_t *missing,
                                      size_t cap)
{
  size_t count = 0;
  if (!st)
    return 0;
  for (uint32_t p = 0; p < st->cfg.n; p++)
    if (!st->phase_merged[p]) {
      if (count < cap)
        missing[count] = p;
      count++;
    }
  return count;
}

int sonde_ft_stitch_finish(struct sonde_ft_stitch *st, struct sonde_ft_trace **trace,
                           struct sonde_ft_report *report)
{
  *trace = NULL;
  if (!st)
    return SONDE_E_ARG;
  if (st->open)
    return sonde_diag_set(&st->diag, SONDE_E_STATE, "%u iteration(s) still open", st->open);
  if (!st->trace)
    return sonde_diag_set(&st->diag, SONDE_E_STATE, "already finished");
  /* The trace spans the declared or longest run, and at least every sample. */
  uint64_t len = st->cfg.length ? st->cfg.length : st->len_max;
  if (len > st->trace->length && ft_trace_resize(st->trace, len))
    return sonde_diag_set(&st->diag, SONDE_E_NOMEM, "out of memory");
  for (uint32_t p = 0; p < st->cfg.n; p++) {
    st->rep.phases_covered += st->phase_merged[p] > 0;
    st->rep.phases_redundant += st->phase_merged[p] > 1;
  }
  st->rep.length = st->trace->length;
  st->rep.conflicts = st->conflicts;
  st->rep.conflict_count = st->nconflicts;
  sonde_ft_trace_count(st->trace, &st->rep.counts);
  if (report)
    *report = st->rep;
  *trace = st->trace;
  st->trace = NULL;
  return 0;
}

uint64_t sonde_ft_preamble_check(const struct sonde_ft_trace *t, uint64_t first_cycle,
                                 const uint32_t *expected, size_t n, uint64_t *first_bad)
{
  uint64_t bad = 0;
  for (size_t j = 0; j < n; j++) {
    struct sonde_ft_cell c = sonde_ft_trace_at(t, first_cycle + j);
    bool ok = expected[j] == SONDE_FT_SAMPLE_SLEEP ? c.state == SONDE_FT_SLEEP
                                                   : c.state == SONDE_FT_PC && c.pc == expected[j];
    if (!ok && !bad++ && first_bad)
      *first_bad = first_cycle + j;
  }
  return bad;
}
