/* Reading LSU traces: Sonde's `--trace-lsu` CSV (src/trace) and the CSV of the
 * FrankenTrace tools (val_PC,val_addr_16b,val_data,next_ts_PC,next_ts_addr_16b,
 * next_ts_data,direction,comparator,width,pc_label,addr_label,pair_id,...). */
#include <stdlib.h>
#include <string.h>

#include "csv_fields.h"
#include "load_file.h"
#include "sonde/frankentrace.h"
#include "sonde/trace.h"

struct vec {
  struct sonde_ft_xfer *x;
  size_t n, cap;
};

static int push(struct vec *v, const struct sonde_ft_xfer *x)
{
  if (v->n == v->cap) {
    size_t cap = v->cap ? 2 * v->cap : 1024;
    struct sonde_ft_xfer *p = realloc(v->x, cap * sizeof *p);
    if (!p)
      return SONDE_E_NOMEM;
    v->x = p;
    v->cap = cap;
  }
  v->x[v->n++] = *x;
  return 0;
}

static int read_sonde(const void *data, size_t len, const char *name, struct vec *v,
                      struct sonde_diag *diag)
{
  struct sonde_lsutrace_reader *r;
  int rc = sonde_lsutrace_reader_new_buffer(data, len, name, &r, diag);
  if (rc)
    return rc;
  struct sonde_lsutrace_record rec;
  while ((rc = sonde_lsutrace_next(r, &rec)) == 1) {
    struct sonde_ft_xfer x = {0, 0, rec.pc, rec.addr, rec.value, (uint8_t)rec.size, rec.write,
                              rec.gap, rec.cycle, rec.cycle};
    if ((rc = push(v, &x))) {
      sonde_diag_set(diag, rc, "%s: out of memory", name);
      break;
    }
  }
  if (rc < 0 && rc != SONDE_E_NOMEM)
    sonde_diag_set(diag, rc, "%s", sonde_lsutrace_reader_error_detail(r));
  sonde_lsutrace_reader_free(r);
  return rc < 0 ? rc : 0;
}

/* Column indexes of the FrankenTrace LSU CSV, found by name. An empty val_PC
 * is an unknown PC (0xFFFFFFFF); every other column must be there. */
enum { C_PC, C_ADDR, C_DATA, C_TS, C_DIR, C_CMP, C_WIDTH, C_PAIR, C_COUNT };

static int read_ft(const char *data, size_t len, const char *name, struct vec *v,
                   struct sonde_diag *diag)
{
  static const char *const names[C_COUNT] = {"val_PC",    "val_addr_16b", "val_data", "next_ts_data",
                                             "direction", "comparator",   "width",    "pair_id"};
  struct ft_csv c = {.data = data, .len = len};
  size_t col[C_COUNT];
  if (ft_csv_next(&c) != 1)
    return sonde_diag_set(diag, SONDE_E_FORMAT, "%s: offset 0: bad header", name);
  for (int k = 0; k < C_COUNT; k++) {
    col[k] = SIZE_MAX;
    for (size_t i = 0; i < c.nfields; i++)
      if (ft_csv_is(&c, i, names[k]))
        col[k] = i;
    if (col[k] == SIZE_MAX)
      return sonde_diag_set(diag, SONDE_E_FORMAT, "%s: offset 0: header has no column %s", name,
                            names[k]);
  }
  int got;
  while ((got = ft_csv_next(&c)) == 1) {
    if (c.nfields == 1 && c.flen[0] == 0)
      continue;
    uint64_t pc, addr, val, ts, cmp, width, pair;
    const char *why = NULL;
    bool w = ft_csv_is(&c, col[C_DIR], "Write"), rd = ft_csv_is(&c, col[C_DIR], "Read");
    if (col[C_PC] < c.nfields && c.flen[col[C_PC]] == 0)
      pc = 0xFFFFFFFFu; /* the PC packet was not captured (hello_world has 1,265) */
    else if (!ft_csv_u64(&c, col[C_PC], true, &pc) || pc > UINT32_MAX)
      why = "bad val_PC";
    else if (!ft_csv_u64(&c, col[C_ADDR], true, &addr) || addr > UINT32_MAX)
      why = "bad val_addr_16b";
    else if (!ft_csv_u64(&c, col[C_DATA], true, &val) || val > UINT32_MAX)
      why = "bad val_data";
    else if (!ft_csv_u64(&c, col[C_TS], false, &ts))
      why = "bad next_ts_data";
    else if (!w && !rd)
      why = "bad direction (Read or Write)";
    else if (!ft_csv_u64(&c, col[C_CMP], false, &cmp) || cmp > 3)
      why = "bad comparator (0..3)";
    else if (!ft_csv_u64(&c, col[C_WIDTH], false, &width) ||
             (width != 1 && width != 2 && width != 4))
      why = "bad width (1, 2 or 4)";
    else if (!ft_csv_u64(&c, col[C_PAIR], false, &pair) || pair > UINT32_MAX)
      why = "bad pair_id";
    if (why)
      return sonde_diag_set(diag, SONDE_E_FORMAT, "%s: line %llu, offset %zu: %s", name,
                            (unsigned long long)c.line, c.row_offset, why);
    struct sonde_ft_xfer x = {(uint32_t)cmp, (uint32_t)pair, (uint32_t)pc, (uint32_t)addr,
                              (uint32_t)val, (uint8_t)width, w, false, ts, UINT64_MAX};
    if (push(v, &x))
      return sonde_diag_set(diag, SONDE_E_NOMEM, "%s: out of memory", name);
  }
  if (got < 0)
    return sonde_diag_set(diag, SONDE_E_FORMAT,
                          "%s: line %llu, offset %zu: unterminated quote or too many fields", name,
                          (unsigned long long)c.line, c.row_offset);
  return 0;
}

int sonde_ft_lsu_read_buffer(const void *data, size_t len, const char *name,
                             struct sonde_ft_xfer **out, size_t *count, struct sonde_diag *diag)
{
  struct vec v = {0};
  *out = NULL;
  *count = 0;
  if (!name)
    name = "<buffer>";
  int rc = len >= 7 && memcmp(data, "val_PC,", 7) == 0 ? read_ft(data, len, name, &v, diag)
                                                       : read_sonde(data, len, name, &v, diag);
  if (rc) {
    free(v.x);
    return rc;
  }
  *out = v.x;
  *count = v.n;
  return 0;
}

int sonde_ft_lsu_read(const char *path, struct sonde_ft_xfer **out, size_t *count,
                      struct sonde_diag *diag)
{
  char *data;
  size_t len;
  *out = NULL;
  *count = 0;
  int rc = ft_load_file(path, &data, &len, diag);
  if (rc)
    return rc;
  rc = sonde_ft_lsu_read_buffer(data, len, path, out, count, diag);
  free(data);
  return rc;
}
