/* ARM semihosting through BKPT 0xAB (ARM "Semihosting for AArch32 and
 * AArch64", version 2.0): r0 is the operation, r1 the parameter (usually the
 * address of a block of words), the result goes to r0. Enough for newlib's
 * rdimon (--specs=rdimon.specs): the console ":tt" files, SYS_WRITE to
 * stdout/stderr, SYS_EXIT(_EXTENDED), clocks, SYS_HEAPINFO. Other files are
 * refused (-1, SYS_ERRNO = ENOENT). Time is simulated time, so runs are
 * deterministic: SYS_CLOCK and SYS_TIME count from reset in simulated time
 * (SYS_TIME starts at 0, the epoch), SYS_ELAPSED returns the cycle count.
 * Target memory is read and written like a debugger would (no bus timing). */
#include "machine.h"
#include "vm_internal.h"

enum {
  SYS_OPEN = 0x01, SYS_CLOSE = 0x02, SYS_WRITEC = 0x03, SYS_WRITE0 = 0x04, SYS_WRITE = 0x05,
  SYS_READ = 0x06, SYS_READC = 0x07, SYS_ISERROR = 0x08, SYS_ISTTY = 0x09, SYS_SEEK = 0x0A,
  SYS_FLEN = 0x0C, SYS_TMPNAM = 0x0D, SYS_REMOVE = 0x0E, SYS_RENAME = 0x0F, SYS_CLOCK = 0x10,
  SYS_TIME = 0x11, SYS_SYSTEM = 0x12, SYS_ERRNO = 0x13, SYS_GET_CMDLINE = 0x15,
  SYS_HEAPINFO = 0x16, SYS_EXIT = 0x18, SYS_EXIT_EXTENDED = 0x20, SYS_ELAPSED = 0x30,
  SYS_TICKFREQ = 0x31,
};
#define ADP_STOPPED_APPLICATION_EXIT 0x20026u
#define SEMI_ENOENT 2
#define SEMI_EBADF 9
#define SEMI_EFAULT 14
#define SEMI_EIO 5

/* Console handles: 1 stdin, 2 stdout, 3 stderr (0 is never a valid handle). */
enum { H_STDIN = 1, H_STDOUT = 2, H_STDERR = 3 };

static bool rd32(struct sonde_vm *vm, uint32_t addr, uint32_t *v)
{
  return vm_bus_debug_read(vm, &vm->bus, addr, v, 4) == VM_BUS_OK;
}

static bool wr32(struct sonde_vm *vm, uint32_t addr, uint32_t v)
{
  return vm_bus_debug_write(vm, &vm->bus, addr, &v, 4) == VM_BUS_OK;
}

static uint32_t fail(struct sonde_vm *vm, int err)
{
  vm->sys.semi_errno = err;
  return 0xFFFFFFFFu;
}

/* Copy target memory to the output in chunks. Returns bytes not written. */
static uint32_t write_out(struct sonde_vm *vm, int stream, uint32_t addr, uint32_t len)
{
  uint8_t buf[256];
  uint32_t done = 0;
  while (done < len) {
    uint32_t n = len - done < sizeof buf ? len - done : (uint32_t)sizeof buf;
    if (vm_bus_debug_read(vm, &vm->bus, addr + done, buf, n) != VM_BUS_OK) {
      vm->sys.semi_errno = SEMI_EFAULT;
      return len - done;
    }
    if (vm_output(vm, stream, buf, n) < 0) {
      vm_request_stop(vm, SONDE_VM_STOP_ERROR);
      vm->sys.semi_errno = SEMI_EIO;
      return len - done;
    }
    done += n;
  }
  return 0;
}

static uint64_t clock_hz(const struct sonde_vm *vm)
{
  uint64_t hz = vm->machine ? vm->machine->clock_hz : 0;
  return hz ? hz : 1;
}

static void do_exit(struct sonde_vm *vm, uint32_t reason, uint32_t code)
{
  vm_request_stop(vm, SONDE_VM_STOP_EXIT);
  vm->stop.exit_code = reason == ADP_STOPPED_APPLICATION_EXIT ? (int)code : 1;
}

static uint32_t semihost(struct sonde_vm *vm, uint32_t op, uint32_t arg)
{
  uint32_t a[4] = {0, 0, 0, 0};
  switch (op) {
  case SYS_OPEN: {
    if (!rd32(vm, arg, &a[0]) || !rd32(vm, arg + 4, &a[1]) || !rd32(vm, arg + 8, &a[2]))
      return fail(vm, SEMI_EFAULT);
    char name[4] = {0};
    if (a[2] == 3 && vm_bus_debug_read(vm, &vm->bus, a[0], name, 3) == VM_BUS_OK &&
        name[0] == ':' && name[1] == 't' && name[2] == 't') {
      /* Mode 0-3 read (stdin), 4-7 write (stdout), 8-11 append (stderr). */
      return a[1] < 4 ? H_STDIN : a[1] < 8 ? H_STDOUT : H_STDERR;
    }
    return fail(vm, SEMI_ENOENT);
  }
  case SYS_CLOSE:
    if (!rd32(vm, arg, &a[0]))
      return fail(vm, SEMI_EFAULT);
    return a[0] >= H_STDIN && a[0] <= H_STDERR ? 0 : fail(vm, SEMI_EBADF);
  case SYS_WRITEC: {
    uint8_t ch;
    if (vm_bus_debug_read(vm, &vm->bus, arg, &ch, 1) != VM_BUS_OK)
      return fail(vm, SEMI_EFAULT);
    if (vm_output(vm, SONDE_VM_STREAM_STDOUT, &ch, 1) < 0)
      vm_request_stop(vm, SONDE_VM_STOP_ERROR);
    return vm->cpu.r[0];
  }
  case SYS_WRITE0: {
    uint32_t len = 0;
    uint8_t ch;
    while (len < (1u << 20) &&
           vm_bus_debug_read(vm, &vm->bus, arg + len, &ch, 1) == VM_BUS_OK && ch)
      len++;
    write_out(vm, SONDE_VM_STREAM_STDOUT, arg, len);
    return vm->cpu.r[0];
  }
  case SYS_WRITE:
    if (!rd32(vm, arg, &a[0]) || !rd32(vm, arg + 4, &a[1]) || !rd32(vm, arg + 8, &a[2]))
      return fail(vm, SEMI_EFAULT);
    if (a[0] == H_STDOUT || a[0] == H_STDERR)
      return write_out(vm, a[0] == H_STDOUT ? SONDE_VM_STREAM_STDOUT : SONDE_VM_STREAM_STDERR,
                       a[1], a[2]);
    vm->sys.semi_errno = SEMI_EBADF;
    return a[2];
  case SYS_READ:
    if (!rd32(vm, arg, &a[0]) || !rd32(vm, arg + 8, &a[2]))
      return fail(vm, SEMI_EFAULT);
    if (a[0] != H_STDIN)
      return fail(vm, SEMI_EBADF);
    return a[2]; /* nothing read: end of file */
  case SYS_READC:
    return fail(vm, SEMI_EIO);
  case SYS_ISERROR:
    return (int32_t)arg < 0 ? 1 : 0;
  case SYS_ISTTY:
    if (!rd32(vm, arg, &a[0]))
      return fail(vm, SEMI_EFAULT);
    return a[0] >= H_STDIN && a[0] <= H_STDERR ? 1 : fail(vm, SEMI_EBADF);
  case SYS_SEEK:
    if (!rd32(vm, arg, &a[0]))
      return fail(vm, SEMI_EFAULT);
    return a[0] >= H_STDIN && a[0] <= H_STDERR ? 0 : fail(vm, SEMI_EBADF);
  case SYS_FLEN:
    if (!rd32(vm, arg, &a[0]))
      return fail(vm, SEMI_EFAULT);
    return a[0] >= H_STDIN && a[0] <= H_STDERR ? 0 : fail(vm, SEMI_EBADF);
  case SYS_CLOCK:
    return (uint32_t)(vm->cpu.cycles * 100 / clock_hz(vm));
  case SYS_TIME:
    return (uint32_t)(vm->cpu.cycles / clock_hz(vm));
  case SYS_ERRNO:
    return (uint32_t)vm->sys.semi_errno;
  case SYS_GET_CMDLINE: {
    /* Block: buffer, size. An empty command line. */
    if (!rd32(vm, arg, &a[0]) || !rd32(vm, arg + 4, &a[1]) || a[1] < 1)
      return fail(vm, SEMI_EFAULT);
    uint8_t nul = 0;
    if (vm_bus_debug_write(vm, &vm->bus, a[0], &nul, 1) != VM_BUS_OK || !wr32(vm, arg + 4, 0))
      return fail(vm, SEMI_EFAULT);
    return 0;
  }
  case SYS_HEAPINFO: {
    /* r1 points at the address of 4 words: heap base, heap limit, stack base,
     * stack limit. The heap is bounded by the first writable SRAM; the stack
     * fields are 0 so that newlib's crt0 keeps the SP of the vector table. */
    uint32_t block;
    if (!rd32(vm, arg, &block))
      return fail(vm, SEMI_EFAULT);
    uint32_t base = 0, limit = 0;
    if (vm->machine)
      for (unsigned i = 0; i < vm->machine->nmem; i++) {
        const struct vm_machine_mem *m = &vm->machine->mem[i];
        if (!(m->flags & VM_REGION_READONLY) && m->base >= 0x20000000u) {
          base = m->base;
          limit = m->base + m->size;
          break;
        }
      }
    if (!wr32(vm, block, base) || !wr32(vm, block + 4, limit) || !wr32(vm, block + 8, 0) ||
        !wr32(vm, block + 12, 0))
      return fail(vm, SEMI_EFAULT);
    return 0;
  }
  case SYS_EXIT:
    /* AArch32: r1 is the reason itself; ApplicationExit means success. */
    do_exit(vm, arg, 0);
    return 0;
  case SYS_EXIT_EXTENDED:
    if (!rd32(vm, arg, &a[0]) || !rd32(vm, arg + 4, &a[1])) {
      do_exit(vm, 0, 1);
      return 0;
    }
    do_exit(vm, a[0], a[1]);
    return 0;
  case SYS_ELAPSED:
    if (!wr32(vm, arg, (uint32_t)vm->cpu.cycles) || !wr32(vm, arg + 4, (uint32_t)(vm->cpu.cycles >> 32)))
      return fail(vm, SEMI_EFAULT);
    return 0;
  case SYS_TICKFREQ:
    return (uint32_t)clock_hz(vm);
  default:
    return fail(vm, SEMI_ENOENT);
  }
}

bool vm_bkpt(struct sonde_vm *vm, uint8_t imm)
{
  if (imm != 0xAB) {
    /* A debug event: halt, DebugMonitor or HardFault (dbg_halt.c). */
    return vm_dbgh_breakpoint(vm);
  }
  vm->cpu.r[0] = semihost(vm, vm->cpu.r[0], vm->cpu.r[1]);
  return true;
}
