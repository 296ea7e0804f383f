/* The SWO input pipeline shared by `sonde itm` and `sonde top` (defined in
 * cmd_itm.c): a byte source (include/sonde/swo.h), optional line decoding of
 * logic-analyzer samples (--line, --sample-rate) and TPIU deformatting
 * (--tpiu), yielding ITM bytes. */
#ifndef SONDE_CLI_CMD_ITM_INPUT_H
#define SONDE_CLI_CMD_ITM_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli.h"

struct sonde_swo_source;
struct sonde_swo_line;
struct sonde_swo_tpiu;

struct itm_input {
  struct sonde_swo_source *src;
  struct sonde_swo_line *line;
  struct sonde_swo_tpiu *tpiu;
  uint8_t *raw, *line_buf, *tpiu_buf;
  size_t line_cap;
  bool eof;
};

/* Open <name>; tpiu_arg NULL = no TPIU ("" = ID 1); line_spec NULL = raw
 * bytes. Prints the error; returns CLI_OK, CLI_FAIL or CLI_USAGE. */
int itm_input_open(struct itm_input *in, const char *name, const char *tpiu_arg,
                   const char *line_spec, const char *rate, uint64_t la_channel,
                   const struct cli_command_help *help);
/* Next ITM bytes (valid until the next call): count > 0, 0 at end of input,
 * -1 after printing a read error. */
ptrdiff_t itm_input_read(struct itm_input *in, const uint8_t **bytes);
void itm_input_close(struct itm_input *in);

#endif
