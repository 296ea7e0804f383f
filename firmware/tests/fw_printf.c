/* newlib printf of numbers and strings: integer conversions (the nano
 * library's printf has no %lld) and, linked with -u _printf_float, floating
 * point (%f %e %g, including halfway cases, which must round like the host's
 * correctly rounded printf). */
#include "fwtest.h"

int main(void)
{
  int32_t vals[] = {0, 1, -1, 42, -42, 2147483647, -2147483647 - 1, 1000000, -999};
  for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
    int32_t v = vals[i];
    printf("[%" PRId32 "] [%5" PRId32 "] [%-7" PRId32 "] [%+" PRId32 "] [%08" PRIx32 "] "
           "[%" PRIX32 "] [%" PRIo32 "] [%" PRIu32 "]\n",
           v, v, v, v, (uint32_t)v, (uint32_t)v, (uint32_t)v, (uint32_t)v);
  }
  printf("[%s] [%10s] [%-6s] [%.3s] [%c%c] [%%]\n", "sonde", "right", "left", "truncate", 'o',
         'k');
  char buf[64];
  int n = snprintf(buf, sizeof buf, "%d-%x-%s", 12345, 0xbeefu, "tail");
  printf("snprintf %d \"%s\"\n", n, buf);
  const char *digits = "0123456789";
  n = snprintf(buf, 8, "%s", FW_OPAQUE(digits)); /* truncation on purpose */
  printf("truncated %d \"%s\"\n", n, buf);
  long l = -123456789L;
  unsigned short us = 65535;
  printf("long %ld short %hu\n", l, us);
  static const double dv[] = {0.0, 1.0, -1.5, 3.14159265358979, 1e-7, 123456.789, 2.5,
                              0.125, 1e20, -0.0001234, 1.0 / 3.0, 0.5, 1.005, 2.675};
  for (size_t i = 0; i < sizeof dv / sizeof dv[0]; i++)
    printf("%f %.3f %.0f %e %.2e %g %10.4f\n", dv[i], dv[i], dv[i], dv[i], dv[i], dv[i], dv[i]);
  float f = 0.1f;
  printf("%.9f %f\n", (double)f, (double)(FW_OPAQUE(f) * 3.0f));
  puts("puts works");
  for (int i = 0; i < 3; i++)
    putchar('a' + i);
  putchar('\n');
  return 0;
}
