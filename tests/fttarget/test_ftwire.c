/* src/ftwire: metadata records (good, wrong magic/version/type, inconsistent)
 * and per-iteration sample collection (lost samples from timestamps, off-grid
 * spacing, overflow and corrupt-byte counts). */
#include "check.h"
#include "sonde/ftwire.h"

static void test_records(void)
{
  uint32_t w[8] = {0x46540101u, 7, 0xC0DE, 12, 512, (0u << 28) | 300, 0, 0};
  w[7] = sonde_ftw_record_check(w);
  struct sonde_ftw_record r;
  struct sonde_diag d = {{0}};
  CHECK_EQ_I(sonde_ftw_record_decode(w, &r, &d), 0);
  CHECK_EQ_U(r.type, 1);
  CHECK_EQ_U(r.run_id, 7);
  CHECK_EQ_U(r.fw_id, 0xC0DE);
  CHECK_EQ_U(r.iteration, 12);
  CHECK_EQ_U(r.n, 512);
  CHECK_EQ_U(r.phase, 300);
  uint32_t l[8] = {0x46540102u, 7, 0xC0DE, 600, 512, (1u << 28) | (2u << 24), 0x20004000u, 0};
  l[7] = sonde_ftw_record_check(l);
  CHECK_EQ_I(sonde_ftw_record_decode(l, &r, &d), 0);
  CHECK_EQ_U(r.kind, 1);
  CHECK_EQ_U(r.lsu_kind, 2);
  CHECK_EQ_U(r.range_a, 0x2000);
  CHECK_EQ_U(r.range_b, 0x4000);
  w[0] = 0x12340101u;
  w[7] = sonde_ftw_record_check(w);
  CHECK_EQ_I(sonde_ftw_record_decode(w, &r, &d), SONDE_E_FORMAT);
  CHECK_EQ_STR(d.msg, "metadata record: magic 0x1234, want 0x4654");
  w[0] = 0x46540201u;
  w[7] = sonde_ftw_record_check(w);
  CHECK_EQ_I(sonde_ftw_record_decode(w, &r, &d), SONDE_E_FORMAT);
  CHECK_EQ_STR(d.msg, "metadata record: version 2, this sonde reads version 1");
  w[0] = 0x46540101u;
  w[7] = sonde_ftw_record_check(w);
  w[4] = 1536; /* a flipped bit: the check word catches it */
  CHECK_EQ_I(sonde_ftw_record_decode(w, &r, &d), SONDE_E_FORMAT);
  CHECK_EQ_STR(d.msg, "metadata record: check word 0x1b38b1dd, want 0xb605dddd");
  w[4] = 512;
  w[0] = 0x46540103u;
  w[7] = sonde_ftw_record_check(w);
  CHECK_EQ_I(sonde_ftw_record_decode(w, &r, &d), SONDE_E_FORMAT);
  CHECK_EQ_STR(d.msg, "metadata record: type 3 is neither begin (1) nor end (2)");
  w[0] = 0x46540101u;
  w[5] = 512; /* phase == N */
  w[7] = sonde_ftw_record_check(w);
  CHECK_EQ_I(sonde_ftw_record_decode(w, &r, &d), SONDE_E_FORMAT);
}

static struct sonde_itm_packet pk(uint8_t type, uint64_t value)
{
  struct sonde_itm_packet p = {0};
  p.type = type;
  p.value = value;
  return p;
}

static void test_collect(void)
{
  /* samples every 128 cycles; the third is lost (LTS after the fourth is 256) */
  struct sonde_itm_packet p[] = {
      pk(SONDE_ITM_PC, 0x100), pk(SONDE_ITM_LTS, 999), pk(SONDE_ITM_PC, 0x104),
      pk(SONDE_ITM_LTS, 128),  pk(SONDE_ITM_OVERFLOW, 0), pk(SONDE_ITM_PC, 0x10c),
      pk(SONDE_ITM_LTS, 256),  pk(SONDE_ITM_PC_SLEEP, 0), pk(SONDE_ITM_LTS, 128),
      pk(SONDE_ITM_PC, 0x110), pk(SONDE_ITM_LTS, 100), pk(SONDE_ITM_SKIP, 3),
      pk(SONDE_ITM_PC, 0x114), pk(SONDE_ITM_LTS, 256), /* 2N with no overflow: corrupt */
  };
  struct sonde_ftw_samples s = {0};
  CHECK_EQ_I(sonde_ftw_collect(p, sizeof p / sizeof p[0], 128, &s), 0);
  static const uint32_t want[] = {0x100, 0x104, 3, 0x10c, 1, 0x110, 0x114};
  CHECK_EQ_U(s.count, 7);
  for (unsigned i = 0; i < 7 && i < s.count; i++)
    CHECK_EQ_U(s.v[i], want[i]);
  CHECK_EQ_U(s.lost, 1);
  CHECK_EQ_U(s.overflows, 1);
  CHECK_EQ_U(s.bad_spacing, 2);
  CHECK_EQ_U(s.skips, 1);
  sonde_ftw_samples_free(&s);
}

int main(void)
{
  RUN(test_records);
  RUN(test_collect);
  return check_summary();
}
