/* Writing cycle-level traces: pct (src/trace's writer; unrecoverable cycles as
 * "unknown" spans), FrankenTrace CSV (one row per cycle, labels from src/sym)
 * and Perfetto (one slice per run of a function, src/export). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ft_internal.h"
#include "pc_labels.h"
#include "sonde/export.h"
#include "sonde/sym.h"
#include "sonde/trace.h"

static int write_pct(FILE *f, const char *name, const struct sonde_ft_trace *t,
                     struct sonde_diag *diag)
{
  struct sonde_pctrace_writer *w;
  int rc = sonde_pctrace_writer_new(f, name, SONDE_PCTRACE_BINARY, t->clock_hz, t->origin, &w);
  if (rc)
    return sonde_diag_set(diag, rc, "%s: cannot start the pct writer", name);
  uint64_t pos = 0;
  struct sonde_ft_span sp;
  while (!rc && sonde_ft_trace_next_span(t, &pos, &sp)) {
    /* Consecutive cycles of the same instruction are one record: pct cannot
     * tell them apart either (a stitched trace does not know instruction
     * boundaries, only what occupied each cycle). */
    for (uint64_t left = sp.cycles; !rc && left;) {
      uint32_t n = left > UINT32_MAX ? UINT32_MAX : (uint32_t)left;
      switch (sp.cell.state) {
      case SONDE_FT_PC:
        rc = sonde_pctrace_write(w, sp.cell.pc, n);
        break;
      case SONDE_FT_SLEEP:
        rc = sonde_pctrace_write_span(w, SONDE_PCTRACE_SLEEP, 0, n);
        break;
      case SONDE_FT_EXC_ENTRY:
        rc = sonde_pctrace_write_span(w, SONDE_PCTRACE_EXC_ENTRY, sp.cell.pc, n);
        break;
      case SONDE_FT_EXC_RETURN:
        rc = sonde_pctrace_write_span(w, SONDE_PCTRACE_EXC_RETURN, sp.cell.pc, n);
        break;
      case SONDE_FT_TAIL_CHAIN:
        rc = sonde_pctrace_write_span(w, SONDE_PCTRACE_TAIL_CHAIN, sp.cell.pc, n);
        break;
      case SONDE_FT_HALTED:
        rc = sonde_pctrace_write_span(w, SONDE_PCTRACE_HALTED, 0, n);
        break;
      default:
        rc = sonde_pctrace_write_span(w, SONDE_PCTRACE_UNKNOWN, 0, n);
        break;
      }
      left -= n;
    }
  }
  if (!rc)
    rc = sonde_pctrace_writer_finish(w);
  if (rc)
    sonde_diag_set(diag, rc, "%s", sonde_pctrace_writer_error_detail(w));
  sonde_pctrace_writer_free(w);
  return rc;
}

/* A CSV field, quoted when it needs to be. */
static void put_field(FILE *f, const char *s)
{
  if (!strpbrk(s, ",\"\n\r")) {
    fputs(s, f);
    return;
  }
  putc('"', f);
  for (; *s; s++) {
    if (*s == '"')
      putc('"', f);
    putc(*s, f);
  }
  putc('"', f);
}

static int write_csv(FILE *f, const char *name, const struct sonde_ft_trace *t,
                     struct sonde_sym *sym, struct sonde_diag *diag)
{
  struct ft_labels *labels = ft_labels_new(sym);
  if (!labels)
    return sonde_diag_set(diag, SONDE_E_NOMEM, "%s: out of memory", name);
  fputs("ts,val,valid,label,short_instr\n", f);
  static const char *const span_val[] = {
      [SONDE_FT_SLEEP] = "sleep",       [SONDE_FT_EXC_ENTRY] = "exc_entry",
      [SONDE_FT_EXC_RETURN] = "exc_return", [SONDE_FT_TAIL_CHAIN] = "tail_chain",
      [SONDE_FT_HALTED] = "halted"};
  for (uint64_t i = 0; i < t->length; i++) {
    uint64_t ts = t->origin + i;
    uint8_t s = t->states[i];
    uint32_t pc = t->pcs[i];
    if (s == SONDE_FT_PC || s == SONDE_FT_CONFLICT || s == SONDE_FT_INVALID) {
      const char *sy = ft_labels_symbol(labels, pc), *in = ft_labels_insn(labels, pc);
      if (!sy || !in) {
        ft_labels_free(labels);
        return sonde_diag_set(diag, SONDE_E_NOMEM, "%s: out of memory", name);
      }
      fprintf(f, "%" PRIu64 ",0x%08x,%s,", ts, pc, s == SONDE_FT_PC ? "true" : "false");
      put_field(f, sy);
      putc(',', f);
      put_field(f, in);
      putc('\n', f);
    } else if (s == SONDE_FT_UNSAMPLED || s == SONDE_FT_LOST) {
      fprintf(f, "%" PRIu64 ",,false,,\n", ts);
    } else if (s == SONDE_FT_SLEEP || s == SONDE_FT_HALTED) {
      fprintf(f, "%" PRIu64 ",%s,true,,\n", ts, span_val[s]);
    } else {
      fprintf(f, "%" PRIu64 ",%s:%u,true,,\n", ts, span_val[s], pc);
    }
  }
  ft_labels_free(labels);
  if (fflush(f) || ferror(f))
    return sonde_diag_set(diag, SONDE_E_IO, "%s: write failed", name);
  return 0;
}

static int file_write(void *ctx, const void *buf, size_t len)
{
  return fwrite(buf, 1, len, ctx) == len ? 0 : SONDE_E_IO;
}

/* What a span is called on the timeline: its function, or its state. */
static const char *slice_name(const struct sonde_ft_span *sp, struct sonde_sym *sym)
{
  switch (sp->cell.state) {
  case SONDE_FT_PC: {
    const char *n = sym ? sonde_sym_name(sym, sp->cell.pc, NULL) : NULL;
    return n ? n : "(no symbol)";
  }
  case SONDE_FT_SLEEP:
    return "(sleep)";
  case SONDE_FT_EXC_ENTRY:
  case SONDE_FT_EXC_RETURN:
  case SONDE_FT_TAIL_CHAIN:
    return "(exception)";
  case SONDE_FT_HALTED:
    return "(halted)";
  default:
    return "(unrecoverable)";
  }
}

static int write_perfetto(FILE *f, const char *name, const struct sonde_ft_trace *t,
                          struct sonde_sym *sym, struct sonde_diag *diag)
{
  struct sonde_export *x = sonde_export_new(SONDE_EXPORT_PERFETTO, file_write, f);
  if (!x)
    return sonde_diag_set(diag, SONDE_E_NOMEM, "%s: out of memory", name);
  int rc = sonde_export_track(x, 1, 0, SONDE_EXPORT_PROCESS, "FrankenTrace", 1);
  if (!rc)
    rc = sonde_export_track(x, 2, 1, SONDE_EXPORT_THREAD, "PC trace", 1);
  double ns_per_cycle = t->clock_hz ? 1e9 / (double)t->clock_hz : 1.0;
  uint64_t pos = 0;
  struct sonde_ft_span sp;
  const char *open_name = NULL;
  while (!rc && sonde_ft_trace_next_span(t, &pos, &sp)) {
    const char *n = slice_name(&sp, sym);
    if (open_name && strcmp(open_name, n) == 0)
      continue; /* same function, next instruction */
    uint64_t ts = (uint64_t)((double)(sp.cycle - t->origin) * ns_per_cycle);
    if (open_name)
      rc = sonde_export_slice_end(x, 2, ts);
    if (!rc) {
      struct sonde_export_arg a = {"cycle", false, (int64_t)sp.cycle, NULL};
      rc = sonde_export_slice_begin(x, 2, ts, n, &a, 1);
    }
    open_name = n;
  }
  if (!rc && open_name)
    rc = sonde_export_slice_end(x, 2, (uint64_t)((double)t->length * ns_per_cycle));
  if (!rc)
    rc = sonde_export_finish(x);
  if (rc)
    sonde_diag_set(diag, rc, "%s: %s", name, sonde_export_error(x)[0] ? sonde_export_error(x)
                                                                       : "write failed");
  sonde_export_free(x);
  return rc;
}

int sonde_ft_write(FILE *f, const char *name, enum sonde_ft_format format,
                   const struct sonde_ft_trace *t, struct sonde_sym *sym, struct sonde_diag *diag)
{
  if (!f || !t)
    return sonde_diag_set(diag, SONDE_E_ARG, "nothing to write");
  if (!name)
    name = "<output>";
  switch (format) {
  case SONDE_FT_FORMAT_PCT:
    return write_pct(f, name, t, diag);
  case SONDE_FT_FORMAT_CSV:
    return write_csv(f, name, t, sym, diag);
  case SONDE_FT_FORMAT_PERFETTO:
    return write_perfetto(f, name, t, sym, diag);
  default:
    return sonde_diag_set(diag, SONDE_E_ARG, "%s: choose an output format", name);
  }
}
