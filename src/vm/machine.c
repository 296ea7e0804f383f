/* Machine descriptions: the text format of docs/vm.md ("Machines") and the
 * public sonde_machine_* calls. A description is a list of lines
 * `keyword arguments...`; `#` starts a comment. Every error names the file and
 * line: "board.machine:7: memory 'sram': size 0 is not allowed". */
#include "machine.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bus.h"
#include "sys.h"

#define MAX_TOKENS 16
#define MAX_LINE 512

struct parser {
  const char *name;
  unsigned line;
  struct sonde_diag *diag;
  struct sonde_machine *m;
  bool seen_core, seen_clock, seen_nvic, seen_name;
  unsigned periph_line[VM_MACHINE_MAX_PERIPH];
};

static int perr(struct parser *p, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static int perr(struct parser *p, const char *fmt, ...)
{
  char msg[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (p->diag)
    return sonde_diag_set(p->diag, SONDE_E_FORMAT, "%s:%u: %s", p->name, p->line, msg);
  return SONDE_E_FORMAT;
}

/* Unsigned number: decimal or 0x hex, with an optional unit suffix. `unit`
 * 1024 accepts K/M/G (KiB...), 1000 accepts k/M/G with optional "Hz"; 0 none. */
static bool parse_num(const char *s, unsigned unit, uint64_t *out)
{
  if (!*s || *s == '-' || *s == '+' || isspace((unsigned char)*s))
    return false;
  errno = 0;
  char *end;
  unsigned long long v = strtoull(s, &end, 0);
  if (end == s || errno)
    return false;
  uint64_t mul = 1;
  if (*end && unit) {
    char c = *end;
    if (c == 'k' || c == 'K')
      mul = unit;
    else if (c == 'M')
      mul = (uint64_t)unit * unit;
    else if (c == 'G')
      mul = (uint64_t)unit * unit * unit;
    else if (!(unit == 1000 && strcmp(end, "Hz") == 0))
      return false;
    if (mul != 1)
      end++;
    if (unit == 1000 && strcmp(end, "Hz") == 0)
      end += 2;
  }
  if (*end)
    return false;
  if (v && mul > UINT64_MAX / v)
    return false;
  *out = v * mul;
  return true;
}

/* Split "key=value"; returns false when there is no '='. */
static bool split_kv(char *tok, char **key, char **val)
{
  char *eq = strchr(tok, '=');
  if (!eq)
    return false;
  *eq = 0;
  *key = tok;
  *val = eq + 1;
  return true;
}

static int parse_core(struct parser *p, int n, char **t)
{
  static const struct { const char *name; enum sonde_vm_core core; } cores[] = {
    {"m0plus", SONDE_VM_CORE_M0PLUS}, {"m3", SONDE_VM_CORE_M3}, {"m4", SONDE_VM_CORE_M4},
    {"m4f", SONDE_VM_CORE_M4F}, {"m33", SONDE_VM_CORE_M33},
  };
  if (n != 2)
    return perr(p, "core: expected one of m0plus, m3, m4, m4f, m33");
  if (p->seen_core)
    return perr(p, "core given twice");
  for (size_t i = 0; i < sizeof cores / sizeof cores[0]; i++)
    if (strcmp(t[1], cores[i].name) == 0) {
      p->m->core = cores[i].core;
      p->seen_core = true;
      return 0;
    }
  return perr(p, "unknown core '%s' (expected m0plus, m3, m4, m4f or m33)", t[1]);
}

static int parse_clock(struct parser *p, int n, char **t)
{
  uint64_t hz;
  if (n != 2)
    return perr(p, "clock: expected one frequency (48000000, 48MHz)");
  if (p->seen_clock)
    return perr(p, "clock given twice");
  if (!parse_num(t[1], 1000, &hz) || hz == 0 || hz > 4000000000ull)
    return perr(p, "clock: bad frequency '%s' (1 Hz to 4 GHz)", t[1]);
  p->m->clock_hz = hz;
  p->seen_clock = true;
  return 0;
}

static int parse_nvic(struct parser *p, int n, char **t)
{
  if (p->seen_nvic)
    return perr(p, "nvic given twice");
  p->seen_nvic = true;
  for (int i = 1; i < n; i++) {
    char *k, *v;
    uint64_t x;
    if (!split_kv(t[i], &k, &v))
      return perr(p, "nvic: expected key=value, got '%s'", t[i]);
    if (strcmp(k, "irqs") == 0) {
      if (!parse_num(v, 0, &x) || x < 1 || x > VM_MAX_IRQS)
        return perr(p, "nvic: irqs must be 1 to %u, got '%s'", VM_MAX_IRQS, v);
      p->m->num_irqs = (unsigned)x;
    } else if (strcmp(k, "prio-bits") == 0) {
      if (!parse_num(v, 0, &x) || x < 2 || x > 8)
        return perr(p, "nvic: prio-bits must be 2 to 8, got '%s'", v);
      p->m->prio_bits = (unsigned)x;
    } else {
      return perr(p, "nvic: unknown key '%s' (expected irqs, prio-bits)", k);
    }
  }
  return 0;
}

static int parse_memory(struct parser *p, int n, char **t)
{
  struct sonde_machine *m = p->m;
  uint64_t base, size, x;
  if (n < 4)
    return perr(p, "memory: expected 'memory NAME BASE SIZE [access=rwx] [wait=N] [retain]'");
  if (m->nmem >= VM_MACHINE_MAX_MEM)
    return perr(p, "memory: too many memories (at most %d)", VM_MACHINE_MAX_MEM);
  if (strlen(t[1]) >= sizeof m->mem[0].name)
    return perr(p, "memory: name '%s' is too long", t[1]);
  for (unsigned i = 0; i < m->nmem; i++)
    if (strcmp(m->mem[i].name, t[1]) == 0)
      return perr(p, "memory '%s' given twice", t[1]);
  if (!parse_num(t[2], 0, &base) || base > 0xFFFFFFFFu)
    return perr(p, "memory '%s': bad base address '%s'", t[1], t[2]);
  if (!parse_num(t[3], 1024, &size))
    return perr(p, "memory '%s': bad size '%s'", t[1], t[3]);
  if (size == 0)
    return perr(p, "memory '%s': size 0 is not allowed", t[1]);
  if (base + size > 0xE0000000u)
    return perr(p, "memory '%s': 0x%08llx..0x%08llx reaches the system region at 0xe0000000",
                t[1], (unsigned long long)base, (unsigned long long)(base + size - 1));
  if (size > 256u * 1024 * 1024)
    return perr(p, "memory '%s': size %llu is larger than 256 MiB", t[1],
                (unsigned long long)size);
  struct vm_machine_mem *mem = &m->mem[m->nmem];
  memset(mem, 0, sizeof *mem);
  strcpy(mem->name, t[1]);
  mem->base = (uint32_t)base;
  mem->size = (uint32_t)size;
  mem->flags = VM_REGION_EXEC; /* default access=rwx */
  for (int i = 4; i < n; i++) {
    char *k, *v;
    if (strcmp(t[i], "retain") == 0) {
      mem->flags |= VM_REGION_RETAIN;
      continue;
    }
    if (!split_kv(t[i], &k, &v))
      return perr(p, "memory '%s': unknown option '%s'", mem->name, t[i]);
    if (strcmp(k, "access") == 0) {
      if (strcmp(v, "r") && strcmp(v, "rw") && strcmp(v, "rx") && strcmp(v, "rwx"))
        return perr(p, "memory '%s': access must be r, rw, rx or rwx, got '%s'", mem->name, v);
      mem->flags &= ~(uint32_t)(VM_REGION_EXEC | VM_REGION_READONLY);
      if (!strchr(v, 'w'))
        mem->flags |= VM_REGION_READONLY;
      if (strchr(v, 'x'))
        mem->flags |= VM_REGION_EXEC;
    } else if (!strcmp(k, "wait") || !strcmp(k, "wait-read") || !strcmp(k, "wait-write")) {
      if (!parse_num(v, 0, &x) || x > 255)
        return perr(p, "memory '%s': %s must be 0 to 255, got '%s'", mem->name, k, v);
      if (strcmp(k, "wait-write"))
        mem->wait_read = (unsigned)x;
      if (strcmp(k, "wait-read"))
        mem->wait_write = (unsigned)x;
    } else {
      return perr(p, "memory '%s': unknown option '%s'", mem->name, k);
    }
  }
  for (unsigned i = 0; i < m->nmem; i++) {
    const struct vm_machine_mem *o = &m->mem[i];
    if (mem->base < (uint64_t)o->base + o->size && o->base < (uint64_t)mem->base + mem->size)
      return perr(p, "memory '%s' overlaps memory '%s'", mem->name, o->name);
  }
  m->nmem++;
  return 0;
}

static const char *const periph_names[] = {"uart", "gpio", "timer", "delay"};
#define PERIPH_SIZE 0x1000u

/* Unescape \n, \r, \t, \\, \s (space), \xHH into dst. */
static bool unescape(const char *s, char *dst, unsigned cap, unsigned *len)
{
  unsigned n = 0;
  while (*s) {
    char c = *s++;
    if (c == '\\') {
      c = *s++;
      if (c == 'n') c = '\n';
      else if (c == 'r') c = '\r';
      else if (c == 't') c = '\t';
      else if (c == 's') c = ' ';
      else if (c == '\\') c = '\\';
      else if (c == 'x' && isxdigit((unsigned char)s[0]) && isxdigit((unsigned char)s[1])) {
        char hex[3] = {s[0], s[1], 0};
        c = (char)strtoul(hex, NULL, 16);
        s += 2;
      } else
        return false;
    }
    if (n >= cap)
      return false;
    dst[n++] = c;
  }
  *len = n;
  return true;
}

static int parse_periph(struct parser *p, int n, char **t)
{
  struct sonde_machine *m = p->m;
  uint64_t base, x;
  if (n < 3)
    return perr(p, "peripheral: expected 'peripheral TYPE BASE [irq=N] ...'");
  if (m->nperiph >= VM_MACHINE_MAX_PERIPH)
    return perr(p, "peripheral: too many peripherals (at most %d)", VM_MACHINE_MAX_PERIPH);
  struct vm_machine_periph *pe = &m->periph[m->nperiph];
  memset(pe, 0, sizeof *pe);
  pe->irq = -1;
  size_t ti;
  for (ti = 0; ti < sizeof periph_names / sizeof periph_names[0]; ti++)
    if (strcmp(t[1], periph_names[ti]) == 0)
      break;
  if (ti == sizeof periph_names / sizeof periph_names[0])
    return perr(p, "unknown peripheral type '%s' (expected uart, gpio, timer or delay)", t[1]);
  pe->type = (enum vm_periph_type)ti;
  if (!parse_num(t[2], 0, &base) || base > 0xFFFFFFFFu || (base & 3))
    return perr(p, "peripheral %s: bad base address '%s'", t[1], t[2]);
  if (base + PERIPH_SIZE > 0xE0000000u)
    return perr(p, "peripheral %s: base 0x%08llx reaches the system region at 0xe0000000", t[1],
                (unsigned long long)base);
  pe->base = (uint32_t)base;
  for (int i = 3; i < n; i++) {
    char *k, *v;
    if (!split_kv(t[i], &k, &v))
      return perr(p, "peripheral %s: expected key=value, got '%s'", t[1], t[i]);
    if (strcmp(k, "irq") == 0) {
      if (!parse_num(v, 0, &x) || x >= VM_MAX_IRQS)
        return perr(p, "peripheral %s: bad irq '%s'", t[1], v);
      pe->irq = (int)x;
    } else if (strcmp(k, "baud") == 0 && pe->type == VM_PERIPH_UART) {
      if (!parse_num(v, 1000, &x) || x > 100000000u)
        return perr(p, "peripheral uart: bad baud '%s'", v);
      pe->baud = (uint32_t)x;
    } else if (strcmp(k, "rx") == 0 && pe->type == VM_PERIPH_UART) {
      if (!unescape(v, pe->rx, sizeof pe->rx, &pe->rx_len))
        return perr(p, "peripheral uart: bad rx text (at most %u bytes; escapes \\n \\r \\t "
                       "\\s \\\\ \\xHH)", (unsigned)sizeof pe->rx);
    } else if (strcmp(k, "jitter") == 0 && pe->type == VM_PERIPH_DELAY) {
      if (!parse_num(v, 0, &x) || x > 1000000u)
        return perr(p, "peripheral delay: bad jitter '%s' (0 to 1000000 cycles)", v);
      pe->jitter = (uint32_t)x;
    } else if (strcmp(k, "seed") == 0 && pe->type == VM_PERIPH_DELAY) {
      if (!parse_num(v, 0, &x))
        return perr(p, "peripheral delay: bad seed '%s'", v);
      pe->seed = x;
    } else {
      return perr(p, "peripheral %s: unknown key '%s'", t[1], k);
    }
  }
  for (unsigned i = 0; i < m->nmem; i++) {
    const struct vm_machine_mem *o = &m->mem[i];
    if (pe->base < (uint64_t)o->base + o->size && o->base < (uint64_t)pe->base + PERIPH_SIZE)
      return perr(p, "peripheral %s at 0x%08x overlaps memory '%s'", t[1], pe->base, o->name);
  }
  for (unsigned i = 0; i < m->nperiph; i++)
    if (pe->base < m->periph[i].base + PERIPH_SIZE && m->periph[i].base < pe->base + PERIPH_SIZE)
      return perr(p, "peripheral %s at 0x%08x overlaps peripheral %s at 0x%08x", t[1], pe->base,
                  periph_names[m->periph[i].type], m->periph[i].base);
  p->periph_line[m->nperiph++] = p->line;
  return 0;
}

static int parse_line(struct parser *p, char *line)
{
  char *hash = strchr(line, '#');
  if (hash)
    *hash = 0;
  char *t[MAX_TOKENS];
  int n = 0;
  for (char *s = strtok(line, " \t\r"); s; s = strtok(NULL, " \t\r")) {
    if (n == MAX_TOKENS)
      return perr(p, "too many words on one line (at most %d)", MAX_TOKENS);
    t[n++] = s;
  }
  if (!n)
    return 0;
  struct sonde_machine *m = p->m;
  uint64_t x, y;
  if (strcmp(t[0], "machine") == 0) {
    if (n != 2 || strlen(t[1]) >= sizeof m->name)
      return perr(p, "machine: expected one name (at most %d characters)",
                  (int)sizeof m->name - 1);
    strcpy(m->name, t[1]);
    p->seen_name = true;
    return 0;
  }
  if (strcmp(t[0], "core") == 0)
    return parse_core(p, n, t);
  if (strcmp(t[0], "clock") == 0)
    return parse_clock(p, n, t);
  if (strcmp(t[0], "nvic") == 0)
    return parse_nvic(p, n, t);
  if (strcmp(t[0], "memory") == 0)
    return parse_memory(p, n, t);
  if (strcmp(t[0], "peripheral") == 0)
    return parse_periph(p, n, t);
  if (strcmp(t[0], "swo-baud") == 0) {
    if (n != 2 || !parse_num(t[1], 1000, &x) || x == 0 || x > 1000000000u)
      return perr(p, "swo-baud: expected a baud rate (2000000, 2M)");
    m->swo_baud = (uint32_t)x;
    return 0;
  }
  if (strcmp(t[0], "vtor") == 0) {
    /* ARMv8-M leaves VTOR's reset value to the chip (the M33's INITSVTOR);
     * ARMv6-M and ARMv7-M cores start at 0 */
    if (n != 2 || !parse_num(t[1], 0, &x) || x > 0xFFFFFF80u || (x & 0x7F))
      return perr(p, "vtor: expected the vector table's reset address, a multiple of 128");
    if (!p->seen_core || m->core != SONDE_VM_CORE_M33)
      return perr(p, "vtor: only an ARMv8-M core (m33) has a configurable reset VTOR; "
                     "give 'core m33' first");
    m->reset_vtor = (uint32_t)x;
    return 0;
  }
  if (strcmp(t[0], "mtb") == 0) {
    if (n < 3 || n > 5 || !parse_num(t[1], 0, &x) || x > 0xFFFFFFFFu ||
        !parse_num(t[2], 1024, &y) || y == 0 || y > 0x100000000ull - x)
      return perr(p, n > 5 ? "mtb: expected 'mtb BASE SIZE [regs=ADDR] [mtbdwt=ADDR]'"
                           : "mtb: expected 'mtb BASE SIZE'");
    m->has_mtb = true;
    m->mtb_base = (uint32_t)x;
    m->mtb_size = (uint32_t)y;
    m->mtb_regs = 0;
    m->mtbdwt_regs = 0;
    /* the M0+ MTB's register block and its MTBDWT (the TSTART/TSTOP source of
     * Kinetis/MCX parts) are placed by the chip (dbg_mtb.c, dbg_mtbdwt.c) */
    for (int i = 3; i < n; i++) {
      char *k, *v;
      uint64_t r;
      bool kv = split_kv(t[i], &k, &v);
      bool is_regs = kv && strcmp(k, "regs") == 0, is_dwt = kv && strcmp(k, "mtbdwt") == 0;
      if (!(is_regs || is_dwt) || !parse_num(v, 0, &r) || r == 0 || r > 0xFFFFF000u ||
          (r & 0xFFF))
        return perr(p, "mtb: expected regs=ADDR or mtbdwt=ADDR (a 4 KiB aligned address), "
                       "got '%s'", t[i]);
      if (is_regs)
        m->mtb_regs = (uint32_t)r;
      else
        m->mtbdwt_regs = (uint32_t)r;
    }
    return 0;
  }
  if (strcmp(t[0], "debug-port") == 0) {
    /* debug-port jtag [idcode=X] [dpv=0|1]: the JTAG-DP `sonde run --jtag` serves */
    if (n < 2 || strcmp(t[1], "jtag") != 0)
      return perr(p, "debug-port: expected 'debug-port jtag [idcode=X] [dpv=0|1]'");
    for (int i = 2; i < n; i++) {
      char *k, *v;
      if (!split_kv(t[i], &k, &v) || !parse_num(v, 0, &x))
        return perr(p, "debug-port: expected idcode=X or dpv=0|1, got '%s'", t[i]);
      if (strcmp(k, "idcode") == 0 && x <= 0xFFFFFFFFu && (x & 1))
        m->dp_idcode = (uint32_t)x;
      else if (strcmp(k, "dpv") == 0 && x <= 1)
        m->dp_version = (uint8_t)x;
      else
        return perr(p, "debug-port: %s=%s: idcode is a 32-bit JTAG IDCODE with bit 0 set, "
                       "dpv is 0 or 1", k, v);
    }
    return 0;
  }
  if (strcmp(t[0], "memsys") == 0) {
    char err[200];
    if (vm_machine_parse_memsys(m, n, t, err, sizeof err))
      return perr(p, "%s", err);
    return 0;
  }
  if (strcmp(t[0], "power") == 0) {
    for (int i = 1; i < n; i++) {
      char *k, *v;
      if (!split_kv(t[i], &k, &v))
        return perr(p, "power: expected run=MICROAMPS sleep=MICROAMPS, got '%s'", t[i]);
      if (!parse_num(v, 0, &x) || x > 0xFFFFFFFFu)
        return perr(p, "power: expected run=MICROAMPS sleep=MICROAMPS, got '%s=%s'", k, v);
      size_t ti;
      for (ti = 0; ti < sizeof periph_names / sizeof periph_names[0]; ti++)
        if (strcmp(k, periph_names[ti]) == 0)
          break;
      if (strcmp(k, "run") == 0)
        m->power_run_ua = (uint32_t)x;
      else if (strcmp(k, "sleep") == 0)
        m->power_sleep_ua = (uint32_t)x;
      else if (ti < sizeof periph_names / sizeof periph_names[0])
        m->power_periph_ua[ti] = (uint32_t)x;
      else if (strcmp(k, "voltage") == 0) {
        if (x == 0 || x > 100000)
          return perr(p, "power: voltage is in millivolts, 1 to 100000, got '%s'", v);
        m->power_mv = (uint32_t)x;
      } else
        return perr(p, "power: unknown key '%s' (expected run, sleep, uart, gpio, timer, "
                       "delay, voltage)", k);
    }
    return 0;
  }
  return perr(p, "unknown keyword '%s' (expected machine, core, clock, nvic, memory, "
                 "peripheral, swo-baud, vtor, mtb, debug-port, memsys or power)", t[0]);
}

/* An error about the whole file (no line). */
static int ferr(struct parser *p, const char *msg)
{
  if (p->diag)
    return sonde_diag_set(p->diag, SONDE_E_FORMAT, "%s: %s", p->name, msg);
  return SONDE_E_FORMAT;
}

static int finish(struct parser *p)
{
  struct sonde_machine *m = p->m;
  if (!p->seen_core)
    return ferr(p, "no 'core' line");
  if (!p->seen_clock)
    return ferr(p, "no 'clock' line");
  if (!m->nmem)
    return ferr(p, "no 'memory' line");
  if (!m->num_irqs)
    m->num_irqs = 32;
  if (!m->prio_bits)
    m->prio_bits = m->core == SONDE_VM_CORE_M0PLUS ? 2 : 3;
  if (m->core == SONDE_VM_CORE_M0PLUS && (m->prio_bits != 2 || m->num_irqs > 32))
    return ferr(p, "nvic: a Cortex-M0+ has prio-bits=2 and at most 32 irqs");
  for (unsigned i = 0; i < m->nperiph; i++)
    if (m->periph[i].irq >= (int)m->num_irqs && (p->line = p->periph_line[i]) != 0)
      return perr(p, "peripheral %s at 0x%08x: irq %d is not below nvic irqs=%u",
                  periph_names[m->periph[i].type], m->periph[i].base, m->periph[i].irq,
                  m->num_irqs);
  if (!p->seen_name) {
    /* The file name without directories and extension. */
    const char *b = strrchr(p->name, '/');
    b = b ? b + 1 : p->name;
    size_t len = strcspn(b, ".");
    if (len >= sizeof m->name)
      len = sizeof m->name - 1;
    memcpy(m->name, b, len);
    m->name[len] = 0;
  }
  return 0;
}

int sonde_machine_parse(const char *text, size_t len, const char *name,
                        struct sonde_machine **out, struct sonde_diag *diag)
{
  if (!out || (!text && len))
    return SONDE_E_ARG;
  *out = NULL;
  if (!name)
    name = "machine";
  struct sonde_machine *m = calloc(1, sizeof *m);
  if (!m)
    return SONDE_E_NOMEM;
  struct parser p = {.name = name, .diag = diag, .m = m};
  char line[MAX_LINE];
  size_t pos = 0;
  int rc = 0;
  while (pos < len && rc == 0) {
    p.line++;
    size_t end = pos;
    while (end < len && text[end] != '\n')
      end++;
    size_t n = end - pos;
    if (n >= sizeof line) {
      rc = perr(&p, "line longer than %d characters", MAX_LINE - 1);
      break;
    }
    memcpy(line, text + pos, n);
    line[n] = 0;
    if (memchr(line, 0, n)) {
      rc = perr(&p, "NUL byte in text");
      break;
    }
    rc = parse_line(&p, line);
    pos = end + 1;
  }
  if (rc == 0)
    rc = finish(&p);
  if (rc) {
    free(m);
    return rc;
  }
  *out = m;
  return 0;
}

static const char *const builtin_names[] = {"cm3", "cc2650", "cm4f", "cm33", "cm0plus", NULL};

const char *const *sonde_machine_builtin_names(void)
{
  return builtin_names;
}

int sonde_machine_builtin(const char *name, struct sonde_machine **out)
{
  if (!name || !out)
    return SONDE_E_ARG;
  *out = NULL;
  const char *text = vm_machine_builtin_text(name);
  if (!text)
    return SONDE_E_NOTFOUND;
  return sonde_machine_parse(text, strlen(text), name, out, NULL);
}

void sonde_machine_free(struct sonde_machine *m)
{
  free(m);
}

const char *sonde_machine_name(const struct sonde_machine *m)
{
  return m ? m->name : "";
}

enum sonde_vm_core sonde_machine_core(const struct sonde_machine *m)
{
  return m ? m->core : SONDE_VM_CORE_M3;
}

uint32_t sonde_machine_supply_mv(const struct sonde_machine *m)
{
  return m ? m->power_mv : 0;
}

uint64_t sonde_machine_clock_hz(const struct sonde_machine *m)
{
  return m ? m->clock_hz : 0;
}
