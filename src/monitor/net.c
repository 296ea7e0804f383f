/* TCP plumbing of the socket links (link_openocd.c, link_gdb.c): connect with
 * a timeout, send everything, receive with a timeout into l->rx. A peer that
 * closes, refuses or stays silent gives an error naming the link. */
#include "monitor_internal.h"

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
#include <unistd.h>

int mon_net_connect(struct sonde_mon_link *l, const char *host, unsigned port)
{
  char ps[16];
  snprintf(ps, sizeof ps, "%u", port);
  struct addrinfo hints, *res = NULL;
  memset(&hints, 0, sizeof hints);
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  int gai = getaddrinfo(host, ps, &hints, &res);
  if (gai)
    return sonde_diag_set(&l->diag, SONDE_E_IO, "%s: cannot resolve '%s': %s", l->name, host,
                          gai_strerror(gai));
  int err = ECONNREFUSED;
  for (struct addrinfo *a = res; a; a = a->ai_next) {
    int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      err = errno;
      continue;
    }
    int fl = fcntl(fd, F_GETFL);
    fcntl(fd, F_SETFL, fl | O_NONBLOCK);
    int rc = connect(fd, a->ai_addr, a->ai_addrlen);
    if (rc < 0 && errno == EINPROGRESS) {
      struct pollfd p = {fd, POLLOUT, 0};
      rc = poll(&p, 1, (int)l->timeout_ms);
      if (rc == 0) {
        err = ETIMEDOUT;
        rc = -1;
      } else if (rc > 0) {
        socklen_t len = sizeof err;
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
        rc = err ? -1 : 0;
      } else {
        err = errno;
      }
    } else if (rc < 0) {
      err = errno;
    }
    if (rc == 0) {
      int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      l->fd = fd;
      freeaddrinfo(res);
      return 0;
    }
    close(fd);
  }
  freeaddrinfo(res);
  return sonde_diag_set(&l->diag, SONDE_E_IO, "%s: connect: %s", l->name, strerror(err));
}

int mon_net_send(struct sonde_mon_link *l, const void *buf, size_t len)
{
  const char *p = buf;
  while (len) {
    ssize_t n = send(l->fd, p, len, MSG_NOSIGNAL);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      struct pollfd pf = {l->fd, POLLOUT, 0};
      if (poll(&pf, 1, (int)l->timeout_ms) <= 0)
        return sonde_diag_set(&l->diag, SONDE_E_IO, "%s: send: timed out", l->name);
      continue;
    }
    if (n <= 0)
      return sonde_diag_set(&l->diag, SONDE_E_IO, "%s: send: %s", l->name,
                            n < 0 ? strerror(errno) : "connection closed");
    p += n;
    len -= (size_t)n;
    l->stats.bytes_out += (uint64_t)n;
  }
  return 0;
}

int mon_net_recv(struct sonde_mon_link *l, unsigned timeout_ms)
{
  if (!l->rx && !(l->rx = malloc(MON_RX_MAX)))
    return SONDE_E_NOMEM;
  if (l->rxlen == MON_RX_MAX)
    return sonde_diag_set(&l->diag, SONDE_E_FORMAT, "%s: answer longer than %u bytes (garbage?)",
                          l->name, MON_RX_MAX);
  struct pollfd pf = {l->fd, POLLIN, 0};
  int rc;
  do
    rc = poll(&pf, 1, (int)timeout_ms);
  while (rc < 0 && errno == EINTR);
  if (rc == 0)
    return SONDE_E_AGAIN;
  ssize_t n = recv(l->fd, l->rx + l->rxlen, MON_RX_MAX - l->rxlen, 0);
  if (n == 0)
    return sonde_diag_set(&l->diag, SONDE_E_IO, "%s: the peer closed the connection", l->name);
  if (n < 0)
    return sonde_diag_set(&l->diag, SONDE_E_IO, "%s: receive: %s", l->name, strerror(errno));
  l->rxlen += (size_t)n;
  l->stats.bytes_in += (uint64_t)n;
  return 0;
}

void mon_net_consume(struct sonde_mon_link *l, size_t n)
{
  memmove(l->rx, l->rx + n, l->rxlen - n);
  l->rxlen -= n;
}
