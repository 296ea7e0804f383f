/* The JTAG TAP controller of the virtual chip (IEEE 1149.1 clause 6): the 16
 * states driven by TMS on TCK's rising edge, a 4-bit instruction register
 * (capture value 0b0001, as ARM's JTAG-DP) and the data registers the
 * instruction selects: IDCODE (32 bits), DPACC/APACC/ABORT (35 bits, served
 * by jtag_dp.c) and BYPASS (1 bit, also for every other instruction).
 *
 * A register is captured on the rising edge that leaves Capture-xR, shifts on
 * each rising edge in Shift-xR (TDI enters at the top, TDO is bit 0) and is
 * acted on when Update-xR is entered. */
#include "jtag.h"

#define IR_LEN 4

static const uint8_t next_state[16][2] = {
  [TAP_RESET] = {TAP_IDLE, TAP_RESET},
  [TAP_IDLE] = {TAP_IDLE, TAP_SELECT_DR},
  [TAP_SELECT_DR] = {TAP_CAPTURE_DR, TAP_SELECT_IR},
  [TAP_CAPTURE_DR] = {TAP_SHIFT_DR, TAP_EXIT1_DR},
  [TAP_SHIFT_DR] = {TAP_SHIFT_DR, TAP_EXIT1_DR},
  [TAP_EXIT1_DR] = {TAP_PAUSE_DR, TAP_UPDATE_DR},
  [TAP_PAUSE_DR] = {TAP_PAUSE_DR, TAP_EXIT2_DR},
  [TAP_EXIT2_DR] = {TAP_SHIFT_DR, TAP_UPDATE_DR},
  [TAP_UPDATE_DR] = {TAP_IDLE, TAP_SELECT_DR},
  [TAP_SELECT_IR] = {TAP_CAPTURE_IR, TAP_RESET},
  [TAP_CAPTURE_IR] = {TAP_SHIFT_IR, TAP_EXIT1_IR},
  [TAP_SHIFT_IR] = {TAP_SHIFT_IR, TAP_EXIT1_IR},
  [TAP_EXIT1_IR] = {TAP_PAUSE_IR, TAP_UPDATE_IR},
  [TAP_PAUSE_IR] = {TAP_PAUSE_IR, TAP_EXIT2_IR},
  [TAP_EXIT2_IR] = {TAP_SHIFT_IR, TAP_UPDATE_IR},
  [TAP_UPDATE_IR] = {TAP_IDLE, TAP_SELECT_DR},
};

void vm_jtag_tap_reset(struct vm_jtag_tap *t)
{
  t->state = TAP_RESET;
  t->ir = JTAG_IR_IDCODE;
}

void vm_jtag_tap_init(struct vm_jtag_tap *t, struct vm_jtag_dp *dp)
{
  t->dp = dp;
  t->dr = 0;
  t->dr_len = 1;
  t->ir_shift = 0;
  vm_jtag_tap_reset(t);
}

static bool is_dp_chain(unsigned ir)
{
  return ir == JTAG_IR_DPACC || ir == JTAG_IR_APACC || ir == JTAG_IR_ABORT;
}

static void capture_dr(struct vm_jtag_tap *t)
{
  if (t->ir == JTAG_IR_IDCODE) {
    t->dr = t->dp->idcode;
    t->dr_len = 32;
  } else if (is_dp_chain(t->ir)) {
    t->dr = vm_jtag_dp_capture(t->dp, t->ir);
    t->dr_len = 35;
  } else {
    t->dr = 0; /* BYPASS captures 0 */
    t->dr_len = 1;
  }
}

void vm_jtag_tap_clock(struct vm_jtag_tap *t, bool tms, bool tdi)
{
  t->dp->tck++;
  switch (t->state) {
  case TAP_CAPTURE_DR: capture_dr(t); break;
  case TAP_SHIFT_DR: t->dr = (t->dr >> 1) | ((uint64_t)tdi << (t->dr_len - 1)); break;
  case TAP_CAPTURE_IR: t->ir_shift = 0x1; break;
  case TAP_SHIFT_IR: t->ir_shift = (uint8_t)((t->ir_shift >> 1) | (tdi << (IR_LEN - 1))); break;
  default: break;
  }
  t->state = (enum vm_tap_state)next_state[t->state][tms];
  switch (t->state) {
  case TAP_UPDATE_DR:
    if (is_dp_chain(t->ir))
      vm_jtag_dp_update(t->dp, t->ir, t->dr & ((1ull << 35) - 1));
    break;
  case TAP_UPDATE_IR: t->ir = t->ir_shift & 0xF; break;
  case TAP_RESET: t->ir = JTAG_IR_IDCODE; break;
  default: break;
  }
}
