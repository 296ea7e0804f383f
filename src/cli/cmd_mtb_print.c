/* `sonde mtb decode`: one history event as text, json or csv, with function
 * and file:line (src/cli/cmd_mtb.c). */
#include "cli.h"

#include <stdio.h>
#include <string.h>

#include "cmd_mtb.h"
#include "sonde/mtb.h"
#include "sonde/sym.h"

struct where {
  const char *func;
  uint32_t off;
  const char *file;
  unsigned line;
};

static void where(struct sonde_sym *sym, uint32_t addr, struct where *w)
{
  memset(w, 0, sizeof *w);
  if (sonde_mtb_is_exc_return(addr))
    return;
  w->func = sonde_sym_name(sym, addr, &w->off);
  struct sonde_sym_line ln;
  if (sonde_sym_line(sym, addr, &ln) == 0 && ln.line) {
    w->file = ln.file;
    w->line = ln.line;
  }
}

/* "name+0x4 (file.c:12)" or "0x00001234". */
void mtb_text_where(FILE *o, struct sonde_sym *sym, uint32_t addr)
{
  struct where w;
  where(sym, addr, &w);
  fprintf(o, "0x%08x", addr);
  if (sonde_mtb_is_exc_return(addr)) {
    fputs(" EXC_RETURN", o);
    return;
  }
  if (w.func)
    fprintf(o, w.off ? " %s+0x%x" : " %s", w.func, w.off);
  if (w.file)
    fprintf(o, " (%s:%u)", w.file, w.line);
}

void mtb_json_where(FILE *o, struct sonde_sym *sym, const char *prefix, uint32_t addr)
{
  struct where w;
  where(sym, addr, &w);
  fprintf(o, ",\"%spc\":%u,\"%sfunction\":", prefix, addr, prefix);
  if (w.func)
    cli_json_string(o, w.func);
  else
    fputs("null", o);
  fprintf(o, ",\"%sfile\":", prefix);
  if (w.file)
    cli_json_string(o, w.file);
  else
    fputs("null", o);
  fprintf(o, ",\"%sline\":%u", prefix, w.line);
}

static void csv_field(FILE *o, const char *s)
{
  if (!s)
    return;
  if (!strpbrk(s, ",\"\n")) {
    fputs(s, o);
    return;
  }
  fputc('"', o);
  for (; *s; s++) {
    if (*s == '"')
      fputc('"', o);
    fputc(*s, o);
  }
  fputc('"', o);
}

void mtb_csv_where(FILE *o, struct sonde_sym *sym, uint32_t addr)
{
  struct where w;
  where(sym, addr, &w);
  fprintf(o, ",0x%08x,", addr);
  csv_field(o, w.func);
  fputc(',', o);
  csv_field(o, w.file);
  if (w.line)
    fprintf(o, ",%u", w.line);
  else
    fputc(',', o);
}

static const char *event_name(const struct sonde_mtb_event *e)
{
  if (e->kind == SONDE_MTB_EXC_RETURN)
    return e->tail_chain ? "tail-chain" : "return";
  return e->kind == SONDE_MTB_EXC_ENTRY ? "entry" : "";
}

void mtb_print_event(FILE *o, int fmt, struct sonde_sym *sym, const struct sonde_mtb_event *e,
                        bool disasm)
{
  const char *kind = sonde_mtb_kind_name(e->kind);
  bool has_dst = e->kind == SONDE_MTB_BRANCH || e->kind == SONDE_MTB_EXC_ENTRY ||
                 e->kind == SONDE_MTB_EXC_RETURN;
  if (fmt == MTB_OUT_JSON) {
    fprintf(o, "{\"kind\":\"%s\"", kind);
    if (*event_name(e))
      fprintf(o, ",\"event\":\"%s\"", event_name(e));
    fprintf(o, ",\"packet\":%u", e->packet);
    mtb_json_where(o, sym, "", e->pc);
    if (e->kind == SONDE_MTB_INSN)
      fprintf(o, ",\"size\":%u", e->size);
    if (has_dst)
      mtb_json_where(o, sym, "dst_", e->dst);
    if (e->kind == SONDE_MTB_EXC_RETURN)
      fprintf(o, ",\"exc_return\":%u", e->exc_return);
    fputs("}\n", o);
    return;
  }
  if (fmt == MTB_OUT_CSV) {
    fprintf(o, "%s,%s,%u", kind, event_name(e), e->packet);
    mtb_csv_where(o, sym, e->pc);
    if (has_dst)
      mtb_csv_where(o, sym, e->dst);
    else
      fputs(",,,,", o);
    if (e->kind == SONDE_MTB_EXC_RETURN)
      fprintf(o, ",0x%08x\n", e->exc_return);
    else
      fputs(",\n", o);
    return;
  }
  switch (e->kind) {
  case SONDE_MTB_INSN: {
    fputs("  ", o);
    mtb_text_where(o, sym, e->pc);
    struct sonde_sym_insn in;
    if (disasm && sonde_sym_disasm(sym, e->pc, &in) == 0)
      fprintf(o, "  %s %s", in.mnemonic, in.operands);
    fputc('\n', o);
    return;
  }
  case SONDE_MTB_BRANCH: fprintf(o, "#%-5u branch   ", e->packet); break;
  case SONDE_MTB_EXC_ENTRY: fprintf(o, "#%-5u exception entry from ", e->packet); break;
  case SONDE_MTB_EXC_RETURN:
    fprintf(o, "#%-5u exception %s at ", e->packet, e->tail_chain ? "tail-chain" : "return");
    break;
  case SONDE_MTB_SESSION: fprintf(o, "#%-5u --- trace session starts (S-bit)\n", e->packet); return;
  case SONDE_MTB_GAP:
    fprintf(o, "#%-5u --- gap: inconsistent packet, history restarts at 0x%08x\n", e->packet,
            e->pc);
    return;
  }
  mtb_text_where(o, sym, e->pc);
  if (e->kind == SONDE_MTB_EXC_RETURN)
    fprintf(o, " (EXC_RETURN 0x%08x)", e->exc_return);
  fputs(" -> ", o);
  mtb_text_where(o, sym, e->dst);
  fputc('\n', o);
}
