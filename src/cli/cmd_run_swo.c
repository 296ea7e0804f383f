/* `sonde run --swo / --swo-timed / --swo-samples` (cmd_run_swo.h). */
#include "cmd_run_swo.h"

#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "sonde/swo.h"

struct run_swo {
  const char *swo_path, *timed_path, *samples_path;
  FILE *swo, *timed, *samples;
  struct sonde_vm_swo_sampler *sampler;
  uint64_t last_end;
  uint32_t bit_cycles;
  int err;
};

static int write_samples(void *ctx, int stream, const void *data, size_t len)
{
  (void)stream;
  struct run_swo *s = ctx;
  return fwrite(data, 1, len, s->samples) == len ? 0 : SONDE_E_IO;
}

static int on_swo(void *ctx, const struct sonde_vm_swo_byte *b)
{
  struct run_swo *s = ctx;
  s->last_end = b->end_cycle;
  s->bit_cycles = b->bit_cycles;
  if (s->swo && fputc(b->byte, s->swo) == EOF)
    return s->err = SONDE_E_IO;
  if (s->timed && fprintf(s->timed, "%llu,%llu,0x%02x\n", (unsigned long long)b->start_cycle,
                          (unsigned long long)b->end_cycle, b->byte) < 0)
    return s->err = SONDE_E_IO;
  if (s->sampler) {
    int rc = sonde_vm_swo_sampler_feed(s->sampler, b, write_samples, s);
    if (rc < 0)
      return s->err = rc;
  }
  return 0;
}

int run_swo_open(struct sonde_vm *vm, uint64_t clock_hz, const char *swo, const char *timed,
                 const char *samples, const char *rate, struct run_swo **out)
{
  *out = NULL;
  if (rate && !samples)
    return cli_error("run: --sample-rate needs --swo-samples"), CLI_USAGE;
  if (samples && !rate)
    return cli_error("run: --swo-samples needs --sample-rate <hz>"), CLI_USAGE;
  if (!swo && !timed && !samples)
    return 0;
  uint64_t hz = 0;
  if (rate && (sonde_swo_parse_rate(rate, &hz) < 0 || hz == 0))
    return cli_error("run: --sample-rate: '%s' is not a rate in Hz (e.g. 24M)", rate), CLI_USAGE;
  struct run_swo *s = calloc(1, sizeof *s);
  if (!s)
    return cli_error("run: out of memory"), CLI_FAIL;
  s->swo_path = swo;
  s->timed_path = timed;
  s->samples_path = samples;
  if ((swo && !(s->swo = cli_open_output(swo, true))) ||
      (timed && !(s->timed = cli_open_output(timed, false))) ||
      (samples && !(s->samples = cli_open_output(samples, true)))) {
    run_swo_close(s, 0);
    return CLI_FAIL;
  }
  if (s->timed)
    fprintf(s->timed, "# sonde swo-timed v1 clock_hz=%llu\nstart_cycle,end_cycle,byte\n",
            (unsigned long long)clock_hz);
  if (samples && sonde_vm_swo_sampler_new(clock_hz, hz, &s->sampler) < 0) {
    run_swo_close(s, 0);
    return cli_error("run: --swo-samples: out of memory"), CLI_FAIL;
  }
  sonde_vm_set_swo(vm, on_swo, s);
  *out = s;
  return 0;
}

int run_swo_close(struct run_swo *s, uint64_t end_cycle)
{
  if (!s)
    return 0;
  int rc = 0;
  if (s->sampler && !s->err) {
    uint64_t end = s->last_end > end_cycle ? s->last_end : end_cycle;
    end += 10ull * (s->bit_cycles ? s->bit_cycles : 1); /* one idle byte time */
    s->err = sonde_vm_swo_sampler_finish(s->sampler, end, write_samples, s);
  }
  if (s->err) {
    cli_error("run: SWO output: %s", sonde_strerror(s->err));
    rc = CLI_FAIL;
  }
  if (s->swo && cli_close_output(s->swo, s->swo_path) != CLI_OK)
    rc = CLI_FAIL;
  if (s->timed && cli_close_output(s->timed, s->timed_path) != CLI_OK)
    rc = CLI_FAIL;
  if (s->samples && cli_close_output(s->samples, s->samples_path) != CLI_OK)
    rc = CLI_FAIL;
  sonde_vm_swo_sampler_free(s->sampler);
  free(s);
  return rc;
}
