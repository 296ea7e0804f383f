/* sonde_vm_pc_at_cycle() at the program's end: polling k*N + phase for every
 * k must stop at the exit with SONDE_E_AGAIN and STOP_EXIT, leave the VM at
 * the exit's cycle, and never run the core past it — also when the exit lands
 * between two queried cycles, inside the same run as the last sample (found
 * with N = 2 on demo.elf in an earlier version: the poll ran on for 141 M
 * cycles; now an exit or lockup seen by a poll is sticky until a reset). */
#include "check.h"
#include "sonde/vm.h"

#include <stdio.h>
#include <stdlib.h>

static int quiet(void *ctx, int stream, const void *buf, size_t len)
{
  (void)ctx, (void)stream, (void)buf, (void)len;
  return 0;
}

static unsigned char image[1 << 20];
static size_t image_len;
static struct sonde_machine *machine;

static struct sonde_vm *fresh(void)
{
  struct sonde_vm *vm = NULL;
  if (sonde_vm_new(machine, &vm) || sonde_vm_load_elf(vm, image, image_len, "demo")) {
    sonde_vm_free(vm);
    return NULL;
  }
  sonde_vm_set_output(vm, quiet, NULL);
  sonde_vm_reset(vm);
  return vm;
}

static void poll(uint64_t end, uint32_t n, uint32_t phase)
{
  struct sonde_vm *vm = fresh();
  CHECK(vm != NULL);
  if (!vm)
    return;
  uint64_t k = 0, last_ok = 0;
  int rc = 0;
  struct sonde_vm_stop stop;
  struct sonde_pcsample s;
  for (; k < end + 10; k++) {
    rc = sonde_vm_pc_at_cycle(vm, k * n + phase, &s, &stop);
    if (rc)
      break;
    last_ok = k * n + phase;
  }
  CHECK_EQ_I(rc, SONDE_E_AGAIN);
  CHECK_EQ_I(stop.reason, SONDE_VM_STOP_EXIT);
  CHECK(last_ok < end);
  CHECK(last_ok + n >= end); /* every cycle before the exit was answered */
  struct sonde_vm_stats st;
  sonde_vm_get_stats(vm, &st);
  CHECK_EQ_U(st.cycles, end);
  /* asking again, or further on, never runs past the end */
  CHECK_EQ_I(sonde_vm_pc_at_cycle(vm, end + 1000, &s, &stop), SONDE_E_AGAIN);
  CHECK_EQ_I(stop.reason, SONDE_VM_STOP_EXIT);
  sonde_vm_get_stats(vm, &st);
  CHECK_EQ_U(st.cycles, end);
  /* a reset starts over (the cycle count goes on across it) */
  sonde_vm_reset(vm);
  sonde_vm_get_stats(vm, &st);
  CHECK_EQ_I(sonde_vm_pc_at_cycle(vm, st.cycles + 10, &s, &stop), 0);
  sonde_vm_free(vm);
}

static uint64_t g_end;

static void test_polls_stop_at_exit(void)
{
  static const uint32_t plans[][2] = {{2, 1}, {2, 0}, {4, 1}, {7, 2}, {1, 0}, {61, 60}, {512, 3}};
  for (size_t i = 0; i < sizeof plans / sizeof *plans; i++)
    poll(g_end, plans[i][0], plans[i][1]);
}

static int setup(uint64_t *end)
{
  char path[512];
  snprintf(path, sizeof path, "%s/demo.elf", SONDE_FIRMWARE_DIR);
  FILE *f = fopen(path, "rb");
  if (!f)
    return -1;
  image_len = fread(image, 1, sizeof image, f);
  fclose(f);
  if (sonde_machine_builtin("cm3", &machine))
    return -1;
  struct sonde_vm *vm = fresh();
  if (!vm)
    return -1;
  struct sonde_vm_stop stop;
  sonde_vm_run(vm, UINT64_MAX, &stop);
  struct sonde_vm_stats st;
  sonde_vm_get_stats(vm, &st);
  sonde_vm_free(vm);
  *end = st.cycles;
  return stop.reason == SONDE_VM_STOP_EXIT ? 0 : -1;
}

int main(void)
{
  uint64_t end = 0;
  if (setup(&end)) {
    CHECK_FAIL_("cannot run %s/demo.elf to its exit", SONDE_FIRMWARE_DIR);
    return check_summary();
  }
  printf("demo.elf exits at cycle %llu\n", (unsigned long long)end);
  g_end = end;
  RUN(test_polls_stop_at_exit);
  sonde_machine_free(machine);
  return check_summary();
}
