/* Test helper for sigrok_compare.sh: generates SWO waveforms (wavegen.h) and
 * decodes sample files with the sonde decoders, so a script can compare the
 * bytes with sigrok-cli's.
 *
 *   swo_wavetool gen uart|manchester|tpiu-uart RATE BAUD ERR CH COUNT SEED OUT.bin EXPECT.bin
 *       tpiu-uart: COUNT payload bytes for ID 1 (mixed with ID 2), TPIU-formatted
 *       (no half syncs), sent back-to-back; EXPECT gets the ID 1 payload.
 *   swo_wavetool dec uart|manchester|auto RATE BAUD CH IN.bin [tpiu]
 *       prints the decoded bytes as two-digit lowercase hex, one per line.
 *   swo_wavetool wave uart|manchester RATE BAUD ERR CH IN.bin OUT.bin
 *       the waveform of the bytes of IN.bin.
 *   swo_wavetool tpiu-wrap IN.bin OUT.bin
 *       IN.bin as TPIU stream 1, with stream-2 bytes, half syncs and full
 *       syncs mixed in.
 *   swo_wavetool serve IN.bin PORTFILE
 *       TCP server on 127.0.0.1 (ephemeral port, written to PORTFILE): sends
 *       IN.bin to the first client in bursts, then disconnects. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sonde/swo.h"
#include "wavegen.h"

static int write_file(const char *path, const uint8_t *d, size_t n)
{
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(d, 1, n, f) != n) {
    perror(path);
    return -1;
  }
  return fclose(f);
}

/* TPIU frames carrying `n` bytes, alternating IDs 1 and 2 in runs. */
static size_t tpiu_format(const uint8_t *d1, size_t n, uint8_t *s, uint64_t *rng)
{
  size_t p = 0, i = 0;
  static const uint8_t sync[4] = {0xFF, 0xFF, 0xFF, 0x7F};
  memcpy(s, sync, 4);
  p = 4;
  unsigned cur = 0;
  int frames = 0;
  while (i < n) {
    uint8_t f[16];
    unsigned aux = 0;
    for (unsigned k = 0; k < 8; k++) {
      int odd = k < 7;
      *rng ^= *rng << 13, *rng ^= *rng >> 7, *rng ^= *rng << 17;
      unsigned want = (*rng % 5 == 0) ? 2 : 1; /* sometimes a byte for ID 2 */
      if (i >= n)
        want = 2; /* padding goes to the other stream */
      if (want != cur) {
        f[2 * k] = (uint8_t)(want << 1 | 1);
        cur = want;
        if (odd)
          f[2 * k + 1] = want == 2 ? 0xEE : (i < n ? d1[i++] : 0);
        continue;
      }
      uint8_t b = want == 2 ? 0xEE : d1[i++];
      if (odd && want == 1 && i >= n) {
        /* last ID 1 byte: switch to ID 2 after it (aux bit 1 form) */
        f[2 * k] = (uint8_t)(2 << 1 | 1);
        aux |= 1u << k;
        f[2 * k + 1] = b;
        cur = 2;
        continue;
      }
      f[2 * k] = b & 0xFE;
      aux |= (unsigned)(b & 1) << k;
      if (odd)
        f[2 * k + 1] = want == 2 ? 0xEE : d1[i++];
    }
    f[15] = (uint8_t)aux;
    memcpy(s + p, f, 16);
    p += 16;
    if (++frames % 8 == 0) {
      memcpy(s + p, sync, 4);
      p += 4;
    }
  }
  return p;
}

static int gen(int argc, char **argv)
{
  if (argc != 11)
    return 2;
  const char *kind = argv[2];
  double rate = atof(argv[3]), baud = atof(argv[4]), err = atof(argv[5]);
  unsigned ch = (unsigned)atoi(argv[6]);
  size_t count = (size_t)atol(argv[7]);
  uint64_t seed = strtoull(argv[8], NULL, 0) | 1;
  uint8_t *data = malloc(count + 1);
  uint64_t r = seed;
  for (size_t i = 0; i < count; i++) {
    r ^= r << 13, r ^= r >> 7, r ^= r << 17;
    data[i] = (uint8_t)(r >> 11);
  }
  struct wavegen g;
  wg_init(&g, rate, baud, err, ch, 0xFF, seed, (double)(seed % 997) / 997.0);
  if (strcmp(kind, "uart") == 0) {
    wg_uart(&g, data, count, 2.0);
  } else if (strcmp(kind, "manchester") == 0) {
    wg_manchester(&g, data, count, 1.0);
  } else if (strcmp(kind, "tpiu-uart") == 0) {
    uint8_t *s = malloc(count * 3 + 64);
    size_t len = tpiu_format(data, count, s, &r);
    /* sigrok's arm_tpiu restarts a frame after any pause longer than one
     * byte, so the bytes go back to back. */
    wg_level(&g, 1, 20 * g.bit);
    for (size_t i = 0; i < len; i++)
      wg_uart_byte(&g, s[i]);
    wg_level(&g, 1, 20 * g.bit);
    free(s);
  } else {
    return 2;
  }
  if (g.oom || write_file(argv[9], g.buf, g.n) || write_file(argv[10], data, count))
    return 1;
  free(g.buf);
  free(data);
  return 0;
}

static int dec(int argc, char **argv)
{
  if (argc != 7 && argc != 8)
    return 2;
  struct sonde_swo_line_config cfg;
  sonde_swo_line_config_init(&cfg);
  struct sonde_diag d = {{0}};
  char spec[64];
  snprintf(spec, sizeof spec, "%s:%s", argv[2], argv[4]);
  if (sonde_swo_line_parse_spec(spec, &cfg, &d) || sonde_swo_parse_rate(argv[3], &cfg.sample_rate_hz)) {
    fprintf(stderr, "swo_wavetool: %s\n", d.msg);
    return 2;
  }
  cfg.channel = (unsigned)atoi(argv[5]);
  struct sonde_swo_line *l = NULL;
  if (sonde_swo_line_new(&cfg, &l, &d)) {
    fprintf(stderr, "swo_wavetool: %s\n", d.msg);
    return 1;
  }
  struct sonde_swo_tpiu *t = NULL;
  if (argc == 8 && sonde_swo_tpiu_new(NULL, &t))
    return 1;
  FILE *f = fopen(argv[6], "rb");
  if (!f) {
    perror(argv[6]);
    return 1;
  }
  static uint8_t in[1 << 16], out[1 << 16], out2[(1 << 16) + 16];
  size_t n;
  int eof = 0;
  while (!eof) {
    n = fread(in, 1, sizeof in, f);
    size_t o;
    if (n == 0) {
      eof = 1;
      o = sonde_swo_line_finish(l, out, sizeof out);
    } else {
      o = sonde_swo_line_feed(l, in, n, NULL, out, sizeof out);
    }
    const uint8_t *p = out;
    if (t) {
      o = sonde_swo_tpiu_feed(t, out, o, out2, NULL);
      p = out2;
    }
    for (size_t i = 0; i < o; i++)
      printf("%02x\n", p[i]);
  }
  fclose(f);
  struct sonde_swo_line_stats st;
  sonde_swo_line_get_stats(l, &st);
  fprintf(stderr, "swo_wavetool: %llu samples, %llu bytes, %llu framing errors, baud %u\n",
          (unsigned long long)st.samples, (unsigned long long)st.bytes,
          (unsigned long long)st.framing_errors, st.baud);
  sonde_swo_line_free(l);
  sonde_swo_tpiu_free(t);
  return 0;
}

static uint8_t *read_all_file(const char *path, size_t *n)
{
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    return NULL;
  }
  size_t cap = 1 << 16, len = 0;
  uint8_t *b = malloc(cap);
  size_t got;
  while (b && (got = fread(b + len, 1, cap - len, f)) > 0) {
    len += got;
    if (len == cap)
      b = realloc(b, cap *= 2);
  }
  fclose(f);
  *n = len;
  return b;
}

static int wave(int argc, char **argv)
{
  if (argc != 9)
    return 2;
  size_t n;
  uint8_t *d = read_all_file(argv[7], &n);
  if (!d)
    return 1;
  struct wavegen g;
  wg_init(&g, atof(argv[3]), atof(argv[4]), atof(argv[5]), (unsigned)atoi(argv[6]), 0xFF, 77,
          0.4);
  if (strcmp(argv[2], "uart") == 0)
    wg_uart(&g, d, n, 3.0);
  else if (strcmp(argv[2], "manchester") == 0)
    wg_manchester(&g, d, n, 1.0);
  else
    return 2;
  int r = g.oom || write_file(argv[8], g.buf, g.n) ? 1 : 0;
  free(g.buf);
  free(d);
  return r;
}

static int tpiu_wrap(int argc, char **argv)
{
  if (argc != 4)
    return 2;
  size_t n;
  uint8_t *d = read_all_file(argv[2], &n);
  if (!d)
    return 1;
  uint8_t *s = malloc(n * 3 + 64);
  size_t p = 0, i = 0;
  static const uint8_t sync[4] = {0xFF, 0xFF, 0xFF, 0x7F};
  uint64_t r = 12345;
  unsigned cur = 0, frames = 0;
  memcpy(s, sync, 4);
  p = 4;
  while (i < n) {
    uint8_t *f = s + p;
    unsigned aux = 0;
    for (unsigned k = 0; k < 8; k++) {
      int odd = k < 7;
      r ^= r << 13, r ^= r >> 7, r ^= r << 17;
      if (odd && (r % 11 == 0 || i >= n)) { /* half sync (also pads the last frame) */
        f[2 * k] = 0xFF;
        f[2 * k + 1] = 0x7F;
        continue;
      }
      if (!odd && (i >= n || cur != 1)) { /* byte 14: park on stream 2 */
        f[14] = 2 << 1 | 1;
        cur = 2;
        continue;
      }
      if (odd && r % 7 == 0) { /* a byte for stream 2 */
        f[2 * k] = 2 << 1 | 1;
        f[2 * k + 1] = 0xEE;
        cur = 2;
        continue;
      }
      if (cur != 1) {
        f[2 * k] = 1 << 1 | 1;
        cur = 1;
        if (odd)
          f[2 * k + 1] = d[i++];
        continue;
      }
      if (odd && i + 1 >= n) { /* last byte: a no-op re-selection carries it */
        f[2 * k] = 1 << 1 | 1;
        f[2 * k + 1] = d[i++];
        continue;
      }
      f[2 * k] = d[i] & 0xFE;
      aux |= (unsigned)(d[i] & 1) << k;
      i++;
      if (odd)
        f[2 * k + 1] = d[i++];
    }
    f[15] = (uint8_t)aux;
    p += 16;
    if (++frames % 5 == 0) {
      memcpy(s + p, sync, 4);
      p += 4;
    }
  }
  int rc = write_file(argv[3], s, p) ? 1 : 0;
  free(s);
  free(d);
  return rc;
}

static int serve(int argc, char **argv)
{
  if (argc != 4)
    return 2;
  size_t n;
  uint8_t *d = read_all_file(argv[2], &n);
  if (!d)
    return 1;
  int l = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t al = sizeof a;
  if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof a) || listen(l, 1) ||
      getsockname(l, (struct sockaddr *)&a, &al)) {
    perror("serve");
    return 1;
  }
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.tmp", argv[3]);
  FILE *pf = fopen(tmp, "w");
  if (!pf)
    return 1;
  fprintf(pf, "%u\n", (unsigned)ntohs(a.sin_port));
  fclose(pf);
  rename(tmp, argv[3]); /* appears complete */
  int c = accept(l, NULL, NULL);
  if (c < 0)
    return 1;
  for (size_t i = 0; i < n; i += 1000) {
    size_t k = n - i < 1000 ? n - i : 1000;
    if (write(c, d + i, k) != (ssize_t)k)
      return 1;
    struct timespec ts = {0, 3000000};
    nanosleep(&ts, NULL);
  }
  close(c);
  close(l);
  free(d);
  return 0;
}

int main(int argc, char **argv)
{
  int r = 2;
  if (argc > 1 && strcmp(argv[1], "gen") == 0)
    r = gen(argc, argv);
  else if (argc > 1 && strcmp(argv[1], "dec") == 0)
    r = dec(argc, argv);
  else if (argc > 1 && strcmp(argv[1], "wave") == 0)
    r = wave(argc, argv);
  else if (argc > 1 && strcmp(argv[1], "tpiu-wrap") == 0)
    r = tpiu_wrap(argc, argv);
  else if (argc > 1 && strcmp(argv[1], "serve") == 0)
    r = serve(argc, argv);
  if (r == 2)
    fprintf(stderr, "usage: swo_wavetool gen|dec ... (see the file header)\n");
  return r;
}
