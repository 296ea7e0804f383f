/* Shared by test_dsp.c and test_fp*.c: a hand-built VM (no decoder needed)
 * next to a Unicorn reference, and single-instruction differential runs.
 *
 * Both sides get the same code address (a fresh 8-byte slot from TU_CODE for
 * each new instruction; the VM only needs it in r15) and the same RAM window
 * at UREF_RAM_BASE; the VM executes `insn` through vm_exec_dsp/vm_exec_fp
 * directly, Unicorn executes it from memory. */
#ifndef SONDE_TEST_FPDSP_UTIL_H
#define SONDE_TEST_FPDSP_UTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "vm/exec_ext.h"
#include "vm/nvic.h"
#include "vm/vm_internal.h"

#include "unicorn_ref.h"

#define TU_CODE (UREF_CODE_BASE + 0x1000u)
#define TU_SLOTS 0xe000u /* 8-byte code slots from TU_CODE */
#define TU_SEQ_CODE (UREF_CODE_BASE + 0x80000u)
#define TU_SEQ_SLOTS 0x700u /* 256-byte slots for sequences */
#define TU_SEQ_END UREF_STOP /* where every sequence branches to */

struct tu {
  struct sonde_vm *vm;
  struct uref *u;
  uint64_t rng;
  unsigned long cases, skipped;
  uint32_t last_insn; /* already at `pc` in Unicorn (saves a retranslation) */
  bool have_last;
  uint32_t pc;        /* where the current instruction is, in both */
  unsigned slot;      /* next fresh code slot */
  unsigned seq_slot;  /* next fresh sequence slot */
  enum uref_core core;
  unsigned long load; /* work since the engine was created (see tu_renew) */
};

static inline uint64_t tu_rand64(struct tu *t)
{
  /* splitmix64: a fixed seed gives the same cases every run */
  uint64_t z = (t->rng += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static inline uint32_t tu_rand(struct tu *t)
{
  return (uint32_t)(tu_rand64(t) >> 32);
}

static inline unsigned tu_below(struct tu *t, unsigned n)
{
  return (unsigned)(tu_rand64(t) % n);
}

/* Number of random cases: `base` per CI run, times SONDE_SOAK if set. */
static inline unsigned long tu_soak(unsigned long base)
{
  const char *s = getenv("SONDE_SOAK");
  long k = s ? atol(s) : 0;
  return k > 1 ? base * (unsigned long)k : base;
}

static inline bool tu_init(struct tu *t, enum uref_core core, bool dsp, bool fpu, bool v8m)
{
  memset(t, 0, sizeof *t);
  t->rng = 0x5eed5eedull;
  t->vm = calloc(1, sizeof *t->vm);
  if (!t->vm)
    return false;
  vm_bus_init(&t->vm->bus);
  if (vm_bus_add_region(&t->vm->bus, "ram", UREF_RAM_BASE, UREF_RAM_SIZE, 0, 0, 0) != 0)
    return false;
  t->vm->has_v7m = true;
  t->vm->has_dsp = dsp;
  t->vm->has_fpu = fpu;
  t->vm->has_v8m = v8m;
  vm_nvic_prigroup_changed(t->vm); /* the group-priority mask a reset sets (nvic.h) */
  t->vm->sys.cpacr = 0xfu << 20; /* CP10/CP11 full access */
  t->core = core;
  t->u = uref_new(core);
  return t->u != NULL;
}

static inline void tu_free(struct tu *t)
{
  uref_free(t->u);
  if (t->vm) {
    vm_bus_free(&t->vm->bus);
    free(t->vm);
  }
}

static inline void tu_to_vm(struct tu *t, const struct uref_state *st)
{
  memcpy(t->vm->cpu.r, st->r, sizeof st->r);
  t->vm->cpu.r[15] = t->pc;
  t->vm->cpu.apsr = st->apsr;
  memcpy(t->vm->cpu.s, st->s, sizeof st->s);
  t->vm->cpu.fpscr = st->fpscr;
}

static inline void tu_from_vm(struct tu *t, struct uref_state *st)
{
  memcpy(st->r, t->vm->cpu.r, sizeof st->r);
  st->apsr = t->vm->cpu.apsr;
  memcpy(st->s, t->vm->cpu.s, sizeof st->s);
  st->fpscr = t->vm->cpu.fpscr;
}

/* Run `insn` on both from `in`. Returns the VM's vm_exec_* result; *ref and
 * *got receive the two final states (ref->r[15] is Unicorn's next PC, got's
 * is set to TU_CODE + 4 when the VM completed the instruction). `ref_ok`
 * says whether Unicorn completed it. */
static inline int tu_run(struct tu *t, uint32_t insn, bool fp, const struct uref_state *in,
                         struct uref_state *ref, struct uref_state *got, bool *ref_ok)
{
  if (!t->have_last || t->last_insn != insn) {
    /* Each new instruction goes to a fresh slot (no invalidation: see
     * uref_write_mem_fresh); after the last slot, one flush and wrap. */
    if (t->slot == TU_SLOTS) {
      uref_flush_code(t->u);
      t->slot = 0;
    }
    t->pc = TU_CODE + 8 * t->slot++;
    uint8_t code[4] = {(uint8_t)(insn >> 16), (uint8_t)(insn >> 24), (uint8_t)insn,
                       (uint8_t)(insn >> 8)};
    uref_write_mem_fresh(t->u, t->pc, code, 4);
    t->last_insn = insn;
    t->have_last = true;
  }
  uref_set_state(t->u, in);
  *ref_ok = uref_run(t->u, t->pc, 1) == 0;
  uref_get_state(t->u, ref);
  tu_to_vm(t, in);
  int rc = fp ? vm_exec_fp(t->vm, insn) : vm_exec_dsp(t->vm, insn);
  tu_from_vm(t, got);
  if (rc > 0)
    got->r[15] = t->pc + 4;
  t->cases++;
  return rc;
}

/* Unicorn 2.0.1 keeps growing (translated code, up to gigabytes) in long
 * runs; a new engine every so often bounds the memory. `cost` is the work of
 * the next run (1 per instruction). Call it before setting up a case (memory
 * written to the old engine is gone). */
static inline void tu_renew(struct tu *t, unsigned cost)
{
  t->load += cost;
  if (t->load < 20000)
    return;
  uref_free(t->u);
  t->u = uref_new(t->core);
  if (!t->u) {
    fprintf(stderr, "cannot recreate the Unicorn engine\n");
    exit(1);
  }
  t->load = cost;
  t->slot = t->seq_slot = 0;
  t->have_last = false;
}

/* A fresh 256-byte code address for a sequence, written without
 * invalidation (see uref_write_mem_fresh). */
static inline uint32_t tu_seq_code(struct tu *t, const uint16_t *hw, unsigned n)
{
  if (t->seq_slot == TU_SEQ_SLOTS) {
    uref_flush_code(t->u);
    t->seq_slot = 0;
    t->slot = 0;
    t->have_last = false;
  }
  uint32_t at = TU_SEQ_CODE + 256 * t->seq_slot++;
  uref_write_mem_fresh(t->u, at, hw, 2 * n); /* little-endian host */
  return at;
}

/* First difference between two states, as text in buf; false if equal. */
static inline bool tu_diff(const struct uref_state *a, const struct uref_state *b, bool fp,
                           char *buf, size_t len)
{
  for (int i = 0; i < 16; i++)
    if (a->r[i] != b->r[i]) {
      snprintf(buf, len, "r%d vm 0x%08x ref 0x%08x", i, a->r[i], b->r[i]);
      return true;
    }
  if (a->apsr != b->apsr) {
    snprintf(buf, len, "apsr vm 0x%08x ref 0x%08x", a->apsr, b->apsr);
    return true;
  }
  if (!fp)
    return false;
  for (int i = 0; i < 32; i++)
    if (a->s[i] != b->s[i]) {
      snprintf(buf, len, "s%d vm 0x%08x ref 0x%08x", i, a->s[i], b->s[i]);
      return true;
    }
  if (a->fpscr != b->fpscr) {
    snprintf(buf, len, "fpscr vm 0x%08x ref 0x%08x", a->fpscr, b->fpscr);
    return true;
  }
  return false;
}

#endif
