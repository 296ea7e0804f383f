/* `sonde frankentrace run` and `stitch`. run: FrankenTrace on the virtual
 * Cortex-M in probe mode — for each sampling phase a fresh VM, DWT/ITM/TPIU
 * and the phase set through the debug port before the first instruction (as
 * a debugger holding the core in reset would), the SWO bytes decoded, each
 * run's PC samples (checked against their ITM timestamps) fed to the
 * stitcher; --verify compares with the VM's own ground truth. */
#include "cli.h"
#include "cmd_frankentrace.h"
#include "cmd_frankentrace_target.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ft_setup.h"
#include "sonde/ftwire.h"
#include "sonde/itm.h"
#include "sonde/vm.h"

struct ftr_job {
  /* shared, read-only */
  const struct sonde_machine *m;
  const void *image;
  size_t image_len;
  const char *elf;
  uint32_t n, baud;
  uint64_t max_cycles;
  struct sonde_sym *sym; /* the ELF: a sample outside its code is a corrupt capture */
  pthread_mutex_t sym_lock;
  double bit_errors; /* --swo-bit-errors: each bit of the captured bytes flipped with this probability */
  uint64_t seed;
  /* per phase results, indexed by phase */
  struct ftr_result {
    struct sonde_ftw_samples s;
    uint64_t cycles;
    bool exited;
    int err;
    uint32_t reruns; /* runs repeated because their capture was corrupt */
    uint64_t outside; /* samples outside the ELF's code or after the run's end */
    char why[160];
  } *res;
  /* work distribution */
  pthread_mutex_t lock;
  uint32_t next, done;
};

struct swo_buf {
  uint8_t *b;
  size_t len, cap;
};

static int on_swo(void *ctx, const struct sonde_vm_swo_byte *b)
{
  struct swo_buf *s = ctx;
  if (s->len == s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 1 << 16;
    uint8_t *nb = realloc(s->b, cap);
    if (!nb)
      return SONDE_E_NOMEM;
    s->b = nb;
    s->cap = cap;
  }
  s->b[s->len++] = b->byte;
  return 0;
}

static int w32(struct sonde_vm *vm, uint32_t addr, uint32_t v)
{
  return sonde_vm_write_mem(vm, addr, &v, 4);
}

/* What a debugger does with the core held at its reset vector: TRCENA, TPIU
 * NRZ at the prescaler, ITM with local timestamps and DWT packets, then the
 * DWT phase (counter stopped, CYCCNT, POSTINIT, start). */
static int probe_setup(struct sonde_vm *vm, const struct ft_setup *s)
{
  int rc = 0;
  rc |= w32(vm, 0xE000EDFC, 1u << 24);     /* DEMCR.TRCENA */
  rc |= w32(vm, 0xE0040004, 1);            /* TPIU_CSPSR: 1 pin */
  rc |= w32(vm, 0xE00400F0, 2);            /* TPIU_SPPR: NRZ */
  rc |= w32(vm, 0xE0040010, s->acpr);      /* TPIU_ACPR */
  rc |= w32(vm, 0xE0040304, 0x100);        /* TPIU_FFCR: formatter off */
  rc |= w32(vm, 0xE0000FB0, 0xC5ACCE55u);  /* ITM_LAR */
  rc |= w32(vm, 0xE0000E80, (1u << 16) | 0xB); /* ITM_TCR: ITMENA TSENA TXENA */
  rc |= w32(vm, 0xE0001000, 0);            /* DWT_CTRL: stopped */
  rc |= w32(vm, 0xE0001004, s->cyccnt0);   /* DWT_CYCCNT */
  rc |= w32(vm, 0xE0001000, s->ctrl13 | (s->postinit << 5));
  return rc ? SONDE_E_IO : 0;
}

static uint64_t splitmix(uint64_t *x)
{
  uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* --swo-bit-errors: the wire's bit errors, from a generator seeded by the
 * phase and the attempt, so the result does not depend on --jobs. */
static void impair(const struct ftr_job *j, uint32_t phase, uint32_t attempt, uint8_t *b, size_t len)
{
  uint64_t x = j->seed ^ ((uint64_t)phase << 20) ^ ((uint64_t)attempt << 52);
  for (size_t i = 0; i < len; i++)
    for (unsigned bit = 0; bit < 8; bit++)
      if ((double)(splitmix(&x) >> 11) * (1.0 / 9007199254740992.0) < j->bit_errors)
        b[i] ^= (uint8_t)(1u << bit);
}

static void run_once(struct ftr_job *j, uint32_t phase, uint32_t attempt)
{
  struct ftr_result *r = &j->res[phase];
  struct sonde_vm *vm = NULL;
  struct swo_buf swo = {0};
  struct ft_setup s;
  uint64_t clock = sonde_machine_clock_hz(j->m);
  int rc = ft_setup_compute((uint32_t)clock, j->baud, j->n, phase, &s);
  if (rc) {
    r->err = SONDE_E_ARG;
    snprintf(r->why, sizeof r->why, "no DWT setting for phase %u", phase);
    return;
  }
  if ((rc = sonde_vm_new(j->m, &vm)) || (rc = sonde_vm_load_elf(vm, j->image, j->image_len, j->elf)) ||
      (rc = sonde_vm_reset(vm)) || (rc = probe_setup(vm, &s))) {
    r->err = rc;
    snprintf(r->why, sizeof r->why, "%s", vm ? sonde_vm_error_detail(vm) : sonde_strerror(rc));
    sonde_vm_free(vm);
    return;
  }
  sonde_vm_set_output(vm, NULL, NULL);
  sonde_vm_set_swo(vm, on_swo, &swo);
  struct sonde_vm_stop stop;
  rc = sonde_vm_run(vm, j->max_cycles, &stop);
  struct sonde_vm_stats st;
  sonde_vm_get_stats(vm, &st);
  r->cycles = st.cycles;
  r->exited = rc == 0 && stop.reason == SONDE_VM_STOP_EXIT;
  sonde_vm_free(vm);
  if (!r->exited) {
    r->err = SONDE_E_STATE;
    snprintf(r->why, sizeof r->why, "phase %u: the run did not exit within %" PRIu64 " cycles", phase,
             j->max_cycles);
    free(swo.b);
    return;
  }
  if (j->bit_errors > 0)
    impair(j, phase, attempt, swo.b, swo.len);
  struct sonde_itm *d = sonde_itm_new(NULL);
  size_t cap = 4096, off = 0;
  struct sonde_itm_packet *pk = malloc(cap * sizeof *pk);
  if (!d || !pk) {
    r->err = SONDE_E_NOMEM;
  } else {
    while (off < swo.len && !r->err) {
      size_t used = 0, np = sonde_itm_decode(d, swo.b + off, swo.len - off, &used, pk, cap);
      off += used;
      r->err = sonde_ftw_collect(pk, np, j->n, &r->s);
    }
    size_t np = sonde_itm_finish(d, pk, cap);
    if (!r->err)
      r->err = sonde_ftw_collect(pk, np, j->n, &r->s);
  }
  free(pk);
  sonde_itm_free(d);
  free(swo.b);
}

/* One phase; a run whose capture is corrupt (timestamps off the N grid, bytes
 * the decoder had to skip) is run again, up to 4 times in all. */
static void run_phase(struct ftr_job *j, uint32_t phase)
{
  struct ftr_result *r = &j->res[phase];
  for (uint32_t attempt = 0; attempt < 4; attempt++) {
    sonde_ftw_samples_free(&r->s);
    memset(&r->s, 0, sizeof r->s);
    run_once(j, phase, attempt);
    r->outside = 0;
    if (!r->err) {
      pthread_mutex_lock(&j->sym_lock); /* a sym handle is not thread-safe */
      for (size_t i = 0; i < r->s.count; i++)
        if (i * (uint64_t)j->n + phase + 1 >= r->cycles ||
            (!(r->s.v[i] & 1) && j->sym && sonde_sym_lookup(j->sym, r->s.v[i], NULL, NULL) < 0))
          r->outside++;
      pthread_mutex_unlock(&j->sym_lock);
    }
    if (r->err || (!r->s.bad_spacing && !r->s.skips && !r->s.overflows && !r->outside))
      return;
    if (attempt < 3)
      r->reruns++;
  }
}

static void *worker(void *arg)
{
  struct ftr_job *j = arg;
  for (;;) {
    pthread_mutex_lock(&j->lock);
    uint32_t p = j->next < j->n ? j->next++ : UINT32_MAX;
    pthread_mutex_unlock(&j->lock);
    if (p == UINT32_MAX)
      return NULL;
    run_phase(j, p);
    pthread_mutex_lock(&j->lock);
    j->done++;
    pthread_mutex_unlock(&j->lock);
  }
}

struct sonde_ft_trace *ft_cli_rebase(const struct sonde_ft_trace *t, uint64_t origin)
{
  struct sonde_ft_trace *z = NULL;
  uint64_t pos = 0;
  struct sonde_ft_span sp;
  if (sonde_ft_trace_new(origin, &z) < 0)
    return NULL;
  while (sonde_ft_trace_next_span(t, &pos, &sp) > 0)
    if (sonde_ft_trace_append(z, sp.cell, sp.cycles) < 0) {
      sonde_ft_trace_free(z);
      return NULL;
    }
  sonde_ft_trace_set_clock_hz(z, sonde_ft_trace_clock_hz(t));
  return z;
}

struct sonde_ft_trace *ft_cli_from_cycle0(struct sonde_ft_trace *t)
{
  struct sonde_ft_trace *z = NULL;
  uint64_t origin = sonde_ft_trace_origin(t), pos = 0;
  if (sonde_ft_trace_new(0, &z) < 0)
    return NULL;
  struct sonde_ft_span sp;
  int rc = origin ? sonde_ft_trace_append(z, (struct sonde_ft_cell){0, SONDE_FT_UNSAMPLED}, origin) : 0;
  while (rc >= 0 && sonde_ft_trace_next_span(t, &pos, &sp) > 0)
    rc = sonde_ft_trace_append(z, sp.cell, sp.cycles);
  if (rc < 0) {
    sonde_ft_trace_free(z);
    return NULL;
  }
  sonde_ft_trace_set_clock_hz(z, sonde_ft_trace_clock_hz(t));
  return z;
}

static void *read_all(const char *path, size_t *len)
{
  FILE *f = fopen(path, "rb");
  if (!f) {
    cli_error("frankentrace run: cannot open '%s': %s", path, strerror(errno));
    return NULL;
  }
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  while (buf) {
    n += fread(buf + n, 1, cap - n, f);
    if (n < cap)
      break;
    char *nb = realloc(buf, cap *= 2);
    if (!nb)
      free(buf);
    buf = nb;
  }
  fclose(f);
  if (!buf)
    cli_error("frankentrace run: '%s': out of memory", path);
  *len = n;
  return buf;
}

/* Ground truth: `sonde run --trace-pc` of a plain run, by this same binary. */
static struct sonde_ft_trace *ground_truth(const char *machine, const char *elf, uint64_t max_cycles)
{
  char tmp[] = "/tmp/sonde-ft-gt-XXXXXX";
  int fd = mkstemp(tmp);
  if (fd < 0) {
    cli_error("frankentrace run: --verify: temporary file: %s", strerror(errno));
    return NULL;
  }
  close(fd);
  char maxc[32];
  snprintf(maxc, sizeof maxc, "%" PRIu64, max_cycles);
  pid_t pid = fork();
  if (pid == 0) {
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0)
      dup2(null, 1);
    execl("/proc/self/exe", "sonde", "run", "-m", machine, "--max-cycles", maxc, "--trace-pc", tmp,
          elf, (char *)NULL);
    _exit(127);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) == 127) {
    cli_error("frankentrace run: --verify: the ground-truth run failed");
    unlink(tmp);
    return NULL;
  }
  struct sonde_ft_trace *t = ft_cli_read_trace(tmp);
  unlink(tmp);
  return t;
}

/* Without --probe: the ELF links the runner (target/cortexm/frankentrace),
 * which sets the phase itself and resets the chip after each iteration. One
 * VM runs the whole chain through SYSRESETREQ as silicon would (.noinit
 * retained); its SWO capture goes through `frankentrace stitch`, and with
 * --verify the same run's --trace-pc is the ground truth. */
static int run_chained(const char *machine, const char *elf, const char *out, const char *fmt,
                       bool verify, uint64_t max_cycles, uint64_t n, uint64_t baud, uint64_t jobs,
                       const char *lsu)
{
  if (n || baud || jobs != 1 || lsu) {
    cli_error("frankentrace run: -N, --baud, --jobs and --lsu are --probe options; a runner image "
              "takes them from its ft_config");
    return CLI_USAGE;
  }
  char swo[] = "/tmp/sonde-ft-swo-XXXXXX", gt[] = "/tmp/sonde-ft-gt-XXXXXX";
  int fd1 = mkstemp(swo), fd2 = mkstemp(gt);
  if (fd1 >= 0)
    close(fd1);
  if (fd2 >= 0)
    close(fd2);
  if (fd1 < 0 || fd2 < 0) {
    cli_error("frankentrace run: temporary file: %s", strerror(errno));
    return CLI_FAIL;
  }
  char maxc[32];
  snprintf(maxc, sizeof maxc, "%" PRIu64, max_cycles);
  int status = CLI_FAIL;
  pid_t pid = fork();
  if (pid == 0) {
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0)
      dup2(null, 1);
    if (verify)
      execl("/proc/self/exe", "sonde", "run", "-m", machine, "--max-cycles", maxc, "--swo", swo,
            "--trace-pc", gt, elf, (char *)NULL);
    else
      execl("/proc/self/exe", "sonde", "run", "-m", machine, "--max-cycles", maxc, "--swo", swo, elf,
            (char *)NULL);
    _exit(127);
  }
  int ws = 0;
  if (pid < 0 || waitpid(pid, &ws, 0) < 0 || !WIFEXITED(ws) || WEXITSTATUS(ws) == 127) {
    cli_error("frankentrace run: the VM run of '%s' failed", elf);
  } else {
    if (WEXITSTATUS(ws) != 0)
      cli_warn("frankentrace run: the firmware exited with status %d", WEXITSTATUS(ws));
    char *argv[12];
    int argc = 0;
    argv[argc++] = "stitch";
    argv[argc++] = "-e";
    argv[argc++] = (char *)elf;
    argv[argc++] = "--format";
    argv[argc++] = (char *)fmt;
    if (out) {
      argv[argc++] = "-o";
      argv[argc++] = (char *)out;
    }
    if (verify) {
      argv[argc++] = "--verify";
      argv[argc++] = gt;
    }
    argv[argc++] = swo;
    argv[argc] = NULL;
    status = cmd_frankentrace_stitch(argc, argv);
  }
  unlink(swo);
  unlink(gt);
  return status;
}

int cmd_frankentrace_run(int argc, char **argv)
{
  static const struct cli_command_help help = {
      "sonde frankentrace run -e <elf> --probe [options] -o <trace>\n"
      "sonde frankentrace run -e <runner-elf> [-m <machine>] [--verify] -o <trace>",
      "FrankenTrace on the virtual Cortex-M: run the program N times, each time sampling\n"
      "the PC every N cycles with another phase, and stitch the samples into a\n"
      "cycle-level PC trace (docs/frankentrace.md). --probe traces an unmodified ELF:\n"
      "DWT, ITM and TPIU and the phase are set through the debug port before the first\n"
      "instruction. N defaults to the smallest interval the SWO baud can carry (8 bytes\n"
      "a sample: PC packet + local timestamp); an N the baud cannot carry is refused with\n"
      "the smallest that can. --verify compares the result with the VM's ground truth\n"
      "(`sonde run --trace-pc`, projected by the DWT rule) cycle by cycle; exit 1 on any\n"
      "difference. The result is identical for every --jobs.\n"
      "Without --probe the ELF links the FrankenTrace runner (target/cortexm/frankentrace):\n"
      "one VM runs every iteration chained through SYSRESETREQ, as on silicon, and the SWO\n"
      "capture is stitched as `sonde frankentrace stitch` does."};
  const char *elf = NULL, *out = NULL, *machine = "cm3", *fmt = "pct", *lsu = NULL;
  uint64_t n = 0, baud = 0, jobs = 1, max_cycles = 0;
  bool probe = false, verify = false;
  double bit_errors = 0;
  uint64_t seed = 1;
  struct cli_opt opts[] = {
      OPT_STRING('e', "elf", "<file>", &elf, "firmware ELF image to trace"),
      OPT_STRING('m', "machine", "<name|file>", &machine, "machine (default cm3)"),
      OPT_U64(0, "baud", "<baud>", &baud, "SWO baud (NRZ; default: the core clock, prescaler 0)"),
      OPT_U64('N', NULL, "<n>", &n, "sampling interval: 64..1024 step 64, 2048..16384 step 1024"),
      OPT_U64('j', "jobs", "<j>", &jobs, "run iterations on <j> threads (default 1)"),
      OPT_FLAG(0, "probe", &probe, "trace an unmodified ELF, set up through the debug port"),
      OPT_STRING(0, "lsu", "<ranges>", &lsu, "LSU range pairs (not in this build: refused)"),
      OPT_DOUBLE(0, "swo-bit-errors", "<p>", &bit_errors,
                 "--probe: flip each captured SWO bit with probability <p>; corrupt runs are re-run"),
      OPT_U64(0, "swo-seed", "<n>", &seed, "seed of --swo-bit-errors (default 1)"),
      OPT_U64(0, "max-cycles", "<n>", &max_cycles, "cycle limit of a run (default 100M per --probe run, 1G for a runner chain)"),
      OPT_FLAG(0, "verify", &verify, "compare with the VM's ground truth; exit 1 on a difference"),
      OPT_STRING(0, "format", "pct|csv|perfetto", &fmt, "output format (default pct)"),
      OPT_OUTPUT(&out),
      OPT_END(),
  };
  int na;
  int rc = cli_parse(argc, argv, opts, &help, &na);
  if (rc)
    return rc < 0 ? CLI_OK : rc;
  if (!elf)
    return cli_usage_error(&help, "-e <elf> is required");
  if (na)
    return cli_usage_error(&help, "unexpected argument '%s'", argv[0]);
  if (!probe)
    return run_chained(machine, elf, out, fmt, verify, max_cycles ? max_cycles : 1000000000, n, baud,
                       jobs, lsu);
  if (!max_cycles)
    max_cycles = 100000000;
  if (lsu)
    return cli_usage_error(&help, "--lsu is not built in this version");
  if (jobs < 1 || jobs > 64)
    return cli_usage_error(&help, "--jobs must be 1..64");
  enum sonde_ft_format format;
  if (sonde_ft_format_parse(fmt, &format) < 0)
    return cli_usage_error(&help, "--format: '%s' is not pct, csv or perfetto", fmt);
  struct sonde_machine *m = NULL;
  if (sonde_machine_builtin(machine, &m) < 0)
    return cli_error("frankentrace run: unknown machine '%s'", machine), CLI_FAIL;
  uint64_t clock = sonde_machine_clock_hz(m);
  if (!baud)
    baud = clock;
  if (baud > clock || clock % baud || clock / baud > 65536) {
    sonde_machine_free(m);
    return cli_error("frankentrace run: --baud %" PRIu64 ": the SWO pin runs at %" PRIu64
                     " / (prescaler + 1): pick a divisor of the clock",
                     baud, clock), CLI_FAIL;
  }
  uint32_t min_n = ft_setup_min_n((uint32_t)clock, (uint32_t)baud);
  if (!n)
    n = min_n;
  struct ft_setup probe_s;
  rc = n > 16384 ? FT_SETUP_N_SHAPE : ft_setup_compute((uint32_t)clock, (uint32_t)baud, (uint32_t)n, 0, &probe_s);
  if (rc == FT_SETUP_N_SHAPE || !min_n || rc == FT_SETUP_N_BANDWIDTH) {
    sonde_machine_free(m);
    if (!min_n)
      return cli_error("frankentrace run: %" PRIu64 " baud cannot carry PC samples even every "
                       "16384 cycles at %" PRIu64 " Hz (8 bytes a sample)", baud, clock), CLI_FAIL;
    if (rc == FT_SETUP_N_SHAPE)
      return cli_error("frankentrace run: -N %" PRIu64 ": DWT samples every 64..1024 cycles in steps "
                       "of 64 or 2048..16384 in steps of 1024", n), CLI_FAIL;
    return cli_error("frankentrace run: -N %" PRIu64 ": %" PRIu64 " baud cannot carry a sample "
                     "(%u bytes) every %" PRIu64 " cycles at %" PRIu64
                     " Hz; the smallest N that can is %u", n, baud, ft_setup_bytes_per_sample((uint32_t)n), n, clock, min_n), CLI_FAIL;
  }
  size_t image_len = 0;
  void *image = read_all(elf, &image_len);
  if (!image) {
    sonde_machine_free(m);
    return CLI_FAIL;
  }
  struct ftr_job j = {.m = m, .image = image, .image_len = image_len, .elf = elf, .n = (uint32_t)n,
                      .baud = (uint32_t)baud, .max_cycles = max_cycles, .bit_errors = bit_errors,
                      .seed = seed};
  j.res = calloc(n, sizeof *j.res);
  pthread_mutex_init(&j.lock, NULL);
  pthread_mutex_init(&j.sym_lock, NULL);
  if (ft_cli_open_elf(elf, &j.sym)) {
    free(j.res);
    free(image);
    sonde_machine_free(m);
    return CLI_FAIL;
  }
  double t0 = cli_now_s();
  struct cli_progress prog;
  cli_progress_start(&prog, "runs", n);
  pthread_t th[64];
  unsigned started = 0;
  for (unsigned i = 1; i < jobs; i++)
    if (pthread_create(&th[started], NULL, worker, &j) == 0)
      started++;
  /* the main thread works too, and draws the progress bar between runs */
  for (;;) {
    pthread_mutex_lock(&j.lock);
    uint32_t p = j.next < j.n ? j.next++ : UINT32_MAX;
    uint32_t done = j.done;
    pthread_mutex_unlock(&j.lock);
    cli_progress_update(&prog, done);
    if (p == UINT32_MAX)
      break;
    run_phase(&j, p);
    pthread_mutex_lock(&j.lock);
    j.done++;
    pthread_mutex_unlock(&j.lock);
  }
  for (unsigned i = 0; i < started; i++)
    pthread_join(th[i], NULL);
  cli_progress_end(&prog);
  double t_runs = cli_now_s() - t0;
  int status = CLI_FAIL;
  struct sonde_ft_stitch *st = NULL;
  struct sonde_ft_trace *t = NULL, *gt = NULL, *proj = NULL;
  /* Phase i's first sample is i+1 cycles after the DWT_CTRL write, which the
   * probe does before cycle 0: sample k of phase i is at cycle k*N + i + 1. */
  struct sonde_ft_stitch_config cfg = {.n = (uint32_t)n, .origin = 1, .length = 0};
  struct sonde_diag diag = {{0}};
  if (sonde_ft_stitch_new(&cfg, &st, &diag) < 0) {
    cli_error("frankentrace run: %s", diag.msg);
    goto done;
  }
  if (!(bit_errors >= 0 && bit_errors <= 1)) {
    cli_error("frankentrace run: --swo-bit-errors: %g is not a probability", bit_errors);
    goto done;
  }
  uint64_t lost = 0, overflows = 0, reruns = 0, corrupt = 0;
  for (uint32_t p = 0; p < n; p++) { /* in phase order: the same report for every --jobs */
    struct ftr_result *r = &j.res[p];
    if (r->err) {
      cli_error("frankentrace run: phase %u: %s", p, r->why[0] ? r->why : sonde_strerror(r->err));
      goto done;
    }
    struct sonde_ft_iter *it;
    if (sonde_ft_iter_begin(st, p, p, &it) < 0 || (r->s.count && sonde_ft_iter_feed(it, 0, r->s.v, r->s.count) < 0)) {
      cli_error("frankentrace run: phase %u: %s", p, sonde_ft_stitch_error_detail(st));
      goto done;
    }
    lost += r->s.lost;
    reruns += r->reruns;
    overflows += r->s.overflows;
    if (r->s.bad_spacing || r->s.skips || r->s.overflows || r->outside) { /* untrusted */
      if (corrupt++ < 10)
        cli_warn("frankentrace run: phase %u: %" PRIu64 " samples off the N grid, %" PRIu64
                 " corrupt stretches, %" PRIu64 " overflows, %" PRIu64 " PCs outside the ELF or the "
                 "run: its samples are not used", p, r->s.bad_spacing, r->s.skips, r->s.overflows,
                 r->outside);
      sonde_ft_iter_discard(it);
      continue;
    }
    struct sonde_ft_iter_end_info e = {.complete = true, .length = r->cycles - cfg.origin};
    struct sonde_ft_iter_result ir;
    if (sonde_ft_iter_end(it, &e, &ir) < 0) {
      cli_error("frankentrace run: phase %u: %s", p, sonde_ft_stitch_error_detail(st));
      goto done;
    }
  }
  struct sonde_ft_report rep;
  if (sonde_ft_stitch_finish(st, &t, &rep) < 0) {
    cli_error("frankentrace run: %s", sonde_ft_stitch_error_detail(st));
    goto done;
  }
  sonde_ft_trace_set_clock_hz(t, clock);
  struct sonde_ft_trace *t0c = ft_cli_from_cycle0(t);
  sonde_ft_trace_free(t);
  if (!(t = t0c)) {
    cli_error("frankentrace run: out of memory");
    goto done;
  }
  double t_stitch = cli_now_s() - t0;
  FILE *f = cli_open_output(out ? out : "-", format != SONDE_FT_FORMAT_CSV);
  if (!f)
    goto done;
  rc = sonde_ft_write(f, out ? out : "-", format, t, format != SONDE_FT_FORMAT_PCT ? j.sym : NULL, &diag);
  if (cli_close_output(f, out ? out : "-") != CLI_OK || rc < 0) {
    if (rc < 0)
      cli_error("frankentrace run: %s", diag.msg);
    goto done;
  }
  status = CLI_OK;
  FILE *sum = out ? stdout : stderr;
  fprintf(sum,
          "frankentrace run: N %" PRIu64 ", %" PRIu64 " baud, %" PRIu64 " runs (%" PRIu64
          " jobs): %" PRIu64 " cycles, %" PRIu64 " samples, %" PRIu64 " lost, %" PRIu64
          " overflows, %zu conflicts; runs %.3f s, total %.3f s\n",
          n, baud, n, jobs, rep.length, rep.samples, lost, overflows, rep.conflict_count, t_runs,
          t_stitch);
  if (bit_errors > 0 || reruns || corrupt)
    fprintf(sum, "frankentrace run: %" PRIu64 " runs repeated for a corrupt capture, %" PRIu64
            " phases still corrupt after 4 runs (unsampled)\n", reruns, corrupt);
  if (corrupt)
    status = CLI_FAIL;
  if (bit_errors > 0) { /* a flipped bit inside a PC payload: only the code can tell */
    struct sonde_ft_check_result chk;
    if (sonde_ft_check(t, j.sym, 1, &chk, &diag) == 0) {
      fprintf(sum, "check: %" PRIu64 " impossible transitions%s\n", chk.impossible,
              chk.impossible ? ": corrupt samples merged" : "");
      if (chk.impossible)
        status = CLI_FAIL;
      sonde_ft_check_result_free(&chk);
    }
  }
  if (rep.conflict_count)
    status = CLI_FAIL;
  if (verify) {
    if (!(gt = ground_truth(machine, elf, max_cycles)) || sonde_ft_project_dwt(gt, &proj) < 0) {
      status = CLI_FAIL;
      goto done;
    }
    struct sonde_ft_verify_result v;
    sonde_ft_verify(t, proj, &v);
    fprintf(sum,
            "verify: %" PRIu64 " cycles compared, %" PRIu64 " equal, %" PRIu64 " different, %" PRIu64
            " unrecoverable, %" PRIu64 " missing, %" PRIu64 " extra; %.3f s in all\n",
            v.compared, v.equal, v.different, v.unrecoverable, v.missing, v.extra, cli_now_s() - t0);
    if (v.has_difference) {
      char a[400], b[400];
      ft_cli_describe(NULL, v.got, a, sizeof a);
      ft_cli_describe(NULL, v.want, b, sizeof b);
      fprintf(sum, "verify: first difference at cycle %" PRIu64 ": trace %s, ground truth %s\n",
              v.first_cycle, a, b);
      status = CLI_FAIL;
    }
  }
done:
  sonde_ft_trace_free(t);
  sonde_ft_trace_free(gt);
  sonde_ft_trace_free(proj);
  sonde_ft_stitch_free(st);
  for (uint32_t p = 0; p < n; p++)
    sonde_ftw_samples_free(&j.res[p].s);
  free(j.res);
  pthread_mutex_destroy(&j.lock);
  pthread_mutex_destroy(&j.sym_lock);
  sonde_sym_free(j.sym);
  free(image);
  sonde_machine_free(m);
  return status;
}
