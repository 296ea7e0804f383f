/* `sonde mtb` subcommands in other files. */
#ifndef SONDE_CMD_MTB_H
#define SONDE_CMD_MTB_H
int cmd_mtb_fetch(int argc, char **argv);
#endif
