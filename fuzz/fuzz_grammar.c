/* Fuzz target for src/grammar: the input readers (text, CSV, PC trace), the
 * binary grammar parser, and the compressors themselves. The first byte picks
 * the mode (and, for grammar files, bit 6 keeps the input's own CRC: without
 * the harness fixing the CRC, nearly every mutation would stop at the checksum
 * and the parser behind it would never be fuzzed); everything that parses is compressed with all three algorithms,
 * expanded and checked against its input and the paper's properties, and
 * built again with the repeat skip (and run_step) off, which must give the same grammar
 * byte for byte — any difference aborts, so the fuzzer hunts for algorithm
 * bugs, not only crashes. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "sonde/grammar.h"

struct cmp {
  const uint32_t *w;
  size_t n, at;
  int bad;
};

static int cmp_emit(void *ctx, const uint32_t *s, size_t n)
{
  struct cmp *c = ctx;
  if (c->at + n > c->n || memcmp(c->w + c->at, s, n * sizeof *s))
    c->bad = 1;
  c->at += n;
  return c->bad;
}

static int count_cb(void *ctx, uint64_t i, uint64_t p, uint32_t s, bool r)
{
  (void)i, (void)p, (void)s, (void)r;
  (*(uint64_t *)ctx)++;
  return 0;
}

static void compress_all(const uint32_t *w, size_t n)
{
  for (int a = 0; a < 4; a++) { /* 3: Cyclitur without the cycle cache */
    struct sonde_grammar *g = sonde_grammar_new(a < 3 ? (enum sonde_grammar_algo)a
                                                       : SONDE_GRAMMAR_CYCLITUR);
    if (!g)
      abort();
    if (a == 3)
      sonde_grammar_set_cycle_cache(g, false);
    if (a >= SONDE_GRAMMAR_CYCLITUR && n)
      sonde_grammar_set_loop_header(g, w[n / 2]);
    if (sonde_grammar_feed(g, w, n) || sonde_grammar_finish(g))
      abort();
    struct cmp c = {w, n, 0, 0};
    sonde_grammar_expand(g, cmp_emit, &c);
    if (c.bad || c.at != n)
      abort();
    if (sonde_grammar_check_properties(g)) {
      fprintf(stderr, "%s\n", sonde_grammar_error_detail(g));
      abort();
    }
    struct sonde_grammar_cycle *cy;
    size_t nc;
    uint64_t tot, walked = 0;
    if (sonde_grammar_cycles(g, &cy, &nc, &tot))
      abort();
    sonde_grammar_walk_cycles(g, count_cb, &walked);
    if (walked != tot)
      abort();
    free(cy);
    uint8_t *b;
    size_t len;
    struct sonde_grammar *h = NULL;
    if (sonde_grammar_serialize(g, &b, &len) || sonde_grammar_parse(b, len, "f", &h, NULL))
      abort();
    if (sonde_grammar_size(h) != sonde_grammar_size(g))
      abort();
    /* symbol by symbol (no repeat skip): the same grammar */
    struct sonde_grammar *s = sonde_grammar_new(a < 3 ? (enum sonde_grammar_algo)a
                                                       : SONDE_GRAMMAR_CYCLITUR);
    if (!s || sonde_grammar_set_repeat_skip(s, false))
      abort();
    if (a == 3)
      sonde_grammar_set_cycle_cache(s, false);
    if (a >= SONDE_GRAMMAR_CYCLITUR && n)
      sonde_grammar_set_loop_header(s, w[n / 2]);
    uint8_t *sb;
    size_t slen;
    if (sonde_grammar_feed(s, w, n) || sonde_grammar_finish(s) ||
        sonde_grammar_serialize(s, &sb, &slen))
      abort();
    if (slen != len || memcmp(sb, b, len)) {
      fprintf(stderr, "fuzz_grammar: the repeat skip changed the grammar\n");
      abort();
    }
    free(sb);
    sonde_grammar_free(s);
    free(b);
    sonde_grammar_free(h);
    sonde_grammar_free(g);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  if (size < 1)
    return 0;
  uint8_t mode = data[0] % 3;
  bool keep_crc = data[0] & 0x40;
  data++;
  size--;
  if (mode == 0) { /* readers */
    struct sonde_grammar_input *in = NULL;
    if (sonde_grammar_input_load_buffer(data, size, "fuzz", NULL, &in, NULL) == 0) {
      size_t n;
      const uint32_t *w = sonde_grammar_input_symbols(in, &n);
      if (n <= 4096)
        compress_all(w, n);
      sonde_grammar_input_free(in);
    }
  } else if (mode == 1) { /* grammar files */
    uint8_t *buf = malloc(size ? size : 1);
    if (!buf)
      return 0;
    memcpy(buf, data, size);
    if (!keep_crc && size >= 8) {
      uint32_t crc = (uint32_t)crc32(0L, buf, (uInt)(size - 4));
      for (int i = 0; i < 4; i++)
        buf[size - 4 + i] = (uint8_t)(crc >> (8 * i));
    }
    struct sonde_grammar *g = NULL;
    struct sonde_diag d;
    if (sonde_grammar_parse(buf, size, "fuzz", &g, &d) == 0) {
      if (sonde_grammar_input_length(g) <= 100000) {
        uint64_t walked = 0;
        sonde_grammar_walk_cycles(g, count_cb, &walked);
        struct sonde_grammar_cycle *cy;
        size_t nc;
        uint64_t tot;
        if (sonde_grammar_cycles(g, &cy, &nc, &tot) == 0)
          free(cy);
      }
      sonde_grammar_check_properties(g);
      /* What parses must serialize and parse back to the same grammar. */
      uint8_t *b = NULL;
      size_t len = 0;
      struct sonde_grammar *h = NULL;
      if (sonde_grammar_serialize(g, &b, &len) == 0) {
        if (sonde_grammar_parse(b, len, "again", &h, NULL) ||
            sonde_grammar_size(h) != sonde_grammar_size(g) ||
            sonde_grammar_input_length(h) != sonde_grammar_input_length(g)) {
          fprintf(stderr, "fuzz_grammar: a parsed grammar does not survive serialize+parse\n");
          abort();
        }
        sonde_grammar_free(h);
        free(b);
      }
      sonde_grammar_free(g);
    }
    free(buf);
  } else { /* raw symbols: 2 bits each over a small alphabet, or bytes */
    size_t n = size;
    uint32_t *w = malloc((n ? n : 1) * sizeof *w);
    if (!w)
      return 0;
    for (size_t i = 0; i < n; i++)
      w[i] = data[0] & 1 ? data[i] & 3 : data[i];
    if (n <= 4096)
      compress_all(w, n);
    free(w);
  }
  return 0;
}
