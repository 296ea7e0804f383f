/* `sonde grammar compress|expand|stats|cycles`: grammar compression of
 * execution traces and cycle analysis (docs/grammar.md; issue 6). Thin over
 * src/grammar; ELF names come from src/sym. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "sonde/grammar.h"
#include "sonde/sym.h"

struct gopts {
  const char *algo, *lh, *elf, *output, *format, *diff, *svg_pie, *svg_time;
  bool verify, json, keep_invalid, mark_gaps, cycle_level, names, compare;
  uint64_t cycle, max_list;
  double rare;
};

static const struct cli_command_help help = {
    "sonde grammar compress [options] <input>\n"
    "sonde grammar expand [options] <grammar|input>\n"
    "sonde grammar stats [options] <input|grammar>\n"
    "sonde grammar cycles [options] <input|grammar>",
    "Compress an execution trace into a grammar (Sequitur, ReSequitur or Cyclitur,\n"
    "reference 001), expand it back, print its sizes, or analyse its cycles on the\n"
    "compressed form. <input> is a Sonde PC trace, a CSV trace with a `val` or `pc`\n"
    "column (cycle-level rows are collapsed to one symbol per instruction), or a text\n"
    "list of symbols (decimal, 0x hex or names); gzip is read transparently. A\n"
    "<grammar> is a file written by `compress --format binary`. See docs/grammar.md."};

static const char *const sub_help =
    "  compress  print the grammar (text) or write it (--format binary)\n"
    "  expand    write the expanded symbol stream, one symbol per line\n"
    "  stats     |w|, rules, Size(G), Comp(G), cycles (--json: one object)\n"
    "  cycles    distinct cycles with counts and rates, rare cycles, --cycle N\n"
    "            positions, --diff another trace, SVG charts\n";

/* ---- naming: input names, then ELF, then hex ------------------------------ */

struct namer {
  struct sonde_grammar_input *in;
  struct sonde_sym *sym;
  const struct sonde_grammar_input *share; /* names of the first input (--diff) */
};

static int name_sym(void *ctx, uint32_t s, char *buf, size_t len)
{
  struct namer *nm = ctx;
  if (nm->in && sonde_grammar_input_name(nm->in, s, buf, len))
    return 1;
  if (nm->sym && !(s & 1) && sonde_sym_name(nm->sym, s, NULL)) {
    sonde_sym_format(nm->sym, s, buf, len);
    return 1;
  }
  return 0;
}

static void sym_text(struct namer *nm, uint32_t s, char *buf, size_t len)
{
  if (!name_sym(nm, s, buf, len))
    snprintf(buf, len, "0x%08x", s);
}

static int resolve_elf(void *ctx, const char *name, uint32_t *value)
{
  return sonde_sym_address(ctx, name, value, NULL) ? -1 : 0;
}

/* ---- loading ----------------------------------------------------------- */

struct loaded {
  struct sonde_grammar *g;
  struct sonde_grammar_input *in; /* NULL when the file was a grammar */
  double secs;
};

static int parse_lh(const struct gopts *o, struct namer *nm, const uint32_t *w, size_t n,
                    const char *path, bool *have, uint32_t *lh)
{
  *have = false;
  if (!o->lh || !strcmp(o->lh, "auto")) {
    /* Without symbols: any backward branch of at most 4 KiB. With them: only
     * inside main (or the reset handler main was inlined into). */
    uint32_t lo = 0, hi = UINT32_MAX, span = 0x1000;
    uint32_t addr, size;
    static const char *const entry_fns[] = {"main", "Reset_Handler", "ResetISR"};
    const char *where = NULL;
    for (size_t k = 0; nm->sym && !where && k < 3; k++) {
      if (!sonde_sym_address(nm->sym, entry_fns[k], &addr, &size) && size) {
        lo = addr;
        hi = addr + size;
        span = size;
        where = entry_fns[k];
      }
    }
    if (sonde_grammar_find_loop_header(w, n, lo, hi, span, lh) == 0) {
      *have = true;
      return CLI_OK;
    }
    if (o->lh) /* asked for explicitly */
      return cli_error("%s: no loop found%s%s; give --loop-header ADDR|SYMBOL", path,
                       where ? " in " : "", where ? where : "");
    return CLI_OK;
  }
  uint64_t v;
  if (!cli_parse_u64(o->lh, &v)) {
    if (v > UINT32_MAX)
      return cli_error("loop header '%s' is larger than 32 bits", o->lh);
    *lh = (uint32_t)v;
  } else if (nm->in && !sonde_grammar_input_lookup(nm->in, o->lh, lh)) {
    /* a name from a text list */
  } else if (nm->sym && !sonde_sym_address(nm->sym, o->lh, lh, NULL)) {
    /* an ELF symbol */
  } else {
    return cli_error("loop header '%s': not a number, a name in '%s'%s", o->lh, path,
                     nm->sym ? " or an ELF symbol" : " (give -e ELF for symbols)");
  }
  bool found = false;
  for (size_t i = 0; i < n && !found; i++)
    found = w[i] == *lh;
  if (!found)
    return cli_error("%s: loop header '%s' (0x%08x) never occurs in the trace", path, o->lh, *lh);
  *have = true;
  return CLI_OK;
}

static int load(const char *path, const struct gopts *o, struct namer *nm, struct loaded *L)
{
  memset(L, 0, sizeof *L);
  struct sonde_diag d = {{0}};
  struct sonde_grammar_input_opts io = {o->keep_invalid, o->mark_gaps, o->cycle_level,
                                        nm->sym ? resolve_elf : NULL, nm->sym, nm->share};
  int rc;
  /* A file that is not a grammar file is read by the library, which streams
   * binary PC traces; stdin (and gzip) is read whole first. */
  bool grammar_file = false;
  if (strcmp(path, "-")) {
    FILE *f = fopen(path, "rb");
    char magic[8];
    grammar_file = f && fread(magic, 1, 8, f) == 8 && !memcmp(magic, SONDE_GRAMMAR_MAGIC, 8);
    if (f)
      fclose(f);
  }
  if (strcmp(path, "-") && !grammar_file) {
    rc = sonde_grammar_input_load(path, &io, &L->in, &d);
  } else {
    void *buf;
    size_t len;
    if (sonde_grammar_read_file(path, &buf, &len, &d))
      return cli_error("%s", d.msg);
    if (len >= 8 && !memcmp(buf, SONDE_GRAMMAR_MAGIC, 8)) {
      rc = sonde_grammar_parse(buf, len, path, &L->g, &d);
      free(buf);
      if (rc)
        return cli_error("%s", d.msg);
      return CLI_OK;
    }
    rc = sonde_grammar_input_load_buffer(buf, len, strcmp(path, "-") ? path : "stdin", &io,
                                         &L->in, &d);
    free(buf);
  }
  if (rc)
    return cli_error("%s", d.msg);
  nm->in = L->in;
  size_t n;
  const uint32_t *w = sonde_grammar_input_symbols(L->in, &n);
  if (n == 0)
    return cli_error("%s: no symbols in the input", path);
  int algo = o->algo ? sonde_grammar_algo_parse(o->algo) : SONDE_GRAMMAR_CYCLITUR;
  bool have_lh = false;
  uint32_t lh = 0;
  if (algo == SONDE_GRAMMAR_CYCLITUR) {
    if ((rc = parse_lh(o, nm, w, n, path, &have_lh, &lh)))
      return rc;
    if (!have_lh) {
      cli_warn("%s: no loop header found (give --loop-header); using resequitur", path);
      algo = SONDE_GRAMMAR_RESEQUITUR;
    }
  } else if (o->lh) {
    return cli_error("--loop-header needs --algo cyclitur");
  }
  L->g = sonde_grammar_new((enum sonde_grammar_algo)algo);
  if (!L->g)
    return cli_error("out of memory");
  if (have_lh)
    sonde_grammar_set_loop_header(L->g, lh);
  double t0 = cli_now_s();
  struct cli_progress pr;
  cli_progress_start(&pr, "compressing", n);
  for (size_t i = 0; i < n && !rc; i += 1u << 20) {
    size_t k = n - i < (1u << 20) ? n - i : (1u << 20);
    rc = sonde_grammar_feed(L->g, w + i, k);
    cli_progress_update(&pr, i + k);
  }
  cli_progress_end(&pr);
  if (!rc)
    rc = sonde_grammar_finish(L->g);
  L->secs = cli_now_s() - t0;
  if (rc)
    return cli_error("%s: %s", path, sonde_grammar_error_detail(L->g));
  return CLI_OK;
}

static void unload(struct loaded *L)
{
  sonde_grammar_free(L->g);
  sonde_grammar_input_free(L->in);
}

/* ---- verify ------------------------------------------------------------ */

struct cmpctx {
  const uint32_t *w;
  size_t n, at;
  bool bad;
};

static int cmp_emit(void *ctx, const uint32_t *s, size_t n)
{
  struct cmpctx *c = ctx;
  if (c->at + n > c->n || memcmp(c->w + c->at, s, n * sizeof *s)) {
    c->bad = true;
    return 1;
  }
  c->at += n;
  return 0;
}

static int verify(struct loaded *L, const char *path)
{
  if (!L->in) { /* a grammar file: no input to compare with, but the properties */
    if (sonde_grammar_check_properties(L->g))
      return cli_error("%s: verify: %s", path, sonde_grammar_error_detail(L->g));
    fprintf(stderr, "sonde: verified: the grammar has the properties of %s\n",
            sonde_grammar_algo_name(sonde_grammar_algo(L->g)));
    return CLI_OK;
  }
  struct cmpctx c = {0};
  c.w = sonde_grammar_input_symbols(L->in, &c.n);
  sonde_grammar_expand(L->g, cmp_emit, &c);
  if (c.bad || c.at != c.n)
    return cli_error("%s: verify: the expansion differs from the input at symbol %zu", path, c.at);
  if (sonde_grammar_check_properties(L->g))
    return cli_error("%s: verify: %s", path, sonde_grammar_error_detail(L->g));
  fprintf(stderr, "sonde: verified: %zu symbols expand back exactly; properties hold\n", c.n);
  return CLI_OK;
}

/* ---- subcommands --------------------------------------------------------- */

static int do_compress(const char *path, const struct gopts *o, struct namer *nm)
{
  struct loaded L;
  int rc = load(path, o, nm, &L);
  if (!rc && o->verify)
    rc = verify(&L, path);
  if (rc) {
    unload(&L);
    return rc;
  }
  bool binary = o->format && !strcmp(o->format, "binary");
  if (o->format && !binary && strcmp(o->format, "text")) {
    unload(&L);
    return cli_error("unknown --format '%s' (text or binary)", o->format);
  }
  FILE *f = cli_open_output(o->output, binary);
  if (!f) {
    unload(&L);
    return CLI_FAIL;
  }
  if (binary) {
    uint8_t *b;
    size_t len;
    if (sonde_grammar_serialize(L.g, &b, &len)) {
      unload(&L);
      return cli_error("out of memory");
    }
    fwrite(b, 1, len, f);
    free(b);
  } else {
    sonde_grammar_print(L.g, f, name_sym, nm);
  }
  unload(&L);
  return cli_close_output(f, o->output);
}

struct expctx {
  FILE *f;
  struct namer *nm;
  bool names;
};

static int exp_emit(void *ctx, const uint32_t *s, size_t n)
{
  struct expctx *e = ctx;
  char buf[256];
  for (size_t i = 0; i < n; i++) {
    if (e->names) {
      sym_text(e->nm, s[i], buf, sizeof buf);
      fprintf(e->f, "%s\n", buf);
    } else {
      fprintf(e->f, "0x%08x\n", s[i]);
    }
  }
  return ferror(e->f) ? 1 : 0;
}

static int do_expand(const char *path, const struct gopts *o, struct namer *nm)
{
  struct loaded L;
  int rc = load(path, o, nm, &L);
  if (rc) {
    unload(&L);
    return rc;
  }
  FILE *f = cli_open_output(o->output, false);
  if (!f) {
    unload(&L);
    return CLI_FAIL;
  }
  struct expctx e = {f, nm, o->names};
  sonde_grammar_expand(L.g, exp_emit, &e);
  unload(&L);
  return cli_close_output(f, o->output);
}

/* stats --compare: the input with all three algorithms side by side. */
static int do_compare(const char *path, const struct gopts *o, struct namer *nm)
{
  if (o->algo)
    return cli_error("--compare runs every algorithm; drop --algo");
  struct loaded L;
  int rc = load(path, o, nm, &L);
  if (!rc && !L.in)
    rc = cli_error("%s: --compare needs a trace, not a grammar file", path);
  if (rc) {
    unload(&L);
    return rc;
  }
  size_t n;
  const uint32_t *w = sonde_grammar_input_symbols(L.in, &n);
  struct sonde_grammar *g[3] = {NULL, NULL, NULL};
  double secs[3] = {0, 0, L.secs};
  int last = sonde_grammar_algo(L.g); /* cyclitur, or resequitur without a loop header */
  for (int a = 0; a < 3 && !rc; a++) {
    if (a == last) {
      g[a] = L.g;
      continue;
    }
    if (a == SONDE_GRAMMAR_CYCLITUR)
      continue; /* no loop header: nothing to compare */
    g[a] = sonde_grammar_new((enum sonde_grammar_algo)a);
    double t0 = cli_now_s();
    if (!g[a] || sonde_grammar_feed(g[a], w, n) || sonde_grammar_finish(g[a]))
      rc = cli_error("%s: %s", path, g[a] ? sonde_grammar_error_detail(g[a]) : "out of memory");
    secs[a] = cli_now_s() - t0;
  }
  FILE *f = rc ? NULL : cli_open_output(o->output, false);
  if (f) {
    uint64_t s0 = sonde_grammar_size(g[0]);
    if (o->json) {
      fprintf(f, "{\"input\":");
      cli_json_string(f, path);
      fprintf(f, ",\"symbols\":%zu", n);
    } else {
      fprintf(f, "%s: %zu symbols\n%-11s %8s %10s %14s %10s %12s\n", path, n, "algorithm",
              "rules", "Size(G)", "Comp(G)", "seconds", "vs sequitur");
    }
    for (int a = 0; a < 3; a++) {
      if (!g[a])
        continue;
      uint64_t sz = sonde_grammar_size(g[a]);
      double gain = s0 ? 100.0 * (1.0 - (double)sz / (double)s0) : 0;
      if (o->json)
        fprintf(f, ",\"%s\":{\"rules\":%zu,\"size\":%" PRIu64 ",\"comp\":%.9g,\"seconds\":%.6f,"
                   "\"smaller_than_sequitur_pct\":%.3f}",
                sonde_grammar_algo_name((enum sonde_grammar_algo)a), sonde_grammar_rule_count(g[a]),
                sz, sonde_grammar_comp(g[a]), secs[a], gain);
      else if (a == 0)
        fprintf(f, "%-11s %8zu %10" PRIu64 " %14.9f %10.3f %12s\n", "sequitur",
                sonde_grammar_rule_count(g[a]), sz, sonde_grammar_comp(g[a]), secs[a], "(base)");
      else
        fprintf(f, "%-11s %8zu %10" PRIu64 " %14.9f %10.3f %+11.1f%%\n",
                sonde_grammar_algo_name((enum sonde_grammar_algo)a), sonde_grammar_rule_count(g[a]),
                sz, sonde_grammar_comp(g[a]), secs[a], -gain);
    }
    if (o->json)
      fputs("}\n", f);
  }
  for (int a = 0; a < 3; a++)
    if (g[a] != L.g)
      sonde_grammar_free(g[a]);
  unload(&L);
  return f ? cli_close_output(f, o->output) : CLI_FAIL;
}

static int do_stats(const char *path, const struct gopts *o, struct namer *nm)
{
  if (o->compare)
    return do_compare(path, o, nm);
  struct loaded L;
  int rc = load(path, o, nm, &L);
  if (!rc && o->verify)
    rc = verify(&L, path);
  if (rc) {
    unload(&L);
    return rc;
  }
  struct sonde_grammar *g = L.g;
  uint64_t total = 0;
  size_t ncyc = 0;
  struct sonde_grammar_cycle *cyc = NULL;
  bool cyclitur = sonde_grammar_algo(g) == SONDE_GRAMMAR_CYCLITUR;
  if (cyclitur && sonde_grammar_cycles(g, &cyc, &ncyc, &total)) {
    unload(&L);
    return cli_error("out of memory");
  }
  free(cyc);
  uint8_t *b = NULL;
  size_t blen = 0;
  sonde_grammar_serialize(g, &b, &blen);
  free(b);
  char lhname[256] = "";
  if (sonde_grammar_has_loop_header(g))
    sym_text(nm, sonde_grammar_loop_header(g), lhname, sizeof lhname);
  FILE *f = cli_open_output(o->output, false);
  if (!f) {
    unload(&L);
    return CLI_FAIL;
  }
  uint64_t sym = sonde_grammar_input_length(g);
  if (o->json) {
    fprintf(f, "{\"input\":");
    cli_json_string(f, path);
    fprintf(f, ",\"algo\":\"%s\",\"symbols\":%" PRIu64 ",\"distinct_symbols\":%zu,\"rules\":%zu,"
               "\"size\":%" PRIu64 ",\"comp\":%.9g",
            sonde_grammar_algo_name(sonde_grammar_algo(g)), sym,
            sonde_grammar_distinct_terminals(g), sonde_grammar_rule_count(g),
            sonde_grammar_size(g), sonde_grammar_comp(g));
    if (cyclitur)
      fprintf(f, ",\"cycles\":%" PRIu64 ",\"distinct_cycles\":%zu", total, ncyc);
    if (sonde_grammar_has_loop_header(g)) {
      fprintf(f, ",\"loop_header\":\"0x%08x\",\"loop_header_name\":", sonde_grammar_loop_header(g));
      cli_json_string(f, lhname);
    }
    fprintf(f, ",\"binary_bytes\":%zu", blen);
    if (L.in)
      fprintf(f, ",\"rows\":%" PRIu64 ",\"invalid_rows\":%" PRIu64 ",\"gaps\":%" PRIu64
                 ",\"seconds\":%.6f",
              sonde_grammar_input_rows(L.in), sonde_grammar_input_invalid_rows(L.in),
              sonde_grammar_input_gaps(L.in), L.secs);
    fprintf(f, "}\n");
  } else {
    fprintf(f, "algorithm      %s\n", sonde_grammar_algo_name(sonde_grammar_algo(g)));
    if (sonde_grammar_has_loop_header(g))
      fprintf(f, "loop header    %s\n", lhname);
    if (L.in && sonde_grammar_input_rows(L.in))
      fprintf(f, "rows           %" PRIu64 " (%" PRIu64 " invalid dropped, %" PRIu64 " gaps)\n",
              sonde_grammar_input_rows(L.in), sonde_grammar_input_invalid_rows(L.in),
              sonde_grammar_input_gaps(L.in));
    fprintf(f, "symbols |w|    %" PRIu64 " (%zu distinct)\n", sym,
            sonde_grammar_distinct_terminals(g));
    fprintf(f, "rules          %zu\n", sonde_grammar_rule_count(g));
    fprintf(f, "Size(G)        %" PRIu64 "\n", sonde_grammar_size(g));
    fprintf(f, "Comp(G)        %.9g\n", sonde_grammar_comp(g));
    if (cyclitur)
      fprintf(f, "cycles         %" PRIu64 " (%zu distinct)\n", total, ncyc);
    fprintf(f, "binary file    %zu bytes\n", blen);
  }
  unload(&L);
  return cli_close_output(f, o->output);
}

/* ---- cycles ---------------------------------------------------------------- */

static char **cycle_labels(struct sonde_grammar *g, const struct sonde_grammar_cycle *c, size_t n,
                           struct namer *nm)
{
  char **lab = calloc(n ? n : 1, sizeof *lab);
  char rn[64], fs[256], buf[400];
  for (size_t k = 0; lab && k < n; k++) {
    if (c[k].is_rule)
      sonde_grammar_rule_name(g, c[k].sym, rn, sizeof rn);
    else
      snprintf(rn, sizeof rn, "terminal");
    sym_text(nm, c[k].first_sym, fs, sizeof fs);
    snprintf(buf, sizeof buf, "#%zu %s, %" PRIu64 " symbols from %s", k + 1, rn, c[k].length, fs);
    lab[k] = strdup(buf);
  }
  return lab;
}

static void free_labels(char **lab, size_t n)
{
  for (size_t k = 0; lab && k < n; k++)
    free(lab[k]);
  free(lab);
}

static int write_svgs(struct sonde_grammar *g, const struct sonde_grammar_cycle *c, size_t n,
                      uint64_t total, char **lab, const struct gopts *o, const char *path)
{
  char title[512];
  const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
  if (o->svg_pie) {
    FILE *f = cli_open_output(o->svg_pie, false);
    if (!f)
      return CLI_FAIL;
    snprintf(title, sizeof title, "Cycles of %s (%" PRIu64 " cycles, %zu distinct)", base, total, n);
    sonde_grammar_svg_pie(f, c, n, total, (const char *const *)lab, 12, title);
    if (cli_close_output(f, o->svg_pie))
      return CLI_FAIL;
  }
  if (o->svg_time) {
    uint32_t *cls;
    uint64_t t2;
    if (sonde_grammar_cycle_classes(g, c, n, &cls, &t2))
      return cli_error("out of memory");
    FILE *f = cli_open_output(o->svg_time, false);
    if (!f) {
      free(cls);
      return CLI_FAIL;
    }
    size_t hl = o->cycle && o->cycle <= n ? (size_t)o->cycle - 1 : SIZE_MAX;
    snprintf(title, sizeof title, "Cycles of %s in time", base);
    sonde_grammar_svg_timeline(f, c, n, cls, t2, (const char *const *)lab, 20, hl, title);
    free(cls);
    if (cli_close_output(f, o->svg_time))
      return CLI_FAIL;
  }
  return CLI_OK;
}

struct posctx {
  const uint32_t *classes; /* class (index into the cycle list) per occurrence */
  size_t want;
  FILE *f;
  bool json;
  uint64_t shown, limit;
};

static int pos_emit(void *ctx, uint64_t index, uint64_t pos, uint32_t sym, bool is_rule)
{
  struct posctx *p = ctx;
  (void)sym, (void)is_rule;
  if (p->classes[index] != p->want)
    return 0;
  if (p->shown >= p->limit)
    return 1;
  if (p->json)
    fprintf(p->f, "%s[%" PRIu64 ",%" PRIu64 "]", p->shown ? "," : "", index, pos);
  else
    fprintf(p->f, "  cycle %" PRIu64 " at symbol %" PRIu64 "\n", index, pos);
  p->shown++;
  return 0;
}

static int do_cycles(const char *path, const struct gopts *o, struct namer *nm)
{
  struct loaded L, L2 = {0};
  int rc = load(path, o, nm, &L);
  if (rc) {
    unload(&L);
    return rc;
  }
  struct sonde_grammar *g = L.g;
  if (sonde_grammar_algo(g) != SONDE_GRAMMAR_CYCLITUR) {
    unload(&L);
    return cli_error("%s: cycles need a cyclitur grammar (a loop header)", path);
  }
  struct sonde_grammar_cycle *c = NULL, *c2 = NULL;
  size_t n = 0, n2 = 0;
  uint64_t total = 0, total2 = 0;
  if (sonde_grammar_cycles(g, &c, &n, &total)) {
    unload(&L);
    return cli_error("out of memory");
  }
  struct namer nm2 = {NULL, nm->sym, L.in};
  if (o->diff) {
    struct gopts o2 = *o;
    if (!o2.lh && sonde_grammar_has_loop_header(g)) {
      static char lhbuf[32];
      snprintf(lhbuf, sizeof lhbuf, "0x%x", sonde_grammar_loop_header(g));
      o2.lh = lhbuf; /* the same loop header, so the cycles compare */
    }
    if ((rc = load(o->diff, &o2, &nm2, &L2)) ||
        (rc = sonde_grammar_algo(L2.g) != SONDE_GRAMMAR_CYCLITUR
                  ? cli_error("%s: not a cyclitur grammar", o->diff)
                  : 0) ||
        (rc = sonde_grammar_cycles(L2.g, &c2, &n2, &total2) ? cli_error("out of memory") : 0)) {
      free(c);
      unload(&L);
      unload(&L2);
      return rc;
    }
  }
  uint32_t *cls = NULL;
  uint64_t tcls;
  if (sonde_grammar_cycle_classes(g, c, n, &cls, &tcls)) {
    free(c);
    free(c2);
    unload(&L);
    unload(&L2);
    return cli_error("out of memory");
  }
  char **lab = cycle_labels(g, c, n, nm);
  rc = write_svgs(g, c, n, total, lab, o, path);
  FILE *f = rc ? NULL : cli_open_output(o->output, false);
  if (!f) {
    free(cls);
    free_labels(lab, n);
    free(c);
    free(c2);
    unload(&L);
    unload(&L2);
    return CLI_FAIL;
  }
  double rare = o->rare > 0 ? o->rare : 0.01;
  /* rare: at most max(1, rare * total) occurrences */
  uint64_t rare_max = (uint64_t)(rare * (double)total);
  if (rare_max < 1)
    rare_max = 1;
  uint64_t lim = o->max_list ? o->max_list : 50;
  if (o->json) {
    fprintf(f, "{\"input\":");
    cli_json_string(f, path);
    fprintf(f, ",\"symbols\":%" PRIu64 ",\"cycles\":%" PRIu64 ",\"distinct_cycles\":%zu,"
               "\"rare_rate\":%g,\"list\":[",
            sonde_grammar_input_length(g), total, n, rare);
    for (size_t k = 0; k < n; k++) {
      fprintf(f, "%s{\"rank\":%zu,\"label\":", k ? "," : "", k + 1);
      cli_json_string(f, lab[k]);
      fprintf(f, ",\"count\":%" PRIu64 ",\"rate\":%.9g,\"length\":%" PRIu64 ",\"first\":%" PRIu64
                 ",\"first_pos\":%" PRIu64 ",\"rare\":%s,\"hash\":\"%016" PRIx64 "\"}",
              c[k].count, (double)c[k].count / (double)total, c[k].length, c[k].first,
              c[k].first_pos, c[k].count <= rare_max ? "true" : "false",
              c[k].hash);
    }
    fputs("]", f);
  } else {
    fprintf(f, "%s: %" PRIu64 " symbols, %" PRIu64 " cycles, %zu distinct\n", path,
            sonde_grammar_input_length(g), total, n);
    fprintf(f, "%5s %10s %8s %8s %10s  %s\n", "rank", "count", "rate%", "length", "first", "cycle");
    for (size_t k = 0; k < n && k < lim; k++)
      fprintf(f, "%5zu %10" PRIu64 " %8.3f %8" PRIu64 " %10" PRIu64 "  %s%s\n", k + 1,
              c[k].count, 100.0 * (double)c[k].count / (double)total, c[k].length, c[k].first,
              lab[k], c[k].count <= rare_max ? "  RARE" : "");
    if (n > lim)
      fprintf(f, "  ... %zu more (--max-list)\n", n - (size_t)lim);
    size_t nrare = 0;
    for (size_t k = 0; k < n; k++)
      nrare += c[k].count <= rare_max;
    fprintf(f, "rare cycles (at most %" PRIu64 " occurrence%s): %zu\n", rare_max,
            rare_max == 1 ? "" : "s", nrare);
    for (size_t k = 0; k < n; k++) {
      if (c[k].count > rare_max)
        continue;
      fprintf(f, "  #%zu (%" PRIu64 "x) at [cycle, symbol]: ", k + 1, c[k].count);
      struct posctx r2 = {cls, k, f, true, 0, 10};
      sonde_grammar_walk_cycles(g, pos_emit, &r2);
      if (c[k].count > 10)
        fputs(" ...", f);
      fputc('\n', f);
    }
  }
  if (o->cycle) {
    if (o->cycle > n) {
      cli_close_output(f, o->output);
      free(cls);
      free_labels(lab, n);
      free(c);
      free(c2);
      unload(&L);
      unload(&L2);
      return cli_error("--cycle %" PRIu64 ": there are %zu distinct cycles", o->cycle, n);
    }
    struct posctx p = {cls, (size_t)o->cycle - 1, f, o->json, 0, UINT64_MAX};
    if (o->json) {
      fprintf(f, ",\"cycle\":%" PRIu64 ",\"positions\":[", o->cycle);
      sonde_grammar_walk_cycles(g, pos_emit, &p);
      fputs("]", f);
    } else {
      fprintf(f, "cycle #%" PRIu64 " %s: %" PRIu64 " occurrences [cycle index, symbol offset]\n",
              o->cycle, lab[o->cycle - 1], c[o->cycle - 1].count);
      sonde_grammar_walk_cycles(g, pos_emit, &p);
    }
  }
  if (o->diff) {
    /* Match cycles across traces by the hash and length of their expansion. */
    if (o->json)
      fputs(",\"diff\":{\"only_here\":[", f);
    else
      fprintf(f, "difference with %s (%" PRIu64 " cycles, %zu distinct):\n", o->diff, total2, n2);
    int first = 1;
    size_t only1 = 0, only2 = 0, both = 0;
    for (size_t k = 0; k < n; k++) {
      size_t j;
      for (j = 0; j < n2; j++)
        if (c2[j].hash == c[k].hash && c2[j].length == c[k].length)
          break;
      if (j < n2) {
        both++;
        continue;
      }
      only1++;
      if (o->json) {
        fprintf(f, "%s{\"rank\":%zu,\"count\":%" PRIu64 ",\"label\":", first ? "" : ",", k + 1,
                c[k].count);
        cli_json_string(f, lab[k]);
        fputc('}', f);
      } else {
        fprintf(f, "  only in %s: %s, %" PRIu64 "x\n", path, lab[k], c[k].count);
      }
      first = 0;
    }
    char **lab2 = cycle_labels(L2.g, c2, n2, &nm2);
    if (o->json)
      fputs("],\"only_there\":[", f);
    first = 1;
    for (size_t j = 0; j < n2; j++) {
      size_t k;
      for (k = 0; k < n; k++)
        if (c2[j].hash == c[k].hash && c2[j].length == c[k].length)
          break;
      if (k < n)
        continue;
      only2++;
      if (o->json) {
        fprintf(f, "%s{\"rank\":%zu,\"count\":%" PRIu64 ",\"label\":", first ? "" : ",", j + 1,
                c2[j].count);
        cli_json_string(f, lab2[j]);
        fputc('}', f);
      } else {
        fprintf(f, "  only in %s: %s, %" PRIu64 "x\n", o->diff, lab2[j], c2[j].count);
      }
      first = 0;
    }
    free_labels(lab2, n2);
    if (o->json)
      fprintf(f, "],\"common\":%zu}", both);
    else
      fprintf(f, "  %zu cycles in both, %zu only in %s, %zu only in %s\n", both, only1, path,
              only2, o->diff);
  }
  if (o->json)
    fputs("}\n", f);
  free(cls);
  free_labels(lab, n);
  free(c);
  free(c2);
  unload(&L);
  unload(&L2);
  return cli_close_output(f, o->output);
}

int cmd_grammar(int argc, char **argv)
{
  struct gopts o = {0};
  const struct cli_opt opts[] = {
      OPT_GROUP("Compression"),
      OPT_STRING(0, "algo", "<name>", &o.algo, "sequitur, resequitur or cyclitur (default)"),
      OPT_STRING(0, "loop-header", "<addr|symbol|auto>", &o.lh,
                 "Cyclitur's loop header (default auto: widest backward-branch loop, in main with -e)"),
      OPT_ELF(&o.elf),
      OPT_FLAG(0, "verify", &o.verify, "check that the grammar expands to the input and has the paper's properties"),
      OPT_FLAG(0, "compare", &o.compare, "stats: also compress with sequitur and resequitur and compare the sizes"),
      OPT_GROUP("Input"),
      OPT_FLAG(0, "keep-invalid", &o.keep_invalid, "CSV: keep rows with valid=false (default: drop)"),
      OPT_FLAG(0, "mark-gaps", &o.mark_gaps, "CSV: insert a <gap> symbol where ts jumps"),
      OPT_FLAG(0, "cycle-level", &o.cycle_level, "one symbol per cycle/row (default: per instruction)"),
      OPT_GROUP("Output"),
      OPT_OUTPUT(&o.output),
      OPT_STRING(0, "format", "<text|binary>", &o.format, "compress: grammar as text (default) or the binary file"),
      OPT_FLAG(0, "names", &o.names, "expand: print names (ELF, input) instead of hex"),
      OPT_JSON(&o.json),
      OPT_GROUP("Cycles"),
      OPT_U64(0, "cycle", "<n>", &o.cycle, "list every position of the n-th most frequent cycle (and highlight it)"),
      OPT_DOUBLE(0, "rare", "<rate>", &o.rare, "rare: at most max(1, rate x cycles) occurrences (default 0.01)"),
      OPT_U64(0, "max-list", "<n>", &o.max_list, "list at most n cycles (default 50)"),
      OPT_STRING(0, "diff", "<input>", &o.diff, "compare the cycle set with another trace or grammar"),
      OPT_STRING(0, "svg-pie", "<file>", &o.svg_pie, "write the cycle pie chart as SVG"),
      OPT_STRING(0, "svg-time", "<file>", &o.svg_time, "write the cycles-in-time chart as SVG"),
      OPT_END(),
  };
  if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
    if (argc < 2)
      return cli_usage_error(&help, "missing subcommand (compress, expand, stats or cycles)");
    cli_print_help(stdout, opts, &help);
    fputs("\nSubcommands:\n", stdout);
    fputs(sub_help, stdout);
    return CLI_OK;
  }
  const char *sub = argv[1];
  if (strcmp(sub, "compress") && strcmp(sub, "expand") && strcmp(sub, "stats") &&
      strcmp(sub, "cycles"))
    return cli_usage_error(&help, "unknown subcommand '%s'", sub);
  int n;
  int rc = cli_parse(argc - 1, argv + 1, opts, &help, &n);
  if (rc)
    return rc < 0 ? CLI_OK : rc;
  if (n != 1)
    return cli_usage_error(&help, n ? "one input expected" : "missing <input>");
  if (o.algo && sonde_grammar_algo_parse(o.algo) < 0)
    return cli_usage_error(&help, "unknown --algo '%s' (sequitur, resequitur or cyclitur)", o.algo);
  /* an option another subcommand would use is refused, not ignored */
  const char *only = NULL, *opt = NULL;
  if (o.compare && strcmp(sub, "stats"))
    only = "stats", opt = "--compare";
  else if (o.format && strcmp(sub, "compress"))
    only = "compress", opt = "--format";
  else if (o.names && strcmp(sub, "expand"))
    only = "expand", opt = "--names";
  else if (strcmp(sub, "cycles") && (o.cycle || o.rare != 0 || o.max_list || o.diff ||
                                     o.svg_pie || o.svg_time))
    only = "cycles", opt = o.cycle ? "--cycle" : o.rare != 0 ? "--rare" : o.max_list ? "--max-list"
                           : o.diff ? "--diff" : o.svg_pie ? "--svg-pie" : "--svg-time";
  if (only)
    return cli_usage_error(&help, "%s is for 'grammar %s', not '%s'", opt, only, sub);
  /* cli_parse moved the positional arguments to the front of argv + 1. */
  const char *path = argv[1];
  struct namer nm = {0};
  if (o.elf) {
    struct sonde_diag d = {{0}};
    if (sonde_sym_open(o.elf, &nm.sym, &d))
      return cli_error("%s", d.msg);
  }
  if (!strcmp(sub, "compress"))
    rc = do_compress(path, &o, &nm);
  else if (!strcmp(sub, "expand"))
    rc = do_expand(path, &o, &nm);
  else if (!strcmp(sub, "stats"))
    rc = do_stats(path, &o, &nm);
  else
    rc = do_cycles(path, &o, &nm);
  sonde_sym_free(nm.sym);
  return rc;
}
