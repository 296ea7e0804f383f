/* ITM/DWT decoder throughput: decodes a generated stream (default 256 MB) of
 * mixed software and hardware packets and prints MB/s next to a plain byte
 * scan of the same buffer, measured in the same run. Timing never fails.
 *
 *   bench_itm [MB] [chunk_bytes] [mixed|sw32|pc|mixedfix|sw32reg] [FILE|-] [REPS]
 *             [THREADS] [PAR_CHUNK]
 *
 * THREADS, PAR_CHUNK: for the last line, sequential against
 * sonde_itm_decode_parallel (default: online CPUs, its default chunk), both
 * by wall time, alternated REPS times in the same run, best of each, with
 * the consumer of the decode line (sum of the values); then once, untimed,
 * both fold every field of every packet into a checksum that must agree.
 *
 * FILE: also write the generated stream there (for `sonde itm --stats FILE`);
 * REPS: decode that many times (default 3) and report the best, which on a
 * busy machine is the closest to the decoder's own speed.
 *
 * sw32: 32-bit instrumentation writes (as a DMA'd logger emits) with an LTS1
 * every 8 packets; pc: periodic PC samples (1 in 16 sleeping), each followed
 * by a 2-byte LTS1. Two streams for diagnosis, not goals: mixedfix is mixed
 * with every packet of a kind whose length or decoding a decoder cannot know
 * from the header alone (LTS1, GTS, extension) replaced (LTS2, 32-bit
 * instrumentation), so a branch on the kind no longer mispredicts; sw32reg
 * is sw32 with the LTS1 at every 8th packet exactly (predictable).
 *
 * Mix per 100 packets (by count): 40 instrumentation (1/2/4 bytes on 32
 * ports), 15 LTS (format 1 and 2), 15 periodic PC samples (incl. sleep),
 * 10 exception trace, 5 event counter, 10 data trace (PC/address/value on 4
 * comparators), 3 GTS1/GTS2, 2 page extensions; a sync every 4096 packets.
 * Times are thread CPU time, best of REPS (decode, record fill) or mean of 3
 * (byte scan, boundary walk). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sonde/itm.h"

/* The time of a clock, in seconds. */
static double clock_s(clockid_t id)
{
  struct timespec t;
  clock_gettime(id, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* CPU time of this thread: the machine is shared, and wall time would count
 * the time other processes held the core. */
static double now_s(void) { return clock_s(CLOCK_THREAD_CPUTIME_ID); }
static double wall_s(void) { return clock_s(CLOCK_MONOTONIC); }
/* CPU time of all threads */
static double proc_s(void) { return clock_s(CLOCK_PROCESS_CPUTIME_ID); }

/* a consumer: every field of every packet into a checksum */
struct par_sum {
  uint64_t n, h;
};

static void fold(struct par_sum *x, const struct sonde_itm_packet *p, size_t n)
{
  uint64_t h = x->h;
  for (size_t i = 0; i < n; i++) {
    uint64_t meta;
    memcpy(&meta, &p[i].port, sizeof meta);
    h = (h ^ p[i].offset ^ p[i].ts * 3 ^ p[i].value * 5 ^ meta * 7) * 0x100000001b3ull;
  }
  x->h = h;
  x->n += n;
}

static int par_fold(void *user, const struct sonde_itm_packet *p, size_t n)
{
  fold(user, p, n);
  return 0;
}

/* the timed consumer: like the decode loop's */
static int par_sink(void *user, const struct sonde_itm_packet *p, size_t n)
{
  uint64_t s = *(uint64_t *)user;
  for (size_t i = 0; i < n; i++)
    s += p[i].value;
  *(uint64_t *)user = s;
  return 0;
}

static uint32_t rng = 0x12345678;
static uint32_t rnd(void)
{
  rng ^= rng << 13;
  rng ^= rng >> 17;
  rng ^= rng << 5;
  return rng;
}

static size_t put_source(uint8_t *p, unsigned id, int hw, unsigned size, uint32_t v)
{
  unsigned ss = size == 1 ? 1 : size == 2 ? 2 : 3;
  p[0] = (uint8_t)(id << 3 | (hw ? 4 : 0) | ss);
  for (unsigned i = 0; i < size; i++)
    p[1 + i] = (uint8_t)(v >> (8 * i));
  return 1 + size;
}

/* 0 mixed, 1 sw32: 32-bit instrumentation writes + LTS1, 2 pc: PC samples +
 * LTS, 3 mixedfix, 4 sw32reg (see the top) */
static int mode;
static const char *const mode_name[] = {"mixed", "sw32", "pc", "mixedfix", "sw32reg"};

static size_t gen_packet(uint8_t *p, uint64_t k)
{
  if ((mode == 1 || mode == 4) && k % 4096) {
    uint32_t v = rnd();
    if (mode == 4 ? k % 8 == 0 : v % 8 == 0) {
      p[0] = 0xc0;
      p[1] = (uint8_t)(v >> 8) & 0x7f;
      return 2;
    }
    return put_source(p, (v >> 4) & 31, 0, 4, v);
  }
  if (mode == 2 && k % 4096) {
    uint32_t v = rnd();
    if (k & 1) {
      p[0] = 0xc0;
      p[1] = 0x80 | ((v >> 8) & 0x7f);
      p[2] = (v >> 16) & 0x03;
      return 3;
    }
    if ((v & 0xf) == 0)
      return put_source(p, 2, 1, 1, 0);
    return put_source(p, 2, 1, 4, 0x00001000 + (v & 0xfffe));
  }
  if (k % 4096 == 0) {
    memset(p, 0, 5);
    p[5] = 0x80;
    return 6;
  }
  uint32_t r = rnd();
  unsigned c = r % 100;
  uint32_t v = rnd();
  static const unsigned sizes[] = {1, 2, 4, 4};
  if (c < 40)
    return put_source(p, (r >> 8) & 31, 0, sizes[(r >> 13) & 3], v);
  if (c < 55) {
    if ((r & 0x100) || mode == 3) {
      p[0] = (uint8_t)(((1 + (v % 6)) << 4));
      return 1;
    }
    p[0] = 0xc0 | ((v & 3) << 4);
    unsigned n = 1 + ((v >> 2) % 3);
    for (unsigned i = 1; i <= n; i++)
      p[i] = (uint8_t)((v >> (4 + i)) & 0x7f) | (i < n ? 0x80 : 0);
    return 1 + n;
  }
  if (c < 70) {
    if ((r & 0x700) == 0)
      return put_source(p, 2, 1, 1, 0);
    return put_source(p, 2, 1, 4, 0x00001000 + (v & 0xfffe));
  }
  if (c < 80)
    return put_source(p, 1, 1, 2, (v & 0x3f) | ((1 + (v >> 8) % 3) << 12));
  if (c < 85)
    return put_source(p, 0, 1, 1, 1u << (v % 6));
  if (c < 95) {
    unsigned cmp = v & 3, kind = (v >> 2) % 3;
    if (kind == 0)
      return put_source(p, 8 + 2 * cmp, 1, 4, 0x00001000 + (v & 0xfffe));
    if (kind == 1)
      return put_source(p, 9 + 2 * cmp, 1, 2, v >> 8);
    return put_source(p, 16 + 2 * cmp + ((v >> 4) & 1), 1, sizes[(v >> 5) & 3], v);
  }
  if (c >= 95 && mode == 3)
    return put_source(p, (r >> 8) & 31, 0, 4, v);
  if (c < 98) {
    if (r & 0x100) {
      p[0] = 0x94;
      p[1] = 0x80 | (v & 0x7f);
      p[2] = 0x80 | ((v >> 7) & 0x7f);
      p[3] = 0x80 | ((v >> 14) & 0x7f);
      p[4] = (v >> 21) & 0x1f;
      return 5;
    }
    p[0] = 0xb4;
    p[1] = 0x80 | (v & 0x7f);
    p[2] = 0x80 | ((v >> 7) & 0x7f);
    p[3] = 0x80 | ((v >> 14) & 0x7f);
    p[4] = 0;
    return 5;
  }
  p[0] = (uint8_t)(0x08 | ((v & 7) << 4));
  return 1;
}

int main(int argc, char **argv)
{
  size_t mb = argc > 1 ? strtoul(argv[1], NULL, 10) : 256;
  size_t chunk = argc > 2 ? strtoul(argv[2], NULL, 10) : 0;
  char chunk_text[32];
  snprintf(chunk_text, sizeof chunk_text, "%zu bytes", chunk);
  if (argc > 3)
    for (int m = 0; m < 5; m++)
      if (!strcmp(argv[3], mode_name[m]))
        mode = m;
  int reps = argc > 5 ? atoi(argv[5]) : 3;
  if (reps < 1)
    reps = 1;
  size_t len = mb << 20;
  uint8_t *buf = malloc(len + 16);
  if (!buf) {
    fprintf(stderr, "bench_itm: out of memory\n");
    return 1;
  }
  size_t pos = 0;
  uint64_t k = 0;
  while (pos + 8 <= len)
    pos += gen_packet(buf + pos, k++);
  memset(buf + pos, 0x70, len - pos); /* overflow packets as filler */
  if (argc > 4 && strcmp(argv[4], "-")) {
    FILE *f = fopen(argv[4], "wb");
    if (!f || fwrite(buf, 1, len, f) != len || fclose(f)) {
      fprintf(stderr, "bench_itm: cannot write '%s'\n", argv[4]);
      return 1;
    }
  }

  /* plain byte scan: count bytes with bit 7 set (reads every byte; the
   * compiler vectorises it, so this is about memory speed) */
  double t0 = now_s();
  uint64_t hits = 0;
  for (int rep = 0; rep < 3; rep++)
    for (size_t i = 0; i < len; i++)
      hits += buf[i] >> 7;
  double scan_s = (now_s() - t0) / 3;

  /* packet-boundary walk: only the header -> length dependency chain that any
   * sequential ITM decoder must follow (no output); a lower bound on time */
  t0 = now_s();
  uint64_t walked = 0;
  for (int rep = 0; rep < 3; rep++) {
    size_t i = 0;
    while (i + 8 <= len) {
      uint64_t w;
      memcpy(&w, buf + i, 8);
      unsigned h = (unsigned)w & 0xff, ss = h & 3;
      uint64_t c = (~w & (h == 0xb4 ? 0x80808080808000ull : 0x8080808000ull)) | (1ull << 55);
      unsigned vlen = ((unsigned)__builtin_ctzll(c) >> 3) + 1;
      unsigned plen = ((1u << ss) >> 1) + 1;
      plen += (vlen - plen) & (0u - (unsigned)(h >= 0x80 && !ss)); /* branch-free */
      plen += 5u & (0u - (unsigned)(h == 0));
      i += plen;
      walked++;
    }
  }
  double walk_s = (now_s() - t0) / 3;

  enum { CAP = 512 };
  static struct sonde_itm_packet out[CAP];
  double best = 1e9;
  uint64_t packets = 0, sum = 0;
  for (int rep = 0; rep < reps; rep++) {
    struct sonde_itm *d = sonde_itm_new(NULL);
    packets = 0;
    t0 = now_s();
    size_t at = 0;
    while (at < len) {
      size_t n = len - at;
      if (chunk && n > chunk)
        n = chunk;
      size_t used;
      size_t got = sonde_itm_decode(d, buf + at, n, &used, out, CAP);
      packets += got;
      for (size_t i = 0; i < got; i++) /* touch the output like a consumer */
        sum += out[i].value;
      at += used;
    }
    double dt = now_s() - t0;
    if (dt < best)
      best = dt;
    if (rep == reps - 1 && sonde_itm_stats(d)->losses)
      fprintf(stderr, "bench_itm: unexpected loss in generated stream\n");
    sonde_itm_free(d);
  }
  /* record fill: only the output side of a decoder of this API, as many
   * 32-byte records as the decode gave, written into the same array with
   * the same consumer (an offset, a timestamp, a value read from the input,
   * the port..reserved word); an upper bound on decoding speed */
  double fill = 1e9;
  for (int rep = 0; rep < reps; rep++) {
    t0 = now_s();
    uint64_t left = packets, ts = 0, off = 0;
    while (left) {
      size_t got = left < CAP ? (size_t)left : CAP;
      for (size_t i = 0; i < got; i++) {
        uint32_t v;
        memcpy(&v, buf + 3 * i, 4); /* (len >= 1 MiB) */
        uint64_t meta = 0x4030000ull | (v & 0x1f);
        out[i].offset = off;
        out[i].ts = ts;
        out[i].value = v;
        memcpy(&out[i].port, &meta, sizeof meta);
        off += 3;
        ts += v >> 31;
      }
      for (size_t i = 0; i < got; i++)
        sum += out[i].value;
      left -= got;
    }
    double dt = now_s() - t0;
    if (dt < fill)
      fill = dt;
  }
  /* sequential against parallel (sonde_itm_decode_parallel), wall time,
   * alternated in the same run, the consumer of the decode above (the sum
   * of the values); then, untimed, both once more with every field of every
   * packet folded into a checksum, which must agree */
  unsigned threads = argc > 6 ? (unsigned)atoi(argv[6]) : 0;
  size_t par_chunk = argc > 7 ? strtoul(argv[7], NULL, 10) : 0;
  double seq_wall = 1e9, par_wall = 1e9, par_cpu = 1e9;
  struct par_sum seq_sum = {0, 0}, par_sum = {0, 0};
  struct sonde_itm_par_stats ps;
  memset(&ps, 0, sizeof ps);
  struct sonde_itm_par_config pc;
  sonde_itm_par_config_init(&pc);
  pc.threads = threads;
  pc.chunk_bytes = par_chunk;
  for (int rep = 0; rep < reps + 1; rep++) {
    bool check = rep == reps; /* the untimed checksum run */
    struct sonde_itm *d = sonde_itm_new(NULL);
    uint64_t vsum = 0;
    double w0 = wall_s();
    size_t at = 0;
    while (at < len) {
      size_t used;
      size_t got = sonde_itm_decode(d, buf + at, len - at, &used, out, CAP);
      if (check)
        fold(&seq_sum, out, got);
      else
        for (size_t i = 0; i < got; i++)
          vsum += out[i].value;
      at += used;
    }
    double dt = wall_s() - w0;
    if (dt < seq_wall && !check)
      seq_wall = dt;
    sonde_itm_free(d);

    d = sonde_itm_new(NULL);
    uint64_t psum = 0;
    w0 = wall_s();
    double c0 = proc_s();
    if (check)
      sonde_itm_decode_parallel(d, buf, len, &pc, par_fold, &par_sum, &ps);
    else
      sonde_itm_decode_parallel(d, buf, len, &pc, par_sink, &psum, &ps);
    dt = wall_s() - w0;
    double dc = proc_s() - c0;
    if (dt < par_wall && !check) {
      par_wall = dt;
      par_cpu = dc;
    }
    sonde_itm_free(d);
    if (psum != vsum)
      par_sum.h ^= 1; /* a difference */
    sum += vsum;
  }

  double mbs = (double)len / 1e6;
  printf("stream: %s, %zu MiB, %llu packets (%.2f bytes/packet), chunk %s\n",
         mode_name[mode], mb,
         (unsigned long long)packets, (double)len / (double)packets,
         chunk ? chunk_text : "whole buffer");
  printf("byte scan:  %8.1f MB/s\n", mbs / scan_s);
  printf("boundary walk: %8.1f MB/s (header->length chain only, no decoding)\n", mbs / walk_s);
  printf("record fill: %7.1f MB/s  (%.1f Mrecords/s: writing this many 32-byte records only)\n",
         mbs / fill, (double)packets / fill / 1e6);
  printf("itm decode: %8.1f MB/s  (%.1f Mpackets/s)  = %.2fx of byte scan, %.2fx of walk, "
         "%.2fx of record fill\n",
         mbs / best, (double)packets / best / 1e6, scan_s / best, walk_s / best, fill / best);
  printf("sequential: %8.1f MB/s wall | parallel: %8.1f MB/s wall (%.2fx), %.1f MB/s of CPU "
         "time, %u threads, chunk %zu, %llu of %llu chunks joined, %llu exact, %llu bytes walked by "
         "the exact decoder%s\n",
         mbs / seq_wall, mbs / par_wall, seq_wall / par_wall, mbs / par_cpu, ps.threads,
         par_chunk ? par_chunk : (size_t)64 << 10, (unsigned long long)ps.joined,
         (unsigned long long)ps.chunks, (unsigned long long)ps.exact,
         (unsigned long long)ps.walk_bytes,
         seq_sum.n == par_sum.n && seq_sum.h == par_sum.h ? "" : " -- PACKETS DIFFER");
  printf("(checksum %llu %llu %llu)\n", (unsigned long long)hits, (unsigned long long)sum,
         (unsigned long long)walked);
  free(buf);
  return 0;
}
