/* `sonde mtb` subcommands in other files. */
#ifndef SONDE_CMD_MTB_H
#define SONDE_CMD_MTB_H
#include <stdint.h>

int cmd_mtb_fetch(int argc, char **argv);
/* A 32-bit hexadecimal value, 0x optional: 0, or -1 when s is not one. */
int mtb_parse_hex(const char *s, uint32_t *out);
#endif
