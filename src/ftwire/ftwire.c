/* FrankenTrace wire side on the host (sonde/ftwire.h). */
#include "sonde/ftwire.h"

#include <stdlib.h>

uint32_t sonde_ftw_record_check(const uint32_t w[7])
{
  uint32_t h = 0x811C9DC5u;
  for (unsigned i = 0; i < 7; i++)
    h = (h ^ w[i]) * 0x01000193u;
  return h;
}

int sonde_ftw_record_decode(const uint32_t w[SONDE_FTW_RECORD_WORDS], struct sonde_ftw_record *out,
                            struct sonde_diag *diag)
{
  if ((w[0] >> 16) != SONDE_FTW_MAGIC) {
    return sonde_diag_set(diag, SONDE_E_FORMAT, "metadata record: magic 0x%04x, want 0x%04x", w[0] >> 16, SONDE_FTW_MAGIC);
  }
  if (((w[0] >> 8) & 0xFF) != SONDE_FTW_VERSION) {
    return sonde_diag_set(diag, SONDE_E_FORMAT, "metadata record: version %u, this sonde reads version %u",
                   (w[0] >> 8) & 0xFF, SONDE_FTW_VERSION);
  }
  if (w[7] != sonde_ftw_record_check(w))
    return sonde_diag_set(diag, SONDE_E_FORMAT, "metadata record: check word 0x%08x, want 0x%08x",
                          w[7], sonde_ftw_record_check(w));
  out->type = w[0] & 0xFF;
  if (out->type != 1 && out->type != 2) {
    return sonde_diag_set(diag, SONDE_E_FORMAT, "metadata record: type %u is neither begin (1) nor end (2)", out->type);
  }
  out->run_id = w[1];
  out->fw_id = w[2];
  out->iteration = w[3];
  out->n = w[4];
  out->kind = w[5] >> 28;
  out->lsu_kind = (w[5] >> 24) & 0xF;
  out->phase = w[5] & 0xFFFFFF;
  out->range_a = w[6] >> 16;
  out->range_b = w[6] & 0xFFFF;
  if (out->n == 0 || (out->kind == 0 && out->phase >= out->n) || out->kind > 1 || out->lsu_kind > 2) {
    return sonde_diag_set(diag, SONDE_E_FORMAT, "metadata record: inconsistent (N %u, kind %u, phase %u, packet kind %u)",
                   out->n, out->kind, out->phase, out->lsu_kind);
  }
  return 0;
}

static int push(struct sonde_ftw_samples *s, uint32_t v)
{
  if (s->count == s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 1024;
    uint32_t *nv = realloc(s->v, cap * sizeof *nv);
    if (!nv)
      return SONDE_E_NOMEM;
    s->v = nv;
    s->cap = cap;
  }
  s->v[s->count++] = v;
  return 0;
}

int sonde_ftw_collect(const struct sonde_itm_packet *p, size_t n, uint32_t N,
                      struct sonde_ftw_samples *out)
{
  bool after_sample = false, have_prev = false, overflowed = false;
  uint64_t since = 0; /* cycles since the last sample's timestamp */
  for (size_t i = 0; i < n; i++) {
    int rc = 0;
    switch (p[i].type) {
    case SONDE_ITM_PC:
    case SONDE_ITM_PC_SLEEP:
      rc = push(out, p[i].type == SONDE_ITM_PC ? (uint32_t)p[i].value & ~1u : 1u);
      after_sample = true;
      break;
    case SONDE_ITM_LTS:
      since += p[i].value;
      if (!after_sample)
        break;
      after_sample = false;
      if (have_prev) {
        if (since % N || (since > N && !overflowed)) {
          out->bad_spacing++; /* the ITM drops packets only with an overflow packet */
        } else if (since > N) { /* samples between were lost: keep k right */
          uint32_t last = out->v[out->count - 1];
          out->count--;
          for (uint64_t m = since / N - 1; m && !rc; m--, out->lost++)
            rc = push(out, 3u);
          if (!rc)
            rc = push(out, last);
        }
      }
      have_prev = true;
      overflowed = false;
      since = 0;
      break;
    case SONDE_ITM_OVERFLOW:
      out->overflows++;
      overflowed = true;
      break;
    case SONDE_ITM_SKIP:
      if (p[i].flags != SONDE_ITM_SKIP_TRUNCATED) /* a packet cut by the end of input is a cut, not corruption */
        out->skips++;
      break;
    default:
      break;
    }
    if (rc)
      return rc;
  }
  return 0;
}

void sonde_ftw_samples_free(struct sonde_ftw_samples *s)
{
  free(s->v);
  s->v = NULL;
  s->count = s->cap = 0;
}
