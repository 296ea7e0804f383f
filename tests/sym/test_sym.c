/* Tests of src/sym against things we did not write:
 *  - the FrankenTrace CC2650 PC trace (tests/data): every distinct PC in
 *    the ELF's image resolves to the function named in the `label` column
 *    with the same offset, and our disassembly's mnemonic agrees with the
 *    trace's `short_instr` (objdump syntax) where comparable;
 *  - arm-none-eabi-nm (every function symbol's address) and
 *    arm-none-eabi-addr2line (-f function names; file:line on a small ELF with
 *    DWARF compiled here by arm-none-eabi-gcc -g). */
#include "check.h"

#include <ctype.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "sonde/sym.h"

#define BLINK_ELF "frankentrace-cc2650/blink_if_see.elf"
#define BLINK_PC "frankentrace-cc2650/blink_if_see.pc_trace.csv.gz"

struct pc_row {
  uint32_t pc;
  char fn[128];
  uint32_t off;
  char instr[96];
};

static struct pc_row *rows;
static size_t nrows;

/* Split one CSV line (quotes only around short_instr) into fields. */
static int split_csv(char *line, char **f, int max)
{
  int n = 0;
  char *p = line;
  while (n < max) {
    if (*p == '"') {
      p++;
      f[n++] = p;
      while (*p && *p != '"')
        p++;
      if (*p)
        *p++ = 0;
      if (*p == ',')
        p++;
      else
        break;
    } else {
      f[n++] = p;
      while (*p && *p != ',' && *p != '\n' && *p != '\r')
        p++;
      if (*p == ',') {
        *p++ = 0;
      } else {
        *p = 0;
        break;
      }
    }
  }
  return n;
}

static void load_pc_trace(void)
{
  gzFile gz = gzopen(check_testdata(BLINK_PC), "rb");
  if (!gz) {
    fprintf(stderr, "cannot open %s\n", BLINK_PC);
    exit(1);
  }
  char line[512];
  size_t cap = 4096;
  rows = calloc(cap, sizeof *rows);
  gzgets(gz, line, sizeof line); /* header */
  while (gzgets(gz, line, sizeof line)) {
    char *f[5];
    if (split_csv(line, f, 5) < 5)
      continue;
    uint32_t pc = (uint32_t)strtoul(f[1], NULL, 16);
    bool seen = false; /* distinct PCs only (linear probe over a small set is fine) */
    for (size_t i = nrows; i-- > 0 && !seen;)
      seen = rows[i].pc == pc;
    if (seen)
      continue;
    if (nrows == cap)
      rows = realloc(rows, (cap *= 2) * sizeof *rows);
    struct pc_row *r = &rows[nrows++];
    r->pc = pc;
    char *plus = strrchr(f[3], '+');
    r->off = 0;
    if (plus) {
      *plus = 0;
      r->off = (uint32_t)strtoul(plus + 1, NULL, 16);
    }
    snprintf(r->fn, sizeof r->fn, "%s", f[3]);
    snprintf(r->instr, sizeof r->instr, "%s", f[4]);
  }
  gzclose(gz);
}

static void test_open_errors(void)
{
  struct sonde_sym *s = (struct sonde_sym *)1;
  struct sonde_diag d;
  CHECK_EQ_I(sonde_sym_open("/nonexistent/x.elf", &s, &d), SONDE_E_IO);
  CHECK(s == NULL);
  CHECK(strstr(d.msg, "/nonexistent/x.elf") != NULL);
  CHECK_EQ_I(sonde_sym_open(check_testdata(BLINK_PC), &s, &d), SONDE_E_FORMAT);
  CHECK(strstr(d.msg, "not an ELF") != NULL);
  /* the real ELF cut anywhere after its header: an error naming the file,
   * never a handle without symbols (issue 21) */
  FILE *in = fopen(check_testdata(BLINK_ELF), "rb");
  REQUIRE(in != NULL);
  static unsigned char elf[600000];
  size_t n = fread(elf, 1, sizeof elf, in);
  fclose(in);
  char cut[] = "/tmp/sonde_test_sym_cut_XXXXXX";
  int fd = mkstemp(cut);
  REQUIRE(fd >= 0);
  const size_t cuts[] = {64, 4096, 30000, n / 2, n - 1};
  for (size_t k = 0; k < sizeof cuts / sizeof cuts[0]; k++) {
    REQUIRE(ftruncate(fd, 0) == 0);
    REQUIRE(pwrite(fd, elf, cuts[k], 0) == (ssize_t)cuts[k]);
    s = (struct sonde_sym *)1;
    CHECK_EQ_I(sonde_sym_open(cut, &s, &d), SONDE_E_FORMAT);
    CHECK(s == NULL);
    CHECK(strstr(d.msg, cut) != NULL);
  }
  close(fd);
  unlink(cut);
  sonde_sym_free(NULL);
  /* NULL handles chain */
  CHECK(sonde_sym_name(NULL, 0x100, NULL) == NULL);
  CHECK_EQ_I(sonde_sym_lookup(NULL, 0, NULL, NULL), SONDE_E_ARG);
  CHECK_EQ_U(sonde_sym_func_count(NULL), 0);
}

/* objdump spells IT-block conditions and widths; reduce both sides to the bare
 * operation: drop ".n"/".w", then a trailing condition code. */
static void base_mnemonic(const char *in, char *out, size_t cap)
{
  size_t n = 0;
  while (in[n] && in[n] != ' ' && n + 1 < cap) {
    out[n] = (char)tolower((unsigned char)in[n]);
    n++;
  }
  out[n] = 0;
  char *dot = strchr(out, '.');
  if (dot)
    *dot = 0;
  static const char *cc[] = {"eq", "ne", "cs", "cc", "hs", "lo", "mi", "pl", "vs",
                             "vc", "hi", "ls", "ge", "lt", "gt", "le", "al"};
  n = strlen(out);
  /* Some mnemonics end in a condition-looking suffix; never strip those. */
  static const char *keep[] = {"bl", "teq", "bls", "bhi", "bcc", "bcs", "bvs", "bvc", "blt",
                               "bgt", "ble", "bge", "bmi", "bpl", "beq", "bne", "umlal",
                               "smlal", "mls", "vmls", NULL};
  for (int k = 0; keep[k]; k++)
    if (!strcmp(out, keep[k]))
      goto branch;
  if (n > 3)
    for (size_t i = 0; i < sizeof cc / sizeof cc[0]; i++)
      if (!strcmp(out + n - 2, cc[i])) {
        out[n - 2] = 0;
        break;
      }
branch:
  /* conditional branches: b<cc> -> b */
  if (out[0] == 'b' && strlen(out) == 3 && strcmp(out, "blx") && strcmp(out, "bic") &&
      strcmp(out, "bfc") && strcmp(out, "bfi"))
    out[1] = 0;
  /* objdump's ldmia/stmia are capstone's ldm/stm; cs "lsl" vs "lsls" etc stay */
  if (!strcmp(out, "ldmia"))
    strcpy(out, "ldm");
  if (!strcmp(out, "stmia"))
    strcpy(out, "stm");
  /* Same encodings, two spellings (ARM ARM "alias" notes): NEG is RSB #0,
   * MOV with a shifted register is the shift instruction. */
  const char *ops = strchr(in, ' ');
  if (!strncmp(out, "neg", 3))
    memcpy(out, "rsb", 3);
  if (!strcmp(out, "mov") && ops) {
    static const char *sh[] = {"lsl", "lsr", "asr", "ror"};
    for (int k = 0; k < 4; k++) {
      char pat[8];
      snprintf(pat, sizeof pat, ", %s #", sh[k]);
      if (strstr(ops, pat))
        strcpy(out, sh[k]);
    }
  }
  /* "ldmia.w sp!, {...}" is "pop.w {...}", "stmdb sp!, {...}" is "push" */
  if (ops && !strncmp(ops + 1, "sp!,", 4)) {
    if (!strcmp(out, "ldm"))
      strcpy(out, "pop");
    else if (!strcmp(out, "stmdb"))
      strcpy(out, "push");
  }
}


/* Operands as comparable tokens: registers with one name (sb/sl/fp/ip are
 * r9..r12), immediates and addresses as 32-bit unsigned decimal, "#" and
 * commas dropped, "[rN, #0]" as "[rN]" (objdump spells the zero offset). In a
 * branch, objdump's bare 8-digit target is hex. */
#define MAXTOK 24
static int op_tokens(const char *in, bool branch, char tok[MAXTOK][16])
{
  char s[200];
  size_t n = 0;
  for (; *in && n + 1 < sizeof s; in++)
    s[n++] = (char)tolower((unsigned char)*in);
  s[n] = 0;
  char *z;
  while ((z = strstr(s, ", #0]")) != NULL)
    memmove(z, z + 4, strlen(z + 4) + 1);
  int nt = 0;
  for (char *p = s; *p && nt < MAXTOK;) {
    if (*p == ' ' || *p == ',' || *p == '#') {
      p++;
      continue;
    }
    if (strchr("[]!{}^", *p)) {
      tok[nt][0] = *p++;
      tok[nt++][1] = 0;
      continue;
    }
    char w[32];
    size_t k = 0;
    while (*p && (isalnum((unsigned char)*p) || *p == '_' || *p == '-' || *p == '.') &&
           k + 1 < sizeof w)
      w[k++] = *p++;
    w[k] = 0;
    if (!k) {
      p++;
      continue;
    }
    static const char *alias[][2] = {{"sb", "r9"}, {"sl", "r10"}, {"fp", "r11"}, {"ip", "r12"}};
    for (int a = 0; a < 4; a++)
      if (!strcmp(w, alias[a][0]))
        strcpy(w, alias[a][1]);
    char *end;
    bool neg = w[0] == '-';
    const char *num = w + neg;
    if (num[0] == '0' && num[1] == 'x') {
      unsigned long long v = strtoull(num + 2, &end, 16);
      if (!*end)
        snprintf(w, sizeof w, "%u", (unsigned)(neg ? 0 - v : v));
    } else if (branch && strlen(w) == 8 && strspn(w, "0123456789abcdef") == 8) {
      snprintf(w, sizeof w, "%u", (unsigned)strtoul(w, NULL, 16));
    } else if (isdigit((unsigned char)num[0])) {
      unsigned long long v = strtoull(num, &end, 10);
      if (!*end)
        snprintf(w, sizeof w, "%u", (unsigned)(neg ? 0 - v : v));
    }
    snprintf(tok[nt++], 16, "%s", w);
  }
  return nt;
}

/* Does our "mnemonic operands" say what objdump's text says? Aliases of the
 * same encoding are accepted: NEG = RSB #0, 2-operand MULS, MOV with a shift
 * = the shift, LDMIA/STMDB sp! = POP/PUSH, IT conditions cs/cc = hs/lo. The
 * trace's text is cut at 32 characters; then only the part shown counts. */
static bool same_operands(const char *trace, const char *mnem, const char *ops)
{
  const char *sp = strchr(trace, ' ');
  char tm[32];
  snprintf(tm, sizeof tm, "%.*s", sp ? (int)(sp - trace) : (int)strlen(trace), trace);
  bool branch = (tm[0] == 'b' && strncmp(tm, "bic", 3) && strncmp(tm, "bfc", 3) &&
                 strncmp(tm, "bfi", 3)) || !strncmp(tm, "cb", 2);
  char a[MAXTOK][16], b[MAXTOK][16];
  int na = op_tokens(sp ? sp + 1 : "", branch, a), nb = op_tokens(ops, branch, b);
  int off = 0;
  if ((!strncmp(tm, "ldmia", 5) || !strncmp(tm, "stmdb", 5)) && na >= 2 &&
      !strcmp(a[0], "sp") && !strcmp(a[1], "!"))
    off = 2; /* pop/push */
  if (!strncmp(tm, "neg", 3) && nb == 3 && !strcmp(b[2], "0"))
    nb = 2;
  if (!strncmp(tm, "mul", 3) && na == 2 && nb == 3 && !strcmp(b[2], b[0]))
    nb = 2;
  if (!strncmp(tm, "mov", 3) && na == 4 && (!strcmp(a[2], "lsl") || !strcmp(a[2], "lsr") ||
                                            !strcmp(a[2], "asr") || !strcmp(a[2], "ror"))) {
    strcpy(a[2], a[3]);
    na = 3;
  }
  if (tm[0] == 'i' && tm[1] == 't')
    for (int i = 0; i < na; i++) {
      if (!strcmp(a[i], "cs"))
        strcpy(a[i], "hs");
      if (!strcmp(a[i], "cc"))
        strcpy(a[i], "lo");
    }
  bool cut = strlen(trace) >= 31;
  if (cut)
    na--; /* the last token may be cut */
  if (!cut && na - off != nb)
    return false;
  for (int i = off; i < na; i++)
    if (i - off >= nb || strcmp(a[i], b[i - off]))
      return false;
  return true;
}

static void test_blink_labels(void)
{
  struct sonde_sym *s = NULL;
  struct sonde_diag d;
  REQUIRE(sonde_sym_open(check_testdata(BLINK_ELF), &s, &d) == 0);
  CHECK_EQ_U(sonde_sym_machine(s), 40);
  size_t in_image = 0, rom = 0, unlabelled = 0, name_ok = 0, dis_cmp = 0, dis_ok = 0, ops_ok = 0;
  for (size_t i = 0; i < nrows; i++) {
    const struct pc_row *r = &rows[i];
    uint32_t off = ~0u;
    const char *name = sonde_sym_name(s, r->pc, &off);
    if (!r->fn[0]) {
      /* rows FrankenTrace could not label: junk PCs outside the image */
      CHECK(name == NULL);
      unlabelled++;
      continue;
    }
    if (r->pc >= 0x10000000 && r->pc < 0x10020000) {
      /* CC2650 ROM driverlib: not in this ELF (FrankenTrace used a ROM map). */
      rom++;
      CHECK(name == NULL);
      continue;
    }
    in_image++;
    if (name && !strcmp(name, r->fn) && off == r->off) {
      name_ok++;
    } else {
      CHECK_FAIL_("pc 0x%08x: want %s+0x%x, got %s+0x%x", r->pc, r->fn, r->off,
                  name ? name : "(none)", off);
    }
    /* Thumb bit ignored */
    CHECK(sonde_sym_name(s, r->pc | 1, NULL) == name);
    struct sonde_sym_insn in;
    if (r->instr[0] && sonde_sym_disasm(s, r->pc, &in) == 0) {
      char a[32], b[32];
      base_mnemonic(r->instr, a, sizeof a);
      base_mnemonic(in.mnemonic, b, sizeof b);
      dis_cmp++;
      if (!strcmp(a, b))
        dis_ok++;
      else
        fprintf(stderr, "note: 0x%08x: trace '%s' vs ours '%s %s'\n", r->pc, r->instr,
                in.mnemonic, in.operands);
      if (same_operands(r->instr, in.mnemonic, in.operands))
        ops_ok++;
      else
        fprintf(stderr, "note: 0x%08x: operands: trace '%s' vs ours '%s %s'\n", r->pc, r->instr,
                in.mnemonic, in.operands);
    }
  }
  printf("blink: %zu distinct PCs, %zu in image (%zu names exact), %zu in ROM, %zu unlabelled; "
         "disassembly %zu/%zu mnemonics and %zu operand lists agree\n",
         nrows, in_image, name_ok, rom, unlabelled, dis_ok, dis_cmp, ops_ok);
  CHECK_EQ_U(in_image + rom + unlabelled, nrows);
  CHECK_EQ_U(name_ok, in_image);
  CHECK(in_image > 2000);
  CHECK(dis_cmp > 2000);
  CHECK_EQ_U(dis_ok, dis_cmp);
  CHECK_EQ_U(ops_ok, dis_cmp);
  sonde_sym_free(s);
}

/* Run a command, return its stdout (malloc'd). */
static char *run_cmd(const char *cmd)
{
  FILE *p = popen(cmd, "r");
  if (!p)
    return NULL;
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  size_t k;
  while ((k = fread(buf + n, 1, cap - n - 1, p)) > 0) {
    n += k;
    if (n + 1 == cap)
      buf = realloc(buf, cap *= 2);
  }
  buf[n] = 0;
  pclose(p);
  return buf;
}

static void test_against_nm(void)
{
  struct sonde_sym *s = NULL;
  REQUIRE(sonde_sym_open(check_testdata(BLINK_ELF), &s, NULL) == 0);
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "arm-none-eabi-readelf -sW '%s'", check_testdata(BLINK_ELF));
  char *out = run_cmd(cmd);
  REQUIRE(out != NULL);
  /* readelf rows: "Num: Value Size Type Bind Vis Ndx Name" */
  size_t funcs = 0, ok = 0;
  for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
    char value[16], type[16], bind[16], vis[16], ndx[16], name[256];
    unsigned size;
    int num;
    if (sscanf(line, " %d: %15s %u %15s %15s %15s %15s %255s", &num, value, &size, type, bind,
               vis, ndx, name) != 8)
      continue;
    if (strcmp(type, "FUNC"))
      continue;
    funcs++;
    uint32_t v = (uint32_t)strtoul(value, NULL, 16);
    uint32_t a = 0, sz = 0;
    if (sonde_sym_address(s, name, &a, &sz) == 0 && a == (v & ~1u) && sz == size)
      ok++;
    else
      CHECK_FAIL_("%s: readelf 0x%x size %u, ours 0x%x size %u", name, v, size, a, sz);
    /* its start resolves to itself or an alias at the same start */
    struct sonde_sym_func f;
    uint32_t off = 1;
    CHECK(sonde_sym_lookup(s, v, &f, &off) >= 0 && off == 0 && f.start == (v & ~1u));
  }
  free(out);
  CHECK(funcs > 100);
  CHECK_EQ_U(ok, funcs);

  /* addr2line -f on a few addresses: function names agree */
  uint32_t probes[] = {0x13de, 0x2680, 0x3086, 0x956, 0x1e2c, 0x2d94};
  snprintf(cmd, sizeof cmd, "arm-none-eabi-addr2line -f -e '%s' 0x13de 0x2680 0x3086 0x956 "
           "0x1e2c 0x2d94", check_testdata(BLINK_ELF));
  out = run_cmd(cmd);
  REQUIRE(out != NULL);
  char *line = strtok(out, "\n");
  for (size_t i = 0; i < sizeof probes / sizeof probes[0] && line; i++) {
    const char *n = sonde_sym_name(s, probes[i], NULL);
    CHECK_EQ_STR(n, line);
    line = strtok(NULL, "\n"); /* file:line ("??:0": no DWARF here) */
    line = strtok(NULL, "\n");
  }
  free(out);

  /* iteration is sorted and ranges do not overlap the next start */
  size_t n = sonde_sym_func_count(s);
  CHECK(n > 100);
  struct sonde_sym_func prev = {0}, f;
  for (size_t i = 0; i < n; i++) {
    REQUIRE(sonde_sym_func_at(s, i, &f) == 0);
    if (i)
      CHECK(f.start > prev.start);
    prev = f;
  }
  CHECK_EQ_I(sonde_sym_func_at(s, n, &f), SONDE_E_RANGE);
  uint32_t a;
  CHECK_EQ_I(sonde_sym_address(s, "no_such_symbol_xyz", &a, NULL), SONDE_E_NOTFOUND);
  CHECK_EQ_I(sonde_sym_address(s, "start_trace", &a, NULL), 0);
  CHECK_EQ_U(a, 0x2638);
  char buf[64];
  sonde_sym_format(s, 0x2680, buf, sizeof buf);
  CHECK_EQ_STR(buf, "start_trace+0x48");
  sonde_sym_format(s, 0x2638, buf, sizeof buf);
  CHECK_EQ_STR(buf, "start_trace");
  sonde_sym_format(s, 0x10000b20, buf, sizeof buf);
  CHECK_EQ_STR(buf, "0x10000b20");
  CHECK(!sonde_sym_has_lines(s));
  CHECK_EQ_I(sonde_sym_line(s, 0x2680, NULL), SONDE_E_NOTFOUND);
  sonde_sym_free(s);
}

/* A small program with DWARF, compiled here; every instruction address is
 * compared with arm-none-eabi-addr2line. */
static const char *dwarf_src =
    "volatile int g;\n"
    "static int helper(int x)\n"
    "{\n"
    "  int y = x * 3;\n"
    "  if (y > 10)\n"
    "    y -= g;\n"
    "  return y;\n"
    "}\n"
    "int loop(int n)\n"
    "{\n"
    "  int s = 0;\n"
    "  for (int i = 0; i < n; i++)\n"
    "    s += helper(i);\n"
    "  return s;\n"
    "}\n"
    "void _start(void)\n"
    "{\n"
    "  g = loop(5);\n"
    "  for (;;)\n"
    "    ;\n"
    "}\n";

static void test_dwarf_lines(void)
{
  char dir[] = "/tmp/sonde_test_sym_XXXXXX";
  REQUIRE(mkdtemp(dir) != NULL);
  char src[256], elf[256], cmd[2048];
  snprintf(src, sizeof src, "%s/prog.c", dir);
  snprintf(elf, sizeof elf, "%s/prog.elf", dir);
  FILE *f = fopen(src, "w");
  REQUIRE(f != NULL);
  fputs(dwarf_src, f);
  fclose(f);
  snprintf(cmd, sizeof cmd,
           "arm-none-eabi-gcc -mcpu=cortex-m3 -mthumb -O1 -g -fno-inline -nostdlib "
           "-Wl,-Ttext=0x8000 -o '%s' '%s'",
           elf, src);
  REQUIRE(system(cmd) == 0);
  struct sonde_sym *s = NULL;
  REQUIRE(sonde_sym_open(elf, &s, NULL) == 0);
  CHECK(sonde_sym_has_lines(s));
  uint32_t start = 0, size = 0;
  REQUIRE(sonde_sym_address(s, "loop", &start, &size) == 0);
  CHECK(size > 0);
  uint32_t hs = 0, hsz = 0;
  REQUIRE(sonde_sym_address(s, "helper", &hs, &hsz) == 0);
  /* every halfword of helper() and loop() */
  size_t n = 0, ok = 0;
  uint32_t lo = hs < start ? hs : start;
  uint32_t hi = (hs + hsz > start + size) ? hs + hsz : start + size;
  char *p = cmd + snprintf(cmd, sizeof cmd, "arm-none-eabi-addr2line -f -e '%s'", elf);
  for (uint32_t a = lo; a < hi; a += 2)
    p += snprintf(p, sizeof cmd - (size_t)(p - cmd), " 0x%x", a);
  char *out = run_cmd(cmd);
  REQUIRE(out != NULL);
  char *save = NULL;
  char *fn = strtok_r(out, "\n", &save);
  for (uint32_t a = lo; a < hi && fn; a += 2) {
    char *fl = strtok_r(NULL, "\n", &save);
    if (!fl)
      break;
    char *colon = strrchr(fl, ':');
    unsigned want_line = colon ? (unsigned)strtoul(colon + 1, NULL, 10) : 0;
    if (colon)
      *colon = 0;
    struct sonde_sym_line L;
    int rc = sonde_sym_line(s, a, &L);
    const char *name = sonde_sym_name(s, a, NULL);
    n++;
    const char *base = rc == 0 ? strrchr(L.file, '/') : NULL;
    if (rc == 0 && L.line == want_line && base && !strcmp(base + 1, "prog.c") &&
        strstr(fl, "prog.c") && name && !strcmp(name, fn))
      ok++;
    else
      CHECK_FAIL_("0x%x: addr2line %s %s:%u, ours %s %s:%u (rc %d)", a, fn, fl, want_line,
                  name ? name : "?", rc == 0 ? L.file : "?", rc == 0 ? L.line : 0, rc);
    fn = strtok_r(NULL, "\n", &save);
  }
  free(out);
  CHECK(n > 10);
  CHECK_EQ_U(ok, n);
  /* outside any sequence */
  CHECK_EQ_I(sonde_sym_line(s, 0x100, NULL), SONDE_E_NOTFOUND);
  /* disassembly of the first instruction of loop against objdump */
  struct sonde_sym_insn in;
  CHECK_EQ_I(sonde_sym_disasm(s, start, &in), 0);
  snprintf(cmd, sizeof cmd,
           "arm-none-eabi-objdump -d --start-address=0x%x --stop-address=0x%x '%s' | tail -n 1",
           start, start + in.size, elf);
  out = run_cmd(cmd);
  REQUIRE(out != NULL);
  char a[32], b[32], *tab = strrchr(out, '\t');
  REQUIRE(tab != NULL);
  base_mnemonic(tab + 1 - 0, a, sizeof a);
  /* objdump line: "addr:\tbytes \tmnemonic\toperands": take the mnemonic field */
  char *fields[4] = {0};
  int nf = 0;
  for (char *t = strtok(out, "\t"); t && nf < 4; t = strtok(NULL, "\t"))
    fields[nf++] = t;
  REQUIRE(nf >= 3);
  base_mnemonic(fields[2], a, sizeof a);
  base_mnemonic(in.mnemonic, b, sizeof b);
  CHECK_EQ_STR(a, b);
  free(out);
  sonde_sym_free(s);
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  CHECK(system(cmd) == 0);
}

int main(void)
{
  load_pc_trace();
  RUN(test_open_errors);
  RUN(test_blink_labels);
  RUN(test_against_nm);
  RUN(test_dwarf_lines);
  free(rows);
  return check_summary();
}
