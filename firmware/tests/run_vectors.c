/* For tests/cli/run_basic.sh: every IRQn_Handler of the startup code sits in
 * vector slot 16 + n. Pends IRQ 0..63 one at a time (cm3: 64 IRQs) and checks
 * which handler ran; exits 0, or 100 + the first IRQ whose handler was wrong. */
#include "sonde_fw.h"

static volatile int hit = -1;

#define H(n) \
  void IRQ##n##_Handler(void); \
  void IRQ##n##_Handler(void) { hit = n; }
H(0) H(1) H(2) H(3) H(4) H(5) H(6) H(7) H(8) H(9) H(10) H(11) H(12) H(13) H(14) H(15)
H(16) H(17) H(18) H(19) H(20) H(21) H(22) H(23) H(24) H(25) H(26) H(27) H(28) H(29) H(30)
H(31) H(32) H(33) H(34) H(35) H(36) H(37) H(38) H(39) H(40) H(41) H(42) H(43) H(44) H(45)
H(46) H(47) H(48) H(49) H(50) H(51) H(52) H(53) H(54) H(55) H(56) H(57) H(58) H(59) H(60)
H(61) H(62) H(63)

int main(void)
{
  for (int n = 0; n < 64; n++) {
    hit = -1;
    NVIC_ISER(n / 32) = 1u << (n % 32);
    NVIC_ISPR(n / 32) = 1u << (n % 32);
    __asm__ volatile("dsb\n\tisb" ::: "memory");
    NVIC_ICER(n / 32) = 1u << (n % 32);
    if (hit != n)
      return 100 + n;
  }
  return 0;
}
