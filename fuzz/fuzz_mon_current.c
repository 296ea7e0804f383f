/* Fuzz target: the monitor's CSV readers (src/monitor/energy.c, marks.c):
 * never crashes, an error always explains itself, accepted samples are in
 * time order and integrate without overflow surprises. */
#include <stdint.h>
#include <stdlib.h>

#include "sonde/monitor.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct sonde_mon_current c;
  sonde_mon_current_init(&c, 48000000, 3300);
  struct sonde_diag d;
  d.msg[0] = 0;
  int rc = sonde_mon_current_parse_csv(&c, (const char *)data, size, "fuzz", &d);
  if (rc < 0 && !d.msg[0])
    abort();
  for (size_t i = 1; i < c.n; i++)
    if (c.cycle[i] <= c.cycle[i - 1])
      abort();
  if (c.n)
    (void)sonde_mon_charge(&c, c.cycle[0], c.cycle[c.n - 1] + 1);
  sonde_mon_current_free(&c);
  /* the same bytes as a monitor CSV (sonde energy --changes/--events) */
  struct sonde_mon_marks m;
  d.msg[0] = 0;
  rc = sonde_mon_marks_parse_csv(&m, (const char *)data, size, "fuzz", &d);
  if (rc < 0 && !d.msg[0])
    abort();
  for (size_t i = 0; i < m.n; i++)
    if (m.label[i] >= m.nnames || (i && m.cycle[i] < m.cycle[i - 1]))
      abort();
  sonde_mon_marks_free(&m);
  return 0;
}
