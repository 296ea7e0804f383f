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

/* The input options of `sonde itm` and `sonde top`, defined once so they
 * cannot drift: pointers to const char *tpiu, *line, *rate; uint64_t
 * la_channel; bool wait_sync; uint64_t prescale. */
#define OPT_ITM_INPUT(tpiu, line, rate, la_channel, wait_sync, prescale)                      \
  OPT_GROUP("input"),                                                                         \
      OPT_OPTSTR(0, "tpiu", "<id>", (tpiu),                                                   \
                 "remove TPIU formatting, keep stream <id> (default 1; 'all')"),              \
      OPT_STRING(0, "line", "<mode>:<baud>", (line),                                          \
                 "input is logic-analyzer samples: uart:<baud> or manchester:<baud>"),        \
      OPT_STRING(0, "sample-rate", "<hz>", (rate),                                            \
                 "sample rate of --line input (24M, 100000000)"),                             \
      OPT_U64(0, "la-channel", "<n>", (la_channel),                                           \
              "logic-analyzer channel carrying SWO (0..7)"),                                  \
      OPT_FLAG(0, "wait-sync", (wait_sync), "skip input before the first synchronization packet"), \
      OPT_U64(0, "ts-prescale", "<n>", (prescale), "local timestamp prescaler: 1, 4, 16 or 64")

/* la_channel's value when --la-channel was not given. */
#define ITM_LA_CHANNEL_UNSET UINT64_MAX

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
