/* The workload of the VM benchmarks (bench/vm_bench.c): CRC-32, an insertion
 * sort and a fixed-point filter, the mix of loads, stores, branches and
 * multiplies typical of control firmware. */
#ifndef BENCH_WORK_H
#define BENCH_WORK_H

#include <stdint.h>

static uint8_t bw_data[512];
static int16_t bw_samples[128];

__attribute__((noinline)) static uint32_t bw_crc32(const uint8_t *p, unsigned n)
{
  uint32_t crc = 0xFFFFFFFFu;
  while (n--) {
    crc ^= *p++;
    for (int k = 0; k < 8; k++)
      crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

__attribute__((noinline)) static void bw_sort(int16_t *v, unsigned n)
{
  for (unsigned i = 1; i < n; i++) {
    int16_t x = v[i];
    unsigned j = i;
    while (j > 0 && v[j - 1] > x) {
      v[j] = v[j - 1];
      j--;
    }
    v[j] = x;
  }
}

__attribute__((noinline)) static int32_t bw_filter(const int16_t *x, unsigned n)
{
  int32_t sum = 0;
  for (unsigned i = 7; i < n; i++) {
    int32_t acc = 0;
    for (unsigned k = 0; k < 8; k++)
      acc += x[i - k] * (int32_t)(k + 1);
    sum += acc >> 6;
  }
  return sum;
}

static uint32_t bw_round(uint32_t seed)
{
  for (unsigned i = 0; i < sizeof bw_data; i++) {
    seed = seed * 1664525u + 1013904223u;
    bw_data[i] = (uint8_t)(seed >> 24);
  }
  for (unsigned i = 0; i < 128; i++)
    bw_samples[i] = (int16_t)(bw_data[i] * 129 - 16384);
  uint32_t r = bw_crc32(bw_data, sizeof bw_data);
  r += (uint32_t)bw_filter(bw_samples, 128);
  bw_sort(bw_samples, 128);
  return r + (uint32_t)bw_samples[64];
}

#endif
