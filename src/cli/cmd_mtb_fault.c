/* `sonde mtb decode`: the fault a bundle recorded (the faulting instruction,
 * exception, fault status in words, registers, build id) as text, json or
 * csv, after the history (src/cli/cmd_mtb.c). */
#include "cli.h"

#include <stdio.h>
#include <string.h>

#include "cmd_mtb.h"
#include "sonde/mtb.h"
#include "sonde/sym.h"

const char *mtb_exc_name(uint32_t ipsr)
{
  static const char *n[] = {"", "Reset", "NMI", "HardFault", "MemManage", "BusFault",
                            "UsageFault", "SecureFault"};
  return ipsr < 8 ? n[ipsr] : ipsr == 11 ? "SVCall" : ipsr == 14 ? "PendSV"
         : ipsr == 15 ? "SysTick" : ipsr >= 16 ? "IRQ" : "";
}


void mtb_fault_view(struct sonde_sym *sym, const struct sonde_mtb_bundle *b,
                       const struct sonde_mtb_history *h, struct mtb_fault_place *v)
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

void mtb_hex_id(char *buf, const uint8_t *id, size_t n)
{
  for (size_t i = 0; i < n; i++)
    sprintf(buf + 2 * i, "%02x", id[i]);
  buf[2 * n] = 0;
}

/* The fault a bundle recorded: where (the stacked PC), which exception, the
 * fault status in words, the registers. */
/* The deepest call chain of the history: "run_task > recurse x5" (text), or
 * a json array of names. */
static void print_chain(FILE *o, int fmt, struct sonde_sym *sym, const struct sonde_mtb_history *h)
{
  struct sonde_mtb_chain c;
  if (sonde_mtb_deepest_chain(h, sym, &c) < 0 || !c.n) {
    if (fmt == MTB_OUT_JSON)
      fputs(",\"deepest_chain\":[]", o);
    return;
  }
  char name[32];
  if (fmt == MTB_OUT_JSON) {
    fputs(",\"deepest_chain\":[", o);
    for (size_t i = 0; i < c.n; i++) {
      const char *n = sonde_sym_name(sym, c.fn[i], NULL);
      snprintf(name, sizeof name, "0x%08x", c.fn[i]);
      if (i)
        fputc(',', o);
      cli_json_string(o, n ? n : name);
    }
    fputc(']', o);
  } else {
    fprintf(o, "  deepest call chain in the window (%zu frames, outermost first): ", c.n);
    for (size_t i = 0; i < c.n;) {
      size_t k = i;
      while (k < c.n && c.fn[k] == c.fn[i])
        k++;
      const char *n = sonde_sym_name(sym, c.fn[i], NULL);
      snprintf(name, sizeof name, "0x%08x", c.fn[i]);
      fprintf(o, "%s%s", i ? " > " : "", n ? n : name);
      if (k - i > 1)
        fprintf(o, " x%zu", k - i);
      i = k;
    }
    fputc('\n', o);
  }
  sonde_mtb_chain_free(&c);
}

void mtb_print_fault(FILE *o, int fmt, struct sonde_sym *sym, const struct sonde_mtb_bundle *b,
                        const struct sonde_mtb_history *h, int id_state)
{
  struct mtb_fault_place v;
  mtb_fault_view(sym, b, h, &v);
  const struct sonde_mtb_event *from = v.from;
  uint32_t pc = v.pc;
  if (fmt == MTB_OUT_JSON) {
    fprintf(o, "{\"kind\":\"%s\"", b->ipsr ? "fault" : "halt");
    mtb_json_where(o, sym, "", pc);
    fprintf(o, ",\"ipsr\":%u,\"exception\":\"%s\",\"exc_return\":%u,\"cfsr\":%u,\"hfsr\":%u,"
               "\"mmfar\":%u,\"bfar\":%u,\"r0\":%u,\"r1\":%u,\"r2\":%u,\"r3\":%u,\"r12\":%u,"
               "\"lr\":%u,\"stacked_pc\":%u,\"xpsr\":%u,\"sp\":%u,\"pc_from_trace\":%s,\"status\":",
            b->ipsr, mtb_exc_name(b->ipsr), b->exc_return, b->cfsr, b->hfsr, b->mmfar, b->bfar,
            b->frame[0], b->frame[1], b->frame[2], b->frame[3], b->frame[4], b->frame[5],
            b->frame[6], b->frame[7], b->stack_addr, v.from_trace ? "true" : "false");
    cli_json_string(o, v.words);
    print_regs_json(o, b);
    print_chain(o, fmt, sym, h);
    char id[2 * SONDE_MTB_BUILD_ID_MAX + 1];
    mtb_hex_id(id, b->build_id, b->build_id_len);
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
      mtb_json_where(o, sym, "from_", from->pc);
    }
    fputs("}\n", o);
    return;
  }
  if (fmt == MTB_OUT_CSV) {
    fprintf(o, "%s,%u,", b->ipsr ? "fault" : "halt", b->ipsr);
    mtb_csv_where(o, sym, pc);
    if (from)
      mtb_csv_where(o, sym, from->pc);
    else
      fputs(",,,,", o);
    fprintf(o, ",0x%08x\n", b->exc_return);
    return;
  }
  if (b->ipsr)
    fprintf(o, "fault: exception %u%s%s%s at ", b->ipsr, *mtb_exc_name(b->ipsr) ? " (" : "",
            mtb_exc_name(b->ipsr), *mtb_exc_name(b->ipsr) ? ")" : "");
  else /* `sonde mtb fetch` of a live target */
    fputs("halted at ", o);
  mtb_text_where(o, sym, pc);
  struct sonde_sym_insn in;
  if (sonde_sym_disasm(sym, pc, &in) == 0)
    fprintf(o, "  %s %s", in.mnemonic, in.operands);
  if (from) {
    fputs(" (not in the firmware)\n  jumped there from ", o);
    mtb_text_where(o, sym, from->pc);
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
    print_chain(o, fmt, sym, h);
    return;
  }
  fprintf(o, "  stacked r0 0x%08x r1 0x%08x r2 0x%08x r3 0x%08x r12 0x%08x lr 0x%08x xpsr "
             "0x%08x; sp 0x%08x, EXC_RETURN 0x%08x\n",
          b->frame[0], b->frame[1], b->frame[2], b->frame[3], b->frame[4], b->frame[5],
          b->frame[7], b->stack_addr, b->exc_return);
  print_regs_text(o, b);
  if (!v.from_trace) {
    fputs("  lr: ", o);
    mtb_text_where(o, sym, b->frame[5] & ~1u);
    fputc('\n', o);
  }
  print_chain(o, fmt, sym, h);
}
