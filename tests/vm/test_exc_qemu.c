/* The exception test firmwares on QEMU (mps2-an385, a Cortex-M3 board) and on
 * the VM print the same: an independent model of preemption, tail-chaining,
 * masking, the fault status registers, INVPC, SVC/PendSV, SysTick's
 * COUNTFLAG, SYSRESETREQ with SRAM retained and (mps2-an386, Cortex-M4)
 * lazy FP stacking, and (mps2-an505, Cortex-M33) nesting, BASEPRI and the
 * ARMv8-M stack limits. Lines that depend on the
 * board are left out: QEMU's flash is writable (no fault for a store to it)
 * and its SysTick CALIB differs. */
#include "check.h"

#include <stdio.h>

#include "sonde/vm.h"

#ifndef SONDE_FIRMWARE_DIR
#define SONDE_FIRMWARE_DIR SONDE_BINARY_DIR "/firmware"
#endif

struct buf {
  char data[8192];
  size_t len;
};

static int on_write(void *ctx, int stream, const void *data, size_t len)
{
  struct buf *b = ctx;
  (void)stream;
  if (b->len + len < sizeof b->data) {
    memcpy(b->data + b->len, data, len);
    b->len += len;
  }
  return 0;
}

/* Drop the lines that contain any of `skip` (NULL-terminated). */
static void filter(char *s, const char *const *skip)
{
  char *out = s, *line = s;
  while (*line) {
    char *nl = strchr(line, '\n');
    size_t n = nl ? (size_t)(nl - line) + 1 : strlen(line);
    bool drop = false;
    for (const char *const *k = skip; *k; k++) {
      char *hit = strstr(line, *k);
      if (hit && hit < line + n)
        drop = true;
    }
    if (!drop) {
      memmove(out, line, n);
      out += n;
    }
    line += n;
  }
  *out = 0;
}

static bool run_vm(const char *path, const char *mach, struct buf *b)
{
  FILE *f = fopen(path, "rb");
  if (!f)
    return false;
  static unsigned char img[1 << 20];
  size_t n = fread(img, 1, sizeof img, f);
  fclose(f);
  struct sonde_machine *m = NULL;
  struct sonde_vm *vm = NULL;
  bool ok;
  if (strchr(mach, '/')) { /* a machine description file */
    static char text[4096];
    FILE *mf = fopen(mach, "rb");
    size_t tn = mf ? fread(text, 1, sizeof text, mf) : 0;
    if (mf)
      fclose(mf);
    ok = tn > 0 && sonde_machine_parse(text, tn, mach, &m, NULL) == 0;
  } else {
    ok = sonde_machine_builtin(mach, &m) == 0;
  }
  ok = ok && sonde_vm_new(m, &vm) == 0 && sonde_vm_load_elf(vm, img, n, path) == 0;
  if (ok) {
    sonde_vm_set_output(vm, on_write, b);
    sonde_vm_reset(vm);
    struct sonde_vm_stop st;
    ok = sonde_vm_run(vm, 100000000, &st) == 0 && st.reason == SONDE_VM_STOP_EXIT;
  }
  sonde_vm_free(vm);
  sonde_machine_free(m);
  b->data[b->len] = 0;
  return ok;
}

static bool run_qemu(const char *path, const char *board, struct buf *b)
{
  char cmd[1024];
  snprintf(cmd, sizeof cmd,
           "timeout 30 qemu-system-arm -M %s -icount shift=0,sleep=off -nographic "
           "-monitor none -serial none "
           "-semihosting-config enable=on,target=native -kernel '%s' 2>&1",
           board, path);
  FILE *p = popen(cmd, "r");
  if (!p)
    return false;
  b->len = fread(b->data, 1, sizeof b->data - 1, p);
  b->data[b->len] = 0;
  /* The exit status is the firmware's failure count, which may differ on the
   * board-specific lines; the output is what is compared. */
  int st = pclose(p);
  return st != -1 && !strstr(b->data, "qemu-system-arm:") && !strstr(b->data, "qemu: fatal");
}

static void compare_on(const char *name, const char *board, const char *mach,
                       const char *const *skip)
{
  char path[512];
  snprintf(path, sizeof path, "%s/%s.elf", SONDE_FIRMWARE_DIR, name);
  static struct buf vm_out, q_out;
  memset(&vm_out, 0, sizeof vm_out);
  memset(&q_out, 0, sizeof q_out);
  if (!run_vm(path, mach, &vm_out)) {
    CHECK_FAIL_("%s: did not run to its exit on the VM", path);
    return;
  }
  if (!run_qemu(path, board, &q_out)) {
    CHECK_FAIL_("%s: qemu-system-arm failed: %s", path, q_out.data);
    return;
  }
  filter(vm_out.data, skip);
  filter(q_out.data, skip);
  CHECK(vm_out.data[0] != 0);
  CHECK_EQ_STR(vm_out.data, q_out.data);
}

static void compare(const char *name, const char *const *skip)
{
  compare_on(name, "mps2-an385", "cm3", skip);
}

static const char *const none[] = {NULL};

static void test_nesting(void) { compare("exc_nesting_m3", none); }
static void test_basepri(void) { compare("exc_basepri_m3", none); }
static void test_svc_pendsv(void) { compare("exc_svc_pendsv_m3", none); }
static void test_reset(void) { compare("exc_reset_m3", none); }

static void test_systick(void)
{
  static const char *const skip[] = {"calib", NULL};
  compare("exc_systick_m3", skip);
}

static void test_faults(void)
{
  static const char *const skip[] = {"store to flash", "fault count", "faults ", NULL};
  compare("exc_faults_m3", skip);
}

/* Lazy FP stacking on a Cortex-M4F (mps2-an386): EXC_RETURN, FPCCR before and
 * after the handler's first FP instruction, FPCAR, the saved registers. */
static void test_lazy_fp(void) { compare_on("exc_lazyfp_m4f", "mps2-an386", "cm4f", none); }

/* ARMv8-M on QEMU's mps2-an505 (Cortex-M33): the firmwares built for its
 * memory map (firmware/ld/an505.ld) on the VM with the same map
 * (tests/vm/an505.machine, reset VTOR 0x10000000). QEMU's core has the
 * Security Extension and runs Secure, the VM's has none (Non-secure state):
 * EXC_RETURN.S/ES and FPCCR.S would differ, and these firmwares print none of
 * them. Stack limits: MSPLIM/PSPLIM on exception entry and on every
 * instruction that moves SP (ARMv8-M ARM, the Stack limit checks). */
static void compare_v8m(const char *prog)
{
  char name[64];
  snprintf(name, sizeof name, "exc_%s_an505", prog);
  compare_on(name, "mps2-an505", SONDE_SOURCE_DIR "/tests/vm/an505.machine", none);
}

static void test_v8m_nesting(void) { compare_v8m("nesting"); }
static void test_v8m_basepri(void) { compare_v8m("basepri"); }
static void test_v8m_stack_limit(void) { compare_v8m("stklim"); }
static void test_v8m_stack_limit_insn(void) { compare_v8m("stklim_insn"); }

int main(void)
{
  if (system("command -v qemu-system-arm >/dev/null 2>&1") != 0) {
    fprintf(stderr, "qemu-system-arm not found (scripts/install-deps installs it)\n");
    return 1;
  }
  RUN(test_nesting);
  RUN(test_basepri);
  RUN(test_svc_pendsv);
  RUN(test_reset);
  RUN(test_systick);
  RUN(test_faults);
  RUN(test_lazy_fp);
  RUN(test_v8m_nesting);
  RUN(test_v8m_basepri);
  RUN(test_v8m_stack_limit);
  RUN(test_v8m_stack_limit_insn);
  return check_summary();
}
