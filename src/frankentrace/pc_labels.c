/* A PC -> (symbol+offset, disassembly) cache: open addressing on the PC. */
#include "pc_labels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct entry {
  uint32_t pc;
  bool used;
  char *sym, *insn;
};

struct ft_labels {
  struct sonde_sym *sym;
  struct entry *e;
  size_t cap, used;
};

struct ft_labels *ft_labels_new(struct sonde_sym *sym)
{
  struct ft_labels *l = calloc(1, sizeof *l);
  if (!l)
    return NULL;
  l->sym = sym;
  l->cap = 1024;
  l->e = calloc(l->cap, sizeof *l->e);
  if (!l->e) {
    free(l);
    return NULL;
  }
  return l;
}

void ft_labels_free(struct ft_labels *l)
{
  if (!l)
    return;
  for (size_t i = 0; i < l->cap; i++) {
    free(l->e[i].sym);
    free(l->e[i].insn);
  }
  free(l->e);
  free(l);
}

static size_t slot(const struct ft_labels *l, uint32_t pc)
{
  size_t i = (size_t)((pc >> 1) * 2654435761u) & (l->cap - 1);
  while (l->e[i].used && l->e[i].pc != pc)
    i = (i + 1) & (l->cap - 1);
  return i;
}

static bool grow(struct ft_labels *l)
{
  struct ft_labels n = {l->sym, calloc(2 * l->cap, sizeof *l->e), 2 * l->cap, l->used};
  if (!n.e)
    return false;
  for (size_t i = 0; i < l->cap; i++)
    if (l->e[i].used)
      n.e[slot(&n, l->e[i].pc)] = l->e[i];
  free(l->e);
  *l = n;
  return true;
}

static struct entry *lookup(struct ft_labels *l, uint32_t pc)
{
  size_t i = slot(l, pc);
  if (l->e[i].used)
    return &l->e[i];
  if (2 * (l->used + 1) > l->cap) {
    if (!grow(l))
      return NULL;
    i = slot(l, pc);
  }
  char sym[256] = "", insn[200] = "";
  if (l->sym) {
    if (sonde_sym_name(l->sym, pc, NULL))
      sonde_sym_format(l->sym, pc, sym, sizeof sym);
    struct sonde_sym_insn d;
    if (sonde_sym_disasm(l->sym, pc, &d) == 0)
      snprintf(insn, sizeof insn, d.operands[0] ? "%s %s" : "%s", d.mnemonic, d.operands);
  }
  struct entry *e = &l->e[i];
  e->sym = strdup(sym);
  e->insn = strdup(insn);
  if (!e->sym || !e->insn) {
    free(e->sym);
    free(e->insn);
    e->sym = e->insn = NULL;
    return NULL;
  }
  e->pc = pc;
  e->used = true;
  l->used++;
  return e;
}

const char *ft_labels_symbol(struct ft_labels *l, uint32_t pc)
{
  struct entry *e = lookup(l, pc);
  return e ? e->sym : NULL;
}

const char *ft_labels_insn(struct ft_labels *l, uint32_t pc)
{
  struct entry *e = lookup(l, pc);
  return e ? e->insn : NULL;
}
