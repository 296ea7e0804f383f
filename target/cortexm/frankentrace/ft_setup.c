/* FrankenTrace runner: DWT/ITM/TPIU settings from clock, baud and N (ft_setup.h). */
#include "ft_setup.h"

uint32_t ft_setup_bytes_per_sample(uint32_t n)
{
  uint32_t lts = 1; /* the header */
  for (uint32_t d = n; d; d >>= 7)
    lts++;
  return 5 + lts;
}

uint32_t ft_setup_ctrl13(uint32_t n)
{
  /* DWT_CTRL: bit 12 PCSAMPLENA, bit 9 CYCTAP (tap CYCCNT[10] instead of
   * [6]), bits 4:1 POSTPRESET (interval = POSTPRESET+1 taps), bit 0 CYCCNTENA.
   * The short tap is preferred: it also gives phases a finer CYCCNT grid. */
  if (n >= 64 && n <= 1024 && n % 64 == 0)
    return (1u << 12) | ((n / 64 - 1) << 1) | 1u;
  if (n > 1024 && n <= 16384 && n % 1024 == 0)
    return (1u << 12) | (1u << 9) | ((n / 1024 - 1) << 1) | 1u;
  return 0;
}

static uint32_t next_n(uint32_t n) /* the next interval DWT can make */
{
  return n < 1024 ? n + 64 : n + 1024;
}

uint32_t ft_setup_min_n(uint32_t core_hz, uint32_t baud)
{
  if (!core_hz || !baud)
    return 0;
  for (uint32_t n = 64; n <= 16384; n = next_n(n)) {
    /* bytes the pin sends in n cycles: n * baud / (10 * core_hz) */
    uint64_t have = (uint64_t)n * baud, need = (uint64_t)ft_setup_bytes_per_sample(n) * 10u * core_hz;
    if (have >= need)
      return n;
  }
  return 0;
}

int ft_setup_compute(uint32_t core_hz, uint32_t baud, uint32_t n, uint32_t phase,
                     struct ft_setup *out)
{
  out->acpr = out->ctrl13 = out->postinit = out->cyccnt0 = 0;
  out->min_n = ft_setup_min_n(core_hz, baud);
  if (!baud || core_hz % baud || core_hz / baud > 65536u)
    return FT_SETUP_BAUD_DIVIDER;
  out->acpr = core_hz / baud - 1;
  out->ctrl13 = ft_setup_ctrl13(n);
  if (!out->ctrl13)
    return FT_SETUP_N_SHAPE;
  if (!out->min_n || n < out->min_n)
    return FT_SETUP_N_BANDWIDTH;
  if (phase >= n)
    return FT_SETUP_PHASE;
  uint32_t tap = (out->ctrl13 & (1u << 9)) ? 1024u : 64u;
  /* The counter starts at CYCCNT0 at the DWT_CTRL write; the first tap is
   * when CYCCNT reaches the next multiple of tap, (tap - CYCCNT0 % tap)
   * cycles later; the first sample POSTINIT taps after that. */
  out->cyccnt0 = tap - 1 - phase % tap;
  out->postinit = phase / tap;
  return FT_SETUP_OK;
}
