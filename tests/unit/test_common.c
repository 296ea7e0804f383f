/* Error strings, diagnostics and version of src/common. */
#include "check.h"
#include "sonde/common.h"

static void test_strerror(void)
{
  CHECK_EQ_STR(sonde_strerror(SONDE_OK), "success");
  CHECK_EQ_STR(sonde_strerror(SONDE_E_TRUNCATED), "input is truncated");
  CHECK_EQ_STR(sonde_strerror(SONDE_E_FAULT), "target fault");
  CHECK_EQ_STR(sonde_strerror(-999), "unknown error");
  CHECK_EQ_STR(sonde_strerror(5), "unknown error");
}

static void test_diag(void)
{
  struct sonde_diag d;
  sonde_diag_clear(&d);
  CHECK_EQ_STR(d.msg, "");
  CHECK_EQ_I(sonde_diag_set(&d, SONDE_E_FORMAT, "%s: offset %d", "x.bin", 17), SONDE_E_FORMAT);
  CHECK_EQ_STR(d.msg, "x.bin: offset 17");
  CHECK_EQ_I(sonde_diag_set(NULL, SONDE_E_IO, "ignored"), SONDE_E_IO);
}

static void test_version(void)
{
  CHECK_EQ_U(sonde_version_number(), SONDE_VERSION_NUMBER);
  CHECK_EQ_STR(sonde_version_string(), "0.1.0");
}

int main(void)
{
  RUN(test_strerror);
  RUN(test_diag);
  RUN(test_version);
  return check_summary();
}
