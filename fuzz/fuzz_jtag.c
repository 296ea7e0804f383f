/* Fuzz target: the JTAG debug port's TAP, JTAG-DP and AHB-AP state machines
 * (src/vm/jtag_*.c) on arbitrary remote_bitbang bytes, with a VM running the
 * small program below and advancing 3 cycles per TCK. An input whose first
 * byte has bit 7 set is read as one TCK per byte instead (bit 0 TMS, bit 1
 * TDI, bit 2 read TDO; 0xF8..0xFB the reset commands), so that the fuzzer
 * reaches the DP and AP registers sooner. Any input must be answered or
 * ignored, never crash. */
#include <stdint.h>
#include <stdlib.h>

#include "sonde/vm.h"

int vm_jtag_fuzz(struct sonde_vm *vm, const uint8_t *data, size_t len, uint32_t cycles_per_tck,
                 uint64_t max_cycles);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static struct sonde_machine *m;
  static struct sonde_vm *vm; /* reused: creating one per input is slow */
  if (!vm && (sonde_machine_builtin("cm4f", &m) != 0 || sonde_vm_new(m, &vm) != 0))
    abort();
  /* vectors: SP 0x20001000, reset 0x41; code: movs r0,#1; adds r0,#1; b . */
  static const uint32_t vt[2] = {0x20001000, 0x41};
  static const uint16_t code[3] = {0x2001, 0x3001, 0xE7FE};
  sonde_vm_write_mem(vm, 0, vt, sizeof vt);
  sonde_vm_write_mem(vm, 0x40, code, sizeof code);
  sonde_vm_reset(vm);
  if (size && (data[0] & 0x80)) {
    static uint8_t proto[3 * 65536];
    size_t n = 0;
    for (size_t i = 1; i < size && i < 65536; i++) {
      uint8_t b = data[i];
      if (b >= 0xF8 && b <= 0xFB) {
        proto[n++] = (uint8_t)('r' + (b - 0xF8));
        continue;
      }
      proto[n++] = (uint8_t)('0' + (b & 3));
      if (b & 4)
        proto[n++] = 'R';
      proto[n++] = (uint8_t)('4' + (b & 3));
    }
    vm_jtag_fuzz(vm, proto, n, 3, 200000);
  } else {
    vm_jtag_fuzz(vm, data, size, 3, 200000);
  }
  return 0;
}
