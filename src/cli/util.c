/* Output files, progress display, JSON strings and host time for the CLI. */
#include "cli.h"
#include "sonde/common.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

FILE *cli_open_output(const char *path, bool binary)
{
  if (!path || !strcmp(path, "-"))
    return stdout;
  FILE *f = fopen(path, binary ? "wb" : "w");
  if (!f)
    cli_error("cannot open '%s' for writing: %s", path, strerror(errno));
  return f;
}

int cli_close_output(FILE *f, const char *path)
{
  if (!f)
    return CLI_FAIL;
  int bad = fflush(f) != 0 || ferror(f);
  int saved = errno;
  if (f != stdout)
    bad |= fclose(f) != 0;
  if (bad)
    return cli_error("cannot write '%s': %s", path && strcmp(path, "-") ? path : "stdout",
                     strerror(saved ? saved : errno));
  return CLI_OK;
}

double cli_now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void cli_progress_start(struct cli_progress *p, const char *label, uint64_t total)
{
  p->enabled = isatty(STDERR_FILENO);
  p->label = label;
  p->total = total;
  p->last_draw_s = 0;
}

void cli_progress_update(struct cli_progress *p, uint64_t done)
{
  if (!p->enabled)
    return;
  double now = cli_now_s();
  if (now - p->last_draw_s < 0.1)
    return;
  p->last_draw_s = now;
  if (p->total) {
    int pct = (int)(done * 100 / p->total);
    int bars = pct * 30 / 100;
    fprintf(stderr, "\r%s [%.*s%*s] %3d%%", p->label, bars, "##############################",
            30 - bars, "", pct);
  } else {
    fprintf(stderr, "\r%s %llu", p->label, (unsigned long long)done);
  }
  fflush(stderr);
}

void cli_progress_end(struct cli_progress *p)
{
  if (p->enabled)
    fputs("\r\033[K", stderr);
}

static void put_file(void *ctx, const char *p, size_t n)
{
  fwrite(p, 1, n, ctx);
}

void cli_json_string(FILE *out, const char *s)
{
  sonde_json_quote(s, put_file, out);
}

char *cli_read_file(const char *path, size_t *len)
{
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  char *buf = NULL;
  size_t cap = 0, n = 0;
  for (;;) {
    if (n + 65537 > cap) {
      char *p = realloc(buf, cap = 2 * cap + 65537);
      if (!p) {
        free(buf);
        fclose(f);
        return NULL;
      }
      buf = p;
    }
    size_t k = fread(buf + n, 1, 65536, f);
    n += k;
    if (!k)
      break;
  }
  bool err = ferror(f);
  fclose(f);
  if (err) {
    free(buf);
    return NULL;
  }
  buf[n] = 0;
  *len = n;
  return buf;
}
