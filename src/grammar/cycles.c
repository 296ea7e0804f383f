/* Cycle analysis on the compressed form (reference 001, sections 4 and 5.1:
 * the cycle pie chart, cycle-in-time, anomalous cycles), and the SVG charts.
 *
 * In a Cyclitur grammar the start rule S derives the sequence of cycles w'
 * (Fig. 3, line 8): its leaves, when descending only through rules that are
 * not cycles, are cycle rules or single terminals (a cycle of one symbol is
 * that symbol). Nothing is decompressed below the cycle level: counts come
 * from the exponents, positions from the rule lengths. For the other
 * algorithms the elements of S are taken as the "cycles". */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "grammar_internal.h"

uint64_t grammar_elem_hash(const struct sonde_grammar *g, uint32_t sym, bool is_rule);

static bool is_leaf(const struct sonde_grammar *g, size_t frame_rule,
                    const struct sonde_grammar_elem *e)
{
  if (!e->is_rule)
    return true;
  if (g->algo != SONDE_GRAMMAR_CYCLITUR)
    return frame_rule == 0;
  return g->is_cycle[e->sym];
}

struct wframe {
  size_t rule, pos;
  uint32_t left;
};

int sonde_grammar_walk_cycles(struct sonde_grammar *g, sonde_grammar_cycle_fn fn, void *ctx)
{
  if (!g->finished)
    return SONDE_E_STATE;
  size_t cap = 64, sp = 0;
  struct wframe *st = malloc(cap * sizeof *st);
  if (!st)
    return SONDE_E_NOMEM;
  uint64_t index = 0, pos = 0;
  int rc = 0;
  st[sp++] = (struct wframe){0, g->off[0], 0};
  while (sp && !rc) {
    struct wframe *f = &st[sp - 1];
    if (f->pos == g->off[f->rule + 1]) {
      sp--;
      continue;
    }
    const struct sonde_grammar_elem *e = &g->elems[f->pos];
    if (!f->left)
      f->left = e->count;
    if (is_leaf(g, f->rule, e)) {
      uint64_t l = e->is_rule ? g->len[e->sym] : 1;
      for (uint32_t k = f->left; k && !rc; k--) {
        rc = fn(ctx, index++, pos, e->sym, e->is_rule);
        pos += l;
      }
      f->left = 0;
      f->pos++;
      continue;
    }
    if (--f->left == 0)
      f->pos++;
    if (sp == cap) {
      struct wframe *ns = realloc(st, cap * 2 * sizeof *st);
      if (!ns) {
        rc = SONDE_E_NOMEM;
        break;
      }
      st = ns;
      cap *= 2;
    }
    st[sp++] = (struct wframe){e->sym, g->off[e->sym], 0};
  }
  free(st);
  return rc;
}

/* ---- distinct cycles ----------------------------------------------------- */

struct cyc_acc {
  struct sonde_grammar *g;
  struct sonde_grammar_cycle *v;
  size_t n, cap;
  uint32_t *map; /* open addressing on (hash, length): index + 1 */
  size_t mask;
  uint32_t *classes; /* optional: class per occurrence */
  int err;
};

static uint32_t first_terminal(const struct sonde_grammar *g, uint32_t sym, bool is_rule)
{
  while (is_rule) {
    const struct sonde_grammar_elem *e = &g->elems[g->off[sym]];
    sym = e->sym;
    is_rule = e->is_rule;
  }
  return sym;
}

static size_t acc_slot(const struct cyc_acc *a, uint64_t h, uint64_t len)
{
  size_t i = (size_t)(h ^ (len * 0x9E3779B97F4A7C15ull)) & a->mask;
  while (a->map[i] && !(a->v[a->map[i] - 1].hash == h && a->v[a->map[i] - 1].length == len))
    i = (i + 1) & a->mask;
  return i;
}

static int acc_grow(struct cyc_acc *a)
{
  size_t cap = (a->mask + 1) * 2;
  uint32_t *old = a->map;
  a->map = calloc(cap, sizeof *a->map);
  if (!a->map) {
    a->map = old;
    return SONDE_E_NOMEM;
  }
  a->mask = cap - 1;
  for (size_t k = 0; k < a->n; k++)
    a->map[acc_slot(a, a->v[k].hash, a->v[k].length)] = (uint32_t)k + 1;
  free(old);
  return 0;
}

static int acc_visit(void *ctx, uint64_t index, uint64_t pos, uint32_t sym, bool is_rule)
{
  struct cyc_acc *a = ctx;
  struct sonde_grammar *g = a->g;
  uint64_t h = grammar_elem_hash(g, sym, is_rule);
  uint64_t len = is_rule ? g->len[sym] : 1;
  size_t s = acc_slot(a, h, len);
  if (!a->map[s]) {
    if (a->n == a->cap) {
      size_t cap = a->cap ? a->cap * 2 : 64;
      struct sonde_grammar_cycle *nv = realloc(a->v, cap * sizeof *nv);
      if (!nv)
        return a->err = SONDE_E_NOMEM;
      a->v = nv;
      a->cap = cap;
    }
    a->v[a->n] = (struct sonde_grammar_cycle){sym, is_rule, 0, len, index, pos,
                                              first_terminal(g, sym, is_rule), h};
    a->map[s] = (uint32_t)++a->n;
    if (a->n * 2 > a->mask && acc_grow(a))
      return a->err = SONDE_E_NOMEM;
    s = acc_slot(a, h, len);
  }
  a->v[a->map[s] - 1].count++;
  if (a->classes)
    a->classes[index] = a->map[s] - 1;
  return 0;
}

static int cmp_cycle(const void *x, const void *y)
{
  const struct sonde_grammar_cycle *p = x, *q = y;
  if (p->count != q->count)
    return p->count > q->count ? -1 : 1;
  return p->first < q->first ? -1 : p->first > q->first;
}

static int count_cb(void *ctx, uint64_t index, uint64_t pos, uint32_t sym, bool is_rule)
{
  (void)index, (void)pos, (void)sym, (void)is_rule;
  (*(uint64_t *)ctx)++;
  return 0;
}

int sonde_grammar_cycles(struct sonde_grammar *g, struct sonde_grammar_cycle **out, size_t *n,
                         uint64_t *total_cycles)
{
  *out = NULL;
  *n = 0;
  *total_cycles = 0;
  if (!g->finished)
    return SONDE_E_STATE;
  int rc = grammar_compute_hashes(g);
  if (rc)
    return rc;
  struct cyc_acc a = {.g = g, .mask = 255};
  a.map = calloc(a.mask + 1, sizeof *a.map);
  if (!a.map)
    return SONDE_E_NOMEM;
  rc = sonde_grammar_walk_cycles(g, acc_visit, &a);
  free(a.map);
  if (rc) {
    free(a.v);
    return rc;
  }
  uint64_t total = 0;
  for (size_t k = 0; k < a.n; k++)
    total += a.v[k].count;
  if (a.n > 1)
    qsort(a.v, a.n, sizeof *a.v, cmp_cycle);
  *out = a.v;
  *n = a.n;
  *total_cycles = total;
  return 0;
}

int sonde_grammar_cycle_classes(struct sonde_grammar *g, const struct sonde_grammar_cycle *cycles,
                                size_t n, uint32_t **classes, uint64_t *total_cycles)
{
  *classes = NULL;
  uint64_t total = 0;
  int rc = sonde_grammar_walk_cycles(g, count_cb, &total);
  if (rc)
    return rc;
  if ((rc = grammar_compute_hashes(g)))
    return rc;
  struct cyc_acc a = {.g = g, .mask = 255};
  a.map = calloc(a.mask + 1, sizeof *a.map);
  a.classes = malloc((size_t)(total ? total : 1) * sizeof *a.classes);
  /* Pre-load the caller's order so class numbers are indices into `cycles`. */
  a.v = malloc((n ? n : 1) * sizeof *a.v);
  if (!a.map || !a.classes || !a.v) {
    free(a.map);
    free(a.classes);
    free(a.v);
    return SONDE_E_NOMEM;
  }
  a.cap = n ? n : 1;
  for (size_t k = 0; k < n && !rc; k++) {
    a.v[a.n] = cycles[k];
    a.map[acc_slot(&a, cycles[k].hash, cycles[k].length)] = (uint32_t)++a.n;
    if (a.n * 2 > a.mask)
      rc = acc_grow(&a);
  }
  if (!rc)
    rc = sonde_grammar_walk_cycles(g, acc_visit, &a);
  if (!rc && a.n != n)
    rc = SONDE_E_ARG; /* `cycles` was not this grammar's */
  free(a.map);
  free(a.v);
  if (rc) {
    free(a.classes);
    return rc;
  }
  *classes = a.classes;
  *total_cycles = total;
  return 0;
}

/* ---- SVG ----------------------------------------------------------------- */

/* Escaped text, cut to at most `max` characters (UTF-8 sequences kept whole). */
static void xml_text_max(FILE *out, const char *s, size_t max)
{
  size_t chars = 0;
  for (; s && *s; s++) {
    if (((unsigned char)*s & 0xC0) != 0x80 && ++chars > max) {
      fputs("…", out);
      return;
    }
    switch (*s) {
    case '<': fputs("&lt;", out); break;
    case '>': fputs("&gt;", out); break;
    case '&': fputs("&amp;", out); break;
    case '"': fputs("&quot;", out); break;
    default:
      if ((unsigned char)*s >= 0x20 || *s == '\t')
        fputc(*s, out);
    }
  }
}

static void xml_text(FILE *out, const char *s) { xml_text_max(out, s, 100); }

static const char *const palette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
                                      "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
                                      "#86bcb6", "#d37295"};
#define NPAL (sizeof palette / sizeof *palette)

int sonde_grammar_svg_pie(FILE *out, const struct sonde_grammar_cycle *cycles, size_t n,
                          uint64_t total, const char *const *labels, size_t max_slices,
                          const char *title)
{
  if (max_slices < 2)
    max_slices = 2;
  size_t shown = n <= max_slices ? n : max_slices - 1;
  uint64_t other = 0;
  for (size_t k = shown; k < n; k++)
    other += cycles[k].count;
  size_t rows = shown + (other ? 1 : 0);
  int h = 360 > 60 + 22 * (int)rows ? 360 : 60 + 22 * (int)rows;
  const double cx = 170, cy = 190, r = 140;
  fprintf(out,
          "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
          "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"900\" height=\"%d\" "
          "viewBox=\"0 0 900 %d\" font-family=\"sans-serif\" font-size=\"13\">\n"
          "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n<text x=\"10\" y=\"22\" "
          "font-size=\"16\">",
          h, h);
  xml_text(out, title ? title : "Cycles");
  fputs("</text>\n", out);
  double a0 = -1.5707963267948966;
  for (size_t k = 0; k < rows; k++) {
    uint64_t c = k < shown ? cycles[k].count : other;
    double frac = total ? (double)c / (double)total : 0;
    const char *col = k < shown ? palette[k % NPAL] : "#cccccc";
    if (frac >= 0.999999) {
      fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" fill=\"%s\"/>\n", cx, cy, r, col);
    } else if (frac > 0) {
      double a1 = a0 + frac * 6.283185307179586;
      fprintf(out,
              "<path d=\"M%.2f,%.2f L%.2f,%.2f A%.1f,%.1f 0 %d 1 %.2f,%.2f Z\" fill=\"%s\" "
              "stroke=\"white\" stroke-width=\"1\"/>\n",
              cx, cy, cx + r * cos(a0), cy + r * sin(a0), r, r,
              frac > 0.5 ? 1 : 0, cx + r * cos(a1), cy + r * sin(a1), col);
      a0 = a1;
    }
    double y = 50 + 22.0 * (double)k;
    fprintf(out, "<rect x=\"340\" y=\"%.0f\" width=\"14\" height=\"14\" fill=\"%s\"/>\n", y, col);
    fprintf(out, "<text x=\"362\" y=\"%.0f\">", y + 12);
    if (k < shown)
      xml_text_max(out, labels && labels[k] ? labels[k] : "cycle", 56);
    else
      fprintf(out, "other (%zu cycles)", n - shown);
    fprintf(out, " — %llu (%.2f%%)</text>\n", (unsigned long long)c, 100.0 * frac);
  }
  fputs("</svg>\n", out);
  return ferror(out) ? SONDE_E_IO : 0;
}

int sonde_grammar_svg_timeline(FILE *out, const struct sonde_grammar_cycle *cycles, size_t n,
                               const uint32_t *classes, uint64_t total, const char *const *labels,
                               size_t max_rows, size_t highlight, const char *title)
{
  if (!max_rows)
    max_rows = 1;
  size_t rows = n < max_rows ? n : max_rows;
  bool extra = highlight < n && highlight >= rows; /* highlighted row beyond the top ones */
  size_t nrow = rows + (extra ? 1 : 0);
  const int W = 1000, left = 300, top = 40, rh = 18;
  int plot = W - left - 20;
  int h = top + rh * (int)nrow + 40;
  fprintf(out,
          "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
          "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
          "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n"
          "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n<text x=\"10\" y=\"22\" "
          "font-size=\"16\">",
          W, h, W, h);
  xml_text(out, title ? title : "Cycles in time");
  fputs("</text>\n", out);
  uint8_t *seen = calloc((size_t)plot, 1);
  if (!seen)
    return SONDE_E_NOMEM;
  for (size_t rr = 0; rr < nrow; rr++) {
    size_t c = rr < rows ? rr : highlight;
    int y = top + rh * (int)rr;
    const char *col = c == highlight ? "#d62728" : palette[c % NPAL];
    fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", left - 8, y + 12);
    xml_text_max(out, labels && labels[c] ? labels[c] : "cycle", 30);
    fprintf(out, " (%llu)</text>\n", (unsigned long long)cycles[c].count);
    fprintf(out, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#eeeeee\"/>\n", left,
            y + 8, left + plot, y + 8);
    memset(seen, 0, (size_t)plot);
    fprintf(out, "<path stroke=\"%s\" stroke-width=\"1\" d=\"", col);
    for (uint64_t k = 0; k < total; k++) {
      if (classes[k] != c)
        continue;
      int x = total > 1 ? (int)((double)k * (plot - 1) / (double)(total - 1)) : 0;
      if (seen[x])
        continue;
      seen[x] = 1;
      fprintf(out, "M%d,%dv14", left + x, y + 1);
    }
    fputs("\"/>\n", out);
  }
  int ya = top + rh * (int)nrow + 8;
  fprintf(out,
          "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n"
          "<text x=\"%d\" y=\"%d\">0</text>\n<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%llu</text>\n"
          "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">cycle index</text>\n",
          left, ya, left + plot, ya, left, ya + 16, left + plot, ya + 16,
          (unsigned long long)(total ? total - 1 : 0), left + plot / 2, ya + 16);
  fputs("</svg>\n", out);
  free(seen);
  return ferror(out) ? SONDE_E_IO : 0;
}
