/* Captures of the FrankenTrace target runner: decode with resynchronisation
 * at begin records, judge each iteration, stitch the sound ones, validate the
 * whole (sonde/frankentrace_runner.h). */
#include "sonde/frankentrace_runner.h"

#include <stdlib.h>
#include <string.h>

#include "sonde/frankentrace_vm.h"
#include "sonde/sym.h"

int sonde_ft_runner_preamble(const struct sonde_sym *sym, const char *elf_name, uint32_t *addr,
                             struct sonde_diag *diag)
{
  if (!sym || sonde_sym_address(sym, "ft_preamble", addr, NULL) < 0)
    return sonde_diag_set(diag, SONDE_E_NOTFOUND,
                          "'%s' has no ft_preamble: not an image with the FrankenTrace runner "
                          "linked (wrong ELF?)",
                          elf_name);
  return 0;
}

/* The begin record's first bytes: instrumentation header of port 31 with 4
 * bytes (0xFB), then word 0 little-endian: type 1, version 1, magic "FT". */
static const uint8_t begin_marker[5] = {0xFB, 0x01, SONDE_FTW_VERSION, 0x54, 0x46};

static size_t find_marker(const uint8_t *b, size_t len, size_t from)
{
  for (size_t i = from; i + sizeof begin_marker <= len; i++)
    if (b[i] == 0xFB && memcmp(b + i, begin_marker, sizeof begin_marker) == 0)
      return i;
  return len;
}

int sonde_ft_runner_decode(struct sonde_ftw_splitter *sp, struct sonde_itm *dec,
                           const uint8_t *all, size_t len, struct sonde_diag *diag)
{
  enum { CAP = 4096 };
  struct sonde_itm_packet *pk = malloc(CAP * sizeof *pk);
  if (!pk)
    return sonde_diag_set(diag, SONDE_E_NOMEM, "out of memory");
  int rc = 0;
  size_t pos = 0, base = 0;
  sonde_itm_reset(dec);
  while (rc >= 0 && pos < len) {
    size_t used = 0, np = sonde_itm_decode(dec, all + pos, len - pos, &used, pk, CAP);
    size_t keep = np, resume = 0;
    for (size_t k = 0; k < np; k++) {
      pk[k].offset += base;
      if (pk[k].type == SONDE_ITM_SKIP && !resume) {
        keep = k + 1;
        resume = find_marker(all, len, (size_t)pk[k].offset + 1);
      }
    }
    if (!resume && !sonde_itm_synced(dec) && keep < CAP) {
      /* lost sync inside this call: a loss the decoder reports only at a
       * sync packet, which never comes; mark it and resume at a record */
      uint64_t from = np ? pk[np - 1].offset + 1 : pos;
      struct sonde_itm_packet skip = {.offset = from, .type = SONDE_ITM_SKIP};
      pk[keep++] = skip;
      resume = find_marker(all, len, (size_t)from);
    }
    rc = sonde_ftw_splitter_feed(sp, pk, keep, diag);
    if (resume >= len)
      break;
    if (resume) {
      sonde_itm_reset(dec);
      pos = base = resume;
    } else {
      pos += used;
    }
  }
  if (rc >= 0) {
    size_t np = sonde_itm_finish(dec, pk, CAP);
    for (size_t k = 0; k < np; k++)
      pk[k].offset += base;
    rc = sonde_ftw_splitter_feed(sp, pk, np, diag);
  }
  free(pk);
  return rc;
}

int sonde_ft_runner_judge(const struct sonde_ftw_iteration *it,
                          const struct sonde_ft_runner_config *cfg,
                          struct sonde_ft_runner_iter *out)
{
  memset(out, 0, sizeof *out);
  out->begin = it->begin;
  out->offset = it->offset;
  out->has_end = it->has_end;
  out->wire_errors = it->wire_errors;
  if (it->begin.kind != 0) { /* LSU iterations are not PC phases */
    out->verdict = SONDE_FT_RUNNER_LSU;
    return 0;
  }
  int rc = sonde_ftw_collect(it->packets, it->count, it->begin.n, &out->samples);
  if (rc < 0) {
    sonde_ftw_samples_free(&out->samples);
    return rc;
  }
  out->bad_spacing = out->samples.bad_spacing;
  out->skips = out->samples.skips;
  /* a PC outside the ELF's code: a corrupt payload (or boot ROM code) */
  for (size_t i = 0; cfg->sym && i < out->samples.count; i++)
    if (!(out->samples.v[i] & 1) && sonde_sym_lookup(cfg->sym, out->samples.v[i], NULL, NULL) < 0)
      out->outside_elf++;
  bool corrupt = out->bad_spacing || out->skips || out->wire_errors ||
                 (out->outside_elf && !cfg->allow_outside_elf);
  out->verdict = corrupt ? SONDE_FT_RUNNER_CORRUPT
                         : it->has_end ? SONDE_FT_RUNNER_OK : SONDE_FT_RUNNER_CUT;
  return 0;
}

void sonde_ft_runner_iter_free(struct sonde_ft_runner_iter *it)
{
  if (it)
    sonde_ftw_samples_free(&it->samples);
}

struct sonde_ft_runner {
  struct sonde_ft_runner_config cfg;
  struct sonde_ft_stitch *st;
  struct sonde_ftw_record first;
  uint32_t iterations, lsu, cut, corrupt;
  uint64_t samples, lost, overflows, outside_elf;
  uint8_t *seen;      /* seen[j]: iteration j of the plan was in the capture */
  uint32_t seen_cap;  /* entries of seen[] */
};

/* Iteration j is in the capture (a gap in the numbers is a gap in the capture). */
static int mark_seen(struct sonde_ft_runner *r, uint32_t j)
{
  if (j >= (1u << 24)) /* more than any plan: a corrupt record that passed its check */
    return 0;
  if (j >= r->seen_cap) {
    uint32_t nc = r->seen_cap ? r->seen_cap : 1024;
    while (nc <= j)
      nc *= 2;
    uint8_t *ns = realloc(r->seen, nc);
    if (!ns)
      return SONDE_E_NOMEM;
    memset(ns + r->seen_cap, 0, nc - r->seen_cap);
    r->seen = ns;
    r->seen_cap = nc;
  }
  r->seen[j] = 1;
  return 0;
}

int sonde_ft_runner_new(const struct sonde_ft_runner_config *cfg, struct sonde_ft_runner **out)
{
  *out = calloc(1, sizeof **out);
  if (!*out)
    return SONDE_E_NOMEM;
  (*out)->cfg = *cfg;
  return 0;
}

void sonde_ft_runner_free(struct sonde_ft_runner *r)
{
  if (!r)
    return;
  sonde_ft_stitch_free(r->st);
  free(r->seen);
  free(r);
}

int sonde_ft_runner_add(struct sonde_ft_runner *r, const struct sonde_ft_runner_iter *it,
                        struct sonde_diag *diag)
{
  const struct sonde_ftw_record *b = &it->begin;
  if (r->cfg.check_fw_id && b->fw_id != r->cfg.fw_id)
    return sonde_diag_set(diag, SONDE_E_FORMAT,
                          "offset %llu: iteration %u comes from firmware id 0x%08x, not 0x%08x "
                          "(--fw-id): wrong ELF or capture",
                          (unsigned long long)it->offset, b->iteration, b->fw_id, r->cfg.fw_id);
  if (r->iterations &&
      (b->run_id != r->first.run_id || b->fw_id != r->first.fw_id || b->n != r->first.n))
    return sonde_diag_set(diag, SONDE_E_FORMAT,
                          "offset %llu: iteration %u has run id 0x%x, firmware id 0x%x, N %u; "
                          "the first had 0x%x, 0x%x, %u: captures of different runs",
                          (unsigned long long)it->offset, b->iteration, b->run_id, b->fw_id, b->n,
                          r->first.run_id, r->first.fw_id, r->first.n);
  if (mark_seen(r, b->iteration) < 0)
    return sonde_diag_set(diag, SONDE_E_NOMEM, "out of memory");
  if (!r->iterations++) {
    r->first = *b;
    struct sonde_ft_stitch_config sc = {.n = b->n, .origin = 0};
    int rc = sonde_ft_stitch_new(&sc, &r->st, diag);
    if (rc < 0)
      return rc;
  }
  if (it->verdict == SONDE_FT_RUNNER_LSU) {
    r->lsu++;
    return 0;
  }
  r->outside_elf += it->outside_elf;
  r->samples += it->samples.count;
  r->lost += it->samples.lost;
  r->overflows += it->samples.overflows;
  struct sonde_ft_iter *fi;
  int rc = sonde_ft_iter_begin(r->st, b->phase, b->iteration, &fi);
  if (rc >= 0 && it->samples.count)
    rc = sonde_ft_iter_feed(fi, 0, it->samples.v, it->samples.count);
  if (rc < 0)
    return sonde_diag_set(diag, SONDE_E_FORMAT, "iteration %u: %s", b->iteration,
                          sonde_ft_stitch_error_detail(r->st));
  if (it->verdict == SONDE_FT_RUNNER_CORRUPT) {
    r->corrupt++;
    sonde_ft_iter_discard(fi);
    return 0;
  }
  if (it->verdict == SONDE_FT_RUNNER_CUT)
    r->cut++;
  struct sonde_ft_iter_end_info e = {.complete = it->has_end, .length = 0};
  rc = sonde_ft_iter_end(fi, &e, NULL);
  if (rc < 0)
    return sonde_diag_set(diag, rc, "iteration %u: %s", b->iteration,
                          sonde_ft_stitch_error_detail(r->st));
  return 0;
}

uint64_t sonde_ft_trace_find_pc(const struct sonde_ft_trace *t, uint32_t pc)
{
  const uint32_t *pcs = sonde_ft_trace_pcs(t);
  const uint8_t *st = sonde_ft_trace_states(t);
  uint64_t n = sonde_ft_trace_length(t);
  for (uint64_t i = 0; i < n; i++)
    if (st[i] == SONDE_FT_PC && pcs[i] == pc)
      return sonde_ft_trace_origin(t) + i;
  return UINT64_MAX;
}

static uint64_t preamble_check(const struct sonde_ft_trace *t, uint32_t pre, uint64_t *at)
{
  *at = sonde_ft_trace_find_pc(t, pre);
  if (*at == UINT64_MAX)
    return SONDE_FT_PREAMBLE_CYCLES;
  uint32_t want[SONDE_FT_PREAMBLE_CYCLES];
  for (unsigned i = 0; i < SONDE_FT_PREAMBLE_CYCLES; i++)
    want[i] = pre + 2 * i;
  return sonde_ft_preamble_check(t, *at, want, SONDE_FT_PREAMBLE_CYCLES, NULL);
}

int sonde_ft_runner_finish(struct sonde_ft_runner *r, struct sonde_ft_trace **trace,
                           struct sonde_ft_runner_summary *s, struct sonde_diag *diag)
{
  memset(s, 0, sizeof *s);
  *trace = NULL;
  if (!r->st || r->lsu == r->iterations)
    return sonde_diag_set(diag, SONDE_E_FORMAT,
                          "no FrankenTrace iteration in the capture (no begin record on stimulus "
                          "port 31)");
  if (r->samples && r->outside_elf * 2 > r->samples) /* most of them: not this ELF's code */
    return sonde_diag_set(diag, SONDE_E_FORMAT,
                          "%llu of %llu PC samples are outside the ELF's code: wrong ELF?",
                          (unsigned long long)r->outside_elf, (unsigned long long)r->samples);
  int rc = sonde_ft_stitch_finish(r->st, trace, &s->report);
  if (rc < 0)
    return sonde_diag_set(diag, rc, "%s", sonde_ft_stitch_error_detail(r->st));
  s->n = r->first.n;
  s->run_id = r->first.run_id;
  s->fw_id = r->first.fw_id;
  s->iterations = r->iterations;
  s->lsu = r->lsu;
  s->cut = r->cut;
  s->corrupt = r->corrupt;
  s->samples = r->samples;
  s->lost = r->lost;
  s->overflows = r->overflows;
  s->outside_elf = r->outside_elf;
  s->missing = sonde_ft_stitch_missing_phases(r->st, s->missing_first, SONDE_FT_RUNNER_MISSING_MAX);
  /* iterations numbered below the last one seen but not in the capture */
  uint32_t last = 0;
  for (uint32_t j = 0; j < r->seen_cap; j++)
    if (r->seen[j])
      last = j;
  for (uint32_t j = 0; j < last; j++)
    if (!r->seen[j]) {
      if (!s->gap_iterations++)
        s->first_gap = j;
      if (s->gap_iterations == 1 || s->gap_end == j)
        s->gap_end = j + 1; /* the first gap's end (exclusive) */
    }
  s->ok = !s->report.conflict_count && !s->missing && !s->gap_iterations;
  uint32_t pre;
  if (r->cfg.sym && sonde_sym_address(r->cfg.sym, "ft_preamble", &pre, NULL) == 0) {
    s->preamble_bad = preamble_check(*trace, pre, &s->preamble_at);
    s->preamble_seen = s->preamble_at != UINT64_MAX;
    if (s->preamble_bad)
      s->ok = false;
  }
  /* A bit error inside a PC packet's payload leaves a valid-looking PC: the
   * code's possible transitions expose it (as they expose nondeterminism). */
  struct sonde_ft_check_result chk;
  struct sonde_diag d2;
  if (r->cfg.sym && sonde_ft_check(*trace, r->cfg.sym, 1, &chk, &d2) == 0) {
    s->checked = true;
    s->transitions = chk.transitions;
    s->impossible = chk.impossible;
    if (chk.bad_count)
      s->first_impossible = chk.bad[0];
    if (chk.impossible)
      s->ok = false;
    sonde_ft_check_result_free(&chk);
  }
  /* Another image's capture: the preamble never shows and the samples make
   * no sense as this code (nondeterminism leaves the preamble intact and
   * most transitions possible; the real CC2650 trace has 16 % impossible). */
  if (s->checked && !s->preamble_seen && s->impossible * 2 > s->transitions) {
    uint64_t imp = s->impossible, tr = s->transitions;
    sonde_ft_trace_free(*trace);
    *trace = NULL;
    return sonde_diag_set(diag, SONDE_E_FORMAT,
                          "the capture does not fit the ELF's code: its preamble (ft_preamble) "
                          "is never in the trace and %llu of %llu transitions are impossible in "
                          "the code: wrong ELF? (another image with the runner linked; --fw-id "
                          "checks the firmware id)",
                          (unsigned long long)imp, (unsigned long long)tr);
  }
  /* From one interval before the first disagreement or impossible transition
   * (the first signs of runs that went apart) nothing is trusted. */
  s->untrusted_from = sonde_ft_untrusted_from(
      &s->report, s->impossible ? s->first_impossible.cycle : UINT64_MAX, s->n, s->report.origin);
  if (s->untrusted_from != UINT64_MAX) {
    if ((rc = sonde_ft_distrust_from(trace, s->untrusted_from)) < 0) {
      sonde_ft_trace_free(*trace);
      *trace = NULL;
      return sonde_diag_set(diag, rc, "out of memory");
    }
    sonde_ft_trace_count(*trace, &s->report.counts); /* the counts of what is emitted */
  }
  return 0;
}

struct sonde_ft_trace *sonde_ft_trace_rebase(const struct sonde_ft_trace *t, uint64_t origin)
{
  struct sonde_ft_trace *z = NULL;
  uint64_t pos = 0;
  struct sonde_ft_span sp;
  if (sonde_ft_trace_new(origin, &z) < 0)
    return NULL;
  while (sonde_ft_trace_next_span(t, &pos, &sp) > 0)
    if (sonde_ft_trace_append(z, sp.cell, sp.cycles) < 0) {
      sonde_ft_trace_free(z);
      return NULL;
    }
  sonde_ft_trace_set_clock_hz(z, sonde_ft_trace_clock_hz(t));
  return z;
}

int sonde_ft_runner_verify(const struct sonde_ft_trace *trace,
                           const struct sonde_ft_trace *ground_truth, uint32_t preamble,
                           uint64_t *offset, struct sonde_ft_verify_result *v,
                           struct sonde_diag *diag)
{
  struct sonde_ft_trace *proj = NULL, *moved = NULL;
  int rc = sonde_ft_project_dwt(ground_truth, &proj);
  if (rc < 0)
    return sonde_diag_set(diag, rc, "out of memory");
  uint64_t at = sonde_ft_trace_find_pc(trace, preamble);
  uint64_t gat = sonde_ft_trace_find_pc(proj, preamble);
  if (at == UINT64_MAX || gat == UINT64_MAX || gat < at) {
    sonde_ft_trace_free(proj);
    return sonde_diag_set(diag, SONDE_E_FORMAT,
                          "cannot align on the preamble (ft_preamble at 0x%08x %s)", preamble,
                          at == UINT64_MAX ? "is not in the trace" : "is not in the ground truth");
  }
  *offset = gat - at;
  if (!(moved = sonde_ft_trace_rebase(trace, gat - at))) {
    sonde_ft_trace_free(proj);
    return sonde_diag_set(diag, SONDE_E_NOMEM, "out of memory");
  }
  rc = sonde_ft_verify(moved, proj, v);
  sonde_ft_trace_free(moved);
  sonde_ft_trace_free(proj);
  return rc < 0 ? sonde_diag_set(diag, rc, "out of memory") : 0;
}
