/* Byte sources for raw SWO: files, stdin, TCP clients (OpenOCD's tpiu/itm
 * TCP output, J-Link's SWO port 2332, orbuculum's 3443) and serial ttys at
 * any baud (Linux termios2 with BOTHER, in serial_linux.c).
 *
 * A source is a pull stream: sonde_swo_source_read() returns a count, 0 at
 * EOF, SONDE_E_AGAIN (non-blocking) or an error. TCP reconnection:
 *
 *   CONNECTED --(peer closed / reset)--> [reconnect off] EOF
 *                                  \---> [reconnect on]  WAITING (backoff)
 *   WAITING --(deadline, connect ok)--> CONNECTED, reconnects++
 *           --(connect failed)--------> WAITING, backoff doubled (<= max)
 *           --(attempts exhausted)----> EOF
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sonde/swo.h"
#include "source_internal.h"

enum tcp_state { T_CONNECTED, T_WAITING, T_DONE };

struct sonde_swo_source {
  enum sonde_swo_source_kind kind;
  struct sonde_swo_source_options opts;
  int fd;
  bool own_fd;
  bool eof;
  uint64_t offset;
  uint64_t reconnects;
  uint32_t baud;
  /* TCP */
  char host[256];
  uint16_t port;
  enum tcp_state tst;
  unsigned attempts;     /* consecutive failed attempts */
  unsigned backoff_ms;
  uint64_t retry_at_ms;  /* monotonic time of the next attempt */
  struct sonde_diag diag;
  char name[];
};

static uint64_t now_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void sonde_swo_source_options_init(struct sonde_swo_source_options *o)
{
  memset(o, 0, sizeof *o);
  o->connect_timeout_ms = 5000;
  o->backoff_initial_ms = 100;
  o->backoff_max_ms = 5000;
}

static void normalize_opts(struct sonde_swo_source_options *o)
{
  if (!o->connect_timeout_ms)
    o->connect_timeout_ms = 5000;
  if (!o->backoff_initial_ms)
    o->backoff_initial_ms = 100;
  if (!o->backoff_max_ms)
    o->backoff_max_ms = 5000;
  if (o->backoff_max_ms < o->backoff_initial_ms)
    o->backoff_max_ms = o->backoff_initial_ms;
}

/* ---- names ----------------------------------------------------------------- */

int sonde_swo_source_parse_name(const char *name, enum sonde_swo_source_kind *kind,
                                char *host_or_dev, size_t cap, uint16_t *port, uint32_t *baud)
{
  if (!name || !*name)
    return SONDE_E_ARG;
  enum sonde_swo_source_kind k;
  const char *body = name;
  size_t blen;
  uint32_t b = 0;
  uint16_t p = 0;
  if (strcmp(name, "-") == 0) {
    k = SONDE_SWO_SOURCE_STDIN;
    blen = 0;
  } else if (strncmp(name, "tcp:", 4) == 0) {
    k = SONDE_SWO_SOURCE_TCP;
    body = name + 4;
    const char *colon;
    if (*body == '[') {
      const char *close = strchr(body, ']');
      if (!close || close[1] != ':')
        return SONDE_E_ARG;
      colon = close + 1;
      body++;
      blen = (size_t)(close - body);
    } else {
      colon = strrchr(body, ':');
      if (!colon)
        return SONDE_E_ARG;
      blen = (size_t)(colon - body);
      if (memchr(body, ':', blen)) /* bare IPv6 needs brackets */
        return SONDE_E_ARG;
    }
    if (blen == 0)
      return SONDE_E_ARG;
    char *end;
    errno = 0;
    unsigned long v = strtoul(colon + 1, &end, 10);
    if (!colon[1] || *end || errno || v == 0 || v > 65535 || colon[1] == '-' || colon[1] == '+')
      return SONDE_E_ARG;
    p = (uint16_t)v;
  } else if (strncmp(name, "serial:", 7) == 0) {
    k = SONDE_SWO_SOURCE_SERIAL;
    body = name + 7;
    const char *at = strrchr(body, '@');
    blen = at ? (size_t)(at - body) : strlen(body);
    if (blen == 0)
      return SONDE_E_ARG;
    if (at) {
      char *end;
      errno = 0;
      unsigned long v = strtoul(at + 1, &end, 10);
      if (!at[1] || *end || errno || v == 0 || v > 0xFFFFFFFFul || at[1] == '-' || at[1] == '+')
        return SONDE_E_ARG;
      b = (uint32_t)v;
    }
  } else {
    k = SONDE_SWO_SOURCE_FILE;
    if (strncmp(name, "file:", 5) == 0)
      body = name + 5;
    blen = strlen(body);
    if (blen == 0)
      return SONDE_E_ARG;
  }
  if (host_or_dev && cap) {
    if (blen >= cap)
      return SONDE_E_ARG;
    memcpy(host_or_dev, body, blen);
    host_or_dev[blen] = '\0';
  }
  if (kind)
    *kind = k;
  if (port)
    *port = p;
  if (baud)
    *baud = b;
  return 0;
}

/* ---- TCP --------------------------------------------------------------------- */

/* Connect with a timeout; returns an fd or a negative error with s->diag set. */
static int tcp_connect(struct sonde_swo_source *s)
{
  char portstr[8];
  snprintf(portstr, sizeof portstr, "%u", (unsigned)s->port);
  struct addrinfo hints, *res = NULL;
  memset(&hints, 0, sizeof hints);
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  int gr = getaddrinfo(s->host, portstr, &hints, &res);
  if (gr != 0)
    return sonde_diag_set(&s->diag, SONDE_E_IO, "%s: cannot resolve '%s': %s", s->name, s->host,
                          gai_strerror(gr));
  int err = ECONNREFUSED;
  int fd = -1;
  for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
    fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
    if (fd < 0) {
      err = errno;
      continue;
    }
    int r = connect(fd, ai->ai_addr, ai->ai_addrlen);
    if (r != 0 && errno == EINPROGRESS) {
      struct pollfd pfd = {fd, POLLOUT, 0};
      int pr;
      do
        pr = poll(&pfd, 1, (int)s->opts.connect_timeout_ms);
      while (pr < 0 && errno == EINTR);
      if (pr == 0) {
        err = ETIMEDOUT;
        r = -1;
      } else if (pr < 0) {
        err = errno;
        r = -1;
      } else {
        int soerr = 0;
        socklen_t sl = sizeof soerr;
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
        r = soerr ? -1 : 0;
        err = soerr;
      }
    } else if (r != 0) {
      err = errno;
    }
    if (r == 0)
      break;
    close(fd);
    fd = -1;
  }
  freeaddrinfo(res);
  if (fd < 0)
    return sonde_diag_set(&s->diag, SONDE_E_IO, "%s: %s", s->name,
                          err == ETIMEDOUT ? "connection timed out" : strerror(err));
  if (!s->opts.nonblocking) {
    int fl = fcntl(fd, F_GETFL);
    fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

/* One reconnect attempt (the deadline has passed). True when connected. */
static bool tcp_attempt(struct sonde_swo_source *s)
{
  int fd = tcp_connect(s);
  if (fd >= 0) {
    s->fd = fd;
    s->tst = T_CONNECTED;
    s->attempts = 0;
    s->backoff_ms = s->opts.backoff_initial_ms;
    s->reconnects++;
    return true;
  }
  s->attempts++;
  if (s->opts.reconnect_max_attempts && s->attempts >= s->opts.reconnect_max_attempts) {
    s->tst = T_DONE;
    return false;
  }
  s->retry_at_ms = now_ms() + s->backoff_ms;
  s->backoff_ms = s->backoff_ms * 2 > s->opts.backoff_max_ms ? s->opts.backoff_max_ms
                                                             : s->backoff_ms * 2;
  return false;
}

static void tcp_lost(struct sonde_swo_source *s)
{
  if (s->fd >= 0)
    close(s->fd);
  s->fd = -1;
  if (!s->opts.reconnect) {
    s->tst = T_DONE;
    return;
  }
  s->tst = T_WAITING;
  s->attempts = 0;
  s->backoff_ms = s->opts.backoff_initial_ms;
  s->retry_at_ms = now_ms(); /* first attempt at once */
}

/* ---- lifecycle --------------------------------------------------------------- */

static struct sonde_swo_source *source_alloc(const char *name,
                                             const struct sonde_swo_source_options *opts)
{
  size_t nl = strlen(name);
  struct sonde_swo_source *s = calloc(1, sizeof *s + nl + 1);
  if (!s)
    return NULL;
  memcpy(s->name, name, nl + 1);
  if (opts)
    s->opts = *opts;
  else
    sonde_swo_source_options_init(&s->opts);
  normalize_opts(&s->opts);
  s->fd = -1;
  return s;
}

int sonde_swo_source_open(const char *name, const struct sonde_swo_source_options *opts,
                          struct sonde_swo_source **out, struct sonde_diag *diag)
{
  if (!out)
    return SONDE_E_ARG;
  *out = NULL;
  enum sonde_swo_source_kind kind;
  char target[4096];
  uint16_t port;
  uint32_t baud;
  if (sonde_swo_source_parse_name(name, &kind, target, sizeof target, &port, &baud) != 0)
    return sonde_diag_set(diag, SONDE_E_ARG,
                          "'%s': bad input name (want PATH, -, tcp:HOST:PORT or "
                          "serial:DEVICE@BAUD)",
                          name ? name : "(null)");
  struct sonde_swo_source *s = source_alloc(name, opts);
  if (!s)
    return sonde_diag_set(diag, SONDE_E_NOMEM, "out of memory");
  s->kind = kind;
  int r = 0;
  switch (kind) {
  case SONDE_SWO_SOURCE_STDIN:
    s->fd = 0;
    s->own_fd = false;
    /* Non-blocking stdin is done with poll() in _read: setting O_NONBLOCK
     * would change the file description the shell shares. */
    break;
  case SONDE_SWO_SOURCE_FILE: {
    int fl = O_RDONLY | O_CLOEXEC | (s->opts.nonblocking ? O_NONBLOCK : 0);
    s->fd = open(target, fl);
    if (s->fd < 0) {
      r = sonde_diag_set(diag, SONDE_E_IO, "'%s': %s", target, strerror(errno));
      break;
    }
    struct stat stt;
    if (fstat(s->fd, &stt) == 0 && S_ISDIR(stt.st_mode)) {
      r = sonde_diag_set(diag, SONDE_E_IO, "'%s': is a directory", target);
      break;
    }
    s->own_fd = true;
    break;
  }
  case SONDE_SWO_SOURCE_TCP: {
    if (strlen(target) >= sizeof s->host) {
      r = sonde_diag_set(diag, SONDE_E_ARG, "%s: host name too long", name);
      break;
    }
    memcpy(s->host, target, strlen(target) + 1);
    s->port = port;
    int fd = tcp_connect(s);
    if (fd < 0) {
      r = sonde_diag_set(diag, fd, "%s", s->diag.msg);
      break;
    }
    s->fd = fd;
    s->own_fd = true;
    s->tst = T_CONNECTED;
    break;
  }
  case SONDE_SWO_SOURCE_SERIAL:
    r = swo_serial_open(target, baud, s->opts.nonblocking, &s->fd, &s->baud, &s->diag);
    if (r < 0)
      sonde_diag_set(diag, r, "%s", s->diag.msg);
    else
      s->own_fd = true;
    break;
  default:
    r = SONDE_E_ARG;
  }
  if (r < 0) {
    if (s->fd >= 0 && kind != SONDE_SWO_SOURCE_STDIN)
      close(s->fd);
    free(s);
    return r;
  }
  *out = s;
  return 0;
}

int sonde_swo_source_from_fd(int fd, const char *label, bool take_ownership,
                             const struct sonde_swo_source_options *opts,
                             struct sonde_swo_source **out)
{
  if (!out || fd < 0)
    return SONDE_E_ARG;
  *out = NULL;
  struct sonde_swo_source *s = source_alloc(label ? label : "fd", opts);
  if (!s)
    return SONDE_E_NOMEM;
  s->kind = SONDE_SWO_SOURCE_FD;
  s->fd = fd;
  s->own_fd = take_ownership;
  if (s->opts.nonblocking)
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  *out = s;
  return 0;
}

void sonde_swo_source_free(struct sonde_swo_source *s)
{
  if (!s)
    return;
  if (s->fd >= 0 && s->own_fd)
    close(s->fd);
  free(s);
}

/* ---- reading ----------------------------------------------------------------- */

ptrdiff_t sonde_swo_source_read(struct sonde_swo_source *s, void *buf, size_t cap)
{
  if (!s || (!buf && cap))
    return SONDE_E_ARG;
  if (cap == 0)
    return 0;
  for (;;) {
    if (s->eof)
      return 0;
    if (s->kind == SONDE_SWO_SOURCE_TCP && s->tst != T_CONNECTED) {
      if (s->tst == T_DONE) {
        s->eof = true;
        return 0;
      }
      uint64_t t = now_ms();
      if (t < s->retry_at_ms) {
        if (s->opts.nonblocking)
          return SONDE_E_AGAIN;
        uint64_t w = s->retry_at_ms - t;
        struct timespec ts = {(time_t)(w / 1000), (long)(w % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
        }
      }
      if (!tcp_attempt(s) && s->opts.nonblocking && s->tst != T_DONE)
        return SONDE_E_AGAIN;
      continue;
    }
    if (s->opts.nonblocking && s->kind == SONDE_SWO_SOURCE_STDIN) {
      struct pollfd pfd = {s->fd, POLLIN, 0};
      int pr = poll(&pfd, 1, 0);
      if (pr == 0)
        return SONDE_E_AGAIN;
      if (pr < 0 && errno == EINTR)
        continue;
    }
    ssize_t r = read(s->fd, buf, cap);
    if (r > 0) {
      s->offset += (uint64_t)r;
      return (ptrdiff_t)r;
    }
    if (r == 0) {
      if (s->kind == SONDE_SWO_SOURCE_TCP) {
        tcp_lost(s);
        continue;
      }
      s->eof = true;
      return 0;
    }
    if (errno == EINTR)
      continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK)
      return SONDE_E_AGAIN;
    if (s->kind == SONDE_SWO_SOURCE_TCP &&
        (errno == ECONNRESET || errno == EPIPE || errno == ETIMEDOUT || errno == ENOTCONN)) {
      tcp_lost(s);
      continue;
    }
    if (s->kind == SONDE_SWO_SOURCE_SERIAL && errno == EIO) { /* hang-up (USB unplugged, pty closed) */
      s->eof = true;
      return 0;
    }
    return sonde_diag_set(&s->diag, SONDE_E_IO, "%s: read: %s", s->name, strerror(errno));
  }
}

int sonde_swo_source_fd(const struct sonde_swo_source *s)
{
  if (!s)
    return -1;
  if (s->kind == SONDE_SWO_SOURCE_TCP && s->tst != T_CONNECTED)
    return -1;
  return s->fd;
}

unsigned sonde_swo_source_retry_ms(const struct sonde_swo_source *s)
{
  if (!s || s->kind != SONDE_SWO_SOURCE_TCP || s->tst != T_WAITING)
    return 0;
  uint64_t t = now_ms();
  return t >= s->retry_at_ms ? 0 : (unsigned)(s->retry_at_ms - t);
}

uint64_t sonde_swo_source_offset(const struct sonde_swo_source *s) { return s ? s->offset : 0; }
uint64_t sonde_swo_source_reconnects(const struct sonde_swo_source *s)
{
  return s ? s->reconnects : 0;
}
enum sonde_swo_source_kind sonde_swo_source_get_kind(const struct sonde_swo_source *s)
{
  return s->kind;
}
const char *sonde_swo_source_name(const struct sonde_swo_source *s) { return s ? s->name : ""; }
uint32_t sonde_swo_source_baud(const struct sonde_swo_source *s) { return s ? s->baud : 0; }
const char *sonde_swo_source_error_detail(const struct sonde_swo_source *s)
{
  return s ? s->diag.msg : "";
}
