/* The VM bus: fast and slow paths, wait states, read-only memory, devices,
 * bit-band aliases, debug access. */
#include "check.h"
#include "vm/bus.h"
#include "sonde/common.h"

static uint32_t dev_reg[4];
static int dev_reads;
static int dev_read(void *ctx, struct sonde_vm *vm, uint32_t off, unsigned size, uint32_t *v,
                    bool debug)
{
  (void)ctx; (void)vm;
  if (!debug)
    dev_reads++;
  *v = dev_reg[off / 4] >> ((off & 3) * 8);
  return VM_BUS_OK;
}
static int dev_write(void *ctx, struct sonde_vm *vm, uint32_t off, unsigned size, uint32_t v,
                     bool debug)
{
  (void)ctx; (void)vm; (void)debug;
  if (size != 4)
    return VM_BUS_ERROR;
  dev_reg[off / 4] = v;
  return VM_BUS_OK;
}
static const struct vm_device_ops dev_ops = {"test", dev_read, dev_write};

static struct vm_bus bus;

static void setup(void)
{
  vm_bus_free(&bus);
  vm_bus_init(&bus);
  CHECK_EQ_I(vm_bus_add_region(&bus, "flash", 0x0, 0x80000, 2, 0,
                               VM_REGION_READONLY | VM_REGION_EXEC), 0);
  CHECK_EQ_I(vm_bus_add_region(&bus, "sram", 0x20000000, 0x20000, 0, 0,
                               VM_REGION_EXEC | VM_REGION_RETAIN), 0);
  CHECK_EQ_I(vm_bus_add_device(&bus, 0x40001000, 0x10, &dev_ops, NULL), 0);
  bus.bitband = true;
}

static void test_memory(void)
{
  setup();
  uint32_t v = 0;
  CHECK_EQ_I(vm_bus_write(NULL, &bus, 0x20000010, 4, 0xdeadbeef), VM_BUS_OK);
  CHECK_EQ_I(vm_bus_read(NULL, &bus, 0x20000010, 4, &v), VM_BUS_OK);
  CHECK_EQ_U(v, 0xdeadbeef);
  CHECK_EQ_I(vm_bus_read(NULL, &bus, 0x20000011, 2, &v), VM_BUS_OK);
  CHECK_EQ_U(v, 0xadbe);
  CHECK_EQ_I(vm_bus_read(NULL, &bus, 0x20000013, 1, &v), VM_BUS_OK);
  CHECK_EQ_U(v, 0xde);
  /* last word of SRAM, and one past it */
  CHECK_EQ_I(vm_bus_write(NULL, &bus, 0x2001fffc, 4, 1), VM_BUS_OK);
  CHECK_EQ_I(vm_bus_write(NULL, &bus, 0x2001fffe, 4, 1), VM_BUS_ERROR);
  CHECK_EQ_I(vm_bus_read(NULL, &bus, 0x20020000, 4, &v), VM_BUS_ERROR);
  CHECK_EQ_I(vm_bus_read(NULL, &bus, 0x10000000, 4, &v), VM_BUS_ERROR);
}

static void test_flash(void)
{
  setup();
  static const uint8_t img[] = {1, 2, 3, 4, 5, 6, 7, 8};
  CHECK_EQ_I(vm_bus_load(&bus, 0x100, img, sizeof img, NULL), VM_BUS_OK);
  uint32_t v = 0;
  vm_bus_take_stalls(&bus);
  CHECK_EQ_I(vm_bus_read(NULL, &bus, 0x104, 4, &v), VM_BUS_OK);
  CHECK_EQ_U(v, 0x08070605);
  CHECK_EQ_U(vm_bus_take_stalls(&bus), 2); /* flash wait states */
  CHECK_EQ_I(vm_bus_write(NULL, &bus, 0x104, 4, 0), VM_BUS_ERROR); /* read-only */
  uint32_t bad = 0;
  CHECK_EQ_I(vm_bus_load(&bus, 0x7fffc, img, sizeof img, &bad), VM_BUS_ERROR);
  CHECK_EQ_U(bad, 0x80000);
  uint32_t avail = 0;
  unsigned ws = 0;
  const uint8_t *p = vm_bus_code_ptr(&bus, 0x100, &avail, &ws);
  REQUIRE(p);
  CHECK_EQ_U(p[0], 1);
  CHECK_EQ_U(avail, 0x80000 - 0x100);
  CHECK_EQ_U(ws, 2);
  CHECK(vm_bus_code_ptr(&bus, 0x40001000, NULL, NULL) == NULL);
}

static void test_device(void)
{
  setup();
  uint32_t v = 0;
  dev_reads = 0;
  CHECK_EQ_I(vm_bus_write(NULL, &bus, 0x40001004, 4, 0x12345678), VM_BUS_OK);
  CHECK_EQ_U(dev_reg[1], 0x12345678);
  CHECK_EQ_I(vm_bus_read(NULL, &bus, 0x40001004, 4, &v), VM_BUS_OK);
  CHECK_EQ_U(v, 0x12345678);
  CHECK_EQ_I(vm_bus_read(NULL, &bus, 0x40001006, 2, &v), VM_BUS_OK);
  CHECK_EQ_U(v, 0x1234);
  CHECK_EQ_I(dev_reads, 2);
  CHECK_EQ_I(vm_bus_read(NULL, &bus, 0x40001005, 2, &v), VM_BUS_ERROR); /* unaligned */
  CHECK_EQ_I(vm_bus_write(NULL, &bus, 0x40001004, 2, 0), VM_BUS_ERROR); /* device refuses */
  CHECK_EQ_I(vm_bus_read(NULL, &bus, 0x40001010, 4, &v), VM_BUS_ERROR); /* past the end */
  uint8_t buf[8];
  CHECK_EQ_I(vm_bus_debug_read(NULL, &bus, 0x40001000, buf, 8), VM_BUS_OK);
  CHECK_EQ_I(dev_reads, 2); /* debug reads are not counted as core reads */
  CHECK_EQ_U(buf[4], 0x78);
  /* overlapping additions are refused */
  CHECK_EQ_I(vm_bus_add_device(&bus, 0x4000100c, 0x10, &dev_ops, NULL), SONDE_E_ARG);
  CHECK_EQ_I(vm_bus_add_region(&bus, "x", 0x1fffff00, 0x200, 0, 0, 0), SONDE_E_ARG);
}

static void test_bitband(void)
{
  setup();
  uint32_t v = 0;
  /* bit 3 of byte 0x20000004: alias 0x22000000 + 4*32 + 3*4 */
  CHECK_EQ_I(vm_bus_write(NULL, &bus, 0x2200008c, 4, 1), VM_BUS_OK);
  CHECK_EQ_I(vm_bus_read(NULL, &bus, 0x20000004, 1, &v), VM_BUS_OK);
  CHECK_EQ_U(v, 0x08);
  CHECK_EQ_I(vm_bus_read(NULL, &bus, 0x2200008c, 4, &v), VM_BUS_OK);
  CHECK_EQ_U(v, 1);
  CHECK_EQ_I(vm_bus_read(NULL, &bus, 0x22000088, 4, &v), VM_BUS_OK);
  CHECK_EQ_U(v, 0);
  CHECK_EQ_I(vm_bus_write(NULL, &bus, 0x2200008c, 4, 0), VM_BUS_OK);
  CHECK_EQ_I(vm_bus_read(NULL, &bus, 0x20000004, 1, &v), VM_BUS_OK);
  CHECK_EQ_U(v, 0);
}

/* Devices that remember which of them an access reached (ctx). */
static uint32_t seen_reg[3];
static int seen_write(void *ctx, struct sonde_vm *vm, uint32_t off, unsigned size, uint32_t v,
                      bool debug)
{
  (void)vm; (void)off; (void)size; (void)debug;
  seen_reg[*(const int *)ctx] = v;
  return VM_BUS_OK;
}
static int seen_read(void *ctx, struct sonde_vm *vm, uint32_t off, unsigned size, uint32_t *v,
                     bool debug)
{
  (void)vm; (void)off; (void)size; (void)debug;
  *v = seen_reg[*(const int *)ctx];
  return VM_BUS_OK;
}
static const struct vm_device_ops seen_ops = {"seen", seen_read, seen_write};

/* The slow path remembers the device it found per 4 KiB block (bus.c): two
 * devices whose blocks share a slot, memory and a hole in that slot too,
 * accessed in turn, each reach their own. */
static void test_devices_seen(void)
{
  setup();
  static const int id[3] = {0, 1, 2};
  CHECK_EQ_I(vm_bus_add_device(&bus, 0x40011000, 0x100, &seen_ops, (void *)&id[0]), 0);
  CHECK_EQ_I(vm_bus_add_device(&bus, 0x40021000, 0x100, &seen_ops, (void *)&id[1]), 0);
  CHECK_EQ_I(vm_bus_add_device(&bus, 0x40012000, 0x100, &seen_ops, (void *)&id[2]), 0);
  uint32_t v = 0;
  for (uint32_t round = 1; round <= 3; round++) {
    CHECK_EQ_I(vm_bus_write(NULL, &bus, 0x40011004, 4, 0x100 + round), VM_BUS_OK);
    CHECK_EQ_I(vm_bus_write(NULL, &bus, 0x40021008, 4, 0x200 + round), VM_BUS_OK);
    CHECK_EQ_I(vm_bus_write(NULL, &bus, 0x40012000, 4, 0x300 + round), VM_BUS_OK);
    CHECK_EQ_U(seen_reg[0], 0x100 + round);
    CHECK_EQ_U(seen_reg[1], 0x200 + round);
    CHECK_EQ_U(seen_reg[2], 0x300 + round);
    CHECK_EQ_I(vm_bus_read(NULL, &bus, 0x40011000, 4, &v), VM_BUS_OK);
    CHECK_EQ_U(v, 0x100 + round);
    /* the same slot: past the device's end, a hole, and a bit-band alias */
    CHECK_EQ_I(vm_bus_read(NULL, &bus, 0x40011100, 4, &v), VM_BUS_ERROR);
    CHECK_EQ_I(vm_bus_write(NULL, &bus, 0x40031000, 4, 1), VM_BUS_ERROR);
    CHECK_EQ_I(vm_bus_read(NULL, &bus, 0x40021000, 4, &v), VM_BUS_OK);
    CHECK_EQ_U(v, 0x200 + round);
    CHECK_EQ_I(vm_bus_write(NULL, &bus, 0x2200008c, 4, round & 1), VM_BUS_OK);
    CHECK_EQ_I(vm_bus_read(NULL, &bus, 0x20000004, 1, &v), VM_BUS_OK);
    CHECK_EQ_U(v, (round & 1) ? 0x08 : 0);
    CHECK_EQ_I(vm_bus_read(NULL, &bus, 0x40001004, 4, &v), VM_BUS_OK); /* test_device's */
    CHECK_EQ_U(v, dev_reg[1]);
  }
}

static int watched;
static void on_code_written(struct sonde_vm *vm, uint32_t addr, unsigned size)
{
  (void)vm; (void)addr;
  watched += (int)size;
}

static void test_code_watch(void)
{
  setup();
  bus.code_written = on_code_written;
  watched = 0;
  CHECK_EQ_I(vm_bus_write(NULL, &bus, 0x20000100, 4, 1), VM_BUS_OK);
  CHECK_EQ_I(watched, 0);
  vm_bus_watch_code(&bus, 0x20000100);
  CHECK_EQ_I(vm_bus_write(NULL, &bus, 0x20000100, 2, 1), VM_BUS_OK);
  CHECK_EQ_I(watched, 2);
  uint32_t v;
  CHECK_EQ_I(vm_bus_read(NULL, &bus, 0x20000100, 4, &v), VM_BUS_OK);
  CHECK_EQ_U(v, 1);
}

int main(void)
{
  RUN(test_memory);
  RUN(test_flash);
  RUN(test_device);
  RUN(test_bitband);
  RUN(test_devices_seen);
  RUN(test_code_watch);
  vm_bus_free(&bus);
  return check_summary();
}
