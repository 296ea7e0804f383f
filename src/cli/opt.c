/* Declarative option parsing for every subcommand (see cli.h). One table per
 * command drives both the parser and --help, so the two cannot drift. */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

const char *cli_command_name = NULL;

static void vmsg(const char *prefix, const char *fmt, va_list ap)
{
  fputs("sonde: ", stderr);
  if (prefix)
    fputs(prefix, stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
}

int cli_error(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vmsg(NULL, fmt, ap);
  va_end(ap);
  return CLI_FAIL;
}

void cli_warn(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vmsg("warning: ", fmt, ap);
  va_end(ap);
}

static void print_usage_lines(FILE *out, const struct cli_command_help *help)
{
  const char *u = help && help->usage ? help->usage : "sonde";
  const char *first = "usage: ";
  while (*u) {
    const char *nl = strchr(u, '\n');
    size_t n = nl ? (size_t)(nl - u) : strlen(u);
    fprintf(out, "%s%.*s\n", first, (int)n, u);
    first = "   or: ";
    u += n + (nl ? 1 : 0);
  }
}

int cli_usage_error(const struct cli_command_help *help, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  fputs("sonde: ", stderr);
  if (cli_command_name)
    fprintf(stderr, "%s: ", cli_command_name);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  print_usage_lines(stderr, help);
  if (cli_command_name)
    fprintf(stderr, "Try 'sonde %s --help' for more information.\n", cli_command_name);
  return CLI_USAGE;
}

void cli_print_help(FILE *out, const struct cli_opt *opts, const struct cli_command_help *help)
{
  print_usage_lines(out, help);
  if (help && help->description)
    fprintf(out, "\n%s\n", help->description);
  fputs("\noptions:\n", out);
  for (const struct cli_opt *o = opts; o && o->type != CLI_OPT_END; o++) {
    if (o->type == CLI_OPT_GROUP) {
      fprintf(out, "\n%s:\n", o->help);
      continue;
    }
    char left[96];
    int n = 0;
    if (o->short_name && o->long_name)
      n = snprintf(left, sizeof left, "-%c, --%s", o->short_name, o->long_name);
    else if (o->short_name)
      n = snprintf(left, sizeof left, "-%c", o->short_name);
    else
      n = snprintf(left, sizeof left, "    --%s", o->long_name);
    if (o->arg_name && n > 0 && (size_t)n < sizeof left) {
      if (o->type == CLI_OPT_OPTSTR)
        snprintf(left + n, sizeof left - (size_t)n, "[=%s]", o->arg_name);
      else
        snprintf(left + n, sizeof left - (size_t)n, " %s", o->arg_name);
    }
    if (strlen(left) > 26)
      fprintf(out, "  %s\n  %-26s  %s\n", left, "", o->help);
    else
      fprintf(out, "  %-26s  %s\n", left, o->help);
  }
  fprintf(out, "  %-26s  %s\n", "-h, --help", "show this help and exit");
}

int cli_parse_u64(const char *s, uint64_t *out)
{
  if (!s || !*s || *s == '-')
    return -1;
  int base = 10;
  const char *p = s;
  if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
    base = 16;
    p += 2;
  } else if (p[0] == '0' && (p[1] == 'b' || p[1] == 'B')) {
    base = 2;
    p += 2;
  }
  if (!*p)
    return -1;
  errno = 0;
  char *end;
  unsigned long long v = strtoull(p, &end, base);
  if (errno || end == p)
    return -1;
  unsigned long long mul = 1;
  if (*end && base == 10) {
    bool bin = end[1] == 'i';
    unsigned long long k = bin ? 1024 : 1000;
    switch (*end) {
    case 'k': case 'K': mul = k; break;
    case 'M': mul = k * k; break;
    case 'G': mul = k * k * k; break;
    default: return -1;
    }
    end += bin ? 2 : 1;
  }
  if (*end)
    return -1;
  if (mul > 1 && v > UINT64_MAX / mul)
    return -1;
  *out = v * mul;
  return 0;
}

static const struct cli_opt *find_long(const struct cli_opt *opts, const char *name, size_t len)
{
  for (const struct cli_opt *o = opts; o->type != CLI_OPT_END; o++)
    if (o->long_name && strlen(o->long_name) == len && !strncmp(o->long_name, name, len))
      return o;
  return NULL;
}

static const struct cli_opt *find_short(const struct cli_opt *opts, char c)
{
  for (const struct cli_opt *o = opts; o->type != CLI_OPT_END; o++)
    if (o->short_name == c && o->type != CLI_OPT_GROUP)
      return o;
  return NULL;
}

static int apply(const struct cli_opt *o, const char *arg, const struct cli_command_help *help,
                 const char *spelled)
{
  switch (o->type) {
  case CLI_OPT_FLAG:
    *(bool *)o->value = true;
    return CLI_OK;
  case CLI_OPT_STRING:
  case CLI_OPT_OPTSTR:
    *(const char **)o->value = arg;
    return CLI_OK;
  case CLI_OPT_U64:
    if (cli_parse_u64(arg, (uint64_t *)o->value))
      return cli_usage_error(help, "option '%s': '%s' is not a non-negative number", spelled, arg);
    return CLI_OK;
  case CLI_OPT_I64: {
    char *end;
    errno = 0;
    long long v = strtoll(arg, &end, 0);
    if (errno || !*arg || *end)
      return cli_usage_error(help, "option '%s': '%s' is not a number", spelled, arg);
    *(int64_t *)o->value = v;
    return CLI_OK;
  }
  case CLI_OPT_DOUBLE: {
    char *end;
    errno = 0;
    double v = strtod(arg, &end);
    if (errno || !*arg || *end || !isfinite(v))
      return cli_usage_error(help, "option '%s': '%s' is not a number", spelled, arg);
    *(double *)o->value = v;
    return CLI_OK;
  }
  case CLI_OPT_CALLBACK: {
    int rc = o->cb(o, arg, o->value);
    if (rc)
      return rc == CLI_USAGE ? cli_usage_error(help, "option '%s': invalid value '%s'", spelled,
                                               arg ? arg : "")
                             : rc;
    return CLI_OK;
  }
  default:
    return CLI_USAGE;
  }
}

static bool takes_arg(const struct cli_opt *o)
{
  return o->type != CLI_OPT_FLAG && o->type != CLI_OPT_OPTSTR &&
         !(o->type == CLI_OPT_CALLBACK && !o->arg_name);
}

int cli_parse(int argc, char **argv, const struct cli_opt *opts,
              const struct cli_command_help *help, int *argc_out)
{
  int nargs = 0;
  bool only_args = false;
  static const struct cli_opt none[] = {OPT_END()};
  if (!opts)
    opts = none;
  for (int i = 1; i < argc; i++) {
    char *a = argv[i];
    if (only_args || a[0] != '-' || a[1] == '\0') {
      argv[nargs++] = a;
      continue;
    }
    if (!strcmp(a, "--")) {
      only_args = true;
      continue;
    }
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      cli_print_help(stdout, opts, help);
      return -1;
    }
    if (a[1] == '-') {
      const char *name = a + 2;
      const char *eq = strchr(name, '=');
      size_t len = eq ? (size_t)(eq - name) : strlen(name);
      const struct cli_opt *o = find_long(opts, name, len);
      if (!o)
        return cli_usage_error(help, "unknown option '--%.*s'", (int)len, name);
      const char *arg = NULL;
      if (takes_arg(o)) {
        if (eq)
          arg = eq + 1;
        else if (i + 1 < argc)
          arg = argv[++i];
        else
          return cli_usage_error(help, "option '--%s' needs a value %s", o->long_name,
                                 o->arg_name ? o->arg_name : "");
      } else if (eq) {
        if (o->type != CLI_OPT_OPTSTR && o->type != CLI_OPT_CALLBACK)
          return cli_usage_error(help, "option '--%s' takes no value", o->long_name);
        arg = eq + 1;
      } else if (o->type == CLI_OPT_OPTSTR) {
        arg = "";
      }
      int rc = apply(o, arg, help, a);
      if (rc)
        return rc;
      continue;
    }
    /* one or more short options: -v, -o file, -ofile, -vq */
    for (const char *p = a + 1; *p; p++) {
      const struct cli_opt *o = find_short(opts, *p);
      if (!o)
        return cli_usage_error(help, "unknown option '-%c'", *p);
      const char *arg = NULL;
      char spelled[3] = {'-', *p, 0};
      if (takes_arg(o)) {
        if (p[1])
          arg = p + 1;
        else if (i + 1 < argc)
          arg = argv[++i];
        else
          return cli_usage_error(help, "option '-%c' needs a value %s", *p,
                                 o->arg_name ? o->arg_name : "");
        int rc = apply(o, arg, help, spelled);
        if (rc)
          return rc;
        break;
      }
      int rc = apply(o, o->type == CLI_OPT_OPTSTR ? "" : NULL, help, spelled);
      if (rc)
        return rc;
    }
  }
  *argc_out = nargs;
  return CLI_OK;
}
