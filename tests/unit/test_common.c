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

struct sbuf {
  char b[256];
  size_t n;
};

static void put(void *ctx, const char *p, size_t n)
{
  struct sbuf *s = ctx;
  for (size_t i = 0; i < n && s->n < sizeof s->b - 1; i++)
    s->b[s->n++] = p[i];
  s->b[s->n] = 0;
}

static const char *quote(const char *in)
{
  static struct sbuf s;
  s.n = 0;
  s.b[0] = 0;
  sonde_json_quote(in, put, &s);
  return s.b;
}

/* JSON string literals are always valid UTF-8 JSON, whatever the bytes. */
static void test_json_quote(void)
{
  CHECK_EQ_STR(quote("plain"), "\"plain\"");
  CHECK_EQ_STR(quote(NULL), "\"\"");
  CHECK_EQ_STR(quote("a\"b\\c\n\r\t"), "\"a\\\"b\\\\c\\n\\r\\t\"");
  CHECK_EQ_STR(quote("\x01\x1f"), "\"\\u0001\\u001f\"");
  CHECK_EQ_STR(quote("del\x7f"), "\"del\\u007f\"");
  CHECK_EQ_STR(quote("\xff\xfe"), "\"\\u00ff\\u00fe\"");          /* never UTF-8 */
  CHECK_EQ_STR(quote("caf\xc3\xa9"), "\"caf\xc3\xa9\"");             /* well-formed: kept */
  CHECK_EQ_STR(quote("\xe2\x82\xac\xf0\x9f\x98\x80"), "\"\xe2\x82\xac\xf0\x9f\x98\x80\"");
  CHECK_EQ_STR(quote("\xc3"), "\"\\u00c3\"");                         /* cut sequence */
  CHECK_EQ_STR(quote("\xc0\xaf"), "\"\\u00c0\\u00af\"");          /* overlong '/' */
  CHECK_EQ_STR(quote("\xed\xa0\x80"), "\"\\u00ed\\u00a0\\u0080\""); /* surrogate */
  CHECK_EQ_STR(quote("\xf4\x90\x80\x80"), "\"\\u00f4\\u0090\\u0080\\u0080\""); /* > U+10FFFF */
}

int main(void)
{
  RUN(test_json_quote);
  RUN(test_strerror);
  RUN(test_diag);
  RUN(test_version);
  return check_summary();
}
