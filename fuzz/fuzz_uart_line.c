/* Fuzz target: the SWO UART line decoder (src/swo/line_uart.c) and
 * auto-detection. See fuzz_line_common.h for the input layout and checks. */
#include "fuzz_line_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  return fuzz_line(data, size, SONDE_SWO_LINE_UART);
}
