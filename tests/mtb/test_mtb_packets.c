/* src/mtb packets and buffer geometry on hand-made buffers: order with and
 * without wrap, A/S bits, and every bad-input error (no ELF needed). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sonde/mtb.h"
#include "check.h"

static void put(uint8_t *b, uint32_t off, uint32_t src, uint32_t dst)
{
  memcpy(b + off, &src, 4);
  memcpy(b + off + 4, &dst, 4);
}

static void test_no_wrap(void)
{
  uint8_t b[64] = {0};
  put(b, 0, 0x100, 0x201); /* S */
  put(b, 8, 0x300 | 1, 0x400);
  put(b, 16, 0x500, 0xFFFFFFF9);
  struct sonde_mtb_raw raw = {b, sizeof b, 0x20000000, 24, 2, true};
  struct sonde_mtb_packet *p;
  size_t n;
  struct sonde_diag d;
  REQUIRE(sonde_mtb_packets(&raw, &p, &n, &d) == 0);
  REQUIRE(n == 3);
  CHECK_EQ_U(p[0].src, 0x100);
  CHECK_EQ_U(p[0].dst, 0x200);
  CHECK(p[0].s && !p[0].a);
  CHECK(p[1].a && !p[1].s);
  CHECK_EQ_U(p[1].src, 0x300);
  CHECK_EQ_U(p[2].dst, 0xFFFFFFF8);
  CHECK(sonde_mtb_is_exc_return(p[2].dst));
  CHECK_EQ_U(p[2].offset, 16);
  free(p);
  /* POSITION as an absolute address inside the buffer: the same */
  raw.position = 0x20000000 + 24;
  REQUIRE(sonde_mtb_packets(&raw, &p, &n, &d) == 0);
  CHECK_EQ_U(n, 3);
  free(p);
  /* empty */
  raw.position = 0;
  REQUIRE(sonde_mtb_packets(&raw, &p, &n, &d) == 0);
  CHECK_EQ_U(n, 0);
  CHECK(p == NULL);
}

static void test_wrap(void)
{
  uint8_t b[32] = {0};
  for (uint32_t i = 0; i < 4; i++)
    put(b, 8 * i, 0x1000 + 16 * i, 0x2000 + 16 * i);
  /* POINTER 16, WRAP: oldest at 16 */
  struct sonde_mtb_raw raw = {b, sizeof b, 0, 16 | 4, 1, true};
  struct sonde_mtb_packet *p;
  size_t n;
  struct sonde_diag d;
  REQUIRE(sonde_mtb_packets(&raw, &p, &n, &d) == 0);
  REQUIRE(n == 4);
  CHECK_EQ_U(p[0].src, 0x1020);
  CHECK_EQ_U(p[1].src, 0x1030);
  CHECK_EQ_U(p[2].src, 0x1000);
  CHECK_EQ_U(p[3].src, 0x1010);
  CHECK_EQ_U(p[3].offset, 8);
  free(p);
  /* without MASTER the circle is the whole buffer */
  raw.have_master = false;
  REQUIRE(sonde_mtb_packets(&raw, &p, &n, &d) == 0);
  CHECK_EQ_U(n, 4);
  free(p);
  /* MASTER smaller than the dump: only the circle */
  raw.have_master = true;
  raw.master = 0x80000000u; /* MASK 0: 16 bytes */
  raw.position = 8 | 4;
  REQUIRE(sonde_mtb_packets(&raw, &p, &n, &d) == 0);
  REQUIRE(n == 2);
  CHECK_EQ_U(p[0].src, 0x1010);
  CHECK_EQ_U(p[1].src, 0x1000);
  free(p);
}

static void test_bad_input(void)
{
  uint8_t b[64] = {0};
  struct sonde_mtb_packet *p = (void *)1;
  size_t n = 99;
  struct sonde_diag d;
  /* POSITION outside the buffer */
  struct sonde_mtb_raw raw = {b, 64, 0x20000000, 0x48, 2, true};
  CHECK_EQ_I(sonde_mtb_packets(&raw, &p, &n, &d), SONDE_E_RANGE);
  CHECK(strstr(d.msg, "POSITION 0x00000048") && strstr(d.msg, "outside the 64-byte"));
  CHECK(p == NULL && n == 0);
  raw.position = 0x30000000;
  CHECK_EQ_I(sonde_mtb_packets(&raw, &p, &n, &d), SONDE_E_RANGE);
  /* truncated: not whole packets */
  raw = (struct sonde_mtb_raw){b, 61, 0, 0, 2, true};
  CHECK_EQ_I(sonde_mtb_packets(&raw, &p, &n, &d), SONDE_E_TRUNCATED);
  CHECK(strstr(d.msg, "61 bytes") != NULL);
  /* truncated: smaller than MASTER's circle */
  raw = (struct sonde_mtb_raw){b, 32, 0, 0, 2, true};
  CHECK_EQ_I(sonde_mtb_packets(&raw, &p, &n, &d), SONDE_E_TRUNCATED);
  CHECK(strstr(d.msg, "64-byte circle") != NULL);
  /* no MASTER, not a power of two */
  raw = (struct sonde_mtb_raw){b, 48, 0, 0, 0, false};
  CHECK_EQ_I(sonde_mtb_packets(&raw, &p, &n, &d), SONDE_E_FORMAT);
  CHECK(strstr(d.msg, "power of two") != NULL);
  raw = (struct sonde_mtb_raw){b, 8, 0, 0, 0, false};
  CHECK_EQ_I(sonde_mtb_packets(&raw, &p, &n, &d), SONDE_E_FORMAT);
  raw = (struct sonde_mtb_raw){NULL, 0, 0, 0, 0, false};
  CHECK_EQ_I(sonde_mtb_packets(&raw, &p, &n, &d), SONDE_E_FORMAT);
  /* rebuilding needs the ELF */
  struct sonde_mtb_history h;
  CHECK_EQ_I(sonde_mtb_rebuild(NULL, 0, NULL, NULL, &h, &d), SONDE_E_ARG);
}

static void test_insn_size(void)
{
  CHECK_EQ_U(sonde_mtb_insn_size(0xE7FE), 2); /* b . (0b11100) */
  CHECK_EQ_U(sonde_mtb_insn_size(0xE92D), 4); /* push.w (0b11101) */
  CHECK_EQ_U(sonde_mtb_insn_size(0xF000), 4); /* bl (0b11110) */
  CHECK_EQ_U(sonde_mtb_insn_size(0xF8D0), 4); /* ldr.w (0b11111) */
  CHECK_EQ_U(sonde_mtb_insn_size(0x4770), 2); /* bx lr */
  CHECK_EQ_STR(sonde_mtb_kind_name(SONDE_MTB_EXC_RETURN), "exception");
}

int main(void)
{
  RUN(test_no_wrap);
  RUN(test_wrap);
  RUN(test_bad_input);
  RUN(test_insn_size);
  return check_summary();
}
