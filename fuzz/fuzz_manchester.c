/* Fuzz target: the SWO Manchester line decoder (src/swo/line_manchester.c)
 * and auto-detection. See fuzz_line_common.h for the input layout and checks. */
#include "fuzz_line_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  return fuzz_line(data, size, SONDE_SWO_LINE_MANCHESTER);
}
