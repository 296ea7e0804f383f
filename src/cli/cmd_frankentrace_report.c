/* What `frankentrace stitch` and `frankentrace run` (runner images) print
 * about a stitched runner trace (cmd_frankentrace.h). */
#include "cli.h"
#include "cmd_frankentrace.h"

#include <inttypes.h>

int ft_cli_write_trace(const char *path, enum sonde_ft_format format,
                       const struct sonde_ft_trace *t, struct sonde_sym *sym)
{
  struct sonde_diag d = {{0}};
  FILE *f = cli_open_output(path, format != SONDE_FT_FORMAT_CSV);
  if (!f)
    return CLI_FAIL;
  int rc = sonde_ft_write(f, path, format, t, sym, &d);
  if (cli_close_output(f, path) != CLI_OK || rc < 0) {
    if (rc < 0)
      cli_error("frankentrace: %s", d.msg);
    return CLI_FAIL;
  }
  return CLI_OK;
}

void ft_cli_print_runner_findings(FILE *out, const struct sonde_ft_runner_summary *s,
                                  struct sonde_sym *sym)
{
  enum { SHOWN = 10 }; /* a capture that went apart everywhere has one per phase */
  if (s->report.conflict_count > SHOWN)
    fprintf(out, "nondeterminism: %zu pairs of iterations disagree; the %d with the earliest "
            "cycles:\n", s->report.conflict_count, SHOWN);
  const struct sonde_ft_conflict *shown[SHOWN];
  size_t nshown = 0;
  for (size_t i = 0; i < s->report.conflict_count; i++) { /* the SHOWN earliest, in order */
    const struct sonde_ft_conflict *k = &s->report.conflicts[i];
    size_t at = nshown;
    while (at > 0 && shown[at - 1]->first_cycle > k->first_cycle)
      at--;
    if (at >= SHOWN)
      continue;
    for (size_t j = nshown < SHOWN ? nshown : SHOWN - 1; j > at; j--)
      shown[j] = shown[j - 1];
    shown[at] = k;
    if (nshown < SHOWN)
      nshown++;
  }
  for (size_t i = 0; i < nshown; i++) {
    const struct sonde_ft_conflict *k = shown[i];
    fprintf(out, "nondeterminism: %s: iterations %u and %u (phase %u) differ from cycle %" PRIu64
            " (%" PRIu64 " cycles)\n", k->kind == SONDE_FT_CONFLICT_LENGTH ? "length" : "samples",
            k->iter_a, k->iter_b, k->phase, k->first_cycle, k->cycles);
  }
  if (s->gap_iterations)
    fprintf(out, "gap: %u iterations are not in the capture (first: %u..%u): bytes were lost "
            "between records; capture again\n", s->gap_iterations, s->first_gap, s->gap_end - 1);
  if (s->missing) {
    fprintf(out, "missing: %zu phases have no usable iteration (first:", s->missing);
    for (size_t i = 0; i < s->missing && i < SONDE_FT_RUNNER_MISSING_MAX; i++)
      fprintf(out, " %u", s->missing_first[i]);
    fprintf(out, "); their cycles are unsampled\n");
  }
  if (s->checked) {
    if (s->impossible) {
      char from[400], to[400];
      ft_cli_symbol(sym, s->first_impossible.from, from, sizeof from);
      ft_cli_symbol(sym, s->first_impossible.to, to, sizeof to);
      fprintf(out, "check: %" PRIu64 " impossible transitions (first at cycle %" PRIu64
              ": %s -> %s, %s): a corrupt sample or nondeterminism\n", s->impossible,
              s->first_impossible.cycle, from, to, s->first_impossible.why);
    } else {
      fprintf(out, "check: all %" PRIu64 " transitions possible in the ELF's code\n", s->transitions);
    }
  }
  if (s->untrusted_from != UINT64_MAX)
    fprintf(out, "untrusted: cycles %" PRIu64 ".. marked conflict (from N cycles before the "
            "first disagreement between iterations or impossible transition: runs go apart before "
            "it shows)\n", s->untrusted_from);
  if (s->preamble_bad)
    fprintf(out, "preamble: broken (%" PRIu64 " of %u cycles differ%s)\n", s->preamble_bad,
            SONDE_FT_PREAMBLE_CYCLES, s->preamble_seen ? "" : "; never seen");
  else if (s->preamble_seen)
    fprintf(out, "preamble: intact at cycles %" PRIu64 "..%" PRIu64 "\n", s->preamble_at,
            s->preamble_at + SONDE_FT_PREAMBLE_CYCLES - 1);
}

int ft_cli_print_runner_verify(FILE *out, const struct sonde_ft_verify_result *v, uint64_t offset,
                               struct sonde_sym *sym)
{
  /* the ground truth also holds the other iterations: only cycles the trace covers count */
  fprintf(out, "verify: trace cycle 0 = ground-truth cycle %" PRIu64 "; %" PRIu64 " compared, %" PRIu64
          " equal, %" PRIu64 " different, %" PRIu64 " unrecoverable\n", offset, v->compared, v->equal,
          v->different, v->unrecoverable);
  if (!v->different)
    return 0;
  char a[400], b[400];
  ft_cli_describe(sym, v->got, a, sizeof a);
  ft_cli_describe(sym, v->want, b, sizeof b);
  fprintf(out, "verify: first difference at ground-truth cycle %" PRIu64 ": trace %s, ground truth %s\n",
          v->first_cycle, a, b);
  return 1;
}
