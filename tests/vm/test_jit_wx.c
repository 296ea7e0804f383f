/* W^X for the block compiler (jit_x64.c): while a VM runs compiled code, no
 * mapping of the process is writable and executable at once. Reads
 * /proc/self/maps, so Linux only; elsewhere it checks only that the run works. */
#include "check.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sonde/vm.h"

/* Mappings whose permissions are rwx, each printed; -1 without /proc. */
static int count_wx(void)
{
  FILE *f = fopen("/proc/self/maps", "r");
  if (!f)
    return -1;
  char line[512];
  int n = 0;
  while (fgets(line, sizeof line, f)) {
    char perms[8] = "";
    if (sscanf(line, "%*s %7s", perms) == 1 && strncmp(perms, "rwx", 3) == 0) {
      fprintf(stderr, "writable and executable: %s", line);
      n++;
    }
  }
  fclose(f);
  return n;
}

/* A loop the compiler takes: vector table, then adds r0, #1; b . - 2. */
static const uint8_t spin[] = {0x00, 0x10, 0x00, 0x20, 0x09, 0x00, 0x00, 0x00,
                               0x01, 0x30, 0xfd, 0xe7};

static void test_no_wx_mapping(void)
{
  struct sonde_machine *m = NULL;
  struct sonde_vm *vm = NULL;
  REQUIRE(sonde_machine_builtin("cm3", &m) == 0);
  REQUIRE(sonde_vm_new(m, &vm) == 0);
  REQUIRE(sonde_vm_load_binary(vm, spin, sizeof spin, 0) == 0);
  REQUIRE(sonde_vm_reset(vm) == 0);
  struct sonde_vm_stop stop;
  CHECK_EQ_U(sonde_vm_run(vm, 1000000, &stop), 0);
  CHECK_EQ_U(stop.reason, SONDE_VM_STOP_CYCLE_LIMIT);
  struct sonde_vm_stats st;
  sonde_vm_get_stats(vm, &st);
  CHECK_EQ_U(st.cycles, 1000000);
  uint32_t r0 = 0;
  CHECK_EQ_U(sonde_vm_read_reg(vm, 0, &r0), 0);
  CHECK(r0 > 100000); /* the loop ran, compiled, from read-execute pages */
  if (getenv("SONDE_JIT") == NULL)
    CHECK(st.compiled_blocks > 0); /* the buffer exists and holds code */
  int wx = count_wx();
  if (wx >= 0)
    CHECK_EQ_U(wx, 0);
  sonde_vm_free(vm);
  sonde_machine_free(m);
}

int main(void)
{
  RUN(test_no_wx_mapping);
  return check_summary();
}
