/* `sonde energy`: energy per function, per event window, per value of a state
 * variable or per task, from current samples (a meter's `time,current` CSV or
 * the VM's power model) and a monitor trace (`sonde monitor pc|watch --format
 * csv`) or a Tonbandgerät trace (src/monitor energy.c, marks.c, tasks.c;
 * docs/monitor.md "Energy"). */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sonde/monitor.h"
#include "sonde/vm.h"

static int quiet(void *ctx, int stream, const void *data, size_t len)
{
  (void)ctx, (void)stream, (void)data, (void)len;
  return 0;
}

/* Run the ELF on the VM, recording the power model's current. */
static int vm_current(const char *elf, const char *machine, struct sonde_mon_current *cur,
                      uint64_t *end)
{
  struct sonde_machine *m = NULL;
  if (cli_load_machine(machine, &m) != CLI_OK)
    return CLI_FAIL;
  size_t len;
  char *img = cli_read_file(elf, &len);
  struct sonde_vm *vm = NULL;
  int rc = CLI_OK;
  if (!img || sonde_vm_new(m, &vm) < 0 || sonde_vm_load_elf(vm, img, len, elf) < 0 ||
      sonde_vm_reset(vm) < 0) {
    rc = cli_error("%s: cannot load%s%s", elf, vm ? ": " : "", vm ? sonde_vm_error_detail(vm) : "");
  } else {
    sonde_mon_current_init(cur, sonde_machine_clock_hz(m), sonde_machine_supply_mv(m));
    sonde_vm_set_output(vm, quiet, NULL);
    sonde_vm_set_power(vm, sonde_mon_current_vm_fn, cur);
    struct sonde_vm_stop s;
    sonde_vm_run(vm, 10000000000ull, &s);
    struct sonde_vm_stats st;
    sonde_vm_get_stats(vm, &st);
    *end = st.cycles;
    if (s.reason != SONDE_VM_STOP_EXIT)
      cli_warn("%s: the run did not end by exiting (pc 0x%08x)", elf, (unsigned)s.pc);
  }
  free(img);
  sonde_vm_free(vm);
  sonde_machine_free(m);
  return rc;
}

int cmd_energy(int argc, char **argv)
{
  static const struct cli_command_help help = {
      "sonde energy (--current <csv> [--clock <hz>] | -e <elf> --vm-current) [--voltage <mV>]\n"
      "             (--changes <pc.csv> | --events <watch.csv> [--state <trigger>] | --tband <trace>)\n"
      "             [--end <cycle>] [--format text|json|csv] [-o <file>]",
      "Energy per label: the current (a meter's time,current CSV, or the VM's power model by\n"
      "running the ELF) integrated over the intervals of a monitor trace: per function\n"
      "(`sonde monitor pc --format csv`), per event window, from an event to the next\n"
      "(`sonde monitor watch --format csv`), per value of a state variable (--state, the\n"
      "trigger of its writes), or per task (a Tonbandgerät trace, FreeRTOS mode)."};
  const char *current = NULL, *elf = NULL, *machine = "cm3", *changes = NULL, *events = NULL,
             *tband = NULL, *state = NULL, *format = "text", *output = NULL;
  uint64_t clock = 0, voltage = 0, end = 0;
  bool vmcur = false, json = false;
  const struct cli_opt options[] = {
      OPT_GROUP("current"),
      OPT_STRING(0, "current", "<csv>", &current,
                 "a meter's samples: header time|time_s|time_ms|time_us|cycle, "
                 "current|current_a|current_ma|current_ua"),
      OPT_U64(0, "clock", "<hz>", &clock, "target clock, to turn times into cycles"),
      OPT_ELF(&elf),
      OPT_FLAG(0, "vm-current", &vmcur, "run <elf> on the VM and take its power model's current"),
      OPT_STRING('m', "machine", "<name>", &machine, "--vm-current: built-in machine or machine file (default cm3)"),
      OPT_U64(0, "voltage", "<mV>", &voltage, "supply voltage (default: the machine's)"),
      OPT_GROUP("intervals"),
      OPT_STRING(0, "changes", "<csv>", &changes, "function changes: energy per function"),
      OPT_STRING(0, "events", "<csv>", &events, "watchpoint events: energy per event window"),
      OPT_STRING(0, "state", "<trigger>", &state, "--events: energy per value of this trigger"),
      OPT_STRING(0, "tband", "<trace>", &tband, "a Tonbandgerät trace: energy per task"),
      OPT_U64(0, "end", "<cycle>", &end, "end of the last interval (default: the end of the current)"),
      OPT_STRING(0, "format", "<fmt>", &format, "text (default), json or csv"),
      OPT_JSON(&json),
      OPT_OUTPUT(&output),
      OPT_END(),
  };
  int nargs;
  int rc = cli_parse(argc, argv, options, &help, &nargs);
  if (rc < 0)
    return CLI_OK;
  if (rc)
    return rc;
  if (nargs)
    return cli_usage_error(&help, "unexpected argument '%s'", argv[0]);
  if (json)
    format = "json";
  if (strcmp(format, "text") && strcmp(format, "json") && strcmp(format, "csv"))
    return cli_usage_error(&help, "unknown --format '%s' (text, json or csv)", format);
  if (!!current + !!vmcur != 1)
    return cli_usage_error(&help, "give one current source: --current <csv> or -e <elf> --vm-current");
  if (vmcur && !elf)
    return cli_usage_error(&help, "--vm-current needs -e <elf>");
  if (!!changes + !!events + !!tband != 1)
    return cli_usage_error(&help, "give one of --changes, --events or --tband");
  if (state && !events)
    return cli_usage_error(&help, "--state needs --events");

  struct sonde_mon_current cur;
  sonde_mon_current_init(&cur, clock, (uint32_t)voltage);
  uint64_t cur_end = 0;
  struct sonde_diag d;
  if (vmcur) {
    if ((rc = vm_current(elf, machine, &cur, &cur_end)) != CLI_OK)
      return rc;
    if (voltage)
      cur.supply_mv = (uint32_t)voltage;
    if (clock)
      cur.clock_hz = clock;
  } else {
    size_t len;
    char *text = cli_read_file(current, &len);
    if (!text)
      return cli_error("energy: '%s': %s", current, strerror(errno));
    rc = sonde_mon_current_parse_csv(&cur, text, len, current, &d);
    free(text);
    if (rc < 0) {
      sonde_mon_current_free(&cur);
      return cli_error("%s", d.msg);
    }
    cur_end = cur.cycle[cur.n - 1];
  }
  if (!cur.supply_mv)
    cli_warn("no supply voltage (--voltage): energies are 0; charge is in uA-cycles");
  if (!end)
    end = cur_end;

  struct sonde_mon_marks mk;
  struct sonde_mon_tasks tk;
  memset(&mk, 0, sizeof mk);
  memset(&tk, 0, sizeof tk);
  struct sonde_mon_interval *iv = NULL;
  size_t niv = 0, nlabels = 0;
  char **names = NULL;
  char (*valnames)[16] = NULL;
  rc = CLI_OK;
  if (tband) {
    if (sonde_mon_tasks_from_tband(tband, cur.clock_hz, &tk, &d) < 0) {
      rc = cli_error("%s", d.msg);
      goto done;
    }
    iv = tk.iv;
    niv = tk.n;
    names = tk.names;
    nlabels = tk.nnames;
  } else {
    const char *path = changes ? changes : events;
    size_t len;
    char *text = cli_read_file(path, &len);
    if (!text) {
      rc = cli_error("energy: '%s': %s", path, strerror(errno));
      goto done;
    }
    int prc = sonde_mon_marks_parse_csv(&mk, text, len, path, &d);
    free(text);
    if (prc < 0) {
      rc = cli_error("%s", d.msg);
      goto done;
    }
    if (mk.events != !!events) {
      rc = cli_error("%s: this is a %s trace; use %s", path, mk.events ? "watch" : "pc",
                     mk.events ? "--events" : "--changes");
      goto done;
    }
    iv = calloc(mk.n ? mk.n : 1, sizeof *iv);
    if (!iv) {
      rc = cli_error("out of memory");
      goto done;
    }
    if (state) {
      uint32_t trig = 0;
      while (trig < mk.nnames && strcmp(mk.names[trig], state))
        trig++;
      if (trig == mk.nnames) {
        rc = cli_error("%s: no trigger '%s'", path, state);
        goto done;
      }
      struct sonde_mon_event *ev = calloc(mk.n ? mk.n : 1, sizeof *ev);
      uint32_t vals[256];
      valnames = calloc(256, sizeof *valnames);
      names = calloc(256, sizeof *names);
      if (!ev || !valnames || !names) {
        free(ev);
        rc = cli_error("out of memory");
        goto done;
      }
      for (size_t i = 0; i < mk.n; i++) {
        ev[i].cycle = mk.cycle[i];
        ev[i].trigger = mk.label[i];
        ev[i].value = mk.value[i];
      }
      niv = sonde_mon_intervals_from_states(ev, mk.n, trig, end, iv, vals, &nlabels, 256);
      free(ev);
      for (size_t i = 0; i < nlabels; i++) {
        snprintf(valnames[i], 16, "%u", (unsigned)vals[i]);
        names[i] = valnames[i];
      }
    } else {
      for (size_t i = 0; i < mk.n; i++) {
        iv[i].start = mk.cycle[i];
        iv[i].end = i + 1 < mk.n ? mk.cycle[i + 1] : (end > mk.cycle[i] ? end : mk.cycle[i]);
        iv[i].label = mk.label[i];
      }
      niv = mk.n;
      names = mk.names;
      nlabels = mk.nnames;
    }
  }
  {
    struct sonde_mon_energy_row *rows = calloc(nlabels ? nlabels : 1, sizeof *rows);
    FILE *out = rows ? cli_open_output(output, false) : NULL;
    if (!out) {
      free(rows);
      rc = rows ? CLI_FAIL : cli_error("out of memory");
      goto done;
    }
    sonde_mon_energy(&cur, iv, niv, rows, nlabels);
    uint64_t tq = 0;
    double tuj = 0;
    const char *what = tband ? "task" : state ? "value" : changes ? "function" : "event window";
    if (!strcmp(format, "csv"))
      fprintf(out, "label,count,cycles,ua_cycles,uj\n");
    else if (!strcmp(format, "json"))
      fprintf(out, "{\"by\":\"%s\",\"clock_hz\":%llu,\"supply_mv\":%u,\"rows\":[", what,
              (unsigned long long)cur.clock_hz, (unsigned)cur.supply_mv);
    else
      fprintf(out, "%-32s %8s %14s %16s %12s\n", what, "count", "cycles", "uA-cycles", "uJ");
    bool first = true;
    for (size_t i = 0; i < nlabels; i++) {
      const struct sonde_mon_energy_row *r = &rows[i];
      tq += r->ua_cycles;
      tuj += r->uj;
      if (!strcmp(format, "csv")) {
        fprintf(out, "%s,%llu,%llu,%llu,%.6f\n", names[i], (unsigned long long)r->count,
                (unsigned long long)r->cycles, (unsigned long long)r->ua_cycles, r->uj);
      } else if (!strcmp(format, "json")) {
        fprintf(out, "%s{\"label\":", first ? "" : ",");
        cli_json_string(out, names[i]);
        fprintf(out, ",\"count\":%llu,\"cycles\":%llu,\"ua_cycles\":%llu,\"uj\":%.6f}",
                (unsigned long long)r->count, (unsigned long long)r->cycles,
                (unsigned long long)r->ua_cycles, r->uj);
      } else {
        fprintf(out, "%-32s %8llu %14llu %16llu %12.6f\n", names[i], (unsigned long long)r->count,
                (unsigned long long)r->cycles, (unsigned long long)r->ua_cycles, r->uj);
      }
      first = false;
    }
    if (!strcmp(format, "json"))
      fprintf(out, "],\"total_ua_cycles\":%llu,\"total_uj\":%.6f}\n", (unsigned long long)tq, tuj);
    else if (!strcmp(format, "text"))
      fprintf(out, "%-32s %8s %14s %16llu %12.6f\n", "total", "", "", (unsigned long long)tq, tuj);
    free(rows);
    rc = cli_close_output(out, output);
  }
done:
  if (iv != tk.iv)
    free(iv);
  if (names != mk.names && names != tk.names)
    free(names);
  free(valnames);
  sonde_mon_marks_free(&mk);
  sonde_mon_tasks_free(&tk);
  sonde_mon_current_free(&cur);
  return rc;
}
