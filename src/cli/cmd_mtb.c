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
  int fmt = !strcmp(format, "text") ? MTB_OUT_TEXT : !strcmp(format, "json") ? MTB_OUT_JSON
            : !strcmp(format, "csv") ? MTB_OUT_CSV : !strcmp(format, "perfetto") ? MTB_OUT_PERFETTO : -1;
  if (fmt < 0)
    return cli_usage_error(&help, "unknown --format '%s' (text, json, csv or perfetto)", format);
  if (fmt == MTB_OUT_PERFETTO && !output && isatty(STDOUT_FILENO))
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
    mtb_hex_id(bh, bu.build_id, bu.build_id_len);
    mtb_hex_id(eh, id, idn < SONDE_MTB_BUILD_ID_MAX ? idn : SONDE_MTB_BUILD_ID_MAX);
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
  o = cli_open_output(output, fmt == MTB_OUT_PERFETTO);
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
  if (fmt == MTB_OUT_PERFETTO) {
    struct mtb_fault_place v;
    char label[64];
    struct sonde_mtb_mark mark = {0};
    if (bundle_path) {
      mtb_fault_view(sym, &bu, &h, &v);
      if (bu.ipsr)
        snprintf(label, sizeof label, "fault: exception %u %s", bu.ipsr, mtb_exc_name(bu.ipsr));
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
  if (fmt == MTB_OUT_TEXT)
    fprintf(o, "%zu packets%s, %zu instructions, %zu exception entries, %zu returns, %zu "
               "tail-chains, %zu inconsistent; oldest first\n",
            np, (raw.position & 4) ? " (buffer wrapped)" : "", h.instructions, entries, returns,
            chains, h.nissues);
  else if (fmt == MTB_OUT_CSV)
    fputs("kind,event,packet,pc,function,file,line,dst,dst_function,dst_file,dst_line,"
          "exc_return\n", o);
  for (size_t i = first; i < h.n; i++)
    if (insns || h.ev[i].kind != SONDE_MTB_INSN)
      mtb_print_event(o, fmt, sym, &h.ev[i], insns);
  if (bundle_path)
    mtb_print_fault(o, fmt, sym, &bu, &h, id_state);
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
