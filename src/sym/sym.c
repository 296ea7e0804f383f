/* Sonde symbols: ELF symbol table, DWARF line tables and disassembly for
 * target addresses (see include/sonde/sym.h for the model).
 *
 * Follows ELF for the Arm Architecture (IHI 0044) sections "Symbol values"
 * (Thumb bit) and "Mapping symbols", and DWARF section 6.2 (line programs,
 * decoded for us by libdw). Lookups are binary searches over arrays built
 * once; nothing is allocated per query. */
#include "sonde/sym.h"

#include <capstone/capstone.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct sym_sec {        /* an allocated section with bytes in the file */
  uint32_t addr, size;
  const uint8_t *bytes; /* NULL for NOBITS */
  bool exec;
};

struct sym_fn {         /* one function / code label, sorted by start */
  uint32_t start, end;  /* end exclusive (label: end of its section) */
  uint32_t size;
  const char *name;
  uint8_t global, thumb;
};

struct sym_named {      /* any named symbol, sorted by name for _address */
  const char *name;
  uint32_t addr, size;
  uint8_t is_func;
};

struct sym_map {        /* ARM mapping symbol: $t/$a code, $d data */
  uint32_t addr;
  char kind;
};

struct sym_row {        /* one merged DWARF line-table row */
  uint32_t addr;
  uint32_t line;
  uint32_t column;
  uint32_t order;       /* position in the original tables (stable sort) */
  const char *file;
  uint8_t end_seq;
};

struct sonde_sym {
  char *path;
  int fd;
  Elf *elf;
  unsigned machine;
  uint32_t entry;
  struct sonde_diag diag;

  struct sym_sec *secs;
  size_t nsecs;
  struct sym_fn *fns;
  size_t nfns;
  struct sym_named *named;
  size_t nnamed;
  struct sym_map *maps;
  size_t nmaps;

  /* DWARF, loaded on first use */
  bool lines_tried;
  Dwarf *dw;
  struct sym_row *rows;
  size_t nrows;

  /* capstone, opened on first use */
  bool cs_tried;
  csh cs;
  bool cs_ok;
};

/* ---- open --------------------------------------------------------------- */

struct fn_cand {
  uint32_t start, end, size;
  const char *name;
  uint8_t is_func, rank, thumb;
  uint32_t order;
};

static int cmp_cand(const void *a, const void *b)
{
  const struct fn_cand *x = a, *y = b;
  if (x->start != y->start)
    return x->start < y->start ? -1 : 1;
  if (x->is_func != y->is_func) /* FUNC before a plain label */
    return x->is_func ? -1 : 1;
  if (x->rank != y->rank)       /* GLOBAL, WEAK, LOCAL */
    return x->rank < y->rank ? -1 : 1;
  return x->order < y->order ? -1 : (x->order > y->order);
}

static int cmp_named(const void *a, const void *b)
{
  const struct sym_named *x = a, *y = b;
  int c = strcmp(x->name, y->name);
  if (c)
    return c;
  if (x->is_func != y->is_func)
    return x->is_func ? -1 : 1;
  return x->addr < y->addr ? -1 : (x->addr > y->addr);
}

static int cmp_map(const void *a, const void *b)
{
  const struct sym_map *x = a, *y = b;
  return x->addr < y->addr ? -1 : (x->addr > y->addr);
}

static bool is_mapping_name(const char *n)
{
  /* "$a", "$t", "$d", optionally followed by ".<anything>" (IHI 0044). */
  return n[0] == '$' && (n[1] == 'a' || n[1] == 't' || n[1] == 'd') &&
         (n[2] == 0 || n[2] == '.');
}

static int load_sections(struct sonde_sym *s)
{
  size_t shnum = 0;
  if (elf_getshdrnum(s->elf, &shnum) != 0)
    return sonde_diag_set(&s->diag, SONDE_E_FORMAT, "%s: cannot read section headers: %s",
                          s->path, elf_errmsg(-1));
  s->secs = calloc(shnum ? shnum : 1, sizeof *s->secs);
  if (!s->secs)
    return SONDE_E_NOMEM;
  s->nsecs = shnum;
  Elf_Scn *scn = NULL;
  while ((scn = elf_nextscn(s->elf, scn)) != NULL) {
    GElf_Shdr sh;
    size_t idx = elf_ndxscn(scn);
    if (!gelf_getshdr(scn, &sh) || idx >= shnum)
      continue;
    if (!(sh.sh_flags & SHF_ALLOC))
      continue;
    struct sym_sec *sec = &s->secs[idx];
    sec->addr = (uint32_t)sh.sh_addr;
    sec->size = (uint32_t)sh.sh_size;
    sec->exec = (sh.sh_flags & SHF_EXECINSTR) != 0;
    if (sh.sh_type != SHT_NOBITS && sh.sh_size) {
      Elf_Data *d = elf_getdata(scn, NULL);
      if (d && d->d_buf && d->d_size >= sh.sh_size)
        sec->bytes = d->d_buf;
    }
  }
  return 0;
}

static int load_symbols(struct sonde_sym *s)
{
  Elf_Scn *scn = NULL, *symscn = NULL;
  GElf_Shdr symsh;
  while ((scn = elf_nextscn(s->elf, scn)) != NULL) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh))
      continue;
    if (sh.sh_type == SHT_SYMTAB || (sh.sh_type == SHT_DYNSYM && !symscn)) {
      symscn = scn;
      symsh = sh;
    }
  }
  if (!symscn)
    return 0; /* stripped: every lookup says NOTFOUND */
  Elf_Data *data = elf_getdata(symscn, NULL);
  if (!data || !symsh.sh_entsize)
    return sonde_diag_set(&s->diag, SONDE_E_FORMAT, "%s: unreadable symbol table", s->path);
  size_t n = symsh.sh_size / symsh.sh_entsize;
  struct fn_cand *c = calloc(n ? n : 1, sizeof *c);
  s->named = calloc(n ? n : 1, sizeof *s->named);
  s->maps = calloc(n ? n : 1, sizeof *s->maps);
  if (!c || !s->named || !s->maps) {
    free(c);
    return SONDE_E_NOMEM;
  }
  size_t nc = 0;
  bool arm = s->machine == EM_ARM;
  for (size_t i = 1; i < n; i++) {
    GElf_Sym sym;
    if (!gelf_getsym(data, (int)i, &sym))
      continue;
    const char *name = elf_strptr(s->elf, symsh.sh_link, sym.st_name);
    if (!name || !*name)
      continue;
    int type = GELF_ST_TYPE(sym.st_info), bind = GELF_ST_BIND(sym.st_info);
    if (type == STT_SECTION || type == STT_FILE)
      continue;
    const struct sym_sec *sec = NULL;
    if (sym.st_shndx != SHN_UNDEF && sym.st_shndx < s->nsecs && sym.st_shndx < SHN_LORESERVE)
      sec = &s->secs[sym.st_shndx];
    if (sym.st_shndx == SHN_UNDEF)
      continue;
    uint32_t value = (uint32_t)sym.st_value;
    if (is_mapping_name(name)) {
      if (sec && sec->exec) {
        s->maps[s->nmaps].addr = value & ~1u;
        s->maps[s->nmaps].kind = name[1] == 'd' ? 'd' : 't';
        s->nmaps++;
      }
      continue;
    }
    bool thumb = arm && type == STT_FUNC && (value & 1);
    uint32_t addr = (arm && type == STT_FUNC) ? (value & ~1u) : value;
    s->named[s->nnamed++] = (struct sym_named){name, addr, (uint32_t)sym.st_size,
                                               type == STT_FUNC};
    bool code_label = type == STT_NOTYPE && sec && sec->exec && addr >= sec->addr &&
                      addr < sec->addr + sec->size && name[0] != '$';
    if (type != STT_FUNC && !code_label)
      continue;
    struct fn_cand *f = &c[nc++];
    f->start = addr;
    f->size = (uint32_t)sym.st_size;
    f->name = name;
    f->is_func = type == STT_FUNC;
    f->rank = bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2;
    f->thumb = thumb;
    f->order = (uint32_t)i;
    if (f->size)
      f->end = addr + f->size;
    else if (sec)
      f->end = sec->addr + sec->size;
    else
      f->end = addr + 1;
  }
  qsort(c, nc, sizeof *c, cmp_cand);
  s->fns = calloc(nc ? nc : 1, sizeof *s->fns);
  if (!s->fns) {
    free(c);
    return SONDE_E_NOMEM;
  }
  for (size_t i = 0; i < nc; i++) {
    if (s->nfns && s->fns[s->nfns - 1].start == c[i].start) {
      /* an alias at the same start: keep the preferred name, widest size */
      struct sym_fn *p = &s->fns[s->nfns - 1];
      if (c[i].is_func && c[i].size > p->size) {
        p->size = c[i].size;
        p->end = c[i].end;
      }
      continue;
    }
    s->fns[s->nfns++] = (struct sym_fn){c[i].start, c[i].end, c[i].size, c[i].name,
                                        c[i].rank < 2, c[i].thumb};
  }
  /* A label's range stops at the next entry (it names only the code up to it). */
  for (size_t i = 0; i + 1 < s->nfns; i++)
    if (!s->fns[i].size && s->fns[i].end > s->fns[i + 1].start)
      s->fns[i].end = s->fns[i + 1].start;
  free(c);
  qsort(s->named, s->nnamed, sizeof *s->named, cmp_named);
  qsort(s->maps, s->nmaps, sizeof *s->maps, cmp_map);
  return 0;
}

/* A cut or corrupt ELF must not pass for one without symbols: every table
 * and every section with contents lies inside the file. */
static int check_extent(Elf *elf, const GElf_Ehdr *eh, int fd, const char *path,
                        struct sonde_diag *diag)
{
  struct stat st;
  if (fstat(fd, &st) != 0)
    return sonde_diag_set(diag, SONDE_E_IO, "%s: %s", path, strerror(errno));
  const uint64_t size = (uint64_t)st.st_size;
  const uint64_t sh_end = eh->e_shoff + (uint64_t)eh->e_shnum * eh->e_shentsize;
  const uint64_t ph_end = eh->e_phoff + (uint64_t)eh->e_phnum * eh->e_phentsize;
  if (sh_end > size)
    return sonde_diag_set(diag, SONDE_E_FORMAT,
                          "%s: truncated or corrupt ELF: section headers end at byte %llu of %llu",
                          path, (unsigned long long)sh_end, (unsigned long long)size);
  if (ph_end > size)
    return sonde_diag_set(diag, SONDE_E_FORMAT,
                          "%s: truncated or corrupt ELF: program headers end at byte %llu of %llu",
                          path, (unsigned long long)ph_end, (unsigned long long)size);
  for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh))
      return sonde_diag_set(diag, SONDE_E_FORMAT, "%s: bad section header: %s", path,
                            elf_errmsg(-1));
    if (sh.sh_type != SHT_NOBITS && sh.sh_offset + sh.sh_size > size)
      return sonde_diag_set(diag, SONDE_E_FORMAT,
                            "%s: truncated or corrupt ELF: section %zu ends at byte %llu of %llu",
                            path, elf_ndxscn(scn),
                            (unsigned long long)(sh.sh_offset + sh.sh_size),
                            (unsigned long long)size);
  }
  return 0;
}

int sonde_sym_open(const char *path, struct sonde_sym **out, struct sonde_diag *diag)
{
  struct sonde_diag dummy;
  if (!diag)
    diag = &dummy;
  sonde_diag_clear(diag);
  if (!out)
    return SONDE_E_ARG;
  *out = NULL;
  if (!path)
    return sonde_diag_set(diag, SONDE_E_ARG, "no ELF file given");
  elf_version(EV_CURRENT);
  struct sonde_sym *s = calloc(1, sizeof *s);
  if (!s)
    return sonde_diag_set(diag, SONDE_E_NOMEM, "%s: out of memory", path);
  s->fd = -1;
  s->path = strdup(path);
  if (!s->path) {
    free(s);
    return sonde_diag_set(diag, SONDE_E_NOMEM, "%s: out of memory", path);
  }
  int err;
  s->fd = open(path, O_RDONLY | O_CLOEXEC);
  if (s->fd < 0) {
    err = sonde_diag_set(diag, SONDE_E_IO, "%s: %s", path, strerror(errno));
    goto fail;
  }
  s->elf = elf_begin(s->fd, ELF_C_READ_MMAP, NULL);
  if (!s->elf || elf_kind(s->elf) != ELF_K_ELF) {
    err = sonde_diag_set(diag, SONDE_E_FORMAT, "%s: not an ELF file", path);
    goto fail;
  }
  GElf_Ehdr eh;
  if (!gelf_getehdr(s->elf, &eh)) {
    err = sonde_diag_set(diag, SONDE_E_FORMAT, "%s: bad ELF header: %s", path, elf_errmsg(-1));
    goto fail;
  }
  if (gelf_getclass(s->elf) != ELFCLASS32) {
    err = sonde_diag_set(diag, SONDE_E_FORMAT, "%s: not a 32-bit ELF (Cortex-M images are ELF32)",
                         path);
    goto fail;
  }
  if ((err = check_extent(s->elf, &eh, s->fd, path, diag)) < 0)
    goto fail;
  s->machine = eh.e_machine;
  s->entry = (uint32_t)eh.e_entry;
  if ((err = load_sections(s)) < 0 || (err = load_symbols(s)) < 0) {
    sonde_diag_set(diag, err, "%s", s->diag.msg[0] ? s->diag.msg : sonde_strerror(err));
    goto fail;
  }
  *out = s;
  return 0;
fail:
  sonde_sym_free(s);
  return err;
}

void sonde_sym_free(struct sonde_sym *s)
{
  if (!s)
    return;
  if (s->cs_ok)
    cs_close(&s->cs);
  if (s->dw)
    dwarf_end(s->dw);
  if (s->elf)
    elf_end(s->elf);
  if (s->fd >= 0)
    close(s->fd);
  free(s->rows);
  free(s->secs);
  free(s->fns);
  free(s->named);
  free(s->maps);
  free(s->path);
  free(s);
}

const char *sonde_sym_error_detail(const struct sonde_sym *s) { return s ? s->diag.msg : ""; }
const char *sonde_sym_path(const struct sonde_sym *s) { return s ? s->path : ""; }
unsigned sonde_sym_machine(const struct sonde_sym *s) { return s ? s->machine : 0; }
uint32_t sonde_sym_entry(const struct sonde_sym *s) { return s ? s->entry : 0; }

size_t sonde_sym_build_id(const struct sonde_sym *s, uint8_t *out, size_t cap, uint32_t *addr)
{
  if (addr)
    *addr = 0;
  if (!s)
    return 0;
  for (Elf_Scn *scn = elf_nextscn(s->elf, NULL); scn; scn = elf_nextscn(s->elf, scn)) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
      continue;
    Elf_Data *d = elf_getdata(scn, NULL);
    GElf_Nhdr nh;
    size_t off = 0, name_off, desc_off, next;
    while (d && (next = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
      if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
          !memcmp((const char *)d->d_buf + name_off, "GNU", 4) && nh.n_descsz) {
        size_t n = nh.n_descsz < cap ? nh.n_descsz : cap;
        if (out && n)
          memcpy(out, (const uint8_t *)d->d_buf + desc_off, n);
        if (addr && (sh.sh_flags & SHF_ALLOC))
          *addr = (uint32_t)(sh.sh_addr + desc_off);
        return nh.n_descsz;
      }
      off = next;
    }
  }
  return 0;
}

/* ---- functions ---------------------------------------------------------- */

static uint32_t code_addr(const struct sonde_sym *s, uint32_t addr)
{
  return s->machine == EM_ARM ? (addr & ~1u) : addr;
}

size_t sonde_sym_func_count(const struct sonde_sym *s) { return s ? s->nfns : 0; }

static void fill_func(const struct sym_fn *f, struct sonde_sym_func *out)
{
  if (out)
    *out = (struct sonde_sym_func){f->name, f->start, f->size, f->global, f->thumb};
}

int sonde_sym_func_at(const struct sonde_sym *s, size_t i, struct sonde_sym_func *out)
{
  if (!s || i >= s->nfns)
    return SONDE_E_RANGE;
  fill_func(&s->fns[i], out);
  return 0;
}

long sonde_sym_lookup(const struct sonde_sym *s, uint32_t addr, struct sonde_sym_func *out,
                      uint32_t *offset)
{
  if (!s)
    return SONDE_E_ARG;
  addr = code_addr(s, addr);
  /* last entry with start <= addr */
  size_t lo = 0, hi = s->nfns;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (s->fns[mid].start <= addr)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == 0)
    return SONDE_E_NOTFOUND;
  const struct sym_fn *f = &s->fns[lo - 1];
  if (addr >= f->end)
    return SONDE_E_NOTFOUND;
  fill_func(f, out);
  if (offset)
    *offset = addr - f->start;
  return (long)(lo - 1);
}

const char *sonde_sym_name(const struct sonde_sym *s, uint32_t addr, uint32_t *offset)
{
  struct sonde_sym_func f;
  if (sonde_sym_lookup(s, addr, &f, offset) < 0)
    return NULL;
  return f.name;
}

int sonde_sym_format(const struct sonde_sym *s, uint32_t addr, char *buf, size_t cap)
{
  uint32_t off = 0;
  const char *n = sonde_sym_name(s, addr, &off);
  if (!n)
    return snprintf(buf, cap, "0x%08x", addr);
  if (!off)
    return snprintf(buf, cap, "%s", n);
  return snprintf(buf, cap, "%s+0x%x", n, off);
}

int sonde_sym_address(const struct sonde_sym *s, const char *name, uint32_t *addr,
                      uint32_t *size)
{
  if (!s || !name)
    return SONDE_E_ARG;
  size_t lo = 0, hi = s->nnamed;
  while (lo < hi) { /* first entry with name >= wanted */
    size_t mid = lo + (hi - lo) / 2;
    if (strcmp(s->named[mid].name, name) < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == s->nnamed || strcmp(s->named[lo].name, name) != 0)
    return sonde_diag_set((struct sonde_diag *)&s->diag, SONDE_E_NOTFOUND,
                          "%s: no symbol '%s'", s->path, name);
  if (addr)
    *addr = s->named[lo].addr;
  if (size)
    *size = s->named[lo].size;
  return 0;
}

/* ---- source lines ------------------------------------------------------- */

static int cmp_row(const void *a, const void *b)
{
  const struct sym_row *x = a, *y = b;
  if (x->addr != y->addr)
    return x->addr < y->addr ? -1 : 1;
  /* At one address an end-of-sequence row sorts first, so the row that
   * starts the next sequence there is the one found. */
  if (x->end_seq != y->end_seq)
    return x->end_seq ? -1 : 1;
  return x->order < y->order ? -1 : (x->order > y->order);
}

static int load_lines(struct sonde_sym *s)
{
  s->lines_tried = true;
  s->dw = dwarf_begin_elf(s->elf, DWARF_C_READ, NULL);
  if (!s->dw)
    return 0;
  size_t cap = 0;
  Dwarf_Off off = 0, next;
  size_t hsize;
  while (dwarf_nextcu(s->dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
    Dwarf_Die cu;
    Dwarf_Lines *lines;
    size_t n;
    if (dwarf_offdie(s->dw, off + hsize, &cu) && dwarf_getsrclines(&cu, &lines, &n) == 0) {
      if (s->nrows + n > cap) {
        size_t ncap = cap ? cap * 2 : 1024;
        while (ncap < s->nrows + n)
          ncap *= 2;
        struct sym_row *r = realloc(s->rows, ncap * sizeof *r);
        if (!r)
          return sonde_diag_set(&s->diag, SONDE_E_NOMEM, "%s: out of memory for line table",
                                s->path);
        s->rows = r;
        cap = ncap;
      }
      for (size_t i = 0; i < n; i++) {
        Dwarf_Line *l = dwarf_onesrcline(lines, i);
        Dwarf_Addr a;
        int ln = 0, col = 0;
        bool end = false;
        if (!l || dwarf_lineaddr(l, &a) != 0)
          continue;
        dwarf_lineno(l, &ln);
        dwarf_linecol(l, &col);
        dwarf_lineendsequence(l, &end);
        const char *file = dwarf_linesrc(l, NULL, NULL);
        struct sym_row *r = &s->rows[s->nrows];
        r->addr = (uint32_t)a;
        r->line = ln > 0 ? (uint32_t)ln : 0;
        r->column = col > 0 ? (uint32_t)col : 0;
        r->file = file ? file : "??";
        r->end_seq = end;
        r->order = (uint32_t)s->nrows;
        s->nrows++;
      }
    }
    off = next;
  }
  if (s->nrows)
    qsort(s->rows, s->nrows, sizeof *s->rows, cmp_row);
  return 0;
}

bool sonde_sym_has_lines(struct sonde_sym *s)
{
  if (!s)
    return false;
  if (!s->lines_tried)
    load_lines(s);
  return s->nrows > 0;
}

int sonde_sym_line(struct sonde_sym *s, uint32_t addr, struct sonde_sym_line *out)
{
  if (!s)
    return SONDE_E_ARG;
  if (!s->lines_tried) {
    int err = load_lines(s);
    if (err < 0)
      return err;
  }
  addr = code_addr(s, addr);
  size_t lo = 0, hi = s->nrows;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (s->rows[mid].addr <= addr)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == 0 || s->rows[lo - 1].end_seq)
    return SONDE_E_NOTFOUND;
  const struct sym_row *r = &s->rows[lo - 1];
  if (out)
    *out = (struct sonde_sym_line){r->file, r->line, r->column, r->addr};
  return 0;
}

/* ---- bytes and disassembly ------------------------------------------------ */

static const struct sym_sec *find_sec(const struct sonde_sym *s, uint32_t addr)
{
  for (size_t i = 0; i < s->nsecs; i++) {
    const struct sym_sec *sec = &s->secs[i];
    if (sec->bytes && addr >= sec->addr && addr - sec->addr < sec->size)
      return sec;
  }
  return NULL;
}

int sonde_sym_read(const struct sonde_sym *s, uint32_t addr, void *buf, size_t n)
{
  if (!s || (!buf && n))
    return SONDE_E_ARG;
  uint8_t *p = buf;
  while (n) {
    const struct sym_sec *sec = find_sec(s, addr);
    if (!sec)
      return SONDE_E_RANGE;
    size_t avail = sec->size - (addr - sec->addr);
    size_t k = avail < n ? avail : n;
    memcpy(p, sec->bytes + (addr - sec->addr), k);
    p += k;
    addr += (uint32_t)k;
    n -= k;
  }
  return 0;
}

/* Index of the last mapping symbol at or before addr, or SIZE_MAX. */
static size_t map_at(const struct sonde_sym *s, uint32_t addr)
{
  size_t lo = 0, hi = s->nmaps;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (s->maps[mid].addr <= addr)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo ? lo - 1 : (size_t)-1;
}

bool sonde_sym_is_data(const struct sonde_sym *s, uint32_t addr)
{
  if (!s)
    return false;
  size_t i = map_at(s, addr);
  return i != (size_t)-1 && s->maps[i].kind == 'd';
}

static void set_insn_raw(struct sonde_sym_insn *o, const uint8_t *b, unsigned size)
{
  uint32_t h0 = (uint32_t)b[0] | (uint32_t)b[1] << 8;
  o->raw = h0;
  if (size == 4)
    o->raw = h0 << 16 | ((uint32_t)b[2] | (uint32_t)b[3] << 8);
}

int sonde_sym_disasm(struct sonde_sym *s, uint32_t addr, struct sonde_sym_insn *out)
{
  if (!s || !out)
    return SONDE_E_ARG;
  if (s->machine != EM_ARM)
    return sonde_diag_set(&s->diag, SONDE_E_UNSUPPORTED,
                          "%s: disassembly supports ARM ELF files only", s->path);
  if (!s->cs_tried) {
    s->cs_tried = true;
    if (cs_open(CS_ARCH_ARM, CS_MODE_THUMB | CS_MODE_MCLASS, &s->cs) == CS_ERR_OK)
      s->cs_ok = true;
  }
  if (!s->cs_ok)
    return sonde_diag_set(&s->diag, SONDE_E_UNSUPPORTED, "capstone: cannot open ARM Thumb");
  addr &= ~1u;
  memset(out, 0, sizeof *out);
  out->addr = addr;
  const struct sym_sec *sec = find_sec(s, addr);
  if (!sec || sec->size - (addr - sec->addr) < 2)
    return sonde_diag_set(&s->diag, SONDE_E_RANGE, "%s: address 0x%08x is not in the image",
                          s->path, addr);
  const uint8_t *base = sec->bytes;
  uint32_t sec_end = sec->addr + sec->size;

  if (sonde_sym_is_data(s, addr)) {
    out->is_data = true;
    out->size = sec_end - addr >= 4 ? 4 : 2;
    uint32_t w = 0;
    for (unsigned i = 0; i < out->size; i++)
      w |= (uint32_t)base[addr - sec->addr + i] << (8 * i);
    out->raw = w;
    snprintf(out->mnemonic, sizeof out->mnemonic, "%s", out->size == 4 ? ".word" : ".short");
    snprintf(out->operands, sizeof out->operands, "0x%0*x", out->size * 2, w);
    return 0;
  }

  /* Start decoding at the function (or the last code mapping symbol after it,
   * or 64 bytes back) so that IT blocks and 32-bit instructions line up. */
  uint32_t from = addr;
  struct sonde_sym_func f;
  if (sonde_sym_lookup(s, addr, &f, NULL) >= 0 && f.start >= sec->addr)
    from = f.start;
  size_t mi = map_at(s, addr);
  if (mi != (size_t)-1 && s->maps[mi].addr > from && s->maps[mi].addr >= sec->addr)
    from = s->maps[mi].addr;
  if (addr - from > 4096)
    from = addr - 64;
  if (from < sec->addr)
    from = sec->addr;

  uint32_t stop = addr + 4 <= sec_end ? addr + 4 : sec_end;
  cs_insn *insn = NULL;
  size_t count = cs_disasm(s->cs, base + (from - sec->addr), stop - from, from, 0, &insn);
  for (size_t i = 0; i < count; i++) {
    if (insn[i].address == addr) {
      out->size = insn[i].size;
      set_insn_raw(out, insn[i].bytes, out->size);
      snprintf(out->mnemonic, sizeof out->mnemonic, "%s", insn[i].mnemonic);
      snprintf(out->operands, sizeof out->operands, "%s", insn[i].op_str);
      cs_free(insn, count);
      return 0;
    }
  }
  if (count)
    cs_free(insn, count);
  /* Not reached in sequence (data in between, or misaligned start): decode
   * the instruction on its own. */
  count = cs_disasm(s->cs, base + (addr - sec->addr), stop - addr, addr, 1, &insn);
  if (count == 1) {
    out->size = insn[0].size;
    set_insn_raw(out, insn[0].bytes, out->size);
    snprintf(out->mnemonic, sizeof out->mnemonic, "%s", insn[0].mnemonic);
    snprintf(out->operands, sizeof out->operands, "%s", insn[0].op_str);
    cs_free(insn, count);
    return 0;
  }
  return sonde_diag_set(&s->diag, SONDE_E_FORMAT, "%s: no valid instruction at 0x%08x", s->path,
                        addr);
}
