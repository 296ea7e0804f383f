/* `sonde tband`: Tonbandgerät traces — dump them, convert them to Perfetto
 * (or Chrome JSON), and serve the result to the Perfetto UI. The decoding and
 * conversion live in src/tband, the writers in src/export; this file parses
 * options, wires them together and prints (docs/cli.md, docs/tband.md). */
#include "cli.h"
#include "http_serve.h"
#include "sonde/export.h"
#include "sonde/swo.h"
#include "sonde/tband.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static int parse_input_format(const char *s, enum sonde_tband_input_format *f)
{
  if (!s || !strcmp(s, "auto"))
    *f = SONDE_TBAND_AUTO;
  else if (!strcmp(s, "hex"))
    *f = SONDE_TBAND_HEX;
  else if (!strcmp(s, "bin"))
    *f = SONDE_TBAND_BIN;
  else
    return -1;
  return 0;
}

/* Decode one input: a file, '-', tcp:HOST:PORT or serial:DEVICE[@BAUD]
 * (include/sonde/swo.h sources, as `sonde itm` reads them) until its end. */
static int decode_input(const char *name, enum sonde_tband_input_format fmt, int core,
                        sonde_tband_evt_cb cb, void *ctx, struct sonde_tband_stats *stats,
                        struct sonde_diag *diag)
{
  struct sonde_swo_source *src = NULL;
  int rc = sonde_swo_source_open(name, NULL, &src, diag);
  if (rc < 0)
    return rc;
  struct sonde_tband_dec *d = sonde_tband_dec_new(fmt, core, name);
  uint8_t *buf = malloc(1 << 16);
  if (!d || !buf) {
    rc = sonde_diag_set(diag, SONDE_E_NOMEM, "%s: out of memory", name);
  } else {
    ptrdiff_t n;
    while ((n = sonde_swo_source_read(src, buf, 1 << 16)) > 0 || n == SONDE_E_AGAIN)
      if (n > 0)
        sonde_tband_dec_feed(d, buf, (size_t)n, cb, ctx);
    if (n < 0)
      rc = sonde_diag_set(diag, SONDE_E_IO, "%s: %s", name, sonde_swo_source_error_detail(src));
    sonde_tband_dec_finish(d, cb, ctx);
    if (stats)
      sonde_tband_dec_stats(d, stats);
  }
  sonde_tband_dec_free(d);
  free(buf);
  sonde_swo_source_free(src);
  return rc;
}

/* <input>[@<core>]: a usage error names what is wrong. */
static int split_input(const char *spec, char *path, size_t cap, int *core,
                       const struct cli_command_help *help)
{
  int rc = sonde_tband_parse_input(spec, path, cap, core);
  if (rc == SONDE_E_ARG)
    return cli_usage_error(help, "'%s': the core after '@' must be a number 0..999999", spec);
  if (rc)
    return cli_usage_error(help, "'%s': path too long", spec);
  return CLI_OK;
}

/* ---- dump ---- */
struct dump_ctx {
  FILE *out;
  bool json;
  const char *path;
  uint64_t errors;
};

static void dump_fields_text(FILE *o, const struct sonde_tband_evt *e)
{
  for (unsigned i = 0; i < e->nfields && i < e->desc->nfields; i++) {
    const struct sonde_tband_field_desc *f = &e->desc->fields[i];
    switch (f->type) {
    case SONDE_TBAND_STR:
      fprintf(o, " %s=", f->name);
      cli_json_string(o, e->str);
      break;
    case SONDE_TBAND_S64:
      fprintf(o, " %s=%" PRId64, f->name, (int64_t)e->val[i]);
      break;
    case SONDE_TBAND_QKIND:
    case SONDE_TBAND_SBKIND: {
      const char *n = f->type == SONDE_TBAND_QKIND ? sonde_tband_queue_kind_name((unsigned)e->val[i])
                                                   : sonde_tband_sb_kind_name((unsigned)e->val[i]);
      fprintf(o, " %s=%" PRIu64 "(%s)", f->name, e->val[i], n ? n : "?");
    } break;
    default:
      fprintf(o, " %s=%" PRIu64, f->name, e->val[i]);
    }
  }
}

static void dump_cb(void *vctx, const struct sonde_tband_evt *e)
{
  struct dump_ctx *d = vctx;
  FILE *o = d->out;
  if (e->error || !e->desc) {
    d->errors++;
    if (d->json) {
      fprintf(o, "{\"evt\":\"error\",\"core\":%u,\"offset\":%" PRIu64 ",\"error\":", e->core,
              e->offset);
      cli_json_string(o, e->error_msg);
      fputs("}\n", o);
    } else {
      fprintf(o, "%8" PRIu64 "  c%u  %14s  ERROR %s\n", e->offset, e->core, "", e->error_msg);
    }
    return;
  }
  if (d->json) {
    fprintf(o, "{\"evt\":\"%s\"", e->desc->name);
    if (e->has_ts)
      fprintf(o, ",\"ts\":%" PRIu64, e->ts);
    fprintf(o, ",\"core\":%u", e->core);
    for (unsigned i = 0; i < e->nfields && i < e->desc->nfields; i++) {
      const struct sonde_tband_field_desc *f = &e->desc->fields[i];
      fprintf(o, ",\"%s\":", f->name);
      if (f->type == SONDE_TBAND_STR)
        cli_json_string(o, e->str);
      else if (f->type == SONDE_TBAND_S64)
        fprintf(o, "%" PRId64, (int64_t)e->val[i]);
      else
        fprintf(o, "%" PRIu64, e->val[i]);
    }
    fputs("}\n", o);
    return;
  }
  char ts[24] = "-";
  if (e->has_ts)
    snprintf(ts, sizeof ts, "%" PRIu64, e->ts);
  fprintf(o, "%8" PRIu64 "  c%u  %14s  %s", e->offset, e->core, ts, e->desc->name);
  dump_fields_text(o, e);
  fputc('\n', o);
}

static int cmd_dump(int argc, char **argv)
{
  static const struct cli_command_help help = {
      "sonde tband dump [options] <input>[@<core>]...",
      "Decode Tonbandgerät trace files (hex text or binary, told apart automatically) and\n"
      "print one line per frame: input offset, core, timestamp, event name and fields.\n"
      "With --format json, one JSON object per frame: {\"evt\": <documented event name>,\n"
      "\"ts\": <timestamp, if the event has one>, \"core\": N, <documented fields>}; corrupt\n"
      "frames print {\"evt\": \"error\", \"offset\": N, \"error\": <why>}. Decoding goes on\n"
      "after a corrupt frame; the exit status is 1 if there was any.\n"
      "<input>@<core> assigns a file to a core; without it core_id events decide (default 0).\n"
      "An input is a file, '-' (stdin), tcp:HOST:PORT (read until the peer closes) or\n"
      "serial:DEVICE[@BAUD] (then @<core> follows the baud)."};
  const char *out_path = NULL, *format = "text", *in_format = NULL;
  struct cli_opt opts[] = {
      OPT_OUTPUT(&out_path),
      OPT_STRING(0, "format", "<text|json>", &format, "output format (default: text)"),
      OPT_STRING('f', "input-format", "<auto|hex|bin>", &in_format,
                 "input format (default: auto-detect)"),
      OPT_END(),
  };
  int n;
  int rc = cli_parse(argc, argv, opts, &help, &n);
  if (rc)
    return rc < 0 ? CLI_OK : rc;
  enum sonde_tband_input_format inf;
  if (parse_input_format(in_format, &inf))
    return cli_usage_error(&help, "--input-format must be auto, hex or bin, not '%s'", in_format);
  if (strcmp(format, "text") && strcmp(format, "json"))
    return cli_usage_error(&help, "--format must be text or json, not '%s'", format);
  if (n < 1)
    return cli_usage_error(&help, "no input file");
  FILE *out = cli_open_output(out_path, false);
  if (!out)
    return CLI_FAIL;
  struct dump_ctx d = {out, !strcmp(format, "json"), NULL, 0};
  int fail = 0;
  for (int i = 0; i < n; i++) {
    char path[4096];
    int core;
    if ((rc = split_input(argv[i], path, sizeof path, &core, &help)) != CLI_OK) {
      cli_close_output(out, out_path);
      return rc;
    }
    struct sonde_tband_stats st;
    struct sonde_diag diag = {{0}};
    d.path = path;
    uint64_t before = d.errors;
    rc = decode_input(path, inf, core, dump_cb, &d, &st, &diag);
    if (rc) {
      cli_error("tband dump: %s", diag.msg);
      fail = 1;
      continue;
    }
    if (d.errors > before) {
      cli_error("tband dump: '%s': %" PRIu64 " corrupt frame(s) of %" PRIu64, path,
                d.errors - before, st.frames);
      fail = 1;
    }
  }
  rc = cli_close_output(out, out_path);
  return fail ? CLI_FAIL : rc;
}

/* ---- conv ---- */
static int file_write(void *ctx, const void *buf, size_t len)
{
  return fwrite(buf, 1, len, ctx) == len ? 0 : SONDE_E_IO;
}

/* The converter's sink, wired to the export writer. */
static int s_track(void *x, uint64_t uuid, uint64_t parent, enum sonde_tband_track_kind k,
                   const char *name, int64_t id)
{
  static const enum sonde_export_track_kind map[] = {SONDE_EXPORT_PROCESS, SONDE_EXPORT_THREAD,
                                                     SONDE_EXPORT_SLICES, SONDE_EXPORT_COUNTER};
  return sonde_export_track(x, uuid, parent, map[k], name, id);
}
static int s_begin(void *x, uint64_t u, uint64_t ts, const char *n, const struct sonde_tband_arg *a,
                   unsigned na)
{
  return sonde_export_slice_begin(x, u, ts, n, (const struct sonde_export_arg *)a, na);
}
static int s_end(void *x, uint64_t u, uint64_t ts) { return sonde_export_slice_end(x, u, ts); }
static int s_instant(void *x, uint64_t u, uint64_t ts, const char *n,
                     const struct sonde_tband_arg *a, unsigned na)
{
  return sonde_export_instant(x, u, ts, n, (const struct sonde_export_arg *)a, na);
}
static int s_counter(void *x, uint64_t u, uint64_t ts, int64_t v)
{
  return sonde_export_counter(x, u, ts, v);
}

/* The two arg structs are the same shape by design; make sure. */
_Static_assert(sizeof(struct sonde_tband_arg) == sizeof(struct sonde_export_arg), "arg layout");

static int cmd_conv(int argc, char **argv)
{
  static const struct cli_command_help help = {
      "sonde tband conv --mode <bare-metal|freertos> [options] -o <out> <input>[@<core>]...",
      "Convert Tonbandgerät traces into a Perfetto trace (or Chrome JSON) with tracks for\n"
      "cores, tasks (running, state, priority), ISRs, event and value markers, kernel\n"
      "objects (queue fill levels, ...), errors and dropped events. Several inputs are\n"
      "merged by timestamp; <input>@<core> gives the core of a per-core recording.\n"
      "An input is a file, '-', tcp:HOST:PORT or serial:DEVICE[@BAUD] (as for dump).\n"
      "With --serve the result is offered to https://ui.perfetto.dev from a local HTTP\n"
      "server (127.0.0.1:9001 unless --listen says otherwise) until interrupted."};
  const char *out_path = NULL, *mode = NULL, *format = "perfetto", *in_format = NULL;
  const char *listen_addr = NULL;
  uint64_t cores = 1, max_req = 0;
  bool do_serve = false, json = false;
  struct cli_opt opts[] = {
      OPT_STRING('o', "output", "<file>", &out_path, "write the trace to <file> (required; '-' for stdout)"),
      OPT_STRING('m', "mode", "<bare-metal|freertos>", &mode, "how to interpret the trace (required)"),
      OPT_U64('c', "cores", "<n>", &cores, "number of cores of the target (default: 1)"),
      OPT_STRING(0, "format", "<perfetto|chrome-json>", &format, "output format (default: perfetto)"),
      OPT_STRING('f', "input-format", "<auto|hex|bin>", &in_format,
                 "input format (default: auto-detect)"),
      OPT_JSON(&json),
      OPT_GROUP("serving"),
      OPT_FLAG(0, "serve", &do_serve, "serve the result to the Perfetto UI and print its URL"),
      OPT_STRING(0, "listen", "<addr:port>", &listen_addr,
                 "address for --serve (default: 127.0.0.1:9001, the port Perfetto expects)"),
      OPT_U64(0, "serve-requests", "<n>", &max_req, "stop serving after n requests (default: never)"),
      OPT_END(),
  };
  int n;
  int rc = cli_parse(argc, argv, opts, &help, &n);
  if (rc)
    return rc < 0 ? CLI_OK : rc;
  enum sonde_tband_mode m;
  if (!mode)
    return cli_usage_error(&help, "--mode is required (bare-metal or freertos)");
  if (!strcmp(mode, "bare-metal"))
    m = SONDE_TBAND_BARE_METAL;
  else if (!strcmp(mode, "freertos") || !strcmp(mode, "free-rtos"))
    m = SONDE_TBAND_FREERTOS;
  else
    return cli_usage_error(&help, "--mode must be bare-metal or freertos, not '%s'", mode);
  enum sonde_export_format xf;
  if (!strcmp(format, "perfetto"))
    xf = SONDE_EXPORT_PERFETTO;
  else if (!strcmp(format, "chrome-json") || !strcmp(format, "json"))
    xf = SONDE_EXPORT_CHROME_JSON;
  else
    return cli_usage_error(&help, "--format must be perfetto or chrome-json, not '%s'", format);
  enum sonde_tband_input_format inf;
  if (parse_input_format(in_format, &inf))
    return cli_usage_error(&help, "--input-format must be auto, hex or bin, not '%s'", in_format);
  if (cores < 1 || cores > 1024)
    return cli_usage_error(&help, "--cores must be between 1 and 1024");
  if (n < 1)
    return cli_usage_error(&help, "no input file");
  if (!out_path)
    return cli_usage_error(&help, "-o <out> is required (the output is binary)");
  if (do_serve && !strcmp(out_path, "-"))
    return cli_usage_error(&help, "--serve needs an output file, not stdout");
  if ((listen_addr || max_req) && !do_serve)
    return cli_usage_error(&help, "%s only applies with --serve",
                           listen_addr ? "--listen" : "--serve-requests");
  struct http_listen listen_at;
  char lwhy[160];
  if (http_serve_parse_listen(listen_addr, &listen_at, lwhy, sizeof lwhy))
    return cli_usage_error(&help, "--listen %s", lwhy);

  struct sonde_tband_conv *conv = sonde_tband_conv_new(m, (unsigned)cores);
  if (!conv)
    return cli_error("tband conv: out of memory");
  uint64_t frames = 0, bad = 0;
  int fail = 0;
  for (int i = 0; i < n; i++) {
    char path[4096];
    int core;
    if ((rc = split_input(argv[i], path, sizeof path, &core, &help)) != CLI_OK) {
      sonde_tband_conv_free(conv);
      return rc;
    }
    if (core >= (int)cores) {
      sonde_tband_conv_free(conv);
      return cli_usage_error(&help, "'%s': core %d, but --cores is %" PRIu64, argv[i], core, cores);
    }
    struct sonde_tband_stats st;
    struct sonde_diag diag = {{0}};
    rc = decode_input(path, inf, core, sonde_tband_conv_add_cb, conv, &st, &diag);
    if (rc) {
      sonde_tband_conv_free(conv);
      return cli_error("tband conv: %s", diag.msg);
    }
    frames += st.frames;
    bad += st.errors;
    if (st.errors)
      cli_warn("tband conv: '%s': %" PRIu64 " corrupt frame(s) of %" PRIu64
               " (shown on the Errors track)", path, st.errors, st.frames);
  }
  FILE *out = cli_open_output(out_path, true);
  if (!out) {
    sonde_tband_conv_free(conv);
    return CLI_FAIL;
  }
  struct sonde_export *x = sonde_export_new(xf, file_write, out);
  if (!x) {
    sonde_tband_conv_free(conv);
    cli_close_output(out, out_path);
    return cli_error("tband conv: out of memory");
  }
  struct sonde_tband_sink sink = {x, s_track, s_begin, s_end, s_instant, s_counter};
  struct sonde_tband_conv_stats cs;
  memset(&cs, 0, sizeof cs);
  rc = sonde_tband_conv_run(conv, &sink, &cs);
  if (rc) {
    const char *why = sonde_export_error(x)[0] ? sonde_export_error(x) : sonde_tband_conv_error(conv);
    cli_error("tband conv: %s", why);
    fail = 1;
  } else if ((rc = sonde_export_finish(x))) {
    cli_error("tband conv: %s", sonde_export_error(x));
    fail = 1;
  }
  uint64_t packets = sonde_export_count(x);
  sonde_export_free(x);
  sonde_tband_conv_free(conv);
  if (cli_close_output(out, out_path))
    fail = 1;
  if (fail)
    return CLI_FAIL;
  if (json) {
    fprintf(stderr,
            "{\"frames\":%" PRIu64 ",\"corrupt_frames\":%" PRIu64 ",\"events\":%" PRIu64
            ",\"task_switches\":%" PRIu64 ",\"errors\":%" PRIu64 ",\"dropped\":%" PRIu64
            ",\"first_ns\":%" PRIu64 ",\"last_ns\":%" PRIu64 ",\"packets\":%" PRIu64 "}\n",
            frames, bad, cs.events, cs.task_switches, cs.errors, cs.dropped, cs.ts_ns_first,
            cs.ts_ns_last, packets);
  } else {
    fprintf(stderr,
            "sonde: tband conv: %" PRIu64 " frames, %" PRIu64 " events, %" PRIu64
            " task switches, %" PRIu64 " errors, %" PRIu64 " dropped -> %s (%" PRIu64 " %s)\n",
            frames, cs.events, cs.task_switches, cs.errors, cs.dropped, out_path, packets,
            xf == SONDE_EXPORT_PERFETTO ? "packets" : "events");
  }
  if (do_serve)
    return http_serve_file("tband conv", out_path, &listen_at, max_req);
  return bad ? CLI_FAIL : CLI_OK;
}

int cmd_tband(int argc, char **argv)
{
  static const struct cli_command_help help = {
      "sonde tband dump [options] <input>[@<core>]...\n"
      "sonde tband conv --mode <bare-metal|freertos> [options] -o <out> <input>[@<core>]...",
      "Tonbandgerät-format traces from the on-target tracer (target/tband):\n"
      "  dump   print every frame (text or JSON lines)\n"
      "  conv   convert to Perfetto (or Chrome JSON), optionally serve it to the Perfetto UI\n"
      "'sonde tband <subcommand> --help' shows the options of each."};
  if (argc >= 2 && !strcmp(argv[1], "dump"))
    return cmd_dump(argc - 1, argv + 1);
  if (argc >= 2 && !strcmp(argv[1], "conv"))
    return cmd_conv(argc - 1, argv + 1);
  int n;
  int rc = cli_parse(argc, argv, NULL, &help, &n);
  if (rc)
    return rc < 0 ? CLI_OK : rc;
  if (n >= 1)
    return cli_usage_error(&help, "unknown subcommand '%s'", argv[0]);
  return cli_usage_error(&help, "missing subcommand (dump or conv)");
}
