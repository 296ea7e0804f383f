/* What a DWT PC sample at cycle T carries, as a function of the ground-truth
 * trace (issue 15 item 0, the VM's definition, docs/frankentrace.md):
 *   - an instruction occupying T: its own PC (also through every stall cycle;
 *     silicon agrees: the real CC2650 trace shows `ldr.w r2, [r3, #788]` at
 *     0x0e80 for all 56 cycles of its peripheral stall);
 *   - exception entry, return, tail-chain spans: the last instruction that
 *     started before T;
 *   - sleep: the sleep packet;
 *   - halted, or before any instruction: no sample at all (DWT_PCSR reads
 *     0xFFFFFFFF), so nothing a stitched trace could show: UNSAMPLED.
 * (/work/notes/ft-vm-api.md; the VM's sonde_pcsample_of() is the same rule.)
 * This is the one place that encodes the rule, so that it can be swapped for
 * the VM's own mapping when that is exported. */
#include "ft_internal.h"

int sonde_ft_project_dwt(const struct sonde_ft_trace *gt, struct sonde_ft_trace **out)
{
  *out = NULL;
  if (!gt)
    return SONDE_E_ARG;
  struct sonde_ft_trace *t;
  int rc = sonde_ft_trace_new(gt->origin, &t);
  if (!rc)
    rc = ft_trace_resize(t, gt->length);
  if (rc) {
    sonde_ft_trace_free(t);
    return rc;
  }
  t->clock_hz = gt->clock_hz;
  bool have_last = false;
  uint32_t last = 0;
  for (uint64_t i = 0; i < gt->length; i++) {
    uint8_t s = gt->states[i];
    uint32_t pc = gt->pcs[i];
    switch (s) {
    case SONDE_FT_PC:
      last = pc;
      have_last = true;
      break;
    case SONDE_FT_EXC_ENTRY:
    case SONDE_FT_EXC_RETURN:
    case SONDE_FT_TAIL_CHAIN:
      /* Before any instruction there is nothing to show: unrecoverable. */
      s = have_last ? SONDE_FT_PC : SONDE_FT_UNSAMPLED;
      pc = have_last ? last : 0;
      break;
    case SONDE_FT_SLEEP:
      pc = 0;
      break;
    case SONDE_FT_HALTED:
      s = SONDE_FT_UNSAMPLED;
      pc = 0;
      break;
    default:
      break; /* unrecoverable states stay as they are */
    }
    t->states[i] = s;
    t->pcs[i] = pc;
  }
  *out = t;
  return 0;
}
