/* Byte source tests: names, files, pipes (non-blocking), a TCP server on
 * 127.0.0.1 that sends in bursts and disconnects (with and without
 * reconnect), and a serial source through a pseudo-terminal. */
#define _GNU_SOURCE
#include "check.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "sonde/swo.h"

static void test_parse_name(void)
{
  enum sonde_swo_source_kind k;
  char h[64];
  uint16_t port;
  uint32_t baud;
  CHECK_EQ_I(sonde_swo_source_parse_name("tcp:localhost:3443", &k, h, sizeof h, &port, &baud), 0);
  CHECK_EQ_U(k, SONDE_SWO_SOURCE_TCP);
  CHECK_EQ_STR(h, "localhost");
  CHECK_EQ_U(port, 3443);
  CHECK_EQ_I(sonde_swo_source_parse_name("tcp:[::1]:2332", &k, h, sizeof h, &port, &baud), 0);
  CHECK_EQ_STR(h, "::1");
  CHECK_EQ_U(port, 2332);
  CHECK_EQ_I(sonde_swo_source_parse_name("serial:/dev/ttyUSB0@12000000", &k, h, sizeof h, &port,
                                         &baud),
             0);
  CHECK_EQ_U(k, SONDE_SWO_SOURCE_SERIAL);
  CHECK_EQ_STR(h, "/dev/ttyUSB0");
  CHECK_EQ_U(baud, 12000000);
  CHECK_EQ_I(sonde_swo_source_parse_name("serial:/dev/ttyACM0", &k, h, sizeof h, NULL, &baud), 0);
  CHECK_EQ_U(baud, 0);
  CHECK_EQ_I(sonde_swo_source_parse_name("-", &k, NULL, 0, NULL, NULL), 0);
  CHECK_EQ_U(k, SONDE_SWO_SOURCE_STDIN);
  CHECK_EQ_I(sonde_swo_source_parse_name("file:a:b.bin", &k, h, sizeof h, NULL, NULL), 0);
  CHECK_EQ_U(k, SONDE_SWO_SOURCE_FILE);
  CHECK_EQ_STR(h, "a:b.bin");
  CHECK_EQ_I(sonde_swo_source_parse_name("capture.bin", &k, h, sizeof h, NULL, NULL), 0);
  CHECK_EQ_STR(h, "capture.bin");
  const char *bad[] = {"tcp:host", "tcp::80", "tcp:host:0", "tcp:host:70000", "tcp:host:x",
                       "tcp:::1:80", "tcp:[::1]80", "serial:", "serial:/dev/x@", "serial:/dev/x@-3",
                       "serial:/dev/x@9600x", "", "file:"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    int r = sonde_swo_source_parse_name(bad[i], &k, h, sizeof h, &port, &baud);
    if (r != SONDE_E_ARG)
      fprintf(stderr, "  accepted bad name '%s'\n", bad[i]);
    CHECK_EQ_I(r, SONDE_E_ARG);
  }
  struct sonde_swo_source *s = NULL;
  struct sonde_diag d = {{0}};
  CHECK_EQ_I(sonde_swo_source_open("tcp:nowhere", NULL, &s, &d), SONDE_E_ARG);
  CHECK(strstr(d.msg, "bad input name") != NULL);
  CHECK(s == NULL);
}

static void test_file(void)
{
  char path[] = "/tmp/sonde_swo_srcXXXXXX";
  int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  uint8_t data[10000];
  for (size_t i = 0; i < sizeof data; i++)
    data[i] = (uint8_t)(i * 7);
  REQUIRE(write(fd, data, sizeof data) == (ssize_t)sizeof data);
  close(fd);
  struct sonde_swo_source *s = NULL;
  struct sonde_diag d = {{0}};
  REQUIRE(sonde_swo_source_open(path, NULL, &s, &d) == 0);
  CHECK_EQ_U(sonde_swo_source_get_kind(s), SONDE_SWO_SOURCE_FILE);
  CHECK_EQ_STR(sonde_swo_source_name(s), path);
  uint8_t buf[10000];
  size_t got = 0;
  ptrdiff_t r;
  while ((r = sonde_swo_source_read(s, buf + got, got + 777 > sizeof buf ? sizeof buf - got : 777)) > 0)
    got += (size_t)r;
  CHECK_EQ_I(r, 0);
  CHECK_EQ_U(got, sizeof data);
  CHECK_EQ_MEM(buf, data, sizeof data);
  CHECK_EQ_U(sonde_swo_source_offset(s), sizeof data);
  CHECK_EQ_I(sonde_swo_source_read(s, buf, 10), 0); /* EOF stays EOF */
  CHECK(sonde_swo_source_fd(s) >= 0);
  sonde_swo_source_free(s);
  unlink(path);
  CHECK_EQ_I(sonde_swo_source_open("/nonexistent/swo.bin", NULL, &s, &d), SONDE_E_IO);
  CHECK(strstr(d.msg, "/nonexistent/swo.bin") != NULL);
  CHECK(strstr(d.msg, "No such file") != NULL);
  CHECK_EQ_I(sonde_swo_source_open("/tmp", NULL, &s, &d), SONDE_E_IO);
  CHECK(strstr(d.msg, "directory") != NULL);
  sonde_swo_source_free(NULL);
}

static void test_pipe_nonblocking(void)
{
  int p[2];
  REQUIRE(pipe(p) == 0);
  struct sonde_swo_source_options o;
  sonde_swo_source_options_init(&o);
  o.nonblocking = true;
  struct sonde_swo_source *s = NULL;
  REQUIRE(sonde_swo_source_from_fd(p[0], "pipe", true, &o, &s) == 0);
  uint8_t buf[16];
  CHECK_EQ_I(sonde_swo_source_read(s, buf, sizeof buf), SONDE_E_AGAIN);
  REQUIRE(write(p[1], "abc", 3) == 3);
  struct pollfd pfd = {sonde_swo_source_fd(s), POLLIN, 0};
  CHECK_EQ_I(poll(&pfd, 1, 1000), 1);
  CHECK_EQ_I(sonde_swo_source_read(s, buf, sizeof buf), 3);
  CHECK_EQ_MEM(buf, "abc", 3);
  close(p[1]);
  CHECK_EQ_I(sonde_swo_source_read(s, buf, sizeof buf), 0);
  CHECK_EQ_U(sonde_swo_source_offset(s), 3);
  sonde_swo_source_free(s); /* closes p[0] */
  CHECK(fcntl(p[0], F_GETFD) == -1);
}

/* ---- TCP -------------------------------------------------------------------- */

struct server {
  int lfd;
  uint16_t port;
  int sessions;          /* connections to serve, then close the listener */
  const uint8_t *data;
  size_t len;            /* bytes per session */
  size_t burst;
};

static void sleep_ms(unsigned ms)
{
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static void *server_main(void *arg)
{
  struct server *sv = arg;
  for (int k = 0; k < sv->sessions; k++) {
    int c = accept(sv->lfd, NULL, NULL);
    if (c < 0) {
      close(sv->lfd);
      break;
    }
    const uint8_t *d = sv->data + (size_t)k * sv->len;
    for (size_t i = 0; i < sv->len; i += sv->burst) {
      size_t n = sv->len - i < sv->burst ? sv->len - i : sv->burst;
      if (write(c, d + i, n) != (ssize_t)n)
        break;
      sleep_ms(2);
    }
    if (k == sv->sessions - 1) /* no more listener: further connects are refused */
      close(sv->lfd);
    close(c); /* disconnect */
  }
  return NULL;
}

static int start_server(struct server *sv)
{
  sv->lfd = socket(AF_INET, SOCK_STREAM, 0);
  if (sv->lfd < 0)
    return -1;
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(sv->lfd, (struct sockaddr *)&a, sizeof a) != 0 || listen(sv->lfd, 4) != 0)
    return -1;
  socklen_t al = sizeof a;
  getsockname(sv->lfd, (struct sockaddr *)&a, &al);
  sv->port = ntohs(a.sin_port);
  return 0;
}

static size_t read_all(struct sonde_swo_source *s, uint8_t *buf, size_t cap)
{
  size_t got = 0;
  ptrdiff_t r;
  while (got < cap && (r = sonde_swo_source_read(s, buf + got, cap - got)) != 0) {
    if (r == SONDE_E_AGAIN) {
      struct pollfd pfd = {sonde_swo_source_fd(s), POLLIN, 0};
      if (pfd.fd < 0)
        sleep_ms(sonde_swo_source_retry_ms(s) + 1);
      else
        poll(&pfd, 1, 1000);
      continue;
    }
    if (r < 0)
      break;
    got += (size_t)r;
  }
  return got;
}

static void tcp_case(bool reconnect, bool nonblocking)
{
  enum { LEN = 50000 };
  static uint8_t data[2 * LEN], buf[2 * LEN + 16];
  for (size_t i = 0; i < sizeof data; i++)
    data[i] = (uint8_t)(i * 131 + (i >> 8));
  struct server sv = {0};
  REQUIRE(start_server(&sv) == 0);
  sv.sessions = reconnect ? 2 : 1;
  sv.data = data;
  sv.len = LEN;
  sv.burst = 4099;
  pthread_t th;
  REQUIRE(pthread_create(&th, NULL, server_main, &sv) == 0);
  char name[64];
  snprintf(name, sizeof name, "tcp:127.0.0.1:%u", (unsigned)sv.port);
  struct sonde_swo_source_options o;
  sonde_swo_source_options_init(&o);
  o.reconnect = reconnect;
  o.nonblocking = nonblocking;
  o.reconnect_max_attempts = 3;
  o.backoff_initial_ms = 10;
  o.backoff_max_ms = 40;
  struct sonde_swo_source *s = NULL;
  struct sonde_diag d = {{0}};
  int r = sonde_swo_source_open(name, &o, &s, &d);
  if (r)
    fprintf(stderr, "  %s\n", d.msg);
  REQUIRE(r == 0);
  CHECK_EQ_U(sonde_swo_source_get_kind(s), SONDE_SWO_SOURCE_TCP);
  size_t got = read_all(s, buf, sizeof buf);
  size_t want = reconnect ? 2 * LEN : LEN;
  CHECK_EQ_U(got, want);
  CHECK(got == want && memcmp(buf, data, want) == 0);
  CHECK_EQ_U(sonde_swo_source_offset(s), want);
  CHECK_EQ_U(sonde_swo_source_reconnects(s), reconnect ? 1 : 0);
  CHECK_EQ_I(sonde_swo_source_read(s, buf, 16), 0);
  pthread_join(th, NULL);
  sonde_swo_source_free(s);
}

static void test_tcp(void)
{
  tcp_case(false, false);
  tcp_case(true, false);
  tcp_case(true, true);
  tcp_case(false, true);
  /* Nobody listening: a clear error. */
  struct server sv = {0};
  REQUIRE(start_server(&sv) == 0);
  close(sv.lfd);
  char name[64];
  snprintf(name, sizeof name, "tcp:127.0.0.1:%u", (unsigned)sv.port);
  struct sonde_swo_source *s = NULL;
  struct sonde_diag d = {{0}};
  CHECK_EQ_I(sonde_swo_source_open(name, NULL, &s, &d), SONDE_E_IO);
  CHECK(strstr(d.msg, "refused") != NULL);
  CHECK(strstr(d.msg, name) != NULL);
  CHECK_EQ_I(sonde_swo_source_open("tcp:no-such-host.invalid:3443", NULL, &s, &d), SONDE_E_IO);
  CHECK(strstr(d.msg, "cannot resolve") != NULL);
}

/* A server that never accepts and whose accept queue is full: SYNs are
 * dropped, so connect() hangs until the source's timeout. */
static void test_tcp_timeout(void)
{
  struct server sv = {0};
  REQUIRE(start_server(&sv) == 0);
  REQUIRE(listen(sv.lfd, 0) == 0);
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(sv.port);
  int fill[4];
  for (int i = 0; i < 4; i++) {
    fill[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    connect(fill[i], (struct sockaddr *)&a, sizeof a);
  }
  sleep_ms(50);
  char name[64];
  snprintf(name, sizeof name, "tcp:127.0.0.1:%u", (unsigned)sv.port);
  struct sonde_swo_source_options o;
  sonde_swo_source_options_init(&o);
  o.connect_timeout_ms = 300;
  struct sonde_swo_source *s = NULL;
  struct sonde_diag d = {{0}};
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  int r = sonde_swo_source_open(name, &o, &s, &d);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double dt = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
  CHECK_EQ_I(r, SONDE_E_IO);
  CHECK(strstr(d.msg, "timed out") != NULL);
  CHECK(dt >= 0.25 && dt < 3.0);
  if (r == 0)
    sonde_swo_source_free(s);
  for (int i = 0; i < 4; i++)
    close(fill[i]);
  close(sv.lfd);
}

/* "-" reads standard input and does not close it. */
static void test_stdin(void)
{
  int p[2];
  REQUIRE(pipe(p) == 0);
  int saved = dup(0);
  REQUIRE(dup2(p[0], 0) == 0);
  close(p[0]);
  struct sonde_swo_source_options o;
  sonde_swo_source_options_init(&o);
  o.nonblocking = true;
  struct sonde_swo_source *s = NULL;
  REQUIRE(sonde_swo_source_open("-", &o, &s, NULL) == 0);
  uint8_t b0[4];
  CHECK_EQ_I(sonde_swo_source_read(s, b0, sizeof b0), SONDE_E_AGAIN);
  CHECK((fcntl(0, F_GETFL) & O_NONBLOCK) == 0); /* the shared description is untouched */
  REQUIRE(write(p[1], "swo", 3) == 3);
  close(p[1]);
  CHECK_EQ_U(sonde_swo_source_get_kind(s), SONDE_SWO_SOURCE_STDIN);
  uint8_t buf[8];
  CHECK_EQ_I(sonde_swo_source_read(s, buf, sizeof buf), 3);
  CHECK_EQ_MEM(buf, "swo", 3);
  CHECK_EQ_I(sonde_swo_source_read(s, buf, sizeof buf), 0);
  sonde_swo_source_free(s);
  CHECK(fcntl(0, F_GETFD) != -1); /* still open */
  dup2(saved, 0);
  close(saved);
}

/* ---- serial through a pseudo-terminal ---------------------------------------- */

static void test_serial_pty(void)
{
  int m = posix_openpt(O_RDWR | O_NOCTTY);
  REQUIRE(m >= 0);
  REQUIRE(grantpt(m) == 0 && unlockpt(m) == 0);
  char name[128];
  snprintf(name, sizeof name, "serial:%s@2000000", ptsname(m));
  struct sonde_swo_source *s = NULL;
  struct sonde_diag d = {{0}};
  int r = sonde_swo_source_open(name, NULL, &s, &d);
  if (r)
    fprintf(stderr, "  %s\n", d.msg);
  REQUIRE(r == 0);
  CHECK_EQ_U(sonde_swo_source_get_kind(s), SONDE_SWO_SOURCE_SERIAL);
  /* A pty keeps the termios2 speed it is given: the BOTHER path is exercised
   * even though no UART hardware is behind it. */
  CHECK_EQ_U(sonde_swo_source_baud(s), 2000000);
  /* Raw mode: every byte value passes unchanged (no CR/LF mapping, no
   * signals, no flow control, no line buffering). */
  uint8_t data[256], buf[256];
  for (int i = 0; i < 256; i++)
    data[i] = (uint8_t)i;
  REQUIRE(write(m, data, sizeof data) == (ssize_t)sizeof data);
  size_t got = read_all(s, buf, sizeof buf);
  CHECK_EQ_U(got, 256);
  CHECK_EQ_MEM(buf, data, 256);
  /* Hang-up: closing the master gives EOF, not an error. */
  close(m);
  CHECK_EQ_I(sonde_swo_source_read(s, buf, sizeof buf), 0);
  sonde_swo_source_free(s);

  /* An odd rate (not a Bnnn constant) on a fresh pty. */
  m = posix_openpt(O_RDWR | O_NOCTTY);
  REQUIRE(m >= 0 && grantpt(m) == 0 && unlockpt(m) == 0);
  snprintf(name, sizeof name, "serial:%s@3141592", ptsname(m));
  CHECK_EQ_I(sonde_swo_source_open(name, NULL, &s, &d), 0);
  CHECK_EQ_U(sonde_swo_source_baud(s), 3141592);
  sonde_swo_source_free(s);
  close(m);

  /* Not a tty / missing device: clear errors. */
  CHECK_EQ_I(sonde_swo_source_open("serial:/dev/null@115200", NULL, &s, &d), SONDE_E_IO);
  CHECK(strstr(d.msg, "not a terminal") != NULL);
  CHECK_EQ_I(sonde_swo_source_open("serial:/dev/ttyNOPE9@115200", NULL, &s, &d), SONDE_E_IO);
  CHECK(strstr(d.msg, "/dev/ttyNOPE9") != NULL);
}

int main(void)
{
  RUN(test_parse_name);
  RUN(test_file);
  RUN(test_pipe_nonblocking);
  RUN(test_tcp);
  RUN(test_tcp_timeout);
  RUN(test_stdin);
  RUN(test_serial_pty);
  return check_summary();
}
