/* Sorting: newlib/glibc qsort and two hand-written sorts (insertion sort on
 * signed 16-bit, merge sort on unsigned 32-bit) over generated data. */
#include <stdlib.h>

#include "fwtest.h"

#define N 400

static int32_t a[N];
static uint32_t b[N], tmp[N];
static int16_t c[N];

static int cmp_i32(const void *x, const void *y)
{
  int32_t p = *(const int32_t *)x, q = *(const int32_t *)y;
  return (p > q) - (p < q);
}

static void merge_sort(uint32_t *v, uint32_t *t, int n)
{
  if (n < 2)
    return;
  int h = n / 2;
  merge_sort(v, t, h);
  merge_sort(v + h, t, n - h);
  int i = 0, j = h, k = 0;
  while (i < h && j < n)
    t[k++] = v[i] <= v[j] ? v[i++] : v[j++];
  while (i < h)
    t[k++] = v[i++];
  while (j < n)
    t[k++] = v[j++];
  memcpy(v, t, sizeof *v * (size_t)n);
}

static void insertion_sort(int16_t *v, int n)
{
  for (int i = 1; i < n; i++) {
    int16_t x = v[i];
    int j = i - 1;
    while (j >= 0 && v[j] > x) {
      v[j + 1] = v[j];
      j--;
    }
    v[j + 1] = x;
  }
}

static uint32_t digest(const void *p, size_t n)
{
  const uint8_t *q = p;
  uint32_t h = 2166136261u; /* FNV-1a */
  while (n--)
    h = (h ^ *q++) * 16777619u;
  return h;
}

int main(void)
{
  uint32_t s = 1;
  for (int i = 0; i < N; i++) {
    a[i] = (int32_t)fw_rand(&s);
    b[i] = fw_rand(&s) % 1000;
    c[i] = (int16_t)fw_rand(&s);
  }
  qsort(a, N, sizeof a[0], cmp_i32);
  merge_sort(b, tmp, N);
  insertion_sort(c, N);
  int ok = 1;
  for (int i = 1; i < N; i++)
    ok &= a[i - 1] <= a[i] && b[i - 1] <= b[i] && c[i - 1] <= c[i];
  printf("sorted %d\n", ok);
  printf("qsort  min %" PRId32 " max %" PRId32 " digest %08" PRIx32 "\n", a[0], a[N - 1],
         digest(a, sizeof a));
  printf("merge  min %" PRIu32 " median %" PRIu32 " digest %08" PRIx32 "\n", b[0], b[N / 2],
         digest(b, sizeof b));
  printf("insert min %d max %d digest %08" PRIx32 "\n", c[0], c[N - 1], digest(c, sizeof c));
  return 0;
}
