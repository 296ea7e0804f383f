/* The MTB history on a Perfetto timeline (include/sonde/mtb.h): function
 * slices over the rebuilt instructions, instants for branches, exception
 * entries and returns, session starts, gaps and the fault. The MTB records no
 * time, so the time axis counts instructions: 1 instruction = 1 us. */
#include <stdio.h>
#include <string.h>

#include "sonde/export.h"
#include "sonde/mtb.h"

#define NS_PER_INSN 1000u
enum { T_PROC = 1, T_FUNCS, T_EXC, T_BRANCH };

static int file_write(void *ctx, const void *buf, size_t len)
{
  return fwrite(buf, 1, len, ctx) == len ? 0 : SONDE_E_IO;
}

/* "func+0x4 (file.c:12)" or "0x00001234". */
static void where(struct sonde_sym *sym, uint32_t addr, char *buf, size_t cap)
{
  if (sonde_mtb_is_exc_return(addr)) {
    snprintf(buf, cap, "EXC_RETURN 0x%08x", addr);
    return;
  }
  int n = sonde_sym_format(sym, addr, buf, cap);
  struct sonde_sym_line ln;
  if (n > 0 && (size_t)n < cap && sonde_sym_line(sym, addr, &ln) == 0 && ln.line)
    snprintf(buf + n, cap - (size_t)n, " (%s:%u)", ln.file, ln.line);
}

static int instant(struct sonde_export *x, uint64_t track, uint64_t ts, const char *name,
                   struct sonde_sym *sym, const struct sonde_mtb_event *e)
{
  char from[256], to[256];
  where(sym, e->pc, from, sizeof from);
  struct sonde_export_arg a[4] = {{"packet", false, e->packet, NULL},
                                  {"pc", false, e->pc, NULL},
                                  {"from", true, 0, from},
                                  {"to", true, 0, to}};
  unsigned n = 3;
  if (e->kind == SONDE_MTB_BRANCH || e->kind == SONDE_MTB_EXC_ENTRY ||
      e->kind == SONDE_MTB_EXC_RETURN) {
    where(sym, e->dst, to, sizeof to);
    n = 4;
  }
  return sonde_export_instant(x, track, ts, name, a, n);
}

int sonde_mtb_write_perfetto(FILE *f, const char *name, const struct sonde_mtb_history *h,
                             size_t first, struct sonde_sym *sym,
                             const struct sonde_mtb_mark *fault, struct sonde_diag *d)
{
  if (!f || !h)
    return sonde_diag_set(d, SONDE_E_ARG, "nothing to write");
  struct sonde_export *x = sonde_export_new(SONDE_EXPORT_PERFETTO, file_write, f);
  if (!x)
    return sonde_diag_set(d, SONDE_E_NOMEM, "%s: out of memory", name);
  int rc = sonde_export_track(x, T_PROC, 0, SONDE_EXPORT_PROCESS, "MTB history", 1);
  if (!rc)
    rc = sonde_export_track(x, T_FUNCS, T_PROC, SONDE_EXPORT_THREAD, "functions", 1);
  if (!rc)
    rc = sonde_export_track(x, T_EXC, T_PROC, SONDE_EXPORT_SLICES, "exceptions", 0);
  if (!rc)
    rc = sonde_export_track(x, T_BRANCH, T_PROC, SONDE_EXPORT_SLICES, "branches", 0);
  uint64_t ts = 0;
  char open[256] = "", cur[256];
  bool is_open = false;
  for (size_t i = first; !rc && i < h->n; i++) {
    const struct sonde_mtb_event *e = &h->ev[i];
    switch (e->kind) {
    case SONDE_MTB_INSN: {
      const char *fn = sonde_sym_name(sym, e->pc, NULL);
      if (fn)
        snprintf(cur, sizeof cur, "%s", fn);
      else
        snprintf(cur, sizeof cur, "0x%08x", e->pc);
      if (!is_open || strcmp(open, cur)) {
        if (is_open)
          rc = sonde_export_slice_end(x, T_FUNCS, ts);
        struct sonde_export_arg a = {"pc", false, e->pc, NULL};
        if (!rc)
          rc = sonde_export_slice_begin(x, T_FUNCS, ts, cur, &a, 1);
        memcpy(open, cur, sizeof open);
        is_open = true;
      }
      ts += NS_PER_INSN;
      break;
    }
    case SONDE_MTB_BRANCH: rc = instant(x, T_BRANCH, ts, "branch", sym, e); break;
    case SONDE_MTB_EXC_ENTRY: rc = instant(x, T_EXC, ts, "exception entry", sym, e); break;
    case SONDE_MTB_EXC_RETURN:
      rc = instant(x, T_EXC, ts, e->tail_chain ? "tail-chain" : "exception return", sym, e);
      break;
    case SONDE_MTB_SESSION: rc = instant(x, T_EXC, ts, "trace session starts", sym, e); break;
    case SONDE_MTB_GAP: rc = instant(x, T_EXC, ts, "gap (inconsistent packet)", sym, e); break;
    }
  }
  if (!rc && is_open)
    rc = sonde_export_slice_end(x, T_FUNCS, ts);
  if (!rc && fault && fault->label) {
    char at[256];
    where(sym, fault->pc, at, sizeof at);
    struct sonde_export_arg a[3] = {{"pc", false, fault->pc, NULL},
                                    {"at", true, 0, at},
                                    {"status", true, 0, fault->status ? fault->status : ""}};
    rc = sonde_export_instant(x, T_EXC, ts, fault->label, a, 3);
  }
  if (!rc)
    rc = sonde_export_finish(x);
  if (rc)
    sonde_diag_set(d, rc, "%s: %s", name,
                   sonde_export_error(x)[0] ? sonde_export_error(x) : "write failed");
  sonde_export_free(x);
  return rc;
}
