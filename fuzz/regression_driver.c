/* Runs a libFuzzer target without libFuzzer: every file in the corpus
 * directories given on the command line, then a fixed, seeded set of random
 * and mutated inputs (so the replay is deterministic and needs no corpus).
 * A crash or sanitizer report fails the test; otherwise prints
 * "N passed, 0 failed". */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rng(void)
{
  uint64_t x = rng_state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  rng_state = x;
  return x * 0x2545f4914f6cdd1dull;
}

static unsigned run_count;

static void run(const uint8_t *data, size_t size)
{
  /* Copy to an exact-size heap block so ASan catches reads past the end. */
  uint8_t *copy = malloc(size ? size : 1);
  if (!copy)
    abort();
  if (size)
    memcpy(copy, data, size);
  LLVMFuzzerTestOneInput(copy, size);
  free(copy);
  run_count++;
}

static uint8_t *read_file(const char *path, size_t *len)
{
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  size_t cap = 4096, n = 0;
  uint8_t *buf = malloc(cap);
  size_t got;
  while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
    n += got;
    if (n == cap) {
      uint8_t *nb = realloc(buf, cap *= 2);
      if (!nb) {
        free(buf);
        buf = NULL;
      }
      buf = nb;
    }
  }
  fclose(f);
  *len = n;
  return buf;
}

/* Corpus files, then every corpus file mutated a few times. */
static void run_corpus(const char *dir)
{
  DIR *d = opendir(dir);
  if (!d)
    return;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.')
      continue;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    struct stat st;
    if (stat(path, &st) || !S_ISREG(st.st_mode))
      continue;
    size_t len = 0;
    uint8_t *buf = read_file(path, &len);
    if (!buf)
      continue;
    run(buf, len);
    for (int m = 0; m < 64 && len; m++) {
      size_t pos = rng() % len;
      uint8_t saved = buf[pos];
      buf[pos] ^= (uint8_t)(1u << (rng() % 8));
      run(buf, len);
      run(buf, pos); /* truncated */
      buf[pos] = saved;
    }
    free(buf);
  }
  closedir(d);
}

int main(int argc, char **argv)
{
  for (int i = 1; i < argc; i++)
    run_corpus(argv[i]);
  static uint8_t buf[1 << 16];
  run(buf, 0);
  for (int i = 0; i < 2000; i++) {
    size_t len = (size_t)(rng() % (i < 1000 ? 64 : sizeof buf));
    for (size_t j = 0; j < len; j++)
      buf[j] = (uint8_t)rng();
    run(buf, len);
  }
  printf("%u passed, 0 failed\n", run_count);
  return 0;
}
