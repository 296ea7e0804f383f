/* Output files, progress display, JSON strings and host time for the CLI. */
#include "cli.h"
#include "sonde/common.h"

#include "sonde/vm.h"
#include <sys/stat.h>
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
        errno = ENOMEM;
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
  int read_errno = errno;
  fclose(f);
  if (err) {
    free(buf);
    errno = read_errno ? read_errno : EIO;
    return NULL;
  }
  buf[n] = 0;
  *len = n;
  return buf;
}

/* Machine descriptions are small text files; more than this is not one. */
#define CLI_MAX_MACHINE_FILE ((size_t)1 << 20)

int cli_load_machine(const char *spec, struct sonde_machine **m)
{
  if (sonde_machine_builtin(spec, m) == 0)
    return CLI_OK;
  const char *cmd = cli_command_name ? cli_command_name : "sonde";
  FILE *f = fopen(spec, "rb");
  if (!f) {
    const char *const *names = sonde_machine_builtin_names();
    fprintf(stderr, "sonde: %s: unknown machine '%s' (not a built-in, not a file); built-ins:", cmd,
            spec);
    for (size_t i = 0; names[i]; i++)
      fprintf(stderr, " %s", names[i]);
    fputc('\n', stderr);
    return CLI_FAIL;
  }
  struct stat sb;
  if (!fstat(fileno(f), &sb) && S_ISDIR(sb.st_mode)) {
    fclose(f);
    return cli_error("%s: '%s' is a directory", cmd, spec);
  }
  char *text = malloc(CLI_MAX_MACHINE_FILE + 1);
  size_t len = text ? fread(text, 1, CLI_MAX_MACHINE_FILE + 1, f) : 0;
  bool err = ferror(f);
  fclose(f);
  if (!text || err) {
    free(text);
    return cli_error("%s: cannot read '%s'", cmd, spec);
  }
  if (len > CLI_MAX_MACHINE_FILE) {
    free(text);
    return cli_error("%s: '%s' is larger than %zu MiB: not a firmware image or machine file", cmd,
                     spec, CLI_MAX_MACHINE_FILE >> 20);
  }
  struct sonde_diag diag = {{0}};
  int rc = sonde_machine_parse(text, len, spec, m, &diag);
  free(text);
  if (rc < 0)
    return cli_error("%s: %s", cmd, diag.msg[0] ? diag.msg : sonde_strerror(rc));
  return CLI_OK;
}

/* Firmware images (ELF with full debug information, or raw binaries) stay far
 * below this; the cap keeps a wrong path from eating the host's memory. */
#define CLI_MAX_ELF_FILE ((size_t)512 << 20)

void *cli_read_firmware(const char *path, bool elf, size_t *len)
{
  const char *cmd = cli_command_name ? cli_command_name : "sonde";
  FILE *f = fopen(path, "rb");
  if (!f) {
    cli_error("%s: cannot open '%s': %s", cmd, path, strerror(errno));
    return NULL;
  }
  struct stat sb;
  if (!fstat(fileno(f), &sb) && S_ISDIR(sb.st_mode)) {
    fclose(f);
    cli_error("%s: '%s' is a directory", cmd, path);
    return NULL;
  }
  /* The header first: a wrong file (a disk image, /dev/zero) is refused
   * before anything more is read. */
  size_t cap = 1 << 16, n = 0;
  unsigned char *buf = malloc(cap);
  for (;;) {
    if (!buf) {
      fclose(f);
      cli_error("%s: '%s': out of memory", cmd, path);
      return NULL;
    }
    size_t was = n;
    n += fread(buf + n, 1, cap - n, f);
    if (elf && was == 0 && (n < 4 || memcmp(buf, "\177ELF", 4))) {
      if (n < 4)
        cli_error("%s: '%s' is not an ELF file (%zu bytes)", cmd, path, n);
      else
        cli_error("%s: '%s' is not an ELF file (it starts with %02x %02x %02x %02x, not "
                  "7f 45 4c 46)", cmd, path, buf[0], buf[1], buf[2], buf[3]);
      free(buf);
      fclose(f);
      return NULL;
    }
    if (n < cap)
      break;
    if (n >= CLI_MAX_ELF_FILE) {
      free(buf);
      fclose(f);
      cli_error("%s: '%s' is larger than %zu MiB: not a firmware image", cmd, path,
                CLI_MAX_ELF_FILE >> 20);
      return NULL;
    }
    cap *= 2;
    unsigned char *nb = realloc(buf, cap);
    if (!nb)
      free(buf);
    buf = nb;
  }
  bool err = ferror(f);
  fclose(f);
  if (err) {
    cli_error("%s: cannot read '%s'", cmd, path);
    free(buf);
    return NULL;
  }
  *len = n;
  return buf;
}
