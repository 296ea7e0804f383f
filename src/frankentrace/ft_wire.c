/* The SWO wire of a FrankenTrace run on the VM, with bit errors (ft_wire.h). */
#include "ft_wire.h"

#include <stdlib.h>
#include <string.h>

uint64_t ft_wire_mix(uint64_t x)
{
  uint64_t z = x + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static double rnd01(struct ft_wire *w)
{
  w->rng += 0x9E3779B97F4A7C15ull;
  return (double)(ft_wire_mix(w->rng) >> 11) * (1.0 / 9007199254740992.0);
}

void ft_wire_init(struct ft_wire *w, uint64_t clock_hz, double bit_errors, uint64_t seed)
{
  memset(w, 0, sizeof *w);
  w->clock_hz = clock_hz;
  w->bit_errors = bit_errors;
  w->rng = seed;
}

static int append(struct ft_wire *w, const uint8_t *b, size_t n)
{
  if (w->n + n > w->cap) {
    size_t nc = w->cap ? w->cap : 1 << 16;
    while (nc < w->n + n)
      nc *= 2;
    uint8_t *nb = realloc(w->buf, nc);
    if (!nb)
      return w->err = SONDE_E_NOMEM;
    w->buf = nb;
    w->cap = nc;
  }
  memcpy(w->buf + w->n, b, n);
  w->n += n;
  return 0;
}

/* Samples from the sampler into the UART decoder, its bytes into buf. */
static int on_samples(void *ctx, int stream, const void *data, size_t len)
{
  (void)stream;
  struct ft_wire *w = ctx;
  size_t need = sonde_swo_line_out_bound(w->line, len);
  if (need > w->lcap) {
    uint8_t *nb = realloc(w->lbuf, need);
    if (!nb)
      return w->err = SONDE_E_NOMEM;
    w->lbuf = nb;
    w->lcap = need;
  }
  size_t got = sonde_swo_line_feed(w->line, data, len, NULL, w->lbuf, w->lcap);
  return append(w, w->lbuf, got);
}

static int start_line(struct ft_wire *w, uint32_t bit_cycles)
{
  uint64_t baud = w->clock_hz / bit_cycles;
  int rc = sonde_vm_swo_sampler_new(w->clock_hz, 4 * baud, &w->sampler);
  if (rc < 0)
    return w->err = rc;
  struct sonde_swo_line_config lc;
  sonde_swo_line_config_init(&lc);
  lc.mode = SONDE_SWO_LINE_UART;
  lc.baud = (uint32_t)baud;
  lc.sample_rate_hz = 4 * baud;
  struct sonde_diag d;
  rc = sonde_swo_line_new(&lc, &w->line, &d);
  return rc < 0 ? (w->err = rc) : 0;
}

int ft_wire_byte(void *ctx, const struct sonde_vm_swo_byte *b)
{
  struct ft_wire *w = ctx;
  if (w->err)
    return w->err;
  w->sent++;
  w->last_end = b->end_cycle;
  w->bit_cycles = b->bit_cycles;
  if (w->bit_errors <= 0)
    return append(w, &b->byte, 1);
  if (!w->line && start_line(w, b->bit_cycles))
    return w->err;
  struct sonde_vm_swo_byte ib = *b;
  for (unsigned i = 0; i < 10; i++)
    if (rnd01(w) < w->bit_errors) {
      ib.flip ^= (uint16_t)(1u << i);
      w->flipped++;
    }
  int rc = sonde_vm_swo_sampler_feed(w->sampler, &ib, on_samples, w);
  return rc < 0 ? (w->err = rc) : w->err;
}

int ft_wire_finish(struct ft_wire *w)
{
  if (w->err || !w->line)
    return w->err;
  uint64_t end = w->last_end + 10ull * w->bit_cycles; /* one idle byte time */
  int rc = sonde_vm_swo_sampler_finish(w->sampler, end, on_samples, w);
  if (rc < 0)
    return w->err = rc;
  size_t got;
  uint8_t tail[64];
  while ((got = sonde_swo_line_finish(w->line, tail, sizeof tail)) > 0)
    if (append(w, tail, got))
      return w->err;
  struct sonde_swo_line_stats st;
  sonde_swo_line_get_stats(w->line, &st);
  w->framing = st.framing_errors;
  return w->err;
}

void ft_wire_free(struct ft_wire *w)
{
  free(w->buf);
  free(w->lbuf);
  sonde_vm_swo_sampler_free(w->sampler);
  sonde_swo_line_free(w->line);
  memset(w, 0, sizeof *w);
}
