/* The cycle-level trace model: one cell (pc, state) per cycle, stored as a
 * structure of arrays so that the stitcher and the analyses loop over plain
 * uint32_t/uint8_t arrays. */
#include <stdlib.h>
#include <string.h>

#include "ft_internal.h"

static const char *const state_names[] = {
    "pc",          "sleep",      "unsampled",  "lost",       "conflict",
    "invalid",     "exc-entry",  "exc-return", "tail-chain", "halted",
};

const char *sonde_ft_state_name(enum sonde_ft_state s)
{
  return (unsigned)s < sizeof state_names / sizeof state_names[0] ? state_names[s] : "?";
}

int sonde_ft_trace_new(uint64_t origin, struct sonde_ft_trace **out)
{
  struct sonde_ft_trace *t = calloc(1, sizeof *t);
  *out = t;
  if (!t)
    return SONDE_E_NOMEM;
  t->origin = origin;
  return 0;
}

void sonde_ft_trace_free(struct sonde_ft_trace *t)
{
  if (!t)
    return;
  free(t->pcs);
  free(t->states);
  free(t);
}

int ft_trace_resize(struct sonde_ft_trace *t, uint64_t length)
{
  if (length > t->cap) {
    uint64_t cap = t->cap ? t->cap : 4096;
    while (cap < length)
      cap *= 2;
    if (cap > (SIZE_MAX / sizeof(uint32_t)))
      return SONDE_E_NOMEM;
    uint32_t *pcs = realloc(t->pcs, (size_t)cap * sizeof *pcs);
    if (!pcs)
      return SONDE_E_NOMEM;
    t->pcs = pcs;
    uint8_t *st = realloc(t->states, (size_t)cap);
    if (!st)
      return SONDE_E_NOMEM;
    t->states = st;
    t->cap = cap;
  }
  if (length > t->length) {
    memset(t->pcs + t->length, 0, (size_t)(length - t->length) * sizeof *t->pcs);
    memset(t->states + t->length, SONDE_FT_UNSAMPLED, (size_t)(length - t->length));
  }
  t->length = length;
  return 0;
}

int sonde_ft_trace_append(struct sonde_ft_trace *t, struct sonde_ft_cell cell, uint64_t cycles)
{
  if (!t)
    return SONDE_E_ARG;
  uint64_t at = t->length;
  if (cycles > (1ull << 40) || (unsigned)cell.state > SONDE_FT_HALTED)
    return SONDE_E_ARG;
  int rc = ft_trace_resize(t, at + cycles);
  if (rc)
    return rc;
  for (uint64_t i = at; i < at + cycles; i++)
    t->pcs[i] = cell.pc;
  memset(t->states + at, (int)cell.state, (size_t)cycles);
  return 0;
}

uint64_t sonde_ft_trace_origin(const struct sonde_ft_trace *t) { return t ? t->origin : 0; }
uint64_t sonde_ft_trace_length(const struct sonde_ft_trace *t) { return t ? t->length : 0; }
uint64_t sonde_ft_trace_clock_hz(const struct sonde_ft_trace *t) { return t ? t->clock_hz : 0; }
void sonde_ft_trace_set_clock_hz(struct sonde_ft_trace *t, uint64_t hz)
{
  if (t)
    t->clock_hz = hz;
}
const uint32_t *sonde_ft_trace_pcs(const struct sonde_ft_trace *t) { return t ? t->pcs : NULL; }
const uint8_t *sonde_ft_trace_states(const struct sonde_ft_trace *t) { return t ? t->states : NULL; }

struct sonde_ft_cell sonde_ft_trace_at(const struct sonde_ft_trace *t, uint64_t cycle)
{
  struct sonde_ft_cell c = {0, SONDE_FT_UNSAMPLED};
  if (t && cycle >= t->origin && cycle - t->origin < t->length) {
    c.pc = t->pcs[cycle - t->origin];
    c.state = (enum sonde_ft_state)t->states[cycle - t->origin];
  }
  return c;
}

int sonde_ft_trace_next_span(const struct sonde_ft_trace *t, uint64_t *pos,
                             struct sonde_ft_span *span)
{
  if (!t || *pos >= t->length)
    return 0;
  uint64_t i = *pos, j = i + 1;
  uint32_t pc = t->pcs[i];
  uint8_t s = t->states[i];
  while (j < t->length && t->pcs[j] == pc && t->states[j] == s)
    j++;
  span->cycle = t->origin + i;
  span->cycles = j - i;
  span->cell.pc = pc;
  span->cell.state = (enum sonde_ft_state)s;
  *pos = j;
  return 1;
}

void sonde_ft_trace_count(const struct sonde_ft_trace *t, struct sonde_ft_counts *out)
{
  memset(out, 0, sizeof *out);
  if (!t)
    return;
  uint64_t by[16] = {0};
  for (uint64_t i = 0; i < t->length; i++)
    by[t->states[i] & 15]++;
  out->cycles = t->length;
  out->pc = by[SONDE_FT_PC];
  out->sleep = by[SONDE_FT_SLEEP];
  out->unsampled = by[SONDE_FT_UNSAMPLED];
  out->lost = by[SONDE_FT_LOST];
  out->conflict = by[SONDE_FT_CONFLICT];
  out->invalid = by[SONDE_FT_INVALID];
  out->exception = by[SONDE_FT_EXC_ENTRY] + by[SONDE_FT_EXC_RETURN] + by[SONDE_FT_TAIL_CHAIN];
  out->halted = by[SONDE_FT_HALTED];
}
