/* The ELF and raw-binary loader (src/vm/loader.c): images built here byte by
 * byte (good and broken), and a real arm-none-eabi-gcc image checked against
 * arm-none-eabi-objcopy's raw binary of it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "sonde/vm.h"

static void w16(uint8_t *p, uint32_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static void w32(uint8_t *p, uint32_t v)
{
  for (int i = 0; i < 4; i++)
    p[i] = (uint8_t)(v >> (8 * i));
}

/* An ELF32 ARM executable with two PT_LOAD segments and a PT_NOTE:
 *   ph0 PT_LOAD  paddr 0x00000000, 16 file bytes (0x10..0x1f), memsz 16
 *   ph1 PT_NOTE  (ignored)
 *   ph2 PT_LOAD  paddr 0x20000100, 4 file bytes (0xa1..0xa4), memsz 12 (8 zeros) */
#define IMG_SIZE 256
static void make_elf(uint8_t *img)
{
  memset(img, 0, IMG_SIZE);
  memcpy(img, "\177ELF", 4);
  img[4] = 1; /* ELFCLASS32 */
  img[5] = 1; /* little-endian */
  img[6] = 1; /* EV_CURRENT */
  w16(img + 16, 2);  /* ET_EXEC */
  w16(img + 18, 40); /* EM_ARM */
  w32(img + 20, 1);
  w32(img + 24, 0x9); /* entry */
  w32(img + 28, 52);  /* phoff */
  w16(img + 40, 52);
  w16(img + 42, 32);
  w16(img + 44, 3);
  uint8_t *ph = img + 52;
  w32(ph + 0, 1);
  w32(ph + 4, 160);
  w32(ph + 8, 0);
  w32(ph + 12, 0);
  w32(ph + 16, 16);
  w32(ph + 20, 16);
  ph += 32;
  w32(ph + 0, 4); /* PT_NOTE with garbage addresses: must be ignored */
  w32(ph + 4, 0xFFFFFF00);
  w32(ph + 12, 0xF0000000);
  w32(ph + 16, 0x1000);
  w32(ph + 20, 0x1000);
  ph += 32;
  w32(ph + 0, 1);
  w32(ph + 4, 176);
  w32(ph + 8, 0x00000010); /* vaddr differs from paddr: paddr is what counts */
  w32(ph + 12, 0x20000100);
  w32(ph + 16, 4);
  w32(ph + 20, 12);
  for (int i = 0; i < 16; i++)
    img[160 + i] = (uint8_t)(0x10 + i);
  for (int i = 0; i < 4; i++)
    img[176 + i] = (uint8_t)(0xa1 + i);
}

static struct sonde_machine *machine;

static struct sonde_vm *new_vm(void)
{
  struct sonde_vm *vm = NULL;
  if (sonde_vm_new(machine, &vm) != 0)
    return NULL;
  return vm;
}

static void test_good_elf(void)
{
  uint8_t img[IMG_SIZE];
  make_elf(img);
  struct sonde_vm *vm = new_vm();
  REQUIRE(vm);
  /* poison the zero-fill area first: the loader must clear it */
  uint8_t ff[16];
  memset(ff, 0xff, sizeof ff);
  REQUIRE(sonde_vm_write_mem(vm, 0x20000100, ff, sizeof ff) == 0);
  CHECK_EQ_I(sonde_vm_load_elf(vm, img, sizeof img, "good.elf"), 0);
  uint8_t buf[16];
  REQUIRE(sonde_vm_read_mem(vm, 0, buf, 16) == 0);
  for (int i = 0; i < 16; i++)
    CHECK_EQ_U(buf[i], 0x10 + i);
  REQUIRE(sonde_vm_read_mem(vm, 0x20000100, buf, 16) == 0);
  static const uint8_t want[16] = {0xa1, 0xa2, 0xa3, 0xa4, 0, 0, 0, 0, 0, 0, 0, 0,
                                   0xff, 0xff, 0xff, 0xff};
  CHECK_EQ_MEM(buf, want, 16);
  sonde_vm_free(vm);
}

/* Apply `edit` to a good image, load it, and expect `err` with `detail` in the message. */
static void expect_error(const char *what, void (*edit)(uint8_t *img, size_t *len), int err,
                         const char *detail)
{
  uint8_t img[IMG_SIZE];
  size_t len = sizeof img;
  make_elf(img);
  edit(img, &len);
  struct sonde_vm *vm = new_vm();
  REQUIRE(vm);
  int rc = sonde_vm_load_elf(vm, img, len, "bad.elf");
  if (rc != err)
    CHECK_FAIL_("%s: rc %d, expected %d (%s)", what, rc, err, sonde_vm_error_detail(vm));
  if (!strstr(sonde_vm_error_detail(vm), detail))
    CHECK_FAIL_("%s: detail \"%s\" lacks \"%s\"", what, sonde_vm_error_detail(vm), detail);
  /* nothing was written: flash still reads as zero */
  uint8_t buf[4] = {1, 1, 1, 1};
  CHECK_EQ_I(sonde_vm_read_mem(vm, 0, buf, 4), 0);
  CHECK_EQ_U(buf[0] | buf[1] | buf[2] | buf[3], 0);
  sonde_vm_free(vm);
}

static void e_magic(uint8_t *img, size_t *len) { img[1] = 'X'; (void)len; }
static void e_class64(uint8_t *img, size_t *len) { img[4] = 2; (void)len; }
static void e_bigendian(uint8_t *img, size_t *len) { img[5] = 2; (void)len; }
static void e_x86(uint8_t *img, size_t *len) { w16(img + 18, 62); (void)len; }
static void e_rel(uint8_t *img, size_t *len) { w16(img + 16, 1); (void)len; }
static void e_trunc_header(uint8_t *img, size_t *len) { *len = 30; (void)img; }
static void e_trunc_phdrs(uint8_t *img, size_t *len) { *len = 100; (void)img; }
static void e_phoff_far(uint8_t *img, size_t *len) { w32(img + 28, 0xFFFFFFF0); (void)len; }
static void e_phnum0(uint8_t *img, size_t *len) { w16(img + 44, 0); (void)len; }
static void e_phentsize(uint8_t *img, size_t *len) { w16(img + 42, 16); (void)len; }
static void e_seg_file(uint8_t *img, size_t *len) { w32(img + 52 + 64 + 4, 254); (void)len; }
static void e_filesz(uint8_t *img, size_t *len) { w32(img + 52 + 64 + 16, 13); (void)len; }
static void e_outside(uint8_t *img, size_t *len) { w32(img + 52 + 64 + 12, 0x30000000); (void)len; }
static void e_straddle(uint8_t *img, size_t *len)
{
  /* the cm3's flash ends at 0x80000: a 16-byte segment at 0x7fff8 spills over */
  w32(img + 52 + 12, 0x7fff8);
  (void)len;
}
static void e_wrap(uint8_t *img, size_t *len) { w32(img + 52 + 64 + 12, 0xFFFFFFF8); (void)len; }
static void e_noload(uint8_t *img, size_t *len)
{
  w32(img + 52, 6);
  w32(img + 52 + 64, 6);
  (void)len;
}

static void test_bad_elf(void)
{
  expect_error("magic", e_magic, SONDE_E_FORMAT, "bad.elf: offset 0: not an ELF file");
  expect_error("class", e_class64, SONDE_E_UNSUPPORTED, "not a 32-bit ELF");
  expect_error("endian", e_bigendian, SONDE_E_UNSUPPORTED, "not a little-endian");
  expect_error("machine", e_x86, SONDE_E_UNSUPPORTED,
               "offset 18: not an ARM executable (e_machine 62");
  expect_error("type", e_rel, SONDE_E_UNSUPPORTED, "not an executable");
  expect_error("header", e_trunc_header, SONDE_E_TRUNCATED, "truncated ELF header (30 of 52");
  expect_error("phdrs", e_trunc_phdrs, SONDE_E_TRUNCATED, "program header table");
  expect_error("phoff", e_phoff_far, SONDE_E_TRUNCATED, "program header table");
  expect_error("phnum", e_phnum0, SONDE_E_FORMAT, "no program headers");
  expect_error("phentsize", e_phentsize, SONDE_E_FORMAT, "program header size 16");
  expect_error("segment file", e_seg_file, SONDE_E_TRUNCATED,
               "ELF segment 2 (file bytes 0xfe..0x102) extends past the end");
  expect_error("filesz", e_filesz, SONDE_E_FORMAT, "p_filesz 0xd above p_memsz 0xc");
  expect_error("outside", e_outside, SONDE_E_RANGE,
               "bad.elf: ELF segment 2 at 0x30000000 (0xc bytes) is outside every memory region");
  expect_error("straddle", e_straddle, SONDE_E_RANGE,
               "ELF segment 0 at 0x0007fff8 (0x10 bytes) does not fit in the memory of cm3: "
               "0x00080000 is outside");
  expect_error("wrap", e_wrap, SONDE_E_RANGE, "wraps past the top");
  expect_error("no load", e_noload, SONDE_E_FORMAT, "no loadable (PT_LOAD) segments");
}

static void test_every_truncation(void)
{
  /* Every prefix of a good image is rejected cleanly (or, past the last
   * segment byte, accepted), never read out of bounds (ASan checks that). */
  uint8_t img[IMG_SIZE];
  make_elf(img);
  for (size_t len = 0; len <= IMG_SIZE; len++) {
    uint8_t *copy = malloc(len ? len : 1);
    memcpy(copy, img, len);
    struct sonde_vm *vm = new_vm();
    REQUIRE(vm);
    int rc = sonde_vm_load_elf(vm, copy, len, "t.elf");
    if (len >= 180)
      CHECK_EQ_I(rc, 0);
    else if (rc >= 0)
      CHECK_FAIL_("prefix of %zu bytes accepted", len);
    sonde_vm_free(vm);
    free(copy);
  }
}

static void test_binary(void)
{
  struct sonde_vm *vm = new_vm();
  REQUIRE(vm);
  uint8_t data[6] = {1, 2, 3, 4, 5, 6};
  CHECK_EQ_I(sonde_vm_load_binary(vm, data, sizeof data, 0x20001000), 0);
  uint8_t buf[6];
  REQUIRE(sonde_vm_read_mem(vm, 0x20001000, buf, 6) == 0);
  CHECK_EQ_MEM(buf, data, 6);
  CHECK_EQ_I(sonde_vm_load_binary(vm, data, sizeof data, 0x1FFFFFFE), SONDE_E_RANGE);
  CHECK(strstr(sonde_vm_error_detail(vm), "0x1ffffffe is outside every memory region") != NULL);
  CHECK_EQ_I(sonde_vm_load_binary(vm, data, sizeof data, 0xFFFFFFFC), SONDE_E_RANGE);
  CHECK_EQ_I(sonde_vm_load_binary(vm, data, 0, 0), SONDE_E_FORMAT);
  sonde_vm_free(vm);
}

#ifdef SONDE_FIRMWARE_DIR
static uint8_t *read_file(const char *path, size_t *len)
{
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *buf = malloc((size_t)n + 1);
  *len = fread(buf, 1, (size_t)n, f);
  fclose(f);
  return buf;
}
#endif

/* A real image from arm-none-eabi-gcc: what the loader put in flash equals
 * arm-none-eabi-objcopy -O binary of the same ELF (built by firmware/). */
static void test_real_firmware(void)
{
#ifdef SONDE_FIRMWARE_DIR
  size_t elf_len, bin_len;
  uint8_t *elf = read_file(SONDE_FIRMWARE_DIR "/hello.elf", &elf_len);
  uint8_t *bin = read_file(SONDE_FIRMWARE_DIR "/hello.bin", &bin_len);
  REQUIRE(elf && bin && bin_len > 64);
  struct sonde_vm *vm = new_vm();
  REQUIRE(vm);
  CHECK_EQ_I(sonde_vm_load_elf(vm, elf, elf_len, "hello.elf"), 0);
  uint8_t *mem = malloc(bin_len);
  REQUIRE(sonde_vm_read_mem(vm, 0, mem, bin_len) == 0);
  CHECK_EQ_MEM(mem, bin, bin_len);
  /* the vector table's initial SP is the top of the cm3's SRAM */
  CHECK_EQ_U(mem[0] | mem[1] << 8 | mem[2] << 16 | (uint32_t)mem[3] << 24, 0x20020000);
  free(mem);
  sonde_vm_free(vm);
  free(elf);
  free(bin);
#endif
}

int main(void)
{
  if (sonde_machine_builtin("cm3", &machine) != 0) {
    fprintf(stderr, "no built-in machine cm3\n");
    return 1;
  }
  RUN(test_good_elf);
  RUN(test_bad_elf);
  RUN(test_every_truncation);
  RUN(test_binary);
  RUN(test_real_firmware);
  sonde_machine_free(machine);
  return check_summary();
}
