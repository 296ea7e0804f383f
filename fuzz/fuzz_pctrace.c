/* Fuzz target: the PC trace reader (src/trace/pctrace.c), binary and CSV. */
#include <stdint.h>
#include <stdlib.h>

#include "sonde/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct sonde_pctrace_reader *r;
  struct sonde_diag d;
  if (sonde_pctrace_reader_new_buffer(data, size, "fuzz", &r, &d) < 0)
    return 0;
  struct sonde_pctrace_record rec;
  uint64_t cycle = sonde_pctrace_reader_first_cycle(r);
  int rc;
  while ((rc = sonde_pctrace_next(r, &rec)) == 1) {
    /* records are contiguous and never empty */
    if (rec.cycles == 0 || (sonde_pctrace_reader_format(r) == SONDE_PCTRACE_BINARY &&
                            rec.cycle != cycle))
      abort();
    cycle = rec.cycle + rec.cycles;
  }
  if (rc < 0 && sonde_pctrace_reader_error_detail(r)[0] == '\0')
    abort();
  sonde_pctrace_reader_free(r);
  return 0;
}
