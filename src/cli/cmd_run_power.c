/* `sonde run --power FILE [--power-rate HZ]` (docs/cli.md, docs/formats.md
 * "Power samples"): samples of the supply current of the VM's power model
 * (docs/vm.md "Power model"). Sample k is taken at cycle floor(k * clock_hz /
 * rate_hz) and holds the current in effect during that cycle; rows are
 * `time_s,current_ma` with time_s = k / rate_hz. The VM reports the current
 * only when it changes (sonde_vm_set_power), so the samples are written
 * lazily: at each change, every sample before its cycle. */
#include "cmd_run_power.h"

#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "sonde/vm.h"

#define DEFAULT_RATE_HZ 1000

struct run_power {
  FILE *f;
  const char *path;
  uint64_t clock_hz, rate_hz;
  uint64_t k;          /* next sample */
  uint32_t current_ua; /* current since the last change */
  int err;
};

static uint64_t sample_cycle(const struct run_power *p, uint64_t k)
{
  return (uint64_t)((unsigned __int128)k * p->clock_hz / p->rate_hz);
}

/* Write the samples whose cycle is before `t` at the present current. */
static void emit_until(struct run_power *p, uint64_t t)
{
  while (!p->err && sample_cycle(p, p->k) < t) {
    uint64_t sec = p->k / p->rate_hz, rem = p->k % p->rate_hz;
    double frac = (double)rem / (double)p->rate_hz;
    if (fprintf(p->f, "%.9f,%u.%03u\n", (double)sec + frac, p->current_ua / 1000,
                p->current_ua % 1000) < 0)
      p->err = 1;
    p->k++;
  }
}

static void on_power(void *ctx, uint64_t cycle, uint32_t ua)
{
  struct run_power *p = ctx;
  emit_until(p, cycle);
  p->current_ua = ua;
}

int run_power_open(struct sonde_vm *vm, uint64_t clock_hz, const char *path, const char *rate,
                   struct run_power **out)
{
  *out = NULL;
  uint64_t hz = DEFAULT_RATE_HZ;
  if (rate && !path)
    return cli_error("run: --power-rate needs --power <file>"), CLI_USAGE;
  if (!path)
    return CLI_OK;
  if (rate && (cli_parse_u64(rate, &hz) < 0 || hz == 0 || hz > clock_hz))
    return cli_error("run: --power-rate: '%s' is not a rate in Hz from 1 to the core clock "
                     "(%llu)", rate, (unsigned long long)clock_hz),
           CLI_USAGE;
  struct run_power *p = calloc(1, sizeof *p);
  if (!p)
    return cli_error("run: out of memory"), CLI_FAIL;
  p->path = path;
  p->clock_hz = clock_hz;
  p->rate_hz = hz;
  p->f = cli_open_output(path, false);
  if (!p->f) {
    free(p);
    return CLI_FAIL;
  }
  if (fputs("time_s,current_ma\n", p->f) < 0)
    p->err = 1;
  sonde_vm_set_power(vm, on_power, p);
  *out = p;
  return CLI_OK;
}

int run_power_close(struct run_power *p, uint64_t end_cycle)
{
  if (!p)
    return CLI_OK;
  if (end_cycle)
    emit_until(p, end_cycle);
  int rc = CLI_OK;
  if (p->err) {
    cli_error("run: --power: cannot write '%s'", p->path);
    rc = CLI_FAIL;
  }
  if (cli_close_output(p->f, p->path) != CLI_OK)
    rc = CLI_FAIL;
  free(p);
  return rc;
}
