/* `sonde mtb` subcommands in other files. */
#ifndef SONDE_CMD_MTB_H
#define SONDE_CMD_MTB_H
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sonde/mtb.h"
#include "sonde/sym.h"

enum { MTB_OUT_TEXT, MTB_OUT_JSON, MTB_OUT_CSV, MTB_OUT_PERFETTO };

/* cmd_mtb_print.c: "name+0x4 (file.c:12)" or "0x00001234" (text); the
 * pc/function/file/line fields with a prefix (json); the csv columns. */
void mtb_text_where(FILE *o, struct sonde_sym *sym, uint32_t addr);
void mtb_json_where(FILE *o, struct sonde_sym *sym, const char *prefix, uint32_t addr);
void mtb_csv_where(FILE *o, struct sonde_sym *sym, uint32_t addr);
/* One history event in format fmt (MTB_OUT_TEXT: with disassembly when disasm). */
void mtb_print_event(FILE *o, int fmt, struct sonde_sym *sym, const struct sonde_mtb_event *e,
                     bool disasm);

/* cmd_mtb_fault.c */
/* Where the fault happened: the stacked PC, unless an ARMv8-M stack-limit
 * fault (STKOF) left the frame unpushed and the trace says otherwise. */
struct mtb_fault_place {
  uint32_t pc;
  bool from_trace;                      /* pc comes from the trace, not the frame */
  const struct sonde_mtb_event *from;   /* wild PC: the branch that went there */
  char words[256];
};
/* The fault view of bundle b over history h. */
void mtb_fault_view(struct sonde_sym *sym, const struct sonde_mtb_bundle *b,
                    const struct sonde_mtb_history *h, struct mtb_fault_place *v);
/* "HardFault", "SysTick", ... for an IPSR value ("" when unnamed). */
const char *mtb_exc_name(uint32_t ipsr);
/* n bytes as lowercase hex into buf (2n + 1 bytes). */
void mtb_hex_id(char *buf, const uint8_t *id, size_t n);
/* The fault block after the history; id_state from sonde_mtb_build_id_check(). */
void mtb_print_fault(FILE *o, int fmt, struct sonde_sym *sym, const struct sonde_mtb_bundle *b,
                     const struct sonde_mtb_history *h, int id_state);


int cmd_mtb_fetch(int argc, char **argv);
/* A 32-bit hexadecimal value, 0x optional: 0, or -1 when s is not one. */
int mtb_parse_hex(const char *s, uint32_t *out);
#endif
