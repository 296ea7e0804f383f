/* Fuzz target: the Tonbandgerät decoder (hex and binary, split anywhere),
 * the converter and the Perfetto/Chrome JSON writer behind it. The first
 * input byte picks the input format, the split point, the mode, the output
 * format and the core count; the rest is the trace. Every call must return
 * without crashing, and the converted timeline must satisfy the writer's
 * checks (tracks before use, balanced slices). */
#include "sonde/export.h"
#include "sonde/tband.h"

#include <stdlib.h>

static int null_write(void *ctx, const void *buf, size_t len)
{
  (void)ctx, (void)buf, (void)len;
  return 0;
}

static int s_track(void *x, uint64_t u, uint64_t p, enum sonde_tband_track_kind k, const char *n,
                   int64_t id)
{
  static const enum sonde_export_track_kind map[] = {SONDE_EXPORT_PROCESS, SONDE_EXPORT_THREAD,
                                                     SONDE_EXPORT_SLICES, SONDE_EXPORT_COUNTER};
  return sonde_export_track(x, u, p, map[k], n, id);
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  if (size < 1)
    return 0;
  uint8_t ctl = data[0];
  data++, size--;
  enum sonde_tband_input_format fmt = (enum sonde_tband_input_format)(ctl % 3);
  unsigned cores = 1 + ((ctl >> 4) & 3);
  struct sonde_tband_conv *conv =
      sonde_tband_conv_new((ctl & 0x40) ? SONDE_TBAND_FREERTOS : SONDE_TBAND_BARE_METAL, cores);
  struct sonde_tband_dec *d = sonde_tband_dec_new(fmt, (ctl & 0x8) ? -1 : 0, "fuzz");
  if (!conv || !d)
    abort();
  size_t split = size ? (size_t)(ctl * 7919u) % (size + 1) : 0;
  sonde_tband_dec_feed(d, data, split, sonde_tband_conv_add_cb, conv);
  sonde_tband_dec_feed(d, data + split, size - split, sonde_tband_conv_add_cb, conv);
  sonde_tband_dec_finish(d, sonde_tband_conv_add_cb, conv);
  struct sonde_tband_stats st;
  sonde_tband_dec_stats(d, &st);
  if (st.bytes_in != size || st.errors > st.frames)
    abort();
  sonde_tband_dec_free(d);
  struct sonde_export *x = sonde_export_new((ctl & 0x80) ? SONDE_EXPORT_CHROME_JSON
                                                          : SONDE_EXPORT_PERFETTO,
                                            null_write, NULL);
  struct sonde_tband_sink sink = {x, s_track, s_begin, s_end, s_instant, s_counter};
  struct sonde_tband_conv_stats cs;
  /* the converter must never produce a timeline the writer rejects */
  if (sonde_tband_conv_run(conv, &sink, &cs) || sonde_export_finish(x))
    abort();
  sonde_export_free(x);
  sonde_tband_conv_free(conv);
  return 0;
}
