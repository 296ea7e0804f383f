/* A tiny HTTP/1.0 server that offers one file to the Perfetto UI ("open from
 * URL"): GET/HEAD /<name> returns it, OPTIONS answers the CORS preflight,
 * anything else is 404. Several clients are served at once from one poll()
 * loop with non-blocking sockets, and each connection has a total deadline
 * (request: 5 s from accept; response: 60 s), so a slow, stalled or vanished
 * client never holds up the others or the server. Only well-formed requests
 * count toward the request limit. CORS is granted to the Perfetto UI's origin
 * only: with '*' any web page the user opens could read the trace. */
#include "http_serve.h"
#include "cli.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONN 32
#define REQ_MAX 2048
#define REQ_DEADLINE_MS 5000
#define RESP_DEADLINE_MS 60000

const char http_serve_origin[] = "https://ui.perfetto.dev";

int http_serve_parse_listen(const char *s, struct http_listen *l, char *why, size_t whylen)
{
  snprintf(l->host, sizeof l->host, "127.0.0.1");
  l->port = 9001;
  if (!s)
    return 0;
  const char *colon = strrchr(s, ':');
  if (!colon || colon == s || (size_t)(colon - s) >= sizeof l->host) {
    snprintf(why, whylen, "'%s': expected ADDRESS:PORT, e.g. 127.0.0.1:9001", s);
    return -1;
  }
  memcpy(l->host, s, (size_t)(colon - s));
  l->host[colon - s] = 0;
  char *end;
  errno = 0;
  unsigned long p = strtoul(colon + 1, &end, 10);
  if (!colon[1] || *end || errno || p < 1 || p > 65535) {
    snprintf(why, whylen, "'%s': the port must be a number from 1 to 65535", s);
    return -1;
  }
  l->port = (unsigned)p;
  struct in_addr a;
  if (inet_pton(AF_INET, l->host, &a) != 1) {
    snprintf(why, whylen, "'%s': '%s' is not an IPv4 address", s, l->host);
    return -1;
  }
  return 0;
}

static volatile sig_atomic_t serve_stop;
static void on_signal(int sig)
{
  (void)sig;
  serve_stop = 1;
}

static uint64_t now_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

struct conn {
  int fd; /* -1: free */
  bool writing;
  uint64_t deadline;
  char req[REQ_MAX];
  size_t got;
  char hdr[512];
  size_t hdr_len, hdr_off;
  const char *body;
  size_t body_len, body_off;
};

static void conn_close(struct conn *c)
{
  close(c->fd);
  c->fd = -1;
}

/* A complete request head is in c->req: choose the response. Returns true if
 * the request was well formed (it counts toward the limit). */
static bool respond(struct conn *c, const char *name, const char *data, size_t size)
{
  char method[8] = "", target[1024] = "", version[16] = "";
  c->req[c->got] = 0;
  bool ok = sscanf(c->req, "%7s %1023s %15s", method, target, version) == 3 &&
            !strncmp(version, "HTTP/", 5);
  if (!ok)
    return false;
  static const char cors_fmt[] = "Access-Control-Allow-Origin: %s\r\n"
                                 "Access-Control-Allow-Methods: GET, OPTIONS\r\n"
                                 "Access-Control-Allow-Headers: *\r\n"
                                 "Vary: Origin\r\n";
  char cors[256];
  snprintf(cors, sizeof cors, cors_fmt, http_serve_origin);
  bool match = target[0] == '/' && !strcmp(target + 1, name);
  c->body = NULL;
  c->body_len = 0;
  if (!strcmp(method, "OPTIONS")) {
    snprintf(c->hdr, sizeof c->hdr, "HTTP/1.0 204 No Content\r\n%sContent-Length: 0\r\n\r\n",
             cors);
  } else if ((!strcmp(method, "GET") || !strcmp(method, "HEAD")) && match) {
    snprintf(c->hdr, sizeof c->hdr,
             "HTTP/1.0 200 OK\r\n%sContent-Type: application/octet-stream\r\n"
             "Content-Length: %zu\r\nConnection: close\r\n\r\n",
             cors, size);
    if (strcmp(method, "HEAD")) {
      c->body = data;
      c->body_len = size;
    }
  } else {
    static const char nf[] = "not found\n";
    snprintf(c->hdr, sizeof c->hdr,
             "HTTP/1.0 404 Not Found\r\n%sContent-Type: text/plain\r\nContent-Length: %zu\r\n\r\n%s",
             cors, sizeof nf - 1, nf);
  }
  c->hdr_len = strlen(c->hdr);
  c->hdr_off = c->body_off = 0;
  c->writing = true;
  c->deadline = now_ms() + RESP_DEADLINE_MS;
  return true;
}

/* Read what is there; returns 1 when the head is complete, 0 to wait, -1 to
 * drop the connection (closed, error, or a head longer than REQ_MAX). */
static int conn_read(struct conn *c)
{
  for (;;) {
    if (c->got >= REQ_MAX - 1)
      return -1;
    ssize_t k = recv(c->fd, c->req + c->got, REQ_MAX - 1 - c->got, 0);
    if (k < 0 && errno == EINTR)
      continue;
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      return 0;
    if (k <= 0)
      return -1;
    c->got += (size_t)k;
    c->req[c->got] = 0;
    if (strstr(c->req, "\r\n\r\n") || strstr(c->req, "\n\n"))
      return 1;
  }
}

/* Send what the socket takes; returns 1 when done, 0 to wait, -1 on error. */
static int conn_write(struct conn *c)
{
  for (;;) {
    const char *p;
    size_t left;
    if (c->hdr_off < c->hdr_len) {
      p = c->hdr + c->hdr_off;
      left = c->hdr_len - c->hdr_off;
    } else if (c->body_off < c->body_len) {
      p = c->body + c->body_off;
      left = c->body_len - c->body_off;
    } else {
      return 1;
    }
    ssize_t k = send(c->fd, p, left, MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR)
      continue;
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      return 0;
    if (k <= 0)
      return -1;
    if (c->hdr_off < c->hdr_len)
      c->hdr_off += (size_t)k;
    else
      c->body_off += (size_t)k;
  }
}

static int set_nonblock(int fd)
{
  int fl = fcntl(fd, F_GETFL);
  return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static char *read_whole(const char *what, const char *path, size_t *size)
{
  FILE *f = fopen(path, "rb");
  if (!f) {
    cli_error("%s: cannot read '%s': %s", what, path, strerror(errno));
    return NULL;
  }
  struct stat sb;
  if (fstat(fileno(f), &sb) || !S_ISREG(sb.st_mode)) {
    fclose(f);
    cli_error("%s: '%s' is not a regular file", what, path);
    return NULL;
  }
  *size = (size_t)sb.st_size;
  char *data = malloc(*size ? *size : 1);
  if (!data || fread(data, 1, *size, f) != *size) {
    fclose(f);
    free(data);
    cli_error("%s: cannot read '%s'", what, path);
    return NULL;
  }
  fclose(f);
  return data;
}

int http_serve_file(const char *what, const char *path, const struct http_listen *l,
                    uint64_t max_requests)
{
  size_t size;
  char *data = read_whole(what, path, &size);
  if (!data)
    return CLI_FAIL;
  const char *name = strrchr(path, '/');
  name = name ? name + 1 : path;

  int s = socket(AF_INET, SOCK_STREAM, 0);
  if (s < 0) {
    free(data);
    return cli_error("%s: socket: %s", what, strerror(errno));
  }
  int one = 1;
  setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_port = htons((uint16_t)l->port);
  inet_pton(AF_INET, l->host, &a.sin_addr);
  if (bind(s, (struct sockaddr *)&a, sizeof a) || listen(s, 16) || set_nonblock(s)) {
    int e = errno;
    close(s);
    free(data);
    return cli_error("%s: cannot listen on %s:%u: %s", what, l->host, l->port, strerror(e));
  }
  signal(SIGPIPE, SIG_IGN);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  printf("serving %s on http://%s:%u/%s\n", path, l->host, l->port, name);
  printf("open: %s/#!/?url=http://%s:%u/%s\n", http_serve_origin, l->host, l->port, name);
  fflush(stdout);

  static struct conn conns[MAX_CONN];
  for (int i = 0; i < MAX_CONN; i++)
    conns[i].fd = -1;
  uint64_t counted = 0; /* well-formed requests answered or being answered */
  bool accepting = true;
  for (;;) {
    if (max_requests && counted >= max_requests)
      accepting = false;
    int open_conns = 0;
    for (int i = 0; i < MAX_CONN; i++)
      open_conns += conns[i].fd >= 0;
    if (serve_stop || (!accepting && !open_conns))
      break;
    struct pollfd pf[MAX_CONN + 1];
    int idx[MAX_CONN + 1], np = 0;
    uint64_t t = now_ms(), next = t + 1000;
    if (accepting && open_conns < MAX_CONN) {
      pf[np] = (struct pollfd){.fd = s, .events = POLLIN};
      idx[np++] = -1;
    }
    for (int i = 0; i < MAX_CONN; i++) {
      if (conns[i].fd < 0)
        continue;
      pf[np] = (struct pollfd){.fd = conns[i].fd, .events = conns[i].writing ? POLLOUT : POLLIN};
      idx[np++] = i;
      if (conns[i].deadline < next)
        next = conns[i].deadline;
    }
    int wait = next > t ? (int)(next - t) : 0;
    int r = poll(pf, (nfds_t)np, wait);
    if (r < 0 && errno != EINTR)
      break;
    t = now_ms();
    for (int j = 0; r > 0 && j < np; j++) {
      if (!pf[j].revents)
        continue;
      if (idx[j] < 0) {
        for (int i = 0; i < MAX_CONN; i++) {
          if (conns[i].fd >= 0)
            continue;
          int c = accept(s, NULL, NULL);
          if (c < 0)
            break;
          if (set_nonblock(c)) {
            close(c);
            break;
          }
          conns[i].fd = c;
          conns[i].writing = false;
          conns[i].got = 0;
          conns[i].deadline = t + REQ_DEADLINE_MS;
        }
        continue;
      }
      struct conn *c = &conns[idx[j]];
      if (!c->writing) {
        int k = conn_read(c);
        if (k < 0) {
          conn_close(c); /* closed early, an error, or an oversized head: not a request */
        } else if (k > 0) {
          if (max_requests && counted >= max_requests) {
            conn_close(c); /* the limit was reached while this one was reading */
          } else if (respond(c, name, data, size)) {
            counted++;
          } else {
            conn_close(c); /* garbage: does not count */
          }
        }
      }
      if (c->fd >= 0 && c->writing) {
        int k = conn_write(c);
        if (k != 0)
          conn_close(c);
      }
    }
    for (int i = 0; i < MAX_CONN; i++)
      if (conns[i].fd >= 0 && conns[i].deadline <= t)
        conn_close(&conns[i]); /* too slow: its deadline passed */
  }
  for (int i = 0; i < MAX_CONN; i++)
    if (conns[i].fd >= 0)
      conn_close(&conns[i]);
  close(s);
  free(data);
  return CLI_OK;
}
