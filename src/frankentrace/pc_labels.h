/* Symbol+offset and disassembly text per PC, cached: the CSV writer and the
 * reports ask for the same few thousand PCs again and again. */
#ifndef SONDE_FT_PC_LABELS_H
#define SONDE_FT_PC_LABELS_H

#include <stdint.h>

#include "sonde/sym.h"

struct ft_labels;
struct ft_labels *ft_labels_new(struct sonde_sym *sym); /* sym may be NULL */
void ft_labels_free(struct ft_labels *l);
/* "func+0x12" ("" without symbols) and "ldr r2, [r3, #0x1c]" ("" if it does not
 * decode); valid until the labels are freed. NULL only when out of memory. */
const char *ft_labels_symbol(struct ft_labels *l, uint32_t pc);
const char *ft_labels_insn(struct ft_labels *l, uint32_t pc);

#endif
