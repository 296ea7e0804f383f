/* `sonde mtb decode`: the branch or instruction history before a stop or a
 * crash, from a Micro Trace Buffer dump and its POSITION/MASTER registers,
 * with function and file:line from the ELF (include/sonde/mtb.h, docs/mtb.md). */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd_mtb.h"
#include "sonde/mtb.h"
#include "sonde/sym.h"

enum { OUT_TEXT, OUT_JSON, OUT_CSV, OUT_PERFETTO };

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
static void text_where(FILE *o, struct sonde_sym *sym, uint32_t addr)
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

static void json_where(FILE *o, struct sonde_sym *sym, const char *prefix, uint32_t addr)
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

static void csv_where(FILE *o, struct sonde_sym *sym, uint32_t addr)
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

static void print_event(FILE *o, int fmt, struct sonde_sym *sym, const struct sonde_mtb_event *e,
                        bool disasm)
{
  const char *kind = sonde_mtb_kind_name(e->kind);
  bool has_dst = e->kind == SONDE_MTB_BRANCH || e->kind == SONDE_MTB_EXC_ENTRY ||
                 e->kind == SONDE_MTB_EXC_RETURN;
  if (fmt == OUT_JSON) {
    fprintf(o, "{\"kind\":\"%s\"", kind);
    if (*event_name(e))
      fprintf(o, ",\"event\":\"%s\"", event_name(e));
    fprintf(o, ",\"packet\":%u", e->packet);
    json_where(o, sym, "", e->pc);
    if (e->kind == SONDE_MTB_INSN)
      fprintf(o, ",\"size\":%u", e->size);
    if (has_dst)
      json_where(o, sym, "dst_", e->dst);
    if (e->kind == SONDE_MTB_EXC_RETURN)
      fprintf(o, ",\"exc_return\":%u", e->exc_return);
    fputs("}\n", o);
    return;
  }
  if (fmt == OUT_CSV) {
    fprintf(o, "%s,%s,%u", kind, event_name(e), e->packet);
    csv_where(o, sym, e->pc);
    if (has_dst)
      csv_where(o, sym, e->dst);
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
    text_where(o, sym, e->pc);
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
  text_where(o, sym, e->pc);
  if (e->kind == SONDE_MTB_EXC_RETURN)
    fprintf(o, " (EXC_RETURN 0x%08x)", e->exc_return);
  fputs(" -> ", o);
  text_where(o, sym, e->dst);
  fputc('\n', o);
}

static const char *exc_name(uint32_t ipsr)
{
  static const char *n[] = {"", "Reset", "NMI", "HardFault", "MemManage", "BusFault",
                            "UsageFault", "SecureFault"};
  return ipsr < 8 ? n[ipsr] : ipsr == 11 ? "SVCall" : ipsr == 14 ? "PendSV"
         : ipsr == 15 ? "SysTick" : ipsr >= 16 ? "IRQ" : "";
}

/* Where the fault happened: the stacked PC, unless an ARMv8-M stack-limit
 * fault (STKOF) left the frame unpushed and the trace says otherwise. */
struct fault_view {
  uint32_t pc;
  bool from_trace;                      /* pc comes from the trace, not the frame */
  const struct sonde_mtb_event *from;   /* wild PC: the branch that went there */
  char words[256];
};

static void fault_view(struct sonde_sym *sym, const struct sonde_mtb_bundle *b,
                       const struct sonde_mtb_history *h, struct fault_view *v)
{
  memset(v, 0, sizeof *v);
  v->pc = b->frame[6] & ~1u;
  sonde_mtb_fault_words(b->cfsr, b->hfsr, v->words, sizeof v->words);
  struct sonde_mtb_site site;
  if (b->ipsr && (b->cfsr & (1u << 20)) && sonde_mtb_entry_site(h, sym, &site) == 0 &&
      site.pc != v->pc) {
    v->pc = site.pc;
    v->from_trace = true;
  }
  /* A PC outside the firmware (a wild pointer, a smashed return address):
   * the culprit is the newest branch that went there. */
  uint8_t probe[2];
  if (sonde_sym_read(sym, v->pc, probe, 2) < 0)
    v->from = sonde_mtb_branch_to(h, v->pc);
}

static void print_regs_text(FILE *o, const struct sonde_mtb_bundle *b)
{
  if (b->flags & SONDE_MTB_REGS_CORE) {
    fputs("  ", o);
    for (int i = 0; i < 8; i++)
      fprintf(o, "r%d 0x%08x ", 4 + i, b->r4_r11[i]);
    fprintf(o, "\n  msp 0x%08x psp 0x%08x control 0x%08x", b->msp, b->psp, b->control);
    if (b->flags & SONDE_MTB_REGS_SPLIM)
      fprintf(o, " msplim 0x%08x psplim 0x%08x", b->msplim, b->psplim);
    fputc('\n', o);
  }
  if (b->flags & SONDE_MTB_REGS_FPU) {
    fprintf(o, "  fpscr 0x%08x", b->fpscr);
    for (int i = 0; i < 32; i++) {
      float f;
      memcpy(&f, &b->s[i], 4);
      fprintf(o, "%ss%d 0x%08x (%g)", i % 4 ? " " : "\n  ", i, b->s[i], (double)f);
    }
    fputc('\n', o);
  }
}

static void print_regs_json(FILE *o, const struct sonde_mtb_bundle *b)
{
  if (b->flags & SONDE_MTB_REGS_CORE) {
    for (int i = 0; i < 8; i++)
      fprintf(o, ",\"r%d\":%u", 4 + i, b->r4_r11[i]);
    fprintf(o, ",\"msp\":%u,\"psp\":%u,\"control\":%u", b->msp, b->psp, b->control);
  }
  if (b->flags & SONDE_MTB_REGS_SPLIM)
    fprintf(o, ",\"msplim\":%u,\"psplim\":%u", b->msplim, b->psplim);
  if (b->flags & SONDE_MTB_REGS_FPU) {
    fprintf(o, ",\"fpscr\":%u,\"s\":[", b->fpscr);
    for (int i = 0; i < 32; i++)
      fprintf(o, "%s%u", i ? "," : "", b->s[i]);
    fputc(']', o);
  }
}

static void hex_id(char *buf, const uint8_t *id, size_t n)
{
  for (size_t i = 0; i < n; i++)
    sprintf(buf + 2 * i, "%02x", id[i]);
  buf[2 * n] = 0;
}

/* The fault a bundle recorded: where (the stacked PC), which exception, the
 * fault status in words, the registers. */
static void print_fault(FILE *o, int fmt, struct sonde_sym *sym, const struct sonde_mtb_bundle *b,
                        const struct sonde_mtb_history *h, int id_state)
{
  struct fault_view v;
  fault_view(sym, b, h, &v);
  const struct sonde_mtb_event *from = v.from;
  uint32_t pc = v.pc;
  if (fmt == OUT_JSON) {
    fprintf(o, "{\"kind\":\"%s\"", b->ipsr ? "fault" : "halt");
    json_where(o, sym, "", pc);
    fprintf(o, ",\"ipsr\":%u,\"exception\":\"%s\",\"exc_return\":%u,\"cfsr\":%u,\"hfsr\":%u,"
               "\"mmfar\":%u,\"bfar\":%u,\"r0\":%u,\"r1\":%u,\"r2\":%u,\"r3\":%u,\"r12\":%u,"
               "\"lr\":%u,\"stacked_pc\":%u,\"xpsr\":%u,\"sp\":%u,\"pc_from_trace\":%s,\"status\":",
            b->ipsr, exc_name(b->ipsr), b->exc_return, b->cfsr, b->hfsr, b->mmfar, b->bfar,
            b->frame[0], b->frame[1], b->frame[2], b->frame[3], b->frame[4], b->frame[5],
            b->frame[6], b->frame[7], b->stack_addr, v.from_trace ? "true" : "false");
    cli_json_string(o, v.words);
    print_regs_json(o, b);
    char id[2 * SONDE_MTB_BUILD_ID_MAX + 1];
    hex_id(id, b->build_id, b->build_id_len);
    fprintf(o, ",\"bundle_version\":%u,\"build_id\":", b->version);
    if (b->build_id_len)
      cli_json_string(o, id);
    else
      fputs("null", o);
    fprintf(o, ",\"build_id_match\":%s",
            id_state == SONDE_MTB_ID_MATCH ? "true"
            : id_state == SONDE_MTB_ID_MISMATCH ? "false" : "null");
    if (from) {
      fprintf(o, ",\"from_packet\":%u", from->packet);
      json_where(o, sym, "from_", from->pc);
    }
    fputs("}\n", o);
    return;
  }
  if (fmt == OUT_CSV) {
    fprintf(o, "%s,%u,", b->ipsr ? "fault" : "halt", b->ipsr);
    csv_where(o, sym, pc);
    if (from)
      csv_where(o, sym, from->pc);
    else
      fputs(",,,,", o);
    fprintf(o, ",0x%08x\n", b->exc_return);
    return;
  }
  if (b->ipsr)
    fprintf(o, "fault: exception %u%s%s%s at ", b->ipsr, *exc_name(b->ipsr) ? " (" : "",
            exc_name(b->ipsr), *exc_name(b->ipsr) ? ")" : "");
  else /* `sonde mtb fetch` of a live target */
    fputs("halted at ", o);
  text_where(o, sym, pc);
  struct sonde_sym_insn in;
  if (sonde_sym_disasm(sym, pc, &in) == 0)
    fprintf(o, "  %s %s", in.mnemonic, in.operands);
  if (from) {
    fputs(" (not in the firmware)\n  jumped there from ", o);
    text_where(o, sym, from->pc);
    fprintf(o, " (packet #%u)", from->packet);
  }
  fputc('\n', o);
  if (v.from_trace)
    fprintf(o, "  (where the trace says the program was: the stack-limit fault (STKOF) pushed "
               "no frame, stacked pc 0x%08x is not the program's)\n", b->frame[6]);
  if (b->arch == 8)
    fprintf(o, "  CFSR 0x%08x HFSR 0x%08x%s%s; MMFAR 0x%08x BFAR 0x%08x\n", b->cfsr, b->hfsr,
            *v.words ? ": " : "", v.words, b->mmfar, b->bfar);
  if (!b->ipsr) { /* a live fetch: the halted core's registers */
    if (b->flags & SONDE_MTB_REGS_CORE) {
      fprintf(o, "  r0 0x%08x r1 0x%08x r2 0x%08x r3 0x%08x r12 0x%08x lr 0x%08x xpsr 0x%08x\n",
              b->frame[0], b->frame[1], b->frame[2], b->frame[3], b->frame[4], b->frame[5],
              b->frame[7]);
      print_regs_text(o, b);
    }
    return;
  }
  fprintf(o, "  stacked r0 0x%08x r1 0x%08x r2 0x%08x r3 0x%08x r12 0x%08x lr 0x%08x xpsr "
             "0x%08x; sp 0x%08x, EXC_RETURN 0x%08x\n",
          b->frame[0], b->frame[1], b->frame[2], b->frame[3], b->frame[4], b->frame[5],
          b->frame[7], b->stack_addr, b->exc_return);
  print_regs_text(o, b);
  if (!v.from_trace) {
    fputs("  lr: ", o);
    text_where(o, sym, b->frame[5] & ~1u);
    fputc('\n', o);
  }
}

int mtb_parse_hex(const char *s, uint32_t *out)
{
  if (!s || !*s)
    return -1;
  if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
    s += 2;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 16);
  if (!*s || *end || errno || v > 0xFFFFFFFFull)
    return -1;
  *out = (uint32_t)v;
  return 0;
}

static int mtb_decode(int argc, char **argv)
{
  static const struct cli_command_help help = {
      "sonde mtb decode -e <elf> <bundle> [--force] [--instructions] [--limit <n>] "
      "[--format text|json|csv|perfetto] [-o <file>]\n"
      "sonde mtb decode -e <elf> --raw <buf.bin> --position <hex> [--base <hex>] [--master <hex>] "
      "[--end-pc <hex>] [--vectors <hex>] [--instructions] [--limit <n>] "
      "[--format text|json|csv|perfetto] "
      "[-o <file>]",
      "Decode a Micro Trace Buffer dump (the bytes at MTB_BASE, e.g. from a debugger's\n"
      "memory dump) with its MTB_POSITION and MTB_MASTER values: the branches, exception\n"
      "entries and returns and trace session starts, oldest first and newest last, with\n"
      "function and file:line at both ends; with --instructions, every instruction\n"
      "executed between them, rebuilt from the ELF. Inconsistent packets (a source not\n"
      "reached sequentially from the previous destination) are reported on stderr with\n"
      "their index and addresses. Register values are hexadecimal, 0x optional.\n"
      "<bundle>: a post-mortem bundle written by target/cortexm/mtb.c's mtb_bundle_write()\n"
      "(docs/formats.md, versions 1 and 2): its buffer and registers, then the fault\n"
      "(the faulting instruction, exception, CFSR/HFSR bits in words, registers). The\n"
      "bundle's build id must match the ELF's (.note.gnu.build-id): a mismatch is an\n"
      "error unless --force; a bundle or ELF without one gets a warning.\n"
      "json: one object per line with kind (instruction, branch, exception, session, gap),\n"
      "packet, pc, function, file, line (dst_* for the destination); the fault last.\n"
      "perfetto: a Perfetto trace (-o <file>): function slices, branch and exception\n"
      "instants; time counts instructions (1 us each). docs/mtb.md."};
  const char *elf = NULL, *raw_path = NULL, *pos_s = NULL, *base_s = NULL, *master_s = NULL;
  const char *end_s = NULL, *vec_s = NULL, *format = "text", *output = NULL;
  bool insns = false, force = false;
  uint64_t limit = 0;
  const struct cli_opt options[] = {
      OPT_GROUP("input"),
      OPT_ELF(&elf),
      OPT_STRING(0, "raw", "<file>", &raw_path, "the trace buffer bytes, from MTB_BASE on"),
      OPT_STRING(0, "position", "<hex>", &pos_s, "MTB_POSITION (POINTER and WRAP)"),
      OPT_STRING(0, "base", "<hex>", &base_s, "MTB_BASE (lets --position be an absolute address)"),
      OPT_STRING(0, "master", "<hex>", &master_s,
                 "MTB_MASTER: its MASK gives the circle size (default: the file's size)"),
      OPT_STRING(0, "vectors", "<hex>", &vec_s,
                 "address of the vector table in the ELF (VTOR, default 0): a return into one "
                 "of its handlers is shown as a tail-chain"),
      OPT_STRING(0, "end-pc", "<hex>", &end_s,
                 "where the core stopped after the last packet (the PC of the instruction that "
                 "cleared MASTER.EN, or the halt PC): the history runs on to it"),
      OPT_FLAG(0, "force", &force,
               "decode even when the bundle's build id is not the ELF's"),
      OPT_GROUP("output"),
      OPT_FLAG(0, "instructions", &insns, "every executed instruction, with disassembly in text"),
      OPT_U64('n', "limit", "<n>", &limit,
              "only the newest <n> branches (or instructions with --instructions); 0 = all"),
      OPT_STRING(0, "format", "<fmt>", &format, "text (default), json, csv or perfetto"),
      OPT_OUTPUT(&output),
      OPT_END(),
  };
  int nargs;
  int rc = cli_parse(argc, argv, options, &help, &nargs);
  if (rc < 0)
    return CLI_OK;
  if (rc)
    return rc;
  if (nargs > 1)
    return cli_usage_error(&help, "too many inputs");
  const char *bundle_path = nargs ? argv[0] : NULL;
  if (!elf)
    return cli_usage_error(&help, "missing -e <elf>");
  if (bundle_path && (raw_path || pos_s || master_s || base_s))
    return cli_usage_error(&help, "a bundle carries its buffer and registers: no --raw, "
                                  "--position, --master or --base with it");
  if (!bundle_path && !raw_path)
    return cli_usage_error(&help, "missing <bundle> or --raw <buf.bin>");
  if (!bundle_path && !pos_s)
    return cli_usage_error(&help, "missing --position <hex>");
  int fmt = !strcmp(format, "text") ? OUT_TEXT : !strcmp(format, "json") ? OUT_JSON
            : !strcmp(format, "csv") ? OUT_CSV : !strcmp(format, "perfetto") ? OUT_PERFETTO : -1;
  if (fmt < 0)
    return cli_usage_error(&help, "unknown --format '%s' (text, json, csv or perfetto)", format);
  if (fmt == OUT_PERFETTO && !output && isatty(STDOUT_FILENO))
    return cli_usage_error(&help, "--format perfetto writes binary: give -o <file>");
  struct sonde_mtb_raw raw = {0};
  uint32_t end_pc = 0, vectors = 0;
  if (pos_s && mtb_parse_hex(pos_s, &raw.position))
    return cli_usage_error(&help, "--position '%s' is not a hexadecimal 32-bit value", pos_s);
  if (base_s && mtb_parse_hex(base_s, &raw.base))
    return cli_usage_error(&help, "--base '%s' is not a hexadecimal 32-bit value", base_s);
  if (master_s && mtb_parse_hex(master_s, &raw.master))
    return cli_usage_error(&help, "--master '%s' is not a hexadecimal 32-bit value", master_s);
  if (end_s && mtb_parse_hex(end_s, &end_pc))
    return cli_usage_error(&help, "--end-pc '%s' is not a hexadecimal 32-bit value", end_s);
  if (vec_s && mtb_parse_hex(vec_s, &vectors))
    return cli_usage_error(&help, "--vectors '%s' is not a hexadecimal 32-bit value", vec_s);
  raw.have_master = master_s != NULL;

  size_t len;
  const char *in_path = bundle_path ? bundle_path : raw_path;
  char *buf = cli_read_file(in_path, &len);
  if (!buf)
    return cli_error("%s: %s", in_path, strerror(errno));
  raw.buf = buf;
  raw.len = len;
  struct sonde_diag d;
  struct sonde_mtb_bundle bu;
  if (bundle_path) {
    if (sonde_mtb_bundle_parse(buf, len, &bu, &d) < 0) {
      free(buf);
      return cli_error("%s: %s", bundle_path, d.msg);
    }
    raw = bu.raw;
    raw_path = bundle_path;
  }
  struct sonde_mtb_packet *pk = NULL;
  size_t np = 0;
  struct sonde_sym *sym = NULL;
  struct sonde_mtb_history h = {0};
  FILE *o = NULL;
  rc = CLI_FAIL;
  if (sonde_mtb_packets(&raw, &pk, &np, &d) < 0) {
    cli_error("%s: %s", raw_path, d.msg);
    goto done;
  }
  if (sonde_sym_open(elf, &sym, &d) < 0) {
    cli_error("%s", d.msg);
    goto done;
  }
  int id_state = SONDE_MTB_ID_MATCH;
  if (bundle_path) {
    uint8_t id[64];
    size_t idn = sonde_sym_build_id(sym, id, sizeof id, NULL);
    id_state = sonde_mtb_build_id_check(&bu, id, idn);
    char bh[2 * SONDE_MTB_BUILD_ID_MAX + 1], eh[2 * SONDE_MTB_BUILD_ID_MAX + 1];
    hex_id(bh, bu.build_id, bu.build_id_len);
    hex_id(eh, id, idn < SONDE_MTB_BUILD_ID_MAX ? idn : SONDE_MTB_BUILD_ID_MAX);
    if (id_state == SONDE_MTB_ID_MISMATCH && !force) {
      cli_error("%s: build id %s is not %s's (%s): the bundle comes from another build of the "
                "firmware (--force decodes it anyway)",
                bundle_path, bh, elf, eh);
      goto done;
    }
    if (id_state == SONDE_MTB_ID_MISMATCH)
      cli_warn("%s: build id %s is not %s's (%s): decoding anyway (--force)", bundle_path, bh,
               elf, eh);
    else if (id_state == SONDE_MTB_ID_NONE_IN_BUNDLE)
      cli_warn("%s: the bundle carries no build id: cannot check that it comes from %s",
               bundle_path, elf);
    else if (id_state == SONDE_MTB_ID_NONE_IN_ELF)
      cli_warn("%s has no build id (link with -Wl,--build-id): cannot check that %s comes from it",
               elf, bundle_path);
  }
  struct sonde_mtb_options opt = {.end_pc = end_pc, .vectors = vectors};
  if (sonde_mtb_rebuild(pk, np, sym, &opt, &h, &d) < 0) {
    cli_error("%s", d.msg);
    goto done;
  }
  if (h.addresses && h.in_image * 2 < h.addresses) {
    cli_error("%s: only %zu of the %zu code addresses in the %zu packets of %s are in its code: "
              "wrong ELF, or not an MTB dump?",
              elf, h.in_image, h.addresses, np, raw_path);
    goto done;
  }
  if (h.nissues * 2 > np) {
    cli_error("%s: %zu of the %zu packets of %s are inconsistent with its code (the first: packet "
              "%u, %s): wrong ELF, or not an MTB dump?",
              elf, h.nissues, np, raw_path, h.issues[0].packet, h.issues[0].why);
    goto done;
  }
  for (size_t i = 0; i < h.nissues && i < 20; i++)
    cli_warn("%s: packet %u (offset 0x%x): inconsistent: %s (0x%08x -> 0x%08x)", raw_path,
             h.issues[i].packet, h.issues[i].packet < np ? pk[h.issues[i].packet].offset : 0,
             h.issues[i].why, h.issues[i].from, h.issues[i].to);
  if (h.nissues > 20)
    cli_warn("%s: %zu more inconsistent packets", raw_path, h.nissues - 20);
  o = cli_open_output(output, fmt == OUT_PERFETTO);
  if (!o)
    goto done;
  /* --limit: the first event shown so that <n> of the listed kind follow. */
  size_t first = 0;
  if (limit) {
    uint64_t seen = 0;
    for (size_t i = h.n; i-- > 0;) {
      bool counted = insns ? h.ev[i].kind == SONDE_MTB_INSN : h.ev[i].kind != SONDE_MTB_INSN;
      if (counted && ++seen == limit) {
        first = i;
        break;
      }
    }
  }
  size_t entries = 0, returns = 0, chains = 0;
  for (size_t i = 0; i < h.n; i++) {
    entries += h.ev[i].kind == SONDE_MTB_EXC_ENTRY;
    returns += h.ev[i].kind == SONDE_MTB_EXC_RETURN && !h.ev[i].tail_chain;
    chains += h.ev[i].kind == SONDE_MTB_EXC_RETURN && h.ev[i].tail_chain;
  }
  if (fmt == OUT_PERFETTO) {
    struct fault_view v;
    char label[64];
    struct sonde_mtb_mark mark = {0};
    if (bundle_path) {
      fault_view(sym, &bu, &h, &v);
      if (bu.ipsr)
        snprintf(label, sizeof label, "fault: exception %u %s", bu.ipsr, exc_name(bu.ipsr));
      else
        snprintf(label, sizeof label, "halted");
      mark = (struct sonde_mtb_mark){label, v.pc, v.words};
    }
    if (sonde_mtb_write_perfetto(o, output ? output : "<stdout>", &h, first, sym, &mark, &d) < 0) {
      cli_error("%s", d.msg);
      cli_close_output(o, output);
      goto done;
    }
    rc = cli_close_output(o, output);
    goto done;
  }
  if (fmt == OUT_TEXT)
    fprintf(o, "%zu packets%s, %zu instructions, %zu exception entries, %zu returns, %zu "
               "tail-chains, %zu inconsistent; oldest first\n",
            np, (raw.position & 4) ? " (buffer wrapped)" : "", h.instructions, entries, returns,
            chains, h.nissues);
  else if (fmt == OUT_CSV)
    fputs("kind,event,packet,pc,function,file,line,dst,dst_function,dst_file,dst_line,"
          "exc_return\n", o);
  for (size_t i = first; i < h.n; i++)
    if (insns || h.ev[i].kind != SONDE_MTB_INSN)
      print_event(o, fmt, sym, &h.ev[i], insns);
  if (bundle_path)
    print_fault(o, fmt, sym, &bu, &h, id_state);
  rc = cli_close_output(o, output);
done:
  sonde_mtb_history_free(&h);
  sonde_sym_free(sym);
  free(pk);
  free(buf);
  return rc;
}

int cmd_mtb(int argc, char **argv)
{
  static const struct cli_command_help help = {
      "sonde mtb decode [options]\nsonde mtb fetch [options]",
      "Micro Trace Buffer (Cortex-M0+/M33 MTB) post-mortem decoding (docs/mtb.md).\n"
      "  decode   branch or instruction history from a bundle, or a buffer dump and POSITION/MASTER\n"
      "  fetch    read the MTB of a live target through a GDB server or OpenOCD into a bundle\n"
      "'sonde mtb <subcommand> --help' shows its options."};
  if (argc >= 2 && !strcmp(argv[1], "fetch")) {
    cli_command_name = "mtb fetch";
    return cmd_mtb_fetch(argc - 1, argv + 1);
  }
  if (argc >= 2 && !strcmp(argv[1], "decode")) {
    cli_command_name = "mtb decode";
    return mtb_decode(argc - 1, argv + 1);
  }
  int n;
  int rc = cli_parse(argc, argv, NULL, &help, &n);
  if (rc)
    return rc < 0 ? CLI_OK : rc;
  if (n >= 1)
    return cli_usage_error(&help, "unknown subcommand '%s'", argv[0]);
  return cli_usage_error(&help, "missing subcommand (decode or fetch)");
}
