/* `sonde itm`: decode ITM/DWT packets from SWO (issue 4, docs/itm.md,
 * docs/cli.md "sonde itm", JSON keys in docs/formats.md "sonde itm --format
 * json"). Input bytes come from include/sonde/swo.h (file, -, tcp:, serial:;
 * optional logic-analyzer line decoding and TPIU deformatting), packets from
 * include/sonde/itm.h, names from include/sonde/sym.h.
 *
 * The input pipeline (itm_input_*) is shared with `sonde top` (cmd_top.c). */
#include "cli.h"

#include <ctype.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmd_itm_input.h"
#include "sonde/itm.h"
#include "sonde/swo.h"
#include "sonde/sym.h"

/* ---- input pipeline --------------------------------------------------------- */

#define RAW_CAP (64 * 1024)

int itm_input_open(struct itm_input *in, const char *name, const char *tpiu_arg,
                   const char *line_spec, const char *rate, uint64_t la_channel,
                   const struct cli_command_help *help)
{
  memset(in, 0, sizeof *in);
  struct sonde_diag diag;
  sonde_diag_clear(&diag);
  if (line_spec) {
    struct sonde_swo_line_config cfg;
    sonde_swo_line_config_init(&cfg);
    if (sonde_swo_line_parse_spec(line_spec, &cfg, &diag) < 0)
      return cli_usage_error(help, "bad --line '%s': %s", line_spec, diag.msg);
    if (!rate)
      return cli_usage_error(help, "--line needs --sample-rate");
    if (sonde_swo_parse_rate(rate, &cfg.sample_rate_hz) < 0 || !cfg.sample_rate_hz)
      return cli_usage_error(help, "bad --sample-rate '%s'", rate);
    if (la_channel == ITM_LA_CHANNEL_UNSET)
      la_channel = 0;
    if (la_channel > 7)
      return cli_usage_error(help, "--la-channel must be 0..7");
    cfg.channel = (unsigned)la_channel;
    if (sonde_swo_line_new(&cfg, &in->line, &diag) < 0)
      return cli_usage_error(help, "--line '%s': %s", line_spec, diag.msg);
  } else if (rate) {
    return cli_usage_error(help, "--sample-rate needs --line");
  } else if (la_channel != ITM_LA_CHANNEL_UNSET) {
    return cli_usage_error(help, "--la-channel needs --line");
  }
  if (tpiu_arg) {
    struct sonde_swo_tpiu_config tc;
    sonde_swo_tpiu_config_init(&tc);
    if (sonde_swo_tpiu_parse_id(tpiu_arg, &tc.id) < 0) {
      itm_input_close(in);
      return cli_usage_error(help, "bad --tpiu ID '%s' (1..0x6f or 'all')", tpiu_arg);
    }
    if (sonde_swo_tpiu_new(&tc, &in->tpiu) < 0) {
      itm_input_close(in);
      return cli_error("out of memory");
    }
  }
  in->raw = malloc(RAW_CAP);
  in->line_cap = in->line ? sonde_swo_line_out_bound(in->line, RAW_CAP) : 0;
  in->line_buf = in->line ? malloc(in->line_cap) : NULL;
  in->tpiu_buf = in->tpiu ? malloc(SONDE_SWO_TPIU_OUT_MAX(in->line ? in->line_cap : RAW_CAP)) : NULL;
  if (!in->raw || (in->line && !in->line_buf) || (in->tpiu && !in->tpiu_buf)) {
    itm_input_close(in);
    return cli_error("out of memory");
  }
  if (sonde_swo_source_open(name, NULL, &in->src, &diag) < 0) {
    itm_input_close(in);
    return cli_error("%s: %s", cli_command_name ? cli_command_name : "itm",
                     diag.msg[0] ? diag.msg : name);
  }
  return CLI_OK;
}

void itm_input_close(struct itm_input *in)
{
  sonde_swo_source_free(in->src);
  sonde_swo_line_free(in->line);
  sonde_swo_tpiu_free(in->tpiu);
  free(in->raw);
  free(in->line_buf);
  free(in->tpiu_buf);
  memset(in, 0, sizeof *in);
}

ptrdiff_t itm_input_read(struct itm_input *in, const uint8_t **bytes)
{
  for (;;) {
    if (in->eof)
      return 0;
    ptrdiff_t n = sonde_swo_source_read(in->src, in->raw, RAW_CAP);
    if (n < 0 && n != SONDE_E_AGAIN) {
      cli_error("%s: %s", sonde_swo_source_name(in->src), sonde_swo_source_error_detail(in->src));
      return -1;
    }
    if (n == SONDE_E_AGAIN)
      continue;
    const uint8_t *p = in->raw;
    size_t len = (size_t)n;
    if (in->line) {
      if (n == 0) {
        len = sonde_swo_line_finish(in->line, in->line_buf, in->line_cap);
        if (!len)
          in->eof = true;
      } else {
        len = sonde_swo_line_feed(in->line, in->raw, (size_t)n, NULL, in->line_buf, in->line_cap);
      }
      p = in->line_buf;
    } else if (n == 0) {
      in->eof = true;
    }
    if (in->tpiu && len) {
      len = sonde_swo_tpiu_feed(in->tpiu, p, len, in->tpiu_buf, NULL);
      p = in->tpiu_buf;
    }
    if (len) {
      *bytes = p;
      return (ptrdiff_t)len;
    }
  }
}

/* ---- channel formats (-c PORT,FMT) -------------------------------------------- */

struct chan_fmt {
  unsigned port;
  char prefix[64], spec[16], suffix[64];
  char conv; /* c d i u x X o */
};

#define MAX_CHANS 64

/* Logic-analyzer input that decoded to (almost) nothing is a failure, not a
 * warning: the line settings (or the signal) are wrong, and exit 0 would
 * tell a script the trace was read. "Almost nothing": no byte at all, or
 * more than half of the bytes skipped as not ITM. */
static int check_line_decode(const struct itm_input *in, const struct sonde_itm_stats *st,
                             const char *name)
{
  struct sonde_swo_line_stats ls;
  sonde_swo_line_get_stats(in->line, &ls);
  if (!ls.detected || ls.bytes == 0)
    return cli_error("itm: %s: no SWO bytes decoded from %llu samples%s%s", name,
                     (unsigned long long)ls.samples,
                     sonde_swo_line_error_detail(in->line)[0] ? ": " : "",
                     sonde_swo_line_error_detail(in->line));
  if (st->bytes && st->skipped_bytes * 2 > st->bytes)
    return cli_error("itm: %s: %llu of %llu bytes were not ITM packets (line decoded as %s at %u "
                     "baud, %llu framing errors): check --line and --sample-rate",
                     name, (unsigned long long)st->skipped_bytes, (unsigned long long)st->bytes,
                     ls.mode == SONDE_SWO_LINE_MANCHESTER ? "manchester" : "uart", ls.baud,
                     (unsigned long long)ls.framing_errors);
  return CLI_OK;
}

struct itm_opts {
  struct chan_fmt chans[MAX_CHANS];
  unsigned nchans;
  const struct cli_command_help *help;
};

static void unescape(const char *in, char *out, size_t cap)
{
  size_t n = 0;
  for (; *in && n + 1 < cap; in++) {
    if (*in == '\\' && in[1]) {
      in++;
      switch (*in) {
      case 'n': out[n++] = '\n'; break;
      case 't': out[n++] = '\t'; break;
      case 'r': out[n++] = '\r'; break;
      case 'e': out[n++] = 27; break;
      case '0': out[n++] = 0; break;
      default: out[n++] = *in; break;
      }
    } else {
      out[n++] = *in;
    }
  }
  out[n] = 0;
}

/* Split FMT into text before, one printf conversion, text after. */
#define MAX_PORT 255  /* 8 stimulus port pages of 32 (ITM_STIM0..255) */
#define MAX_WIDTH 64  /* a -c field width beyond this is a typo, not a layout */

/* -1: not PORT,FORMAT; -2: port out of range; -3: field width too large. */
static int parse_chan(const char *arg, struct chan_fmt *c)
{
  char *end;
  unsigned long port = strtoul(arg, &end, 0);
  if (end == arg || *end != ',' || arg[0] == '-')
    return -1;
  if (port > MAX_PORT)
    return -2;
  char fmt[256];
  unescape(end + 1, fmt, sizeof fmt);
  const char *p = fmt;
  size_t pn = 0;
  memset(c, 0, sizeof *c);
  c->port = (unsigned)port;
  /* prefix (with %% kept as %% for later printing via fputs after unescaping) */
  while (*p) {
    if (p[0] == '%' && p[1] == '%') {
      if (pn + 1 < sizeof c->prefix)
        c->prefix[pn++] = '%';
      p += 2;
      continue;
    }
    if (*p == '%')
      break;
    if (pn + 1 < sizeof c->prefix)
      c->prefix[pn++] = *p;
    p++;
  }
  if (*p != '%')
    return -1;
  const char *s = p++;
  while (*p && strchr("-+ #0", *p))
    p++;
  unsigned long width = 0;
  for (; *p >= '0' && *p <= '9'; p++)
    if ((width = width * 10 + (unsigned long)(*p - '0')) > MAX_WIDTH)
      return -3;
  if (!*p || !strchr("cdiuxXo", *p))
    return -1;
  c->conv = *p;
  size_t sl = (size_t)(p - s) + 1;
  if (sl >= sizeof c->spec)
    return -1;
  memcpy(c->spec, s, sl);
  p++;
  size_t sn = 0;
  while (*p) {
    if (p[0] == '%' && p[1] == '%') {
      p++;
    } else if (*p == '%') {
      return -1; /* a second conversion */
    }
    if (sn + 1 < sizeof c->suffix)
      c->suffix[sn++] = *p;
    p++;
  }
  return 0;
}

static int opt_chan(const struct cli_opt *opt, const char *arg, void *value)
{
  struct itm_opts *o = value;
  if (o->nchans == MAX_CHANS)
    return cli_usage_error(o->help, "too many -c options (at most %d)", MAX_CHANS);
  int r = parse_chan(arg, &o->chans[o->nchans]);
  if (r == -2)
    return cli_usage_error(o->help, "bad -c '%s': stimulus port out of range (0..%d)", arg,
                           MAX_PORT);
  if (r == -3)
    return cli_usage_error(o->help, "bad -c '%s': field width above %d", arg, MAX_WIDTH);
  if (r < 0)
    return cli_usage_error(o->help,
                           "bad -c '%s': expected PORT,FORMAT with one of %%c %%d %%u %%x %%X %%o",
                           arg);
  o->nchans++;
  return 0;
}

static const struct chan_fmt *find_chan(const struct itm_opts *o, unsigned port)
{
  for (unsigned i = 0; i < o->nchans; i++)
    if (o->chans[i].port == port)
      return &o->chans[i];
  return NULL;
}

/* `escaped`: inside an --events line, control characters are written as \n,
 * \xNN so that one packet stays one line. */
static void print_chan(FILE *out, const struct chan_fmt *c, const struct sonde_itm_packet *p,
                       bool escaped)
{
  fputs(c->prefix, out);
  uint32_t v = (uint32_t)p->value;
  if (c->conv == 'c') {
    for (unsigned i = 0; i < p->size; i++) { /* packed characters, LSB first */
      int ch = (v >> (8 * i)) & 0xff;
      if (!ch)
        continue;
      if (escaped && ch == '\n')
        fputs("\\n", out);
      else if (escaped && (ch < 0x20 || ch == 0x7f))
        fprintf(out, "\\x%02x", ch);
      else
        fputc(ch, out);
    }
  } else if (c->conv == 'd' || c->conv == 'i') {
    int32_t sv = p->size == 1 ? (int8_t)v : p->size == 2 ? (int16_t)v : (int32_t)v;
    fprintf(out, c->spec, sv);
  } else {
    fprintf(out, c->spec, v);
  }
  fputs(c->suffix, out);
}

/* ---- packet output -------------------------------------------------------------- */

enum { FMT_TEXT, FMT_CSV, FMT_JSON };

#define HOLD_MAX 4096

struct printer {
  FILE *out;
  int format;
  bool events;
  struct sonde_sym *sym;
  const struct itm_opts *opts;
  uint64_t warned;
  /* --ts-next: packets held until the local timestamp that follows them */
  bool ts_next;
  struct sonde_itm_packet *hold;
  size_t nhold;
};

static const char *skip_reason(unsigned why)
{
  switch (why) {
  case SONDE_ITM_SKIP_HEADER: return "reserved header";
  case SONDE_ITM_SKIP_MALFORMED: return "malformed packet";
  case SONDE_ITM_SKIP_SYNC: return "broken synchronization";
  case SONDE_ITM_SKIP_TRUNCATED: return "truncated packet";
  case SONDE_ITM_SKIP_START: return "before first synchronization";
  default: return "unknown";
  }
}

static const char *exc_event(unsigned fn)
{
  return fn == SONDE_ITM_EXC_ENTER ? "enter" : fn == SONDE_ITM_EXC_EXIT ? "exit"
         : fn == SONDE_ITM_EXC_RETURN ? "return" : "reserved";
}

static void evcnt_names(unsigned bits, char *buf, size_t cap)
{
  static const char *names[] = {"cpi", "exc", "sleep", "lsu", "fold", "cyc"};
  size_t n = 0;
  buf[0] = 0;
  for (unsigned i = 0; i < 6; i++)
    if (bits & (1u << i))
      n += (size_t)snprintf(buf + n, n < cap ? cap - n : 0, "%s%s", n ? "," : "", names[i]);
}

/* symbol text for a PC ("" without -e) */
static const char *sym_text(struct printer *pr, uint32_t pc, char *buf, size_t cap)
{
  if (!pr->sym)
    return "";
  sonde_sym_format(pr->sym, pc, buf, cap);
  return buf;
}

static void print_json(struct printer *pr, const struct sonde_itm_packet *p)
{
  FILE *o = pr->out;
  char sbuf[320], ebuf[32];
  fprintf(o, "{\"type\":\"%s\",\"offset\":%llu", sonde_itm_type_name(p->type),
          (unsigned long long)p->offset);
  if (p->ts != SONDE_ITM_TS_UNKNOWN)
    fprintf(o, ",\"ts\":%llu", (unsigned long long)p->ts);
  unsigned long long v = (unsigned long long)p->value;
  switch (p->type) {
  case SONDE_ITM_SYNC:
    fprintf(o, ",\"size\":%llu", v);
    break;
  case SONDE_ITM_SW:
    fprintf(o, ",\"port\":%u,\"size\":%u,\"value\":%llu", p->port, p->size, v);
    break;
  case SONDE_ITM_LTS:
    fprintf(o, ",\"value\":%llu,\"tc\":%u,\"format\":%u", v, p->flags & 3,
            p->flags & SONDE_ITM_LTS2 ? 2 : 1);
    break;
  case SONDE_ITM_GTS:
    fprintf(o, ",\"value\":%llu,\"format\":%u,\"wrap\":%s,\"clkch\":%s,\"flags\":%u", v,
            p->flags & SONDE_ITM_GTS2 ? 2 : 1, p->flags & SONDE_ITM_GTS_WRAP ? "true" : "false",
            p->flags & SONDE_ITM_GTS_CLKCH ? "true" : "false", p->flags);
    break;
  case SONDE_ITM_PAGE:
    fprintf(o, ",\"value\":%llu", v);
    break;
  case SONDE_ITM_EXT:
    fprintf(o, ",\"value\":%llu,\"flags\":%u,\"size\":%u", v, p->flags, p->size);
    break;
  case SONDE_ITM_PC:
  case SONDE_ITM_DT_PC:
    if (p->type == SONDE_ITM_DT_PC)
      fprintf(o, ",\"comp\":%u", p->port);
    fprintf(o, ",\"pc\":%llu", v);
    if (pr->sym) {
      fputs(",\"fn\":", o);
      cli_json_string(o, sym_text(pr, (uint32_t)v, sbuf, sizeof sbuf));
    }
    break;
  case SONDE_ITM_PC_SLEEP:
    fprintf(o, ",\"value\":%llu", v);
    break;
  case SONDE_ITM_EXC:
    fprintf(o, ",\"exc\":%llu,\"name\":\"%s\",\"event\":\"%s\",\"flags\":%u", v,
            sonde_itm_exception_name((unsigned)v, ebuf, sizeof ebuf), exc_event(p->flags),
            p->flags);
    break;
  case SONDE_ITM_EVCNT:
    evcnt_names(p->flags, sbuf, sizeof sbuf);
    fprintf(o, ",\"flags\":%u,\"counters\":\"%s\"", p->flags, sbuf);
    break;
  case SONDE_ITM_DT_MATCH:
    fprintf(o, ",\"comp\":%u,\"value\":%llu", p->port, v);
    break;
  case SONDE_ITM_DT_ADDR:
    fprintf(o, ",\"comp\":%u,\"size\":%u,\"value\":%llu", p->port, p->size, v);
    break;
  case SONDE_ITM_DT_DATA:
    fprintf(o, ",\"comp\":%u,\"rw\":\"%s\",\"size\":%u,\"value\":%llu", p->port,
            p->flags & SONDE_ITM_DT_WRITE ? "w" : "r", p->size, v);
    break;
  case SONDE_ITM_HW:
    fprintf(o, ",\"port\":%u,\"size\":%u,\"value\":%llu", p->port, p->size, v);
    break;
  case SONDE_ITM_SKIP:
    fprintf(o, ",\"value\":%llu,\"reason\":\"%s\"", v, skip_reason(p->flags));
    break;
  default:
    break;
  }
  fputs("}\n", o);
}

/* CSV: offset,ts,type,port,size,value,flags,info */
static void print_csv(struct printer *pr, const struct sonde_itm_packet *p)
{
  char sbuf[320], ebuf[32];
  const char *info = "";
  if (p->type == SONDE_ITM_PC || p->type == SONDE_ITM_DT_PC)
    info = sym_text(pr, (uint32_t)p->value, sbuf, sizeof sbuf);
  else if (p->type == SONDE_ITM_EXC) {
    snprintf(sbuf, sizeof sbuf, "%s %s", exc_event(p->flags),
             sonde_itm_exception_name((unsigned)p->value, ebuf, sizeof ebuf));
    info = sbuf;
  } else if (p->type == SONDE_ITM_SKIP)
    info = skip_reason(p->flags);
  else if (p->type == SONDE_ITM_EVCNT) {
    evcnt_names(p->flags, sbuf, sizeof sbuf);
    info = sbuf;
  }
  fprintf(pr->out, "%llu,", (unsigned long long)p->offset);
  if (p->ts != SONDE_ITM_TS_UNKNOWN)
    fprintf(pr->out, "%llu", (unsigned long long)p->ts);
  fprintf(pr->out, ",%s,%u,%u,%llu,%u,", sonde_itm_type_name(p->type), p->port, p->size,
          (unsigned long long)p->value, p->flags);
  if (strchr(info, ',') || strchr(info, '"')) {
    fputc('"', pr->out);
    for (const char *c = info; *c; c++) {
      if (*c == '"')
        fputc('"', pr->out);
      fputc(*c, pr->out);
    }
    fputc('"', pr->out);
  } else {
    fputs(info, pr->out);
  }
  fputc('\n', pr->out);
}

static void print_text(struct printer *pr, const struct sonde_itm_packet *p)
{
  FILE *o = pr->out;
  if (p->type == SONDE_ITM_SKIP) {
    if (pr->warned++ < 20)
      cli_warn("itm: %llu bytes skipped at offset %llu (%s)", (unsigned long long)p->value,
               (unsigned long long)p->offset, skip_reason(p->flags));
    if (!pr->events)
      return;
  }
  if (p->type == SONDE_ITM_SW) {
    const struct chan_fmt *c = find_chan(pr->opts, p->port);
    if (c && !pr->events) {
      print_chan(o, c, p, false);
      return;
    }
    if (!pr->events)
      return;
  } else if (!pr->events) {
    return;
  }
  char sbuf[320], ebuf[32];
  if (p->ts != SONDE_ITM_TS_UNKNOWN)
    fprintf(o, "%12llu ", (unsigned long long)p->ts);
  else
    fprintf(o, "%12s ", "-");
  unsigned long long v = (unsigned long long)p->value;
  switch (p->type) {
  case SONDE_ITM_SYNC: fprintf(o, "sync\n"); break;
  case SONDE_ITM_OVERFLOW: fprintf(o, "overflow\n"); break;
  case SONDE_ITM_SW: {
    const struct chan_fmt *c = find_chan(pr->opts, p->port);
    fprintf(o, "sw       port %u: ", p->port);
    if (c)
      print_chan(o, c, p, true);
    else
      fprintf(o, "0x%0*llx", p->size * 2, v);
    fputc('\n', o);
    break;
  }
  case SONDE_ITM_LTS:
    fprintf(o, "lts      +%llu (tc %u)\n", v, p->flags & 3);
    break;
  case SONDE_ITM_GTS:
    fprintf(o, "gts%u     %llu%s%s\n", p->flags & SONDE_ITM_GTS2 ? 2 : 1, v,
            p->flags & SONDE_ITM_GTS_WRAP ? " wrap" : "",
            p->flags & SONDE_ITM_GTS_CLKCH ? " clkch" : "");
    break;
  case SONDE_ITM_PAGE: fprintf(o, "page     %llu\n", v); break;
  case SONDE_ITM_EXT: fprintf(o, "ext      sh %u value 0x%llx\n", p->flags, v); break;
  case SONDE_ITM_PC:
    fprintf(o, "pc       0x%08llx %s\n", v, sym_text(pr, (uint32_t)v, sbuf, sizeof sbuf));
    break;
  case SONDE_ITM_PC_SLEEP: fprintf(o, "pc       sleep\n"); break;
  case SONDE_ITM_EXC:
    fprintf(o, "exc      %-6s %s (%llu)\n", exc_event(p->flags),
            sonde_itm_exception_name((unsigned)v, ebuf, sizeof ebuf), v);
    break;
  case SONDE_ITM_EVCNT:
    evcnt_names(p->flags, sbuf, sizeof sbuf);
    fprintf(o, "evcnt    %s\n", sbuf);
    break;
  case SONDE_ITM_DT_PC:
    fprintf(o, "dt_pc    comp %u 0x%08llx %s\n", p->port, v,
            sym_text(pr, (uint32_t)v, sbuf, sizeof sbuf));
    break;
  case SONDE_ITM_DT_MATCH: fprintf(o, "dt_match comp %u\n", p->port); break;
  case SONDE_ITM_DT_ADDR:
    fprintf(o, "dt_addr  comp %u 0x%0*llx\n", p->port, p->size * 2, v);
    break;
  case SONDE_ITM_DT_DATA:
    fprintf(o, "dt_data  comp %u %s 0x%0*llx\n", p->port,
            p->flags & SONDE_ITM_DT_WRITE ? "write" : "read ", p->size * 2, v);
    break;
  case SONDE_ITM_HW:
    fprintf(o, "hw       id %u 0x%0*llx\n", p->port, p->size * 2, v);
    break;
  case SONDE_ITM_SKIP:
    fprintf(o, "skip     %llu bytes from offset %llu (%s)\n", v, (unsigned long long)p->offset,
            skip_reason(p->flags));
    break;
  default: fprintf(o, "?\n"); break;
  }
}

static void print_one(struct printer *pr, const struct sonde_itm_packet *p)
{
  if (pr->format == FMT_JSON)
    print_json(pr, p);
  else if (pr->format == FMT_CSV)
    print_csv(pr, p);
  else
    print_text(pr, p);
}

static void flush_hold(struct printer *pr, uint64_t ts, bool restamp)
{
  for (size_t i = 0; i < pr->nhold; i++) {
    if (restamp)
      pr->hold[i].ts = ts;
    print_one(pr, &pr->hold[i]);
  }
  pr->nhold = 0;
}

/* Print a packet; with --ts-next, packets wait for the next local timestamp
 * and take its time (ARMv7-M D4.2.4: an LTS times the packets before it).
 * Without a timestamp within HOLD_MAX packets they go out as decoded. */
static void emit(struct printer *pr, const struct sonde_itm_packet *p)
{
  if (!pr->ts_next) {
    print_one(pr, p);
    return;
  }
  if (p->type == SONDE_ITM_LTS) {
    flush_hold(pr, p->ts, true);
    print_one(pr, p);
    return;
  }
  if (pr->nhold == HOLD_MAX)
    flush_hold(pr, 0, false);
  pr->hold[pr->nhold++] = *p;
}

/* CPU time of this process: on a shared machine the wall clock also counts
 * the time other processes held the core. */
static double cpu_now_s(void)
{
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void print_stats(FILE *o, const struct sonde_itm_stats *st, double secs, double cpu_secs,
                        bool json)
{
  double mbs = secs > 0 ? (double)st->bytes / 1e6 / secs : 0;
  double cpu_mbs = cpu_secs > 0 ? (double)st->bytes / 1e6 / cpu_secs : 0;
  if (json) {
    fprintf(o,
            "{\"bytes\":%llu,\"skipped\":%llu,\"losses\":%llu,\"mb_per_s\":%.3f,"
            "\"cpu_mb_per_s\":%.3f,\"packets\":{",
            (unsigned long long)st->bytes, (unsigned long long)st->skipped_bytes,
            (unsigned long long)st->losses, mbs, cpu_mbs);
    for (unsigned t = SONDE_ITM_SYNC; t < SONDE_ITM_TYPE_COUNT; t++)
      fprintf(o, "%s\"%s\":%llu", t == SONDE_ITM_SYNC ? "" : ",", sonde_itm_type_name(t),
              (unsigned long long)st->packets[t]);
    fputs("}}\n", o);
    return;
  }
  fprintf(o, "bytes     %llu\n", (unsigned long long)st->bytes);
  fprintf(o, "skipped   %llu bytes in %llu losses\n", (unsigned long long)st->skipped_bytes,
          (unsigned long long)st->losses);
  fprintf(o, "speed     %.1f MB/s (wall), %.1f MB/s of CPU time\n", mbs, cpu_mbs);
  fprintf(o, "packets\n");
  for (unsigned t = SONDE_ITM_SYNC; t < SONDE_ITM_TYPE_COUNT; t++)
    fprintf(o, "  %-9s %llu\n", sonde_itm_type_name(t), (unsigned long long)st->packets[t]);
}

/* Packets, in order, to the printer (or only the loss warnings with --stats). */
static void take_packets(struct printer *pr, const struct sonde_itm_packet *pk, size_t got,
                         bool stats)
{
  if (!stats)
    for (size_t i = 0; i < got; i++)
      emit(pr, &pk[i]);
  else
    for (size_t i = 0; i < got; i++)
      if (pk[i].type == SONDE_ITM_SKIP && pr->warned++ < 20)
        cli_warn("itm: %llu bytes skipped at offset %llu (%s)", (unsigned long long)pk[i].value,
                 (unsigned long long)pk[i].offset, skip_reason(pk[i].flags));
}

struct par_sink_ctx {
  struct printer *pr;
  bool stats;
};

static int par_sink(void *user, const struct sonde_itm_packet *pk, size_t n)
{
  struct par_sink_ctx *x = user;
  take_packets(x->pr, pk, n, x->stats);
  return 0;
}

/* A regular file read raw (no --tpiu, no --line) is mapped and decoded by
 * sonde_itm_decode_parallel; returns false (nothing decoded) when <name> is
 * not such a file or cannot be mapped: the caller then streams it. */
static bool decode_mapped(const char *name, struct sonde_itm *dec, unsigned threads,
                          struct printer *pr, bool stats)
{
  enum sonde_swo_source_kind kind;
  char path[4096];
  if (sonde_swo_source_parse_name(name, &kind, path, sizeof path, NULL, NULL) < 0 ||
      kind != SONDE_SWO_SOURCE_FILE)
    return false;
  int fd = open(path, O_RDONLY);
  struct stat sb;
  if (fd < 0)
    return false;
  if (fstat(fd, &sb) || !S_ISREG(sb.st_mode) || sb.st_size <= 0) {
    close(fd);
    return false;
  }
  size_t len = (size_t)sb.st_size;
  void *map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (map == MAP_FAILED)
    return false;
  madvise(map, len, MADV_SEQUENTIAL);
  struct sonde_itm_par_config pc;
  sonde_itm_par_config_init(&pc);
  pc.threads = threads;
  struct par_sink_ctx x = {pr, stats};
  int r = sonde_itm_decode_parallel(dec, map, len, &pc, par_sink, &x, NULL);
  munmap(map, len);
  if (r) { /* out of memory before anything was decoded: stream it */
    sonde_itm_reset(dec);
    return false;
  }
  return true;
}

int cmd_itm(int argc, char **argv)
{
  static const struct cli_command_help help = {
      "sonde itm [-e <elf>] [--tpiu[=<id>]] [--line uart:<baud>|manchester:<baud> --sample-rate "
      "<hz>] [--format text|csv|json] [-c <port>,<fmt>]... [--events] [--stats "
      "[--json]] [-j <n>] <input>",
      "Decode ITM/DWT packets (ARMv7-M/ARMv8-M packet protocol) from SWO. <input> is a\n"
      "file, '-' (stdin), tcp:HOST:PORT or serial:DEVICE@BAUD. Text output prints the\n"
      "software channels (default: port 0 as characters); --events adds every packet\n"
      "with its absolute timestamp, symbolised PCs and exception names. csv and json\n"
      "write one record per packet (keys in docs/formats.md). Lost bytes are reported\n"
      "with their offsets; decoding resumes at the next synchronization packet."};
  const char *elf = NULL, *tpiu = NULL, *line = NULL, *rate = NULL, *format = "text";
  const char *output = NULL;
  uint64_t la_channel = ITM_LA_CHANNEL_UNSET, prescale = 1, threads = 0;
  bool events = false, stats = false, json = false, wait_sync = false, ts_next = false;
  static struct itm_opts opts;
  memset(&opts, 0, sizeof opts);
  opts.help = &help;
  const struct cli_opt options[] = {
      OPT_ITM_INPUT(&tpiu, &line, &rate, &la_channel, &wait_sync, &prescale),
      OPT_GROUP("output"),
      OPT_ELF(&elf),
      OPT_STRING(0, "format", "<fmt>", &format, "text (default), csv or json"),
      OPT_CALLBACK('c', "channel", "<port>,<fmt>", &opts, opt_chan,
                   "print software port <port> with printf format <fmt> (%c %d %u %x ...)"),
      OPT_FLAG(0, "events", &events, "text: print every packet with its timestamp"),
      OPT_FLAG(0, "ts-next", &ts_next,
               "stamp packets with the local timestamp that follows them (event time)"),
      OPT_FLAG(0, "stats", &stats, "print packet counts, bytes skipped and speed instead"),
      OPT_U64('j', "threads", "<n>", &threads,
              "decode a file with <n> threads (default: online CPUs; 1: streaming)"),
      OPT_JSON(&json),
      OPT_OUTPUT(&output),
      OPT_END(),
  };
  int nargs;
  int rc = cli_parse(argc, argv, options, &help, &nargs);
  if (rc < 0)
    return CLI_OK;
  if (rc)
    return rc;
  if (nargs != 1)
    return cli_usage_error(&help, nargs ? "too many inputs" : "missing <input>");
  int fmt = !strcmp(format, "text") ? FMT_TEXT : !strcmp(format, "csv") ? FMT_CSV
            : !strcmp(format, "json") ? FMT_JSON : -1;
  if (fmt < 0)
    return cli_usage_error(&help, "unknown --format '%s' (text, csv or json)", format);
  if (json && !stats)
    return cli_usage_error(&help, "--json goes with --stats (use --format json for packets)");
  if (stats && (events || ts_next || opts.nchans || fmt != FMT_TEXT))
    return cli_usage_error(&help, "--stats prints counts only: it does not go with %s",
                           events ? "--events" : ts_next ? "--ts-next" : opts.nchans ? "-c"
                                                                                   : "--format");
  if (events && fmt != FMT_TEXT)
    return cli_usage_error(&help, "--events is for text output (--format %s has every packet)",
                           format);
  if (opts.nchans && fmt != FMT_TEXT)
    return cli_usage_error(&help, "-c formats text output (--format %s has every packet)", format);
  if (threads > 1024)
    return cli_usage_error(&help, "--threads must be 0..1024");
  if (prescale != 1 && prescale != 4 && prescale != 16 && prescale != 64)
    return cli_usage_error(&help, "--ts-prescale must be 1, 4, 16 or 64");
  if (!opts.nchans) { /* port 0 as a character console */
    parse_chan("0,%c", &opts.chans[0]);
    opts.nchans = 1;
  }

  struct sonde_sym *sym = NULL;
  if (elf) {
    struct sonde_diag d;
    if (sonde_sym_open(elf, &sym, &d) < 0)
      return cli_error("%s", d.msg);
  }
  struct itm_input in;
  rc = itm_input_open(&in, argv[0], tpiu, line, rate, la_channel, &help);
  if (rc) {
    sonde_sym_free(sym);
    return rc;
  }
  struct sonde_itm_config cfg;
  sonde_itm_config_init(&cfg);
  cfg.start_unsynced = wait_sync;
  cfg.ts_prescale = (unsigned)prescale;
  struct sonde_itm *dec = sonde_itm_new(&cfg);
  FILE *out = cli_open_output(output, false);
  if (!dec || !out) {
    sonde_itm_free(dec);
    itm_input_close(&in);
    sonde_sym_free(sym);
    return dec ? CLI_FAIL : cli_error("out of memory");
  }
  struct printer pr = {out, fmt, events, sym, &opts, 0, ts_next, NULL, 0};
  if (ts_next && !(pr.hold = malloc(HOLD_MAX * sizeof *pr.hold))) {
    fclose(out);
    sonde_itm_free(dec);
    itm_input_close(&in);
    sonde_sym_free(sym);
    return cli_error("out of memory");
  }
  if (fmt == FMT_CSV && !stats)
    fputs("offset,ts,type,port,size,value,flags,info\n", out);
  enum { CAP = 1024 };
  static struct sonde_itm_packet pk[CAP];
  double t0 = cli_now_s(), c0 = cpu_now_s();
  rc = CLI_OK;
  /* a raw regular file: all of it at once, with threads (same packets) */
  bool mapped = threads != 1 && !tpiu && !line &&
                decode_mapped(argv[0], dec, (unsigned)threads, &pr, stats);
  for (;;) {
    const uint8_t *bytes = NULL;
    ptrdiff_t n = mapped ? 0 : itm_input_read(&in, &bytes);
    size_t got = 0;
    if (n < 0) {
      rc = CLI_FAIL;
      break;
    }
    if (n == 0) {
      got = sonde_itm_finish(dec, pk, CAP);
    }
    size_t pos = 0;
    do {
      if (n > 0) {
        size_t used = 0;
        got = sonde_itm_decode(dec, bytes + pos, (size_t)n - pos, &used, pk, CAP);
        pos += used;
      }
      take_packets(&pr, pk, got, stats);
    } while (n > 0 && pos < (size_t)n);
    if (n == 0)
      break;
  }
  flush_hold(&pr, 0, false); /* no timestamp after them: as decoded */
  double secs = cli_now_s() - t0, cpu_secs = cpu_now_s() - c0;
  const struct sonde_itm_stats *st = sonde_itm_stats(dec);
  if (rc == CLI_OK && stats)
    print_stats(out, st, secs, cpu_secs, json);
  if (pr.warned > 20)
    cli_warn("itm: %llu more losses not shown", (unsigned long long)(pr.warned - 20));
  if (rc == CLI_OK && in.line)
    rc = check_line_decode(&in, st, argv[0]);
  int crc = cli_close_output(out, output);
  if (rc == CLI_OK)
    rc = crc;
  free(pr.hold);
  sonde_itm_free(dec);
  itm_input_close(&in);
  sonde_sym_free(sym);
  return rc;
}
