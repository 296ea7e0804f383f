/* `sonde run`: run firmware on the virtual Cortex-M (include/sonde/vm.h) and
 * record the ground truth: the PC trace (which instruction occupied every
 * cycle) and the LSU trace (every data transfer), docs/formats.md. Issue 2,
 * docs/cli.md "sonde run".
 *
 * The PC trace is assembled from the VM's observation hooks: `retire` gives
 * each instruction's first cycle and length; the cycles between two retired
 * instructions are sleep (WFI/WFE, from the sleep-cycle statistic) and
 * exception entry / return / tail-chain (from the exception hook). See
 * pc_gap() for how a gap is divided. The file's cycles are contiguous and sum
 * to the run's total cycle count (tests/cli/run_trace.sh checks both). */
#include "cli.h"
#include "cmd_run_swo.h"
#include "cmd_run_power.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "sonde/trace.h"
#include "sonde/gdb.h"
#include "cmd_run_jtag.h"
#include "sonde/vm.h"

#define DEFAULT_MAX_CYCLES 10000000000ull /* 10 G cycles: a runaway guard */
#define PROGRESS_SLICE_CYCLES 20000000ull
/* The run is always cut into slices this long so Ctrl-C is seen between them
 * even when nothing in the firmware schedules a timed event (where the VM looks
 * at its halt flag): ~2 ms of compiled code, ~20 ms with every trace hook on. */
#define INTERRUPT_SLICE_CYCLES 2000000ull
#define MAX_GAP_EVENTS 16

struct exc_event {
  uint64_t cycle;
  enum sonde_vm_exc_event ev;
  unsigned exc;
};

struct run_ctx {
  struct sonde_vm *vm;
  struct sonde_pctrace_writer *pct;
  struct sonde_lsutrace_writer *lsu;
  int err;                     /* first trace write error */
  /* PC trace assembly */
  uint64_t next_cycle;         /* first cycle not yet in the trace */
  bool have_prev;              /* an instruction record is held back ... */
  uint32_t prev_pc, prev_cycles; /* ... so unexplained stall cycles can join it */
  uint64_t sleep_seen;         /* sleep_cycles statistic already accounted */
  struct exc_event ev[MAX_GAP_EVENTS]; /* exception events since the last retire */
  unsigned nev;
  uint64_t overlaps;           /* retire hooks that started before next_cycle */
  /* target output */
  FILE *uart;
};

static void note_err(struct run_ctx *c, int rc)
{
  if (rc < 0 && !c->err) {
    c->err = rc;
    sonde_vm_halt(c->vm);
  }
}

static void flush_prev(struct run_ctx *c)
{
  if (c->have_prev) {
    note_err(c, sonde_pctrace_write(c->pct, c->prev_pc, c->prev_cycles));
    c->have_prev = false;
  }
}

static void emit_span(struct run_ctx *c, enum sonde_pctrace_kind kind, unsigned exc, uint64_t n)
{
  flush_prev(c);
  while (n) {
    uint32_t k = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
    note_err(c, sonde_pctrace_write_span(c->pct, kind, exc, k));
    n -= k;
  }
}

/* Cycles nobody claimed (a stall the VM charged between instructions): they
 * belong to the instruction before, or are a halted span at the very start. */
static void emit_unclaimed(struct run_ctx *c, uint64_t n)
{
  if (!n)
    return;
  if (c->have_prev && (uint64_t)c->prev_cycles + n <= UINT32_MAX)
    c->prev_cycles += (uint32_t)n;
  else
    emit_span(c, SONDE_PCTRACE_HALTED, 0, n);
}

/* Fill the trace up to cycle `end` (exclusive), where the next instruction or
 * the end of the run begins. First the sleep cycles counted since the last
 * instruction (a core sleeps before it wakes into a handler); the rest is
 * divided at the exception events' cycles, each piece named by the event that
 * ends it: ... -> ENTER n is the entry into n (a tail-chain if an EXIT came
 * before it in the same gap), ... -> RETURN is the return from the exception
 * of the preceding EXIT. A piece after the last event is named by that event. */
static void pc_gap(struct run_ctx *c, uint64_t end)
{
  struct sonde_vm_stats st;
  sonde_vm_get_stats(c->vm, &st);
  uint64_t sleep = st.sleep_cycles - c->sleep_seen;
  c->sleep_seen = st.sleep_cycles;
  if (end <= c->next_cycle) {
    c->nev = 0;
    return;
  }
  uint64_t gap = end - c->next_cycle;
  if (sleep > gap)
    sleep = gap;
  if (sleep)
    emit_span(c, SONDE_PCTRACE_SLEEP, 0, sleep);
  uint64_t cur = c->next_cycle + sleep;
  bool exited = false;
  unsigned exit_exc = 0;
  enum sonde_pctrace_kind last_kind = SONDE_PCTRACE_INSN;
  unsigned last_exc = 0;
  for (unsigned i = 0; i < c->nev; i++) {
    const struct exc_event *e = &c->ev[i];
    uint64_t t = e->cycle < cur ? cur : e->cycle > end ? end : e->cycle;
    enum sonde_pctrace_kind kind = SONDE_PCTRACE_INSN;
    unsigned exc = e->exc;
    if (e->ev == SONDE_VM_EXC_ENTER) {
      kind = exited ? SONDE_PCTRACE_TAIL_CHAIN : SONDE_PCTRACE_EXC_ENTRY;
      exited = false;
    } else if (e->ev == SONDE_VM_EXC_EXIT) {
      exited = true;
      exit_exc = e->exc;
      kind = SONDE_PCTRACE_EXC_RETURN; /* only for a piece after it */
    } else {
      kind = SONDE_PCTRACE_EXC_RETURN;
      exc = exit_exc;
      exited = false;
    }
    if (t > cur) {
      if (e->ev == SONDE_VM_EXC_EXIT)
        emit_unclaimed(c, t - cur); /* before the return began */
      else
        emit_span(c, kind, exc, t - cur);
      cur = t;
    }
    last_kind = kind;
    last_exc = e->ev == SONDE_VM_EXC_EXIT ? e->exc : exc;
  }
  if (end > cur) {
    if (last_kind == SONDE_PCTRACE_INSN)
      emit_unclaimed(c, end - cur);
    else
      emit_span(c, last_kind, last_exc, end - cur);
  }
  c->nev = 0;
  c->next_cycle = end;
}

static void on_retire(void *ctx, uint32_t pc, uint64_t cycle, uint32_t cycles)
{
  struct run_ctx *c = ctx;
  if (!c->pct)
    return;
  if (cycle != c->next_cycle || c->nev)
    pc_gap(c, cycle);
  if (cycle < c->next_cycle) {
    /* overlapping report: keep the file contiguous, count it (a VM bug) */
    c->overlaps++;
    uint64_t over = c->next_cycle - cycle;
    cycles = over >= cycles ? 0 : cycles - (uint32_t)over;
    if (!cycles)
      return;
  }
  flush_prev(c);
  c->have_prev = true;
  c->prev_pc = pc & ~1u;
  c->prev_cycles = cycles;
  c->next_cycle += cycles;
}

static void on_exception(void *ctx, uint64_t cycle, enum sonde_vm_exc_event ev, unsigned exc)
{
  struct run_ctx *c = ctx;
  if (!c->pct)
    return;
  if (c->nev == MAX_GAP_EVENTS) /* many events with no instruction between: close a piece */
    pc_gap(c, cycle);
  c->ev[c->nev++] = (struct exc_event){cycle, ev, exc};
}

static void on_transfer(void *ctx, uint64_t cycle, uint32_t pc, uint32_t addr, unsigned size,
                        uint32_t value, bool write)
{
  struct run_ctx *c = ctx;
  struct sonde_lsutrace_record r = {cycle, pc, addr, value, size, write, false, false};
  note_err(c, sonde_lsutrace_write(c->lsu, &r));
}

static void on_stacking(void *ctx, uint64_t cycle, uint32_t pc, uint32_t addr, uint32_t value,
                        bool write)
{
  struct run_ctx *c = ctx;
  struct sonde_lsutrace_record r = {cycle, pc, addr, value, 4, write, true, false};
  note_err(c, sonde_lsutrace_write(c->lsu, &r));
}

static int on_output(void *ctx, int stream, const void *data, size_t len)
{
  struct run_ctx *c = ctx;
  FILE *f = stream == SONDE_VM_STREAM_STDERR ? stderr
            : stream >= SONDE_VM_STREAM_UART0 && c->uart ? c->uart
                                                          : stdout;
  if (fwrite(data, 1, len, f) != len)
    return SONDE_E_IO;
  if (f == stderr || stream >= SONDE_VM_STREAM_UART0)
    fflush(f); /* interleave target output in order */
  return 0;
}

static struct sonde_vm *volatile interrupted_vm;
static volatile sig_atomic_t sigint_seen;
static void on_sigint(int sig)
{
  (void)sig;
  sigint_seen = 1;
  if (interrupted_vm)
    sonde_vm_halt(interrupted_vm);
}

/* --gdb [ADDR:]PORT: serve gdb instead of running freely (docs/vm.md "Debug
 * access and GDB"). Port 0 picks a free port; the port is printed to stderr. */
static int run_gdb(struct sonde_vm *vm, const char *spec, uint64_t max_cycles,
                   struct sonde_vm_stop *stop)
{
  char addr[64];
  unsigned port;
  if (!run_parse_listen(spec, addr, sizeof addr, &port))
    return cli_error("run: --gdb: '%s' is not [ADDR:]PORT", spec);
  struct sonde_gdb *g = NULL;
  int rc = sonde_gdb_new(vm, addr, port, &g);
  if (rc < 0)
    return cli_error("run: --gdb: cannot listen on %s:%u: %s", addr, port,
                     rc == SONDE_E_IO ? strerror(errno) : sonde_strerror(rc));
  fprintf(stderr, "sonde: gdb server listening on %s:%u\n", addr, sonde_gdb_port(g));
  fflush(stderr);
  /* Ctrl-C on sonde ends it (gdb interrupts the target with its own Ctrl-C). */
  void (*old_sigint)(int) = signal(SIGINT, SIG_DFL);
  rc = sonde_gdb_serve(g, max_cycles, 5000, stop); /* drop a client stalled 5 s in a packet */
  signal(SIGINT, old_sigint);
  if (rc < 0)
    cli_error("run: --gdb: %s", sonde_gdb_error_detail(g));
  sonde_gdb_free(g);
  return rc < 0 ? CLI_FAIL : CLI_OK;
}

static const char *stop_name(enum sonde_vm_stop_reason r)
{
  switch (r) {
  case SONDE_VM_STOP_EXIT: return "exit";
  case SONDE_VM_STOP_CYCLE_LIMIT: return "cycle-limit";
  case SONDE_VM_STOP_LOCKUP: return "lockup";
  case SONDE_VM_STOP_BREAKPOINT: return "breakpoint";
  case SONDE_VM_STOP_HALT: return "interrupted";
  case SONDE_VM_STOP_ERROR: return "error";
  }
  return "?";
}

int cmd_run(int argc, char **argv)
{
  const char *machine_name = "cm3", *trace_pc = NULL, *trace_fmt = NULL, *trace_lsu = NULL,
             *uart_path = NULL, *gdb_spec = NULL, *jtag_spec = NULL;
  uint64_t jtag_cpt = 0, jtag_ap_wait = 0;
  const char *swo_path = NULL, *swo_timed = NULL, *swo_samples = NULL, *sample_rate = NULL;
  struct run_swo *swo = NULL; /* cmd_run_swo.c */
  const char *power_path = NULL, *power_rate = NULL;
  struct run_power *power = NULL; /* cmd_run_power.c */
  struct run_swo_impair swo_imp = {0, 0, UINT64_MAX}; /* seed: UINT64_MAX = not given (1) */
  uint64_t max_cycles = DEFAULT_MAX_CYCLES, base = 0;
  bool stats = false, json = false, binary = false, trace_stacking = false, no_jit = false;
  const struct cli_opt opts[] = {
      OPT_GROUP("Target"),
      OPT_STRING('m', "machine", "<name|file>", &machine_name,
                 "machine: a built-in (cm3, cc2650, cm4f, cm33, cm0plus) or a machine "
                 "description file (docs/vm.md); default cm3"),
      OPT_U64(0, "max-cycles", "<n>", &max_cycles,
              "stop with an error after <n> core cycles (default 10G; 0 = no limit)"),
      OPT_FLAG(0, "binary", &binary, "<firmware> is a raw binary image, loaded at --base"),
      OPT_U64(0, "base", "<addr>", &base, "load address of a --binary image (default 0)"),
      OPT_STRING(0, "uart", "<file>", &uart_path,
                 "write the UART's output to <file> instead of stdout"),
      OPT_FLAG(0, "no-jit", &no_jit,
               "interpret every instruction: do not compile hot code for the host (same "
               "results, slower; also SONDE_JIT=0)"),
      OPT_GROUP("Ground truth"),
      OPT_STRING(0, "trace-pc", "<file>", &trace_pc,
                 "write the PC trace: the instruction (or exception entry/return, sleep) "
                 "occupying every cycle (docs/formats.md)"),
      OPT_STRING(0, "trace-format", "<bin|csv>", &trace_fmt,
                 "format of --trace-pc: bin (SONDEPCT v1, default) or csv (cycle,pc; one row "
                 "per cycle)"),
      OPT_STRING(0, "trace-lsu", "<file>", &trace_lsu,
                 "write every data transfer as CSV (cycle,pc,addr,size,value,rw)"),
      OPT_FLAG(0, "trace-stacking", &trace_stacking,
               "--trace-lsu also lists exception stacking and unstacking (rw W/R, pc = the "
               "frame's return address)"),
      OPT_STRING(0, "gdb", "<[addr:]port>", &gdb_spec,
                 "wait for gdb on <port> (127.0.0.1 unless <addr> is given; 0 = any free "
                 "port) and let it control the run (docs/vm.md)"),
      OPT_STRING(0, "jtag", "<[addr:]port>", &jtag_spec,
                 "serve the chip's JTAG debug port to OpenOCD (remote_bitbang) on <port> "
                 "(127.0.0.1 unless <addr> is given; 0 = any free port); the core runs freely "
                 "and the cycle limit is off unless --max-cycles is given (docs/vm.md)"),
      OPT_U64(0, "jtag-cycles-per-tck", "<n>", &jtag_cpt,
              "--jtag: advance the core exactly <n> cycles per TCK instead of running it "
              "freely between scans (deterministic)"),
      OPT_U64(0, "jtag-ap-wait", "<tck>", &jtag_ap_wait,
              "--jtag: keep the AHB-AP busy <tck> TCKs after each access, so that scans "
              "meanwhile are answered WAIT (default 0)"),
      OPT_GROUP("SWO (the chip's ITM/DWT trace pin, docs/vm.md)"),
      OPT_STRING(0, "swo", "<file>", &swo_path, "write the bytes of the SWO pin to <file>"),
      OPT_STRING(0, "swo-timed", "<file>", &swo_timed,
                 "write each SWO byte with the cycles its frame occupied on the pin "
                 "(CSV, docs/formats.md)"),
      OPT_STRING(0, "swo-samples", "<file>", &swo_samples,
                 "write the SWO pin as logic-analyzer samples (one byte per sample, bit 0; "
                 "sigrok binary), UART or Manchester per TPIU_SPPR"),
      OPT_STRING(0, "sample-rate", "<hz>", &sample_rate,
                 "sample rate of --swo-samples (e.g. 24M)"),
      OPT_DOUBLE(0, "swo-bit-errors", "<p>", &swo_imp.bit_errors,
                 "--swo-samples only: invert each bit time with probability <p> (0..1)"),
      OPT_DOUBLE(0, "swo-jitter", "<pct>", &swo_imp.jitter_pct,
                 "--swo-samples only: scale each byte's bit time by a random factor within "
                 "+-<pct> % (0..5)"),
      OPT_U64(0, "swo-seed", "<n>", &swo_imp.seed,
              "seed of the --swo-bit-errors/--swo-jitter generator (default 1)"),
      OPT_GROUP("Power (the machine's power model, docs/vm.md)"),
      OPT_STRING(0, "power", "<file>", &power_path,
                 "write the supply current as CSV samples (time_s,current_ma; docs/formats.md)"),
      OPT_STRING(0, "power-rate", "<hz>", &power_rate,
                 "sample rate of --power (default 1000; e.g. 10k)"),
      OPT_GROUP("Statistics"),
      OPT_FLAG(0, "stats", &stats,
               "print instructions, cycles, host seconds, MIPS and the blocks compiled to "
               "host code to stderr at the end"),
      OPT_FLAG(0, "json", &json,
               "print the statistics as one JSON object on stderr (keys instructions, cycles, "
               "seconds, mips, exceptions, sleep_cycles, energy_uj, stop, exit_code)"),
      OPT_END(),
  };
  static const struct cli_command_help help = {
      "sonde run [options] <firmware.elf>\n"
      "sonde run --binary [--base <addr>] [options] <firmware.bin>",
      "Run firmware on the virtual Cortex-M until it exits through semihosting\n"
      "(SYS_EXIT/SYS_EXIT_EXTENDED). Semihosting output goes to stdout/stderr, the\n"
      "UART's to stdout (or --uart). The exit status is the firmware's exit code;\n"
      "a lockup, a breakpoint, the cycle limit or an error exits 1 with the PC and\n"
      "the fault status registers. A '-' for a trace file means stdout."};
  int nargs;
  int rc = cli_parse(argc, argv, opts, &help, &nargs);
  if (rc)
    return rc < 0 ? CLI_OK : rc;
  if (nargs != 1)
    return cli_usage_error(&help, nargs ? "expected one firmware file" : "no firmware given");
  const char *fw_path = argv[0];
  enum sonde_pctrace_format pc_format;
  if (trace_fmt && !trace_pc)
    return cli_usage_error(&help, "--trace-format needs --trace-pc");
  if (!trace_fmt)
    trace_fmt = "bin";
  if (swo_imp.seed != UINT64_MAX && swo_imp.bit_errors == 0 && swo_imp.jitter_pct == 0)
    return cli_usage_error(&help, "--swo-seed needs --swo-bit-errors or --swo-jitter");
  if (swo_imp.seed == UINT64_MAX)
    swo_imp.seed = 1;
  if (!strcmp(trace_fmt, "bin") || !strcmp(trace_fmt, "binary"))
    pc_format = SONDE_PCTRACE_BINARY;
  else if (!strcmp(trace_fmt, "csv"))
    pc_format = SONDE_PCTRACE_CSV;
  else
    return cli_usage_error(&help, "--trace-format must be bin or csv, not '%s'", trace_fmt);
  if (base > UINT32_MAX)
    return cli_usage_error(&help, "--base must be a 32-bit address");
  if (base && !binary)
    return cli_usage_error(&help, "--base needs --binary (an ELF file has its own addresses)");
  if (trace_stacking && !trace_lsu)
    return cli_usage_error(&help, "--trace-stacking needs --trace-lsu");
  if (gdb_spec && jtag_spec)
    return cli_usage_error(&help, "--gdb and --jtag are two debuggers: give one");
  if ((jtag_cpt || jtag_ap_wait) && !jtag_spec)
    return cli_usage_error(&help, "--jtag-cycles-per-tck and --jtag-ap-wait need --jtag");
  /* a board served over JTAG runs until it is switched off: no guard limit */
  uint64_t jtag_max_cycles = max_cycles == DEFAULT_MAX_CYCLES || !max_cycles ? UINT64_MAX
                                                                             : max_cycles;
  if (max_cycles == 0)
    max_cycles = UINT64_MAX;

  struct sonde_machine *machine = NULL;
  struct sonde_vm *vm = NULL;
  void *image = NULL;
  FILE *pct_file = NULL, *lsu_file = NULL;
  struct run_ctx ctx;
  memset(&ctx, 0, sizeof ctx);
  int status = CLI_FAIL;

  if (cli_load_machine(machine_name, &machine) != CLI_OK)
    goto out;
  size_t image_len;
  image = cli_read_firmware(fw_path, !binary, &image_len);
  if (!image)
    goto out;
  rc = sonde_vm_new(machine, &vm);
  if (rc < 0) {
    cli_error("run: cannot create the VM: %s", sonde_strerror(rc));
    goto out;
  }
  ctx.vm = vm;
  if (no_jit)
    sonde_vm_set_jit(vm, false);
  rc = binary ? sonde_vm_load_binary(vm, image, image_len, (uint32_t)base)
              : sonde_vm_load_elf(vm, image, image_len, fw_path);
  if (rc < 0) {
    cli_error("run: %s", sonde_vm_error_detail(vm));
    goto out;
  }
  if (uart_path) {
    ctx.uart = cli_open_output(uart_path, true);
    if (!ctx.uart)
      goto out;
  }
  sonde_vm_set_output(vm, on_output, &ctx);
  rc = run_swo_open(vm, sonde_machine_clock_hz(machine), swo_path, swo_timed, swo_samples,
                    sample_rate, &swo_imp, &swo);
  if (rc != CLI_OK) {
    status = rc;
    goto out;
  }
  rc = run_power_open(vm, sonde_machine_clock_hz(machine), power_path, power_rate, &power);
  if (rc != CLI_OK) {
    status = rc;
    goto out;
  }
  if (trace_pc) {
    pct_file = cli_open_output(trace_pc, pc_format == SONDE_PCTRACE_BINARY);
    if (!pct_file)
      goto out;
    rc = sonde_pctrace_writer_new(pct_file, trace_pc, pc_format, sonde_machine_clock_hz(machine),
                                  0, &ctx.pct);
    if (rc < 0) {
      cli_error("run: '%s': %s", trace_pc, sonde_strerror(rc));
      goto out;
    }
  }
  if (trace_lsu) {
    lsu_file = cli_open_output(trace_lsu, false);
    if (!lsu_file)
      goto out;
    rc = sonde_lsutrace_writer_new(lsu_file, trace_lsu, &ctx.lsu);
    if (rc < 0) {
      cli_error("run: '%s': %s", trace_lsu, sonde_strerror(rc));
      goto out;
    }
  }
  if (ctx.pct || ctx.lsu) {
    struct sonde_vm_hooks hooks = {.ctx = &ctx};
    if (ctx.pct) {
      hooks.retire = on_retire;
      hooks.exception = on_exception;
    }
    if (ctx.lsu)
      hooks.transfer = on_transfer;
    if (ctx.lsu && trace_stacking)
      hooks.stacking = on_stacking;
    sonde_vm_set_hooks(vm, &hooks);
  }
  rc = sonde_vm_reset(vm);
  if (rc < 0) {
    cli_error("run: reset failed: %s", sonde_vm_error_detail(vm));
    goto out;
  }

  struct cli_progress prog;
  /* a bar against the default guard limit would sit near 0%: show the count then */
  cli_progress_start(&prog, "cycles",
                     max_cycles == UINT64_MAX || max_cycles == DEFAULT_MAX_CYCLES ? 0 : max_cycles);
  interrupted_vm = vm;
  void (*old_sigint)(int) = signal(SIGINT, on_sigint);
  struct sonde_vm_stop stop;
  memset(&stop, 0, sizeof stop);
  struct sonde_vm_stats st;
  double t0 = cli_now_s();
  if (gdb_spec && run_gdb(vm, gdb_spec, max_cycles, &stop) != CLI_OK)
    goto out;
  if (jtag_spec && (status = run_jtag(vm, jtag_spec, jtag_max_cycles, jtag_cpt, jtag_ap_wait,
                                      stats, &stop)) != CLI_OK)
    goto out;
  status = CLI_FAIL;
  sigint_seen = 0;
  uint64_t next_progress = 0;
  for (; !gdb_spec && !jtag_spec;) {
    sonde_vm_get_stats(vm, &st);
    uint64_t limit = max_cycles;
    if (max_cycles - st.cycles > INTERRUPT_SLICE_CYCLES)
      limit = st.cycles + INTERRUPT_SLICE_CYCLES;
    rc = sonde_vm_run(vm, limit, &stop);
    if (rc < 0 && stop.reason != SONDE_VM_STOP_ERROR) {
      stop.reason = SONDE_VM_STOP_ERROR;
    }
    if (stop.reason != SONDE_VM_STOP_CYCLE_LIMIT || limit == max_cycles)
      break;
    if (sigint_seen) { /* Ctrl-C between two timed events: stop here */
      stop.reason = SONDE_VM_STOP_HALT;
      break;
    }
    sonde_vm_get_stats(vm, &st);
    if (prog.enabled && st.cycles >= next_progress) {
      cli_progress_update(&prog, st.cycles);
      next_progress = st.cycles + PROGRESS_SLICE_CYCLES;
    }
  }
  double seconds = cli_now_s() - t0;
  signal(SIGINT, old_sigint);
  interrupted_vm = NULL;
  cli_progress_end(&prog);
  sonde_vm_get_stats(vm, &st);
  fflush(stdout);

  /* close the PC trace at the run's last cycle */
  if (ctx.pct) {
    pc_gap(&ctx, st.cycles);
    flush_prev(&ctx);
    note_err(&ctx, sonde_pctrace_writer_finish(ctx.pct));
    if (ctx.overlaps)
      cli_warn("run: %llu instructions overlapped the one before in the PC trace",
               (unsigned long long)ctx.overlaps);
  }
  if (ctx.lsu)
    note_err(&ctx, sonde_lsutrace_writer_finish(ctx.lsu));
  rc = run_swo_close(swo, st.cycles);
  swo = NULL;
  if (rc != CLI_OK)
    goto out;
  rc = run_power_close(power, st.cycles);
  power = NULL;
  if (rc != CLI_OK)
    goto out;

  double mips = seconds > 0 ? (double)st.instructions / seconds / 1e6 : 0;
  if (json) {
    fprintf(stderr,
            "{\"instructions\": %llu, \"cycles\": %llu, \"seconds\": %.6f, \"mips\": %.3f, "
            "\"exceptions\": %llu, \"sleep_cycles\": %llu, \"energy_uj\": %.3f, \"stop\": \"%s\", "
            "\"exit_code\": %d}\n",
            (unsigned long long)st.instructions, (unsigned long long)st.cycles, seconds, mips,
            (unsigned long long)st.exceptions, (unsigned long long)st.sleep_cycles, st.energy_uj,
            stop_name(stop.reason), stop.reason == SONDE_VM_STOP_EXIT ? stop.exit_code : -1);
  } else if (stats) {
    fprintf(stderr,
            "instructions  %llu\ncycles        %llu\nexceptions    %llu\nsleep cycles  %llu\n"
            "energy uJ     %.3f\nhost seconds  %.3f\nMIPS          %.1f\n"
            "compiled blocks %llu\n",
            (unsigned long long)st.instructions, (unsigned long long)st.cycles,
            (unsigned long long)st.exceptions, (unsigned long long)st.sleep_cycles, st.energy_uj,
            seconds, mips, (unsigned long long)st.compiled_blocks);
  }

  if (ctx.err) {
    const char *detail = ctx.pct && sonde_pctrace_writer_error_detail(ctx.pct)[0]
                             ? sonde_pctrace_writer_error_detail(ctx.pct)
                         : ctx.lsu ? sonde_lsutrace_writer_error_detail(ctx.lsu)
                                   : sonde_strerror(ctx.err);
    cli_error("run: %s", detail);
    goto out;
  }
  switch (stop.reason) {
  case SONDE_VM_STOP_EXIT:
    status = stop.exit_code & 0xFF;
    break;
  case SONDE_VM_STOP_CYCLE_LIMIT:
    cli_error("run: %s: cycle limit of %llu cycles reached at pc 0x%08x (use --max-cycles)",
              fw_path, (unsigned long long)max_cycles, stop.pc);
    break;
  case SONDE_VM_STOP_LOCKUP:
    cli_error("run: %s: the core locked up at pc 0x%08x (CFSR 0x%08x, HFSR 0x%08x, BFAR 0x%08x, "
              "MMFAR 0x%08x)", fw_path, stop.pc, stop.cfsr, stop.hfsr, stop.bfar, stop.mmfar);
    break;
  case SONDE_VM_STOP_BREAKPOINT:
    cli_error("run: %s: breakpoint at pc 0x%08x", fw_path, stop.pc);
    break;
  case SONDE_VM_STOP_HALT:
    cli_error("run: %s: interrupted at pc 0x%08x after %llu cycles", fw_path, stop.pc,
              (unsigned long long)st.cycles);
    break;
  case SONDE_VM_STOP_ERROR:
    cli_error("run: %s: %s", fw_path, sonde_vm_error_detail(vm));
    break;
  }
out:
  run_swo_close(swo, 0);
  run_power_close(power, 0);
  sonde_pctrace_writer_free(ctx.pct);
  sonde_lsutrace_writer_free(ctx.lsu);
  if (pct_file && cli_close_output(pct_file, trace_pc) != CLI_OK)
    status = CLI_FAIL;
  if (lsu_file && cli_close_output(lsu_file, trace_lsu) != CLI_OK)
    status = CLI_FAIL;
  if (ctx.uart && cli_close_output(ctx.uart, uart_path) != CLI_OK)
    status = CLI_FAIL;
  sonde_vm_free(vm);
  sonde_machine_free(machine);
  free(image);
  return status;
}
