/* Serving one file to the Perfetto UI over HTTP (http_serve.c). */
#ifndef SONDE_CLI_HTTP_SERVE_H
#define SONDE_CLI_HTTP_SERVE_H

#include <stddef.h>
#include <stdint.h>

struct http_listen {
  char host[64];
  unsigned port;
};

/* The only origin granted CORS access to the served file. */
extern const char http_serve_origin[];

/* Parse ADDRESS:PORT (NULL: the default 127.0.0.1:9001). Returns 0, or -1 with
 * the reason in why. Call it before any long work, so a typo fails at once. */
int http_serve_parse_listen(const char *s, struct http_listen *l, char *why, size_t whylen);

/* Serve `path` until interrupted or until `max_requests` well-formed requests
 * (0: no limit) have been answered. `what` prefixes error messages. */
int http_serve_file(const char *what, const char *path, const struct http_listen *l,
                    uint64_t max_requests);

#endif
