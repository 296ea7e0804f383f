/* ITM decoder, differential: the hot path (whole buffers: fast_run, 8-byte
 * loads, packets decoded from tables) against the general path (the same
 * stream fed one byte at a time, so every packet goes through the state
 * machine and decode_packet), on real and fuzzed streams: the fuzz corpus
 * (fuzz/corpus/itm) and the SWO bytes of firmware images run on the VM
 * (`sonde run --swo`, when the firmware is built), plus random chunk sizes
 * and small output arrays. Packets, offsets, timestamps and statistics must
 * be identical. */
#include <dirent.h>
#include <unistd.h>

#include "check.h"
#include "sonde/itm.h"

struct res {
  struct sonde_itm_packet *p;
  size_t n, cap;
  struct sonde_itm_stats st;
};

static uint64_t rs = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(void)
{
  rs ^= rs << 13;
  rs ^= rs >> 7;
  rs ^= rs << 17;
  return (uint32_t)(rs >> 11);
}

/* chunk 0: whole buffer; -1: random chunk sizes; out: `room` packets a call */
static void decode(const uint8_t *s, size_t len, long chunk, size_t room, struct res *r)
{
  struct sonde_itm *d = sonde_itm_new(NULL);
  struct sonde_itm_packet buf[600];
  r->n = 0;
  size_t pos = 0;
  while (pos < len) {
    size_t k = chunk == 0 ? len - pos : chunk < 0 ? 1 + rnd() % 100 : (size_t)chunk;
    if (k > len - pos)
      k = len - pos;
    size_t done = 0;
    while (done < k) {
      size_t used = 0;
      size_t got = sonde_itm_decode(d, s + pos + done, k - done, &used, buf, room);
      if (r->n + got + 4 > r->cap) {
        r->cap = (r->n + got + 4) * 2;
        r->p = realloc(r->p, r->cap * sizeof *r->p);
      }
      memcpy(r->p + r->n, buf, got * sizeof *buf);
      r->n += got;
      done += used;
      if (!got && !used)
        break;
    }
    pos += k;
  }
  if (r->n + 4 > r->cap) {
    r->cap = r->n + 4;
    r->p = realloc(r->p, r->cap * sizeof *r->p);
  }
  r->n += sonde_itm_finish(d, r->p + r->n, 4);
  r->st = *sonde_itm_stats(d);
  sonde_itm_free(d);
}

static struct res A, B;

static bool same(const struct res *a, const struct res *b)
{
  return a->n == b->n && !memcmp(a->p, b->p, a->n * sizeof *a->p) &&
         !memcmp(&a->st, &b->st, sizeof a->st);
}

static int streams; /* streams compared */

static void compare(const char *what, const uint8_t *s, size_t len)
{
  decode(s, len, 1, 600, &A); /* the general path, byte by byte */
  decode(s, len, 0, 600, &B);
  if (!same(&A, &B))
    CHECK_FAIL_("%s (%zu bytes): whole buffer: %zu packets, byte by byte: %zu", what, len, B.n,
                A.n);
  decode(s, len, -1, 2 + rnd() % 40, &B);
  if (!same(&A, &B))
    CHECK_FAIL_("%s (%zu bytes): random chunks differ (%zu vs %zu packets)", what, len, B.n, A.n);
  streams++;
}

static uint8_t *slurp(const char *path, size_t *len)
{
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  size_t cap = 1 << 16, n = 0, k;
  uint8_t *b = malloc(cap);
  while ((k = fread(b + n, 1, cap - n, f)) > 0) {
    n += k;
    if (n == cap)
      b = realloc(b, cap *= 2);
  }
  fclose(f);
  *len = n;
  return b;
}

static void test_fuzz_corpus(void)
{
  const char *dir = SONDE_SOURCE_DIR "/fuzz/corpus/itm";
  DIR *d = opendir(dir);
  CHECK(d != NULL);
  if (!d)
    return;
  int files = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.')
      continue;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    size_t len;
    uint8_t *b = slurp(path, &len);
    if (!b)
      continue;
    compare(e->d_name, b, len);
    /* and every suffix start, so packets straddle the 8-byte fast-path edge */
    for (size_t off = 1; off < 16 && off < len; off++)
      compare(e->d_name, b + off, len - off);
    free(b);
    files++;
  }
  closedir(d);
  CHECK(files >= 3);
}

/* SWO of firmware images on the VM: what a user decodes. */
static void test_vm_swo(void)
{
  static const char *fw[] = {"dbg_pc1003", "dbg_excdt", "dbg_gts", "dbg_cmp", "dbg_printf",
                             "dbg_ovf1003"};
  char sonde[1024], elf[1024];
  snprintf(sonde, sizeof sonde, "%s/src/cli/sonde", SONDE_BINARY_DIR);
  int ran = 0;
  for (size_t i = 0; i < sizeof fw / sizeof fw[0]; i++) {
    snprintf(elf, sizeof elf, "%s/firmware/%s.elf", SONDE_BINARY_DIR, fw[i]);
    if (access(elf, R_OK) || access(sonde, X_OK))
      continue;
    char out[] = "/tmp/sonde_itm_diff_XXXXXX";
    int fd = mkstemp(out);
    if (fd < 0)
      continue;
    close(fd);
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' run -m cm3 --swo '%s' '%s' >/dev/null 2>&1", sonde, out, elf);
    int rc = system(cmd);
    size_t len = 0;
    uint8_t *b = rc == 0 ? slurp(out, &len) : NULL;
    unlink(out);
    CHECK(b != NULL && len > 0);
    if (!b)
      continue;
    compare(fw[i], b, len);
    free(b);
    ran++;
  }
  if (!ran)
    fprintf(stderr, "note: no firmware built, VM SWO streams skipped\n");
}

/* Long random streams of valid packets with rare corruption. */
static void test_random_streams(void)
{
  static const uint8_t hdr[] = {0x01, 0x02, 0x03, 0x0b, 0x05, 0x0e, 0x15, 0x17, 0x47, 0x4e,
                                0x8d, 0x86, 0xc0, 0xd0, 0x10, 0x70, 0x94, 0xb4, 0x08, 0x88};
  size_t cap = 1 << 20;
  uint8_t *s = malloc(cap);
  for (int iter = 0; iter < 8; iter++) {
    size_t n = 0;
    while (n + 16 < cap) {
      uint32_t v = rnd();
      if (v % 4096 == 0) { /* sync */
        memset(s + n, 0, 5);
        s[n + 5] = 0x80;
        n += 6;
        continue;
      }
      if (iter & 1 && v % 1000 == 1) { /* a random byte: losses and resyncs */
        s[n++] = (uint8_t)(v >> 8);
        continue;
      }
      uint8_t h = hdr[(v >> 4) % sizeof hdr];
      s[n++] = h;
      size_t pay = (h & 3) == 1 ? 1 : (h & 3) == 2 ? 2 : (h & 3) == 3 ? 4 : 0;
      if ((h & 0x0f) == 0 && h & 0x80) /* LTS1: 1-4 bytes with C bits */
        pay = 1 + (v >> 12) % 4;
      if (h == 0x94 || h == 0x88)
        pay = 1 + (v >> 12) % 4;
      if (h == 0xb4)
        pay = 1 + (v >> 12) % 6;
      for (size_t k = 0; k < pay; k++) {
        uint8_t b = (uint8_t)rnd();
        if ((h & 3) == 0)
          b = (uint8_t)((b & 0x7f) | (k + 1 < pay ? 0x80 : 0));
        s[n++] = b;
      }
    }
    compare("random stream", s, n);
  }
  free(s);
}

int main(void)
{
  RUN(test_fuzz_corpus);
  RUN(test_vm_swo);
  RUN(test_random_streams);
  fprintf(stderr, "%d streams compared\n", streams);
  return check_summary();
}
