/* Host decoding throughput of the Tonbandgerät decoder (src/tband), binary
 * and hex, on a synthetic 64 MiB trace with the event mix of the real
 * FreeRTOS trace in tests/data (task switches, ready, delays, queue
 * operations, markers with short strings, value markers). Baselines measured
 * in the same run: memchr over the buffer for the frame delimiters (the
 * least any decoder must do), and the converter + Perfetto writer.
 * Prints figures; never fails on time. */
#define TBAND_ENCODE_MAX_STR_LEN 20
#include "tband_encode.h"

#include "sonde/export.h"
#include "sonde/tband.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* CPU time of this process: the benchmark machine is shared, and CPU time
 * is what the decoder costs. */
static double now_s(void)
{
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static uint64_t nev;
static void count_cb(void *ctx, const struct sonde_tband_evt *e)
{
  (void)ctx;
  nev += !e->error;
}

static int null_write(void *ctx, const void *b, size_t n)
{
  (void)ctx, (void)b, (void)n;
  return 0;
}
static int s_track(void *x, uint64_t u, uint64_t p, enum sonde_tband_track_kind k, const char *n, int64_t id)
{
  static const enum sonde_export_track_kind map[] = {SONDE_EXPORT_PROCESS, SONDE_EXPORT_THREAD,
                                                     SONDE_EXPORT_SLICES, SONDE_EXPORT_COUNTER};
  return sonde_export_track(x, u, p, map[k], n, id);
}
static int s_begin(void *x, uint64_t u, uint64_t ts, const char *n, const struct sonde_tband_arg *a, unsigned na)
{
  return sonde_export_slice_begin(x, u, ts, n, (const struct sonde_export_arg *)a, na);
}
static int s_end(void *x, uint64_t u, uint64_t ts) { return sonde_export_slice_end(x, u, ts); }
static int s_instant(void *x, uint64_t u, uint64_t ts, const char *n, const struct sonde_tband_arg *a, unsigned na)
{
  return sonde_export_instant(x, u, ts, n, (const struct sonde_export_arg *)a, na);
}
static int s_counter(void *x, uint64_t u, uint64_t ts, int64_t v) { return sonde_export_counter(x, u, ts, v); }

int main(int argc, char **argv)
{
  size_t target = (argc > 1 ? (size_t)atol(argv[1]) : 64) << 20;
  uint8_t *bin = malloc(target + 64);
  if (!bin)
    return 1;
  size_t n = 0;
  uint64_t ts = 1000;
  uint32_t k = 0, events = 0;
  n += tband_encode_ts_resolution_ns(bin + n, 1);
  for (uint32_t t = 1; t <= 4; t++)
    n += tband_encode_task_name(bin + n, t, "task");
  while (n < target) {
    ts += 200 + (k * 37) % 5000;
    switch (k++ % 12) {
    case 0: case 6: n += tband_encode_task_switched_in(bin + n, ts, 1 + k % 4); break;
    case 1: case 7: n += tband_encode_task_to_rdy_state(bin + n, ts, 1 + k % 4); break;
    case 2: n += tband_encode_curtask_delay(bin + n, ts, 10); break;
    case 3: n += tband_encode_queue_send(bin + n, ts, 1, k % 5); break;
    case 4: n += tband_encode_queue_receive(bin + n, ts, 1, k % 5); break;
    case 5: n += tband_encode_evtmarker(bin + n, ts, 1, "evt"); break;
    case 8: n += tband_encode_evtmarker_begin(bin + n, ts, 2, "work"); break;
    case 9: n += tband_encode_evtmarker_end(bin + n, ts, 2); break;
    case 10: n += tband_encode_valmarker(bin + n, ts, 1, (int64_t)(k % 1000) - 500); break;
    default: n += tband_encode_task_valmarker(bin + n, ts, 3, (int64_t)k); break;
    }
    events++;
  }
  printf("synthetic trace: %.1f MiB binary, %u events (%.1f bytes/event)\n", n / 1048576.0,
         events + 5, (double)n / (events + 5));

  /* baseline: find every delimiter */
  double t0 = now_s();
  size_t frames = 0;
  for (const uint8_t *p = bin, *end = bin + n; p < end;) {
    const uint8_t *z = memchr(p, 0, (size_t)(end - p));
    if (!z)
      break;
    frames++;
    p = z + 1;
  }
  double t_memchr = now_s() - t0;

  /* binary decode, in 64 KiB chunks as from a file */
  double best = 1e9;
  for (int rep = 0; rep < 3; rep++) {
    nev = 0;
    struct sonde_tband_dec *d = sonde_tband_dec_new(SONDE_TBAND_BIN, 0, "bench");
    t0 = now_s();
    for (size_t off = 0; off < n; off += 65536)
      sonde_tband_dec_feed(d, bin + off, n - off < 65536 ? n - off : 65536, count_cb, NULL);
    sonde_tband_dec_finish(d, count_cb, NULL);
    double t = now_s() - t0;
    best = t < best ? t : best;
    sonde_tband_dec_free(d);
  }
  printf("binary decode: %.0f MB/s (%.1f M events/s, %llu events, best of 3); memchr baseline %.0f MB/s; decode/memchr time %.1fx\n",
         n / best / 1e6, nev / best / 1e6, (unsigned long long)nev, n / t_memchr / 1e6, best / t_memchr);

  /* hex text of the first 16 MiB */
  size_t hn = n < (16u << 20) ? n : (16u << 20);
  char *hex = malloc(hn * 3);
  static const char dig[] = "0123456789abcdef";
  for (size_t i = 0; i < hn; i++) {
    hex[3 * i] = dig[bin[i] >> 4];
    hex[3 * i + 1] = dig[bin[i] & 15];
    hex[3 * i + 2] = (i % 8 == 7) ? '\n' : ' ';
  }
  nev = 0;
  struct sonde_tband_dec *d = sonde_tband_dec_new(SONDE_TBAND_AUTO, 0, "bench");
  t0 = now_s();
  for (size_t off = 0; off < hn * 3; off += 65536)
    sonde_tband_dec_feed(d, hex + off, hn * 3 - off < 65536 ? hn * 3 - off : 65536, count_cb, NULL);
  sonde_tband_dec_finish(d, count_cb, NULL);
  double th = now_s() - t0;
  sonde_tband_dec_free(d);
  printf("hex decode: %.0f MB/s of text (%.0f MB/s of trace bytes)\n", hn * 3 / th / 1e6, hn / th / 1e6);

  /* decode + convert + Perfetto write of the first 16 MiB */
  struct sonde_tband_conv *c = sonde_tband_conv_new(SONDE_TBAND_FREERTOS, 1);
  struct sonde_export *x = sonde_export_new(SONDE_EXPORT_PERFETTO, null_write, NULL);
  struct sonde_tband_sink sink = {x, s_track, s_begin, s_end, s_instant, s_counter};
  t0 = now_s();
  d = sonde_tband_dec_new(SONDE_TBAND_BIN, 0, "bench");
  sonde_tband_dec_feed(d, bin, hn, sonde_tband_conv_add_cb, c);
  sonde_tband_dec_finish(d, sonde_tband_conv_add_cb, c);
  struct sonde_tband_conv_stats st;
  int rc = sonde_tband_conv_run(c, &sink, &st);
  rc |= sonde_export_finish(x);
  double tc = now_s() - t0;
  printf("decode + convert + Perfetto: %.0f MB/s (%.1f M events/s, %llu packets, rc %d)\n",
         hn / tc / 1e6, st.events / tc / 1e6, (unsigned long long)sonde_export_count(x), rc);
  sonde_tband_dec_free(d);
  sonde_export_free(x);
  sonde_tband_conv_free(c);
  free(hex);
  free(bin);
  (void)frames;
  return 0;
}
