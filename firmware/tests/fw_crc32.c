/* CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320): bitwise and
 * table-driven over generated data, plus the standard check value. */
#include "fwtest.h"

static uint32_t crc32_bitwise(const uint8_t *p, size_t n)
{
  uint32_t crc = 0xFFFFFFFFu;
  while (n--) {
    crc ^= *p++;
    for (int k = 0; k < 8; k++)
      crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

static uint32_t table[256];

static void crc32_init(void)
{
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++)
      c = c & 1 ? (c >> 1) ^ 0xEDB88320u : c >> 1;
    table[i] = c;
  }
}

static uint32_t crc32_table(const uint8_t *p, size_t n)
{
  uint32_t crc = 0xFFFFFFFFu;
  while (n--)
    crc = table[(crc ^ *p++) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

static uint8_t buf[3000];

int main(void)
{
  crc32_init();
  printf("check %08" PRIx32 "\n", crc32_table((const uint8_t *)"123456789", 9));
  uint32_t s = 0x12345678;
  for (size_t i = 0; i < sizeof buf; i++)
    buf[i] = (uint8_t)fw_rand(&s);
  for (size_t n = 1; n <= sizeof buf; n = n * 3 + 1) {
    uint32_t a = crc32_bitwise(buf, n), b = crc32_table(buf, n);
    printf("n=%u bitwise %08" PRIx32 " table %08" PRIx32 "%s\n", (unsigned)n, a, b,
           a == b ? "" : " MISMATCH");
  }
  /* unaligned starting points */
  for (int off = 1; off < 4; off++)
    printf("off=%d %08" PRIx32 "\n", off, crc32_table(buf + off, 1000));
  return 0;
}
