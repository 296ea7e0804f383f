/* The table of `sonde` subcommands. Adding one is one file, src/cli/cmd_<name>.c
 * defining `int cmd_<name>(int argc, char **argv)` (argv[0] is the command
 * name; the return value is the exit status), plus one row here.
 *
 *   SONDE_COMMAND(name, "one-line summary for `sonde --help`")
 */
SONDE_COMMAND(run, "run firmware on the virtual Cortex-M and record ground-truth traces")
SONDE_COMMAND(grammar, "compress traces into grammars (Sequitur, ReSequitur, Cyclitur) and analyse cycles")
SONDE_COMMAND(tband, "decode Tonbandgerät event traces and convert them to Perfetto")
SONDE_COMMAND(itm, "decode ITM/DWT packets from SWO: software channels, events, statistics")
SONDE_COMMAND(top, "statistical profile from ITM PC samples: functions, lines, sleep, exceptions")
SONDE_COMMAND(frankentrace, "FrankenTrace: stitch, verify, check and analyze cycle-level PC traces")
SONDE_COMMAND(monitor, "monitor a running target through its debug port: PC polling, watchpoints, breakpoints, energy")
SONDE_COMMAND(energy, "energy per function, event window, state value or task from current samples and a monitor or tband trace")
SONDE_COMMAND(mtb, "Micro Trace Buffer post-mortem: decode a dump or bundle (instruction history before a crash), fetch one")
SONDE_COMMAND(cycles, "the VM's cycle model against a real cycle-level trace: instruction durations compared")
