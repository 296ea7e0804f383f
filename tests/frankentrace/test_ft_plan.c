/* The DWT settings and line budget behind `frankentrace run` against the
 * FrankenTrace paper's Table 2 (a 48 MHz CC2650, SWO NRZ without formatter). */
#include "check.h"
#include "sonde/frankentrace_vm.h"

/* Table 2: baud, N, TPIU prescaler, DWT_CTRL[12:0] */
static const struct {
  uint64_t baud;
  uint32_t n, acpr, ctrl;
} table2[] = {
    {1000000, 5120, 47, 0x1209}, {2000000, 3072, 11, 0x1205}, {8000000, 512, 5, 0x100f},
    {24000000, 192, 1, 0x1005}, {48000000, 128, 0, 0x1003},
};

static void test_table2_dwt_ctrl(void)
{
  for (size_t i = 0; i < sizeof table2 / sizeof *table2; i++)
    CHECK_EQ_U(sonde_ft_dwt_ctrl_for(table2[i].n), table2[i].ctrl);
}

/* The rows the line budget decides. At 8, 24 and 48 Mbaud the smallest N that
 * carries one PC packet and its timestamp per sample is the paper's; at 1 and
 * 2 Mbaud the paper leaves margin (5120 and 3072; its 2 Mbaud prescaler 11
 * gives 4 Mbaud from 48 MHz), the budget alone gives 4096 and 2048. */
static void test_smallest_n(void)
{
  CHECK_EQ_U(sonde_ft_smallest_n(48000000, 48000000, 0), 128);
  CHECK_EQ_U(sonde_ft_smallest_n(48000000, 24000000, 0), 192);
  CHECK_EQ_U(sonde_ft_smallest_n(48000000, 8000000, 0), 512);
  CHECK_EQ_U(sonde_ft_smallest_n(48000000, 2000000, 0), 2048);
  CHECK_EQ_U(sonde_ft_smallest_n(48000000, 1000000, 0), 4096);
  CHECK_EQ_U(sonde_ft_smallest_n(48000000, 4000000, 0), 960); /* 15 x 64 */
  CHECK_EQ_U(sonde_ft_smallest_n(48000000, 48000000, 200), 256);
  CHECK_EQ_U(sonde_ft_smallest_n(48000000, 100000, 0), 0); /* too slow for any N */
  CHECK_EQ_U(sonde_ft_smallest_n(48000000, 0, 0), 0);
}

static void test_settings(void)
{
  CHECK_EQ_U(sonde_ft_dwt_ctrl_for(64), 0x1001);
  CHECK_EQ_U(sonde_ft_dwt_ctrl_for(1024), 0x101f);  /* CYCTAP 0 where both work */
  CHECK_EQ_U(sonde_ft_dwt_ctrl_for(16384), 0x121f);
  CHECK_EQ_U(sonde_ft_dwt_ctrl_for(2048), 0x1203);
  CHECK_EQ_U(sonde_ft_dwt_ctrl_for(100), 0);
  CHECK_EQ_U(sonde_ft_dwt_ctrl_for(1088), 0);
  CHECK_EQ_U(sonde_ft_dwt_ctrl_for(32768), 0);
  CHECK_EQ_U(sonde_ft_dwt_ctrl_for(0), 0);
  CHECK_EQ_U(sonde_ft_bytes_per_sample(64), 7);
  CHECK_EQ_U(sonde_ft_bytes_per_sample(512), 8);
  CHECK_EQ_U(sonde_ft_bytes_per_sample(16384), 9);
}

int main(void)
{
  RUN(test_table2_dwt_ctrl);
  RUN(test_smallest_n);
  RUN(test_settings);
  return check_summary();
}
