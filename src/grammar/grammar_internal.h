/* Internal layout of struct sonde_grammar: the online builder (build.c) and
 * the frozen form every query works on (grammar.c, cycles.c). */
#ifndef SONDE_GRAMMAR_INTERNAL_H
#define SONDE_GRAMMAR_INTERNAL_H

#include "sonde/grammar.h"

struct gbuilder; /* build.c */

struct sonde_grammar {
  enum sonde_grammar_algo algo;
  bool has_lh;
  uint32_t lh;
  bool finished; /* frozen form valid */
  int sticky;    /* first error, sticky */
  struct sonde_diag diag;
  struct gbuilder *b; /* while compressing */
  uint64_t input_len;

  /* Frozen form: rule i's body is elems[off[i] .. off[i+1]). */
  size_t nrules;
  size_t *off;
  struct sonde_grammar_elem *elems;
  uint8_t *is_cycle;
  uint64_t *len;   /* expansion length per rule */
  uint64_t *hash;  /* expansion hash per rule (lazily computed; NULL until needed) */
};

/* build.c */
struct gbuilder *gb_new(enum sonde_grammar_algo algo);
void gb_free(struct gbuilder *b);
void gb_set_lh(struct gbuilder *b, uint32_t lh);
void gb_set_cache(struct gbuilder *b, bool on);
/* Take a repeated flat rule at once (same grammar; on by default). */
void gb_set_repeat_skip(struct gbuilder *b, bool on);
uint64_t gb_skipped(const struct gbuilder *b); /* input symbols appended that way */
/* Debug check mode: verify the invariants after every `every`-th symbol (0: off). */
void gb_set_check(struct gbuilder *b, uint64_t every);
int gb_feed(struct gbuilder *b, const uint32_t *syms, size_t n);
/* Close the last cycle and write the frozen form into g. */
int gb_freeze(struct gbuilder *b, struct sonde_grammar *g);
const char *gb_error(const struct gbuilder *b);

/* grammar.c */
int grammar_compute_lengths(struct sonde_grammar *g);
int grammar_compute_hashes(struct sonde_grammar *g);
/* Hash composition: H(xy) = H(x) * B^|y| + H(y) (mod 2^64). */
uint64_t grammar_hash_pow(uint64_t n);
#define GRAMMAR_HASH_BASE 0x100000001b3ull

#endif
