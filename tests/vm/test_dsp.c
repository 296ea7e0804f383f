/* DSP extension (ARMv7-M ARM A7.7) of the virtual Cortex-M against Unicorn. */
#include "check.h"
#include "unicorn_ref.h"

/* The harness itself: known results, and rewriting code in place. */
static void test_harness(void)
{
  struct uref *u = uref_new(UREF_CORTEX_M4);
  REQUIRE(u);
  struct uref_state st = {0};
  st.r[1] = 0x7f7f7f7f;
  st.r[2] = 0x01807f01;
  st.apsr = 0xf80f0000;
  uref_set_state(u, &st);
  uref_get_state(u, &st);
  CHECK_EQ_U(st.apsr, 0xf80f0000);
  uint16_t qadd8[] = {0xfa81, 0xf012}; /* qadd8 r0, r1, r2 */
  REQUIRE(uref_write_code(u, UREF_CODE_BASE, qadd8, 2) == 0);
  REQUIRE(uref_run(u, UREF_CODE_BASE, 1) == 0);
  uref_get_state(u, &st);
  CHECK_EQ_U(st.r[0], 0x7fff7f7f);
  CHECK_EQ_U(st.r[15], UREF_CODE_BASE + 4);
  uint16_t sadd8[] = {0xfa81, 0xf002}; /* sadd8 r0, r1, r2 */
  REQUIRE(uref_write_code(u, UREF_CODE_BASE, sadd8, 2) == 0);
  REQUIRE(uref_run(u, UREF_CODE_BASE, 1) == 0);
  uref_get_state(u, &st);
  CHECK_EQ_U(st.r[0], 0x80fffe80);
  CHECK_EQ_U(st.apsr & 0x000f0000, 0x000b0000); /* GE set where a byte sum >= 0 */
  uref_free(u);
}

int main(void)
{
  RUN(test_harness);
  return check_summary();
}
