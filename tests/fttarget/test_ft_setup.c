/* The runner's DWT/ITM/TPIU settings (target/cortexm/frankentrace/ft_setup.c,
 * the same file the firmware links) against the paper's Table 2 (CC2650,
 * 48 MHz, SWO NRZ): N -> DWT_CTRL[12:0], baud -> TPIU prescaler, phases ->
 * CYCCNT/POSTINIT, and the smallest N a baud can carry. */
#include "check.h"
#include "ft_setup.h"

static void table2(void)
{
  static const struct {
    uint32_t baud, n, acpr, ctrl13;
  } row[] = {
      {1000000, 5120, 47, 0x1209}, {2000000, 3072, 11, 0x1205}, {8000000, 512, 5, 0x100f},
      {24000000, 192, 1, 0x1005}, {48000000, 128, 0, 0x1003},
  };
  for (unsigned i = 0; i < sizeof row / sizeof row[0]; i++) {
    struct ft_setup s;
    CHECK_EQ_U(ft_setup_ctrl13(row[i].n), row[i].ctrl13);
    /* The paper's 2 Mbaud row has prescaler 11, which is 48 MHz / 12 =
     * 4 Mbaud on the pin; 2 Mbaud is prescaler 23. The row reproduces at
     * the pin rate its prescaler makes. */
    uint32_t pin = 48000000u / (row[i].acpr + 1);
    CHECK_EQ_I(ft_setup_compute(48000000, pin, row[i].n, 0, &s), FT_SETUP_OK);
    CHECK_EQ_U(s.acpr, row[i].acpr);
    CHECK_EQ_U(s.ctrl13, row[i].ctrl13);
    CHECK(row[i].n >= s.min_n);
  }
  struct ft_setup s;
  CHECK_EQ_I(ft_setup_compute(48000000, 2000000, 3072, 0, &s), FT_SETUP_OK);
  CHECK_EQ_U(s.acpr, 23);
  /* The smallest N per baud (8 bytes a sample: PC packet + 3-byte LTS). */
  CHECK_EQ_U(ft_setup_min_n(48000000, 1000000), 4096);
  CHECK_EQ_U(ft_setup_min_n(48000000, 2000000), 2048);
  CHECK_EQ_U(ft_setup_min_n(48000000, 8000000), 512);
  CHECK_EQ_U(ft_setup_min_n(48000000, 24000000), 192);
  CHECK_EQ_U(ft_setup_min_n(48000000, 48000000), 128);
  CHECK_EQ_U(ft_setup_min_n(48000000, 100000), 0); /* 100 kbaud: no DWT interval is long enough */
  CHECK_EQ_U(ft_setup_bytes_per_sample(64), 7);
  CHECK_EQ_U(ft_setup_bytes_per_sample(128), 8);
  CHECK_EQ_U(ft_setup_bytes_per_sample(16384), 9);
}

static void errors(void)
{
  struct ft_setup s;
  CHECK_EQ_I(ft_setup_compute(48000000, 7000000, 512, 0, &s), FT_SETUP_BAUD_DIVIDER);
  CHECK_EQ_I(ft_setup_compute(48000000, 8000000, 500, 0, &s), FT_SETUP_N_SHAPE);
  CHECK_EQ_I(ft_setup_compute(48000000, 8000000, 448, 0, &s), FT_SETUP_N_BANDWIDTH);
  CHECK_EQ_U(s.min_n, 512);
  CHECK_EQ_I(ft_setup_compute(48000000, 8000000, 512, 512, &s), FT_SETUP_PHASE);
  CHECK_EQ_U(ft_setup_ctrl13(2048 + 512), 0);
  CHECK_EQ_U(ft_setup_ctrl13(16384), 0x121f);
  CHECK_EQ_U(ft_setup_ctrl13(64), 0x1001);
}

/* Every phase of N lands on a distinct first-sample offset phase+1 after
 * the DWT_CTRL write: taps every `tap` cycles from CYCCNT0, sample at tap
 * POSTINIT+1. */
static void phases(void)
{
  static const uint32_t ns[] = {128, 192, 512, 1024, 3072, 5120};
  for (unsigned i = 0; i < sizeof ns / sizeof ns[0]; i++) {
    uint32_t n = ns[i], tap = n > 1024 ? 1024 : 64;
    for (uint32_t ph = 0; ph < n; ph++) {
      struct ft_setup s;
      CHECK_EQ_I(ft_setup_compute(48000000, 48000000, n, ph, &s), FT_SETUP_OK);
      uint32_t first_tap = tap - s.cyccnt0 % tap;
      uint32_t first = first_tap + s.postinit * tap;
      if (first != ph + 1 || s.postinit > 15 || s.postinit > ((s.ctrl13 >> 1) & 15))
        CHECK_FAIL_("N %u phase %u: first sample after %u cycles, POSTINIT %u", n, ph, first,
                    s.postinit);
    }
  }
}

int main(void)
{
  RUN(table2);
  RUN(errors);
  RUN(phases);
  return check_summary();
}
