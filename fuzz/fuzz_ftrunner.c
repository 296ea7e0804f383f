/* Fuzz target: captures of the FrankenTrace runner through the library path
 * `frankentrace stitch` and `frankentrace run` share (runner_stitch.c):
 * arbitrary bytes decoded with resynchronisation at begin records, every
 * iteration judged and stitched, the whole validated, and the nondeterminism
 * marking applied to the result; LSU iterations collected, ordered over their
 * pairs and aligned on the trace (lsu_runs.c). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "sonde/frankentrace_runner.h"
#include "sonde/frankentrace_vm.h"

struct ctx {
  struct sonde_ft_runner *r;
  struct sonde_ft_runner_config cfg;
  struct sonde_ft_lsu_runs *lsu;
};

static int on_iter(void *vctx, const struct sonde_ftw_iteration *it)
{
  struct ctx *c = vctx;
  struct sonde_diag ld;
  if (it->begin.kind == 1)
    sonde_ft_lsu_runs_add(c->lsu, it, &ld);
  struct sonde_ft_runner_iter ji;
  int rc = sonde_ft_runner_judge(it, &c->cfg, &ji);
  if (rc < 0)
    return rc;
  struct sonde_diag d;
  rc = sonde_ft_runner_add(c->r, &ji, &d);
  sonde_ft_runner_iter_free(&ji);
  return rc < 0 ? rc : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  if (size < 1)
    return 0;
  struct ctx c = {0};
  c.cfg.check_fw_id = data[0] & 1;
  c.cfg.fw_id = 0xF7000001u;
  struct sonde_ftw_splitter *sp = NULL;
  struct sonde_itm *dec = sonde_itm_new(NULL);
  if (!dec || sonde_ft_runner_new(&c.cfg, &c.r) < 0 || sonde_ftw_splitter_new(on_iter, &c, &sp) < 0 ||
      sonde_ft_lsu_runs_new(&c.lsu) < 0)
    goto out;
  struct sonde_diag d = {{0}};
  if (sonde_ft_runner_decode(sp, dec, data + 1, size - 1, &d) < 0 ||
      sonde_ftw_splitter_finish(sp, &d) < 0)
    goto out;
  struct sonde_ft_trace *t = NULL;
  struct sonde_ft_runner_summary s;
  if (sonde_ft_runner_finish(c.r, &t, &s, &d) == 0) {
    uint64_t from = sonde_ft_first_conflict(&s.report);
    if (from == UINT64_MAX && sonde_ft_trace_length(t))
      from = sonde_ft_trace_length(t) / 2;
    sonde_ft_distrust_from(&t, from);
    struct sonde_ft_xfer *x = NULL;
    size_t n = 0;
    struct sonde_ft_lsu_summary ls;
    if (sonde_ft_lsu_runs_finish(c.lsu, &x, &n, &ls, &d) == 0) {
      sonde_ft_lsu_align(t, NULL, x, n, false);
      sonde_ft_lsu_data_phase(t, x, n);
      free(x);
    }
    sonde_ft_trace_free(t);
  }
out:
  sonde_ft_lsu_runs_free(c.lsu);
  sonde_ftw_splitter_free(sp);
  sonde_ft_runner_free(c.r);
  sonde_itm_free(dec);
  return 0;
}
