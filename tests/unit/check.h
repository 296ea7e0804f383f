/* A small unit-test harness: each test file is one executable registered with
 * CTest. Tests are functions `static void test_x(void)` listed in main via
 * RUN(test_x). Checks record failures and go on, so one run shows every
 * mismatch; the executable prints "N passed, N failed" and exits non-zero on any
 * failure.
 *
 *   #include "check.h"
 *   static void test_add(void) { CHECK_EQ_U(1 + 1, 2); }
 *   int main(void) { RUN(test_add); return check_summary(); }
 */
#ifndef SONDE_TEST_CHECK_H
#define SONDE_TEST_CHECK_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check_passed, check_failed, check_cur_failed;
static const char *check_cur_name = "";

#define CHECK_FAIL_(...)                                                  \
  do {                                                                    \
    fprintf(stderr, "%s:%d: %s: ", __FILE__, __LINE__, check_cur_name);   \
    fprintf(stderr, __VA_ARGS__);                                         \
    fputc('\n', stderr);                                                  \
    check_cur_failed++;                                                   \
  } while (0)

#define CHECK(cond)                                   \
  do {                                                \
    if (!(cond))                                      \
      CHECK_FAIL_("check failed: %s", #cond);         \
  } while (0)

#define CHECK_EQ_U(a, b)                                                        \
  do {                                                                          \
    unsigned long long a_ = (unsigned long long)(a), b_ = (unsigned long long)(b); \
    if (a_ != b_)                                                               \
      CHECK_FAIL_("%s == %s: 0x%llx (%llu) != 0x%llx (%llu)", #a, #b, a_, a_, b_, b_); \
  } while (0)

#define CHECK_EQ_I(a, b)                                                   \
  do {                                                                     \
    long long a_ = (long long)(a), b_ = (long long)(b);                    \
    if (a_ != b_)                                                          \
      CHECK_FAIL_("%s == %s: %lld != %lld", #a, #b, a_, b_);               \
  } while (0)

#define CHECK_EQ_STR(a, b)                                                 \
  do {                                                                     \
    const char *a_ = (a), *b_ = (b);                                       \
    if (!a_ || !b_ || strcmp(a_, b_) != 0)                                 \
      CHECK_FAIL_("%s == %s: \"%s\" != \"%s\"", #a, #b, a_ ? a_ : "(null)", \
                  b_ ? b_ : "(null)");                                     \
  } while (0)

#define CHECK_EQ_MEM(a, b, n)                                              \
  do {                                                                     \
    if (memcmp((a), (b), (n)) != 0)                                        \
      CHECK_FAIL_("%s == %s: memory differs", #a, #b);                     \
  } while (0)

/* Stop the current test (use after a check whose failure makes the rest moot). */
#define REQUIRE(cond)                                 \
  do {                                                \
    if (!(cond)) {                                    \
      CHECK_FAIL_("required: %s", #cond);             \
      return;                                         \
    }                                                 \
  } while (0)

#define RUN(fn)                                       \
  do {                                                \
    check_cur_name = #fn;                             \
    check_cur_failed = 0;                             \
    fn();                                             \
    if (check_cur_failed) {                           \
      check_failed++;                                 \
      fprintf(stderr, "FAIL %s\n", #fn);              \
    } else {                                          \
      check_passed++;                                 \
    }                                                 \
  } while (0)

static inline int check_summary(void)
{
  printf("%d passed, %d failed\n", check_passed, check_failed);
  return check_failed ? 1 : 0;
}

/* Path of a file in the repository's test data (tests/data, SONDE_TESTDATA set
 * by CMakeLists.txt); tests that need it fail loudly when it is missing. */
static inline const char *check_testdata(const char *rel)
{
  static char buf[4096];
  snprintf(buf, sizeof buf, "%s/%s", SONDE_TESTDATA, rel);
  FILE *f = fopen(buf, "rb");
  if (!f) {
    fprintf(stderr, "missing test data %s (tests/data: see its README)\n", buf);
    exit(1);
  }
  fclose(f);
  return buf;
}

#endif
