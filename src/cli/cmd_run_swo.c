/* `sonde run --swo / --swo-timed / --swo-samples` (cmd_run_swo.h). */
#include "cmd_run_swo.h"

#include <math.h>
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
  struct sonde_vm *vm;
  double bit_errors, jitter; /* --swo-bit-errors (per bit), --swo-jitter (fraction) */
  uint64_t rng;              /* splitmix64 state, from --swo-seed */
  uint64_t flipped;
  int err;
};

/* splitmix64: a small, seedable generator, so an impaired waveform is
 * reproducible from --swo-seed. */
static uint64_t rnd(struct run_swo *s)
{
  uint64_t z = (s->rng += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static double rnd01(struct run_swo *s) /* [0, 1) */
{
  return (double)(rnd(s) >> 11) * (1.0 / 9007199254740992.0);
}

/* The impairments of --swo-samples: each of the 10 bit times of a byte is
 * inverted with probability bit_errors; each byte's bit time is scaled by a
 * factor uniform in [1 - jitter, 1 + jitter] (a transmitter whose baud wanders
 * from byte to byte). The frame keeps its start on the pin; at |jitter| <= 5 %
 * the last data bit still ends inside the frame's slot. */
static void impair(struct run_swo *s, struct sonde_vm_swo_byte *b)
{
  if (s->jitter > 0)
    b->skew_ppm = (int32_t)lround(1e6 * s->jitter * (2.0 * rnd01(s) - 1.0));
  if (s->bit_errors > 0)
    for (unsigned i = 0; i < 10; i++)
      if (rnd01(s) < s->bit_errors) {
        b->flip ^= (uint16_t)(1u << i);
        s->flipped++;
      }
}

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
    struct sonde_vm_swo_byte ib = *b;
    impair(s, &ib);
    int rc = sonde_vm_swo_sampler_feed(s->sampler, &ib, write_samples, s);
    if (rc < 0)
      return s->err = rc;
  }
  return 0;
}

int run_swo_open(struct sonde_vm *vm, uint64_t clock_hz, const char *swo, const char *timed,
                 const char *samples, const char *rate, const struct run_swo_impair *imp,
                 struct run_swo **out)
{
  *out = NULL;
  if (imp && (imp->bit_errors != 0 || imp->jitter_pct != 0) && !samples)
    return cli_error("run: --swo-bit-errors and --swo-jitter need --swo-samples"), CLI_USAGE;
  if (imp && !(imp->bit_errors >= 0 && imp->bit_errors <= 1))
    return cli_error("run: --swo-bit-errors: %g is not a probability (0..1)", imp->bit_errors),
           CLI_USAGE;
  if (imp && !(imp->jitter_pct >= 0 && imp->jitter_pct <= 5))
    return cli_error("run: --swo-jitter: %g is not a percentage in 0..5", imp->jitter_pct),
           CLI_USAGE;
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
  s->vm = vm;
  if (imp) {
    s->bit_errors = imp->bit_errors;
    s->jitter = imp->jitter_pct / 100.0;
    s->rng = imp->seed;
  }
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
  sonde_vm_swo_flush(s->vm); /* TPIU formatter: its partial frame */
  if (s->sampler && !s->err) {
    uint64_t end = s->last_end > end_cycle ? s->last_end : end_cycle;
    end += 10ull * (s->bit_cycles ? s->bit_cycles : 1); /* one idle byte time */
    s->err = sonde_vm_swo_sampler_finish(s->sampler, end, write_samples, s);
  }
  if (s->bit_errors > 0 && !s->err)
    cli_warn("run: --swo-bit-errors: inverted %llu bit times of the SWO waveform",
             (unsigned long long)s->flipped);
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
