/* The SWO pin as logic-analyzer samples (sonde_vm_swo_sampler_*, dbg_swo.c):
 * NRZ and Manchester waveforms of known bytes, with back-to-back and spaced
 * frames, decode with the SWO line decoder of src/swo (a separate module with
 * its own tests against sigrok-cli) to the same bytes; the first samples are
 * exactly the frame's bits. */
#include "check.h"

#include <stdlib.h>
#include <string.h>

#include "sonde/swo.h"
#include "sonde/vm.h"

struct buf {
  uint8_t *d;
  size_t n, cap;
};

static int put(void *ctx, int stream, const void *data, size_t len)
{
  (void)stream;
  struct buf *b = ctx;
  if (b->n + len > b->cap) {
    b->cap = (b->n + len) * 2;
    b->d = realloc(b->d, b->cap);
    if (!b->d)
      return SONDE_E_NOMEM;
  }
  memcpy(b->d + b->n, data, len);
  b->n += len;
  return 0;
}

/* Render `n` bytes at `bit` cycles per bit (clock 48 MHz, `rate` samples/s),
 * every 3rd byte after an idle gap, and decode them with src/swo. */
static void roundtrip(uint8_t proto, uint32_t bit, uint64_t rate)
{
  uint8_t want[300];
  for (unsigned i = 0; i < sizeof want; i++)
    want[i] = (uint8_t)(i * 37 + 11);
  struct sonde_vm_swo_sampler *s = NULL;
  REQUIRE(sonde_vm_swo_sampler_new(48000000, rate, &s) == 0);
  struct buf b = {0};
  uint64_t t = 1000;
  for (unsigned i = 0; i < sizeof want; i++) {
    if (i % 3 == 0)
      t += 25ull * bit; /* an idle gap */
    struct sonde_vm_swo_byte sb = {t, t + 10ull * bit, bit, want[i], proto, 0, 0};
    CHECK_EQ_I(sonde_vm_swo_sampler_feed(s, &sb, put, &b), 0);
    t += 10ull * bit;
  }
  CHECK_EQ_I(sonde_vm_swo_sampler_finish(s, t + 40ull * bit, put, &b), 0);
  sonde_vm_swo_sampler_free(s);
  /* sample count: cycles [0, end) at rate/clock */
  CHECK_EQ_U(b.n, (size_t)(((unsigned __int128)(t + 40ull * bit) * rate + 48000000 - 1) / 48000000));
  if (proto == SONDE_VM_SWO_NRZ) {
    /* idle HIGH, then the start bit of the first byte LOW */
    CHECK_EQ_U(b.d[0], 1);
    uint64_t k = (uint64_t)(((unsigned __int128)(1000 + 25ull * bit + bit / 2) * rate) / 48000000);
    CHECK_EQ_U(b.d[k], 0);
  } else {
    CHECK_EQ_U(b.d[0], 0);
  }
  struct sonde_swo_line_config cfg;
  sonde_swo_line_config_init(&cfg);
  cfg.mode = proto == SONDE_VM_SWO_NRZ ? SONDE_SWO_LINE_UART : SONDE_SWO_LINE_MANCHESTER;
  cfg.baud = 48000000 / bit;
  cfg.sample_rate_hz = rate;
  struct sonde_swo_line *l = NULL;
  REQUIRE(sonde_swo_line_new(&cfg, &l, NULL) == 0);
  size_t cap = sonde_swo_line_out_bound(l, b.n) + 16;
  uint8_t *out = malloc(cap);
  REQUIRE(out);
  size_t got = sonde_swo_line_feed(l, b.d, b.n, NULL, out, cap);
  got += sonde_swo_line_finish(l, out + got, cap - got);
  struct sonde_swo_line_stats st;
  sonde_swo_line_get_stats(l, &st);
  CHECK_EQ_U(st.framing_errors, 0);
  CHECK_EQ_U(got, sizeof want);
  CHECK(got == sizeof want && memcmp(out, want, got) == 0);
  free(out);
  sonde_swo_line_free(l);
  free(b.d);
}

static void test_nrz(void) { roundtrip(SONDE_VM_SWO_NRZ, 48, 8000000); }
static void test_nrz_fast(void) { roundtrip(SONDE_VM_SWO_NRZ, 12, 16000000); }
static void test_manchester(void) { roundtrip(SONDE_VM_SWO_MANCHESTER, 48, 8000000); }
static void test_manchester_fast(void) { roundtrip(SONDE_VM_SWO_MANCHESTER, 24, 12000000); }

static void test_bad_args(void)
{
  struct sonde_vm_swo_sampler *s = NULL;
  CHECK_EQ_I(sonde_vm_swo_sampler_new(0, 1000, &s), SONDE_E_ARG);
  CHECK_EQ_I(sonde_vm_swo_sampler_new(1000, 0, &s), SONDE_E_ARG);
  sonde_vm_swo_sampler_free(NULL);
}

int main(void)
{
  RUN(test_nrz);
  RUN(test_nrz_fast);
  RUN(test_manchester);
  RUN(test_manchester_fast);
  RUN(test_bad_args);
  return check_summary();
}
