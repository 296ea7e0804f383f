/* Sonde: grammar compression of execution traces (src/grammar).
 *
 * Implements the r-grammars of Amiar, Delahaye, Falcone, du Bousquet,
 * "Compressing Microcontroller Execution Traces to Assist System Analysis"
 * (IESS 2013; shared/reference/001): Sequitur (Nevill-Manning & Witten), its
 * extension ReSequitur (r-strings: every body element is a symbol with a
 * repetition count, section 3.2, Fig. 2) and Cyclitur (section 3.3, Fig. 3:
 * the trace is cut into cycles at a loop header, each cycle is compressed with
 * rules shared across cycles, then the sequence of cycles is compressed).
 * Sizes follow section 5.2: Size(G) = number of body elements + number of
 * rules, Comp(G) = Size(G) / |w|. docs/grammar.md explains it all for users;
 * the binary grammar file is specified in docs/formats.md.
 *
 * Symbols are 32-bit values (PCs, basic blocks, functions, event ids). The
 * library never names symbols itself: printing takes a naming callback.
 *
 * Life cycle: sonde_grammar_new(algo) -> [set_loop_header] -> feed()* ->
 * finish() -> queries, or sonde_grammar_parse() of a binary grammar -> queries.
 * Errors are negative SONDE_E_* with a detail in sonde_grammar_error_detail(). */
#ifndef SONDE_GRAMMAR_H
#define SONDE_GRAMMAR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sonde/common.h"

#ifdef __cplusplus
extern "C" {
#endif

enum sonde_grammar_algo {
  SONDE_GRAMMAR_SEQUITUR = 0,   /* plain Sequitur: every count is 1 */
  SONDE_GRAMMAR_RESEQUITUR = 1, /* r-strings: no two equal neighbours, a^n a^m -> a^(n+m) */
  SONDE_GRAMMAR_CYCLITUR = 2,   /* ReSequitur per cycle, then over the cycles */
};

/* Name of an algorithm ("sequitur", ...) and the reverse; -1 if unknown. */
const char *sonde_grammar_algo_name(enum sonde_grammar_algo algo);
int sonde_grammar_algo_parse(const char *name);

struct sonde_grammar; /* opaque */

/* A compressor for `algo`. Returns NULL when out of memory. */
struct sonde_grammar *sonde_grammar_new(enum sonde_grammar_algo algo);
/* Cyclitur only, before the first feed(): the loop header symbol. */
int sonde_grammar_set_loop_header(struct sonde_grammar *g, uint32_t loop_header);
/* Cyclitur, before the first feed(): a cycle equal to an earlier one becomes
 * that cycle's symbol without running ReSequitur on it again (default on;
 * docs/grammar.md, "Cycle cache"). Off runs Fig. 3 literally, cycle by cycle. */
int sonde_grammar_set_cycle_cache(struct sonde_grammar *g, bool on);
/* When the input repeats the expansion of a rule of terminals, take the
 * repeat at once instead of symbol by symbol where that provably gives the
 * same grammar (all three algorithms; on by default; src/grammar/build.c,
 * repeat_rule). Off runs every symbol. Before input. */
int sonde_grammar_set_repeat_skip(struct sonde_grammar *g, bool on);
/* Debug check mode (sequitur, resequitur): after every `every`-th input
 * symbol (1: each one; 0: off), check digram uniqueness, rule utility and the
 * reference counts on the whole live grammar; feed() fails with
 * SONDE_E_FORMAT and a message naming the symbol and the violation. Costs
 * O(|G| log |G|) per check. Also set by SONDE_GRAMMAR_CHECK=<every>. */
int sonde_grammar_set_check(struct sonde_grammar *g, uint64_t every);
/* Append symbols to the input string w (online: the grammar is kept valid). */
int sonde_grammar_feed(struct sonde_grammar *g, const uint32_t *syms, size_t n);
/* End of input: closes the last cycle and freezes the grammar (rules are then
 * numbered 0 = S, 1.. in breadth-first order of first use from S). */
int sonde_grammar_finish(struct sonde_grammar *g);
void sonde_grammar_free(struct sonde_grammar *g); /* NULL is a no-op */
const char *sonde_grammar_error_detail(const struct sonde_grammar *g);

/* ---- queries on a finished (or parsed) grammar ------------------------- */

struct sonde_grammar_elem {
  uint32_t sym;   /* terminal value, or rule number when is_rule */
  uint32_t count; /* repetition exponent, >= 1 (always 1 for Sequitur) */
  bool is_rule;
};

enum sonde_grammar_algo sonde_grammar_algo(const struct sonde_grammar *g);
bool sonde_grammar_has_loop_header(const struct sonde_grammar *g);
uint32_t sonde_grammar_loop_header(const struct sonde_grammar *g);
uint64_t sonde_grammar_input_length(const struct sonde_grammar *g); /* |w| */
size_t sonde_grammar_rule_count(const struct sonde_grammar *g);     /* |Gamma|, S included */
/* Body of rule `rule` (0 = S): *elems points into the grammar (valid until free). */
size_t sonde_grammar_rule_body(const struct sonde_grammar *g, size_t rule,
                               const struct sonde_grammar_elem **elems);
/* Cyclitur: whether the rule stands for one whole cycle. */
bool sonde_grammar_rule_is_cycle(const struct sonde_grammar *g, size_t rule);
/* Length of the expansion of a rule. */
uint64_t sonde_grammar_rule_length(const struct sonde_grammar *g, size_t rule);
uint64_t sonde_grammar_size(const struct sonde_grammar *g);  /* Size(G) */
double sonde_grammar_comp(const struct sonde_grammar *g);    /* Comp(G); 0 for empty w */
size_t sonde_grammar_distinct_terminals(const struct sonde_grammar *g);

/* Expand to the original string: `emit` receives consecutive chunks and may
 * return non-zero to stop (that value is returned). */
typedef int (*sonde_grammar_emit_fn)(void *ctx, const uint32_t *syms, size_t n);
int sonde_grammar_expand(const struct sonde_grammar *g, sonde_grammar_emit_fn emit, void *ctx);

/* Check the grammar against the paper's properties for its algorithm: digram
 * uniqueness (Property 1; for Sequitur, non-overlapping occurrences), rule
 * utility (Property 2; Cyclitur's cycle rules are exempt) and, for ReSequitur
 * and Cyclitur, no consecutive repetition (Property 3). Returns 0 or
 * SONDE_E_FORMAT with the first violation in the error detail. */
int sonde_grammar_check_properties(struct sonde_grammar *g);

/* Names terminal `sym` into buf (NUL-terminated, at most len bytes); returns
 * non-zero when it named it, 0 to fall back to 0x%x. */
typedef int (*sonde_grammar_name_fn)(void *ctx, uint32_t sym, char *buf, size_t len);

/* Print the grammar in the paper's notation, one rule per line:
 *   S -> c A^4 B
 * Rules are named S, A..Z when there are at most 27, else S, R1, R2, ...;
 * cycle rules are marked with a trailing "  # cycle". */
int sonde_grammar_print(const struct sonde_grammar *g, FILE *out, sonde_grammar_name_fn name,
                        void *ctx);
/* The printed name of rule `rule` ("S", "A", "R17"). */
void sonde_grammar_rule_name(const struct sonde_grammar *g, size_t rule, char *buf, size_t len);

/* ---- binary grammar file (docs/formats.md, "Grammar file") ------------- */

/* Serialize into a malloc'ed buffer (*out, *len); the caller frees it. */
int sonde_grammar_serialize(const struct sonde_grammar *g, uint8_t **out, size_t *len);
/* Parse and validate a grammar file held in memory. On failure *out is NULL
 * and `diag` (if given) names `name` and the byte offset. */
int sonde_grammar_parse(const void *data, size_t len, const char *name,
                        struct sonde_grammar **out, struct sonde_diag *diag);
#define SONDE_GRAMMAR_MAGIC "SONDEGRM"

/* ---- cycle analysis on the compressed form ------------------------------ */

/* One distinct cycle. Cycles with equal expansions (in one grammar) are one. */
struct sonde_grammar_cycle {
  uint32_t sym;        /* its symbol: rule number (is_rule) or a terminal */
  bool is_rule;
  uint64_t count;      /* occurrences in the trace */
  uint64_t length;     /* symbols in one occurrence */
  uint64_t first;      /* index (0-based) of its first occurrence among cycles */
  uint64_t first_pos;  /* offset of its first symbol in w */
  uint32_t first_sym;  /* the first terminal of the cycle (the loop header, except maybe cycle 0) */
  uint64_t hash;       /* 64-bit hash of the expansion: identity across grammars */
};

/* The distinct cycles of a Cyclitur grammar (any grammar: the top level of S
 * is then taken as the cycles), sorted by count descending, then first
 * occurrence. *out is malloc'ed (free it); *total_cycles gets |C(w, lh)|. */
int sonde_grammar_cycles(struct sonde_grammar *g, struct sonde_grammar_cycle **out, size_t *n,
                         uint64_t *total_cycles);
/* Every occurrence of the cycles in order: emit(ctx, cycle_index, pos, sym,
 * is_rule) where pos is the offset in w; non-zero return stops. */
typedef int (*sonde_grammar_cycle_fn)(void *ctx, uint64_t index, uint64_t pos, uint32_t sym,
                                      bool is_rule);
int sonde_grammar_walk_cycles(struct sonde_grammar *g, sonde_grammar_cycle_fn fn, void *ctx);

/* SVG charts (self-contained, no scripts). labels[i] names cycles[i].
 * Pie: the share of each cycle among all cycles (the paper's cycle pie chart);
 * the `max_slices`-1 most frequent get a slice, the rest one "other" slice. */
int sonde_grammar_svg_pie(FILE *out, const struct sonde_grammar_cycle *cycles, size_t n,
                          uint64_t total_cycles, const char *const *labels, size_t max_slices,
                          const char *title);
/* Cycle in time: one row per cycle (the `max_rows` most frequent), a mark at
 * every occurrence along the trace (x = cycle index; occurrences closer than
 * a pixel share it). classes[k] is the index into cycles of occurrence k
 * (k < total_cycles). `highlight` (an index into cycles, or SIZE_MAX) is drawn
 * in red and always gets a row. */
int sonde_grammar_svg_timeline(FILE *out, const struct sonde_grammar_cycle *cycles, size_t n,
                               const uint32_t *classes, uint64_t total_cycles,
                               const char *const *labels, size_t max_rows, size_t highlight,
                               const char *title);
/* Map every occurrence (in order) to its index in `cycles` (as returned by
 * sonde_grammar_cycles): *classes is malloc'ed, total_cycles entries. */
int sonde_grammar_cycle_classes(struct sonde_grammar *g, const struct sonde_grammar_cycle *cycles,
                                size_t n, uint32_t **classes, uint64_t *total_cycles);

/* ---- reading symbol streams (text lists, CSV traces, Sonde PC traces) --- */

enum sonde_grammar_input_kind {
  SONDE_GRAMMAR_INPUT_TEXT = 0,      /* whitespace-separated tokens: decimal, 0x hex or names */
  SONDE_GRAMMAR_INPUT_CSV = 1,       /* CSV with a header naming a PC column (val or pc) */
  SONDE_GRAMMAR_INPUT_PCTRACE = 2,   /* Sonde PC trace (binary or `cycle,pc` CSV) */
};

struct sonde_grammar_input_opts {
  bool keep_invalid; /* CSV: keep rows whose `valid` column is false (default: drop) */
  bool mark_gaps;    /* CSV: insert SONDE_GRAMMAR_GAP_SYM where `ts` jumps */
  bool cycle_level;  /* keep one symbol per row/cycle instead of per instruction */
  /* Resolve a name in a text list to a value (e.g. an ELF symbol); return 0
   * and set *value, or non-zero to intern it as a fresh symbol. May be NULL. */
  int (*resolve)(void *ctx, const char *name, uint32_t *value);
  void *resolve_ctx;
  /* Start from the interned names of another input, so the same name gets
   * the same symbol in both (to compare two text traces). May be NULL. */
  const struct sonde_grammar_input *share_names;
};
#define SONDE_GRAMMAR_GAP_SYM 0xFFFFFFFFu     /* "<gap>": never an instruction address */
#define SONDE_GRAMMAR_NAME_BASE 0xF0000000u   /* interned names: BASE + k */

struct sonde_grammar_input; /* opaque */

/* Read all symbols of a file (gzip is undone transparently). The kind is
 * detected: "SONDEPCT" magic or a `cycle,pc` header -> PC trace; a CSV header
 * with a `val` or `pc` column -> CSV; else a text list. `path` "-" is stdin. */
int sonde_grammar_input_load(const char *path, const struct sonde_grammar_input_opts *opts,
                             struct sonde_grammar_input **out, struct sonde_diag *diag);
/* Read a whole file (gzip undone; "-" is stdin) into a malloc'ed buffer. */
int sonde_grammar_read_file(const char *path, void **data, size_t *len, struct sonde_diag *diag);
/* The same from memory (name used in messages). */
int sonde_grammar_input_load_buffer(const void *data, size_t len, const char *name,
                                    const struct sonde_grammar_input_opts *opts,
                                    struct sonde_grammar_input **out, struct sonde_diag *diag);
void sonde_grammar_input_free(struct sonde_grammar_input *in); /* NULL is a no-op */
enum sonde_grammar_input_kind sonde_grammar_input_kind(const struct sonde_grammar_input *in);
const uint32_t *sonde_grammar_input_symbols(const struct sonde_grammar_input *in, size_t *n);
/* Rows dropped as invalid, `ts` gaps seen, rows read (CSV; 0 otherwise). */
uint64_t sonde_grammar_input_invalid_rows(const struct sonde_grammar_input *in);
uint64_t sonde_grammar_input_gaps(const struct sonde_grammar_input *in);
uint64_t sonde_grammar_input_rows(const struct sonde_grammar_input *in);
/* A naming callback (sonde_grammar_name_fn, ctx = the input) for interned
 * names, the gap marker and the non-instruction spans of PC traces. */
int sonde_grammar_input_name(void *input, uint32_t sym, char *buf, size_t len);
/* Look a name up among the interned names of a text list: 0 and *value, or
 * SONDE_E_NOTFOUND. */
int sonde_grammar_input_lookup(const struct sonde_grammar_input *in, const char *name,
                               uint32_t *value);

/* Loop-header detection without symbols (docs/grammar.md, "Loop header"):
 * among backward transitions w[i] -> w[i+1] < w[i] whose source and target lie
 * in [lo, hi) (pass 0, UINT32_MAX for everything) and span at most
 * max_span bytes, the loop with the widest span (target .. furthest source)
 * executed at least twice; ties go to the most executed target. Returns 0 and
 * *lh, or SONDE_E_NOTFOUND. */
int sonde_grammar_find_loop_header(const uint32_t *syms, size_t n, uint32_t lo, uint32_t hi,
                                   uint32_t max_span, uint32_t *lh);

#ifdef __cplusplus
}
#endif
#endif
