// kube-proxy's service health server for one Service on one node of the netns lab
// (pkg/proxy/healthcheck/service_health.go, answered as Go's net/http writes it for kube-proxy v1.20.2):
//   health-check --port P --namespace NS --name SVC --endpoints FILE
// Every request, whatever its path, gets 200 with the node's local endpoint count where FILE holds a number
// above 0, else 503; FILE is read anew for each request, so a kube-proxy sync that rewrites it shows at once.
// Headers: the handler's own in sorted order, then Date and Content-Length (net/http's chunkWriter); the body
// is src/dataplane/service-health.ts healthBody, with no newline at the end.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include "forking-server.h"
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static const char *option(int argc, char **argv, const char *name) {
  size_t n = strlen(name);
  for (int i = 1; i < argc; i++) {
    if (strncmp(argv[i], name, n) != 0) continue;
    if (argv[i][n] == '=') return argv[i] + n + 1;
    if (argv[i][n] == '\0' && i + 1 < argc) return argv[i + 1];
  }
  return NULL;
}

static int local_endpoints(const char *file) {
  FILE *f = fopen(file, "r");
  int n = 0;
  if (!f) return 0;
  if (fscanf(f, "%d", &n) != 1) n = 0;
  fclose(f);
  return n < 0 ? 0 : n;
}

static bool send_all(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
    if (w <= 0) return false;
    p += w, n -= (size_t)w;
  }
  return true;
}

/** Whether the request head asks to close the connection (`Connection: close`, or HTTP/1.0 without keep-alive). */
static bool closes(const char *head) {
  bool http10 = strstr(head, " HTTP/1.0\r\n") != NULL;
  for (const char *line = strstr(head, "\r\n"); line && line[2]; line = strstr(line + 2, "\r\n")) {
    if (strncasecmp(line + 2, "connection:", 11) != 0) continue;
    const char *v = line + 13;
    size_t len = strcspn(v, "\r");
    if (memmem(v, len, "close", 5)) return true;
    if (memmem(v, len, "keep-alive", 10)) return false;
  }
  return http10;
}

struct service {
  const char *ns, *name, *file;
};

static void serve_connection(int fd, const char *ns, const char *name, const char *file) {
  char buf[16 * 1024 + 1];
  size_t have = 0;
  for (;;) {
    char *end;
    while (!(buf[have] = '\0', end = strstr(buf, "\r\n\r\n"))) {
      struct pollfd p = {.fd = fd, .events = POLLIN};
      if (have == sizeof buf - 1 || poll(&p, 1, 60000) <= 0) return;
      ssize_t n = read(fd, buf + have, sizeof buf - 1 - have);
      if (n <= 0) return;
      have += (size_t)n;
    }
    end[2] = '\0';
    bool head_only = strncmp(buf, "HEAD ", 5) == 0;
    bool close_after = closes(buf);
    size_t used = (size_t)(end + 4 - buf);
    memmove(buf, buf + used, have - used);
    have -= used;

    int count = local_endpoints(file);
    char body[1024], response[2048], date[64];
    int blen = snprintf(body, sizeof body,
                        "{\n\t\"service\": {\n\t\t\"namespace\": \"%s\",\n\t\t\"name\": \"%s\"\n\t},\n\t\"localEndpoints\": %d\n}",
                        ns, name, count);
    time_t t = time(NULL);
    strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S GMT", gmtime(&t));
    int rlen = snprintf(response, sizeof response,
                        "HTTP/1.1 %s\r\nContent-Type: application/json\r\nX-Content-Type-Options: nosniff\r\n%sDate: %s\r\nContent-Length: %d\r\n\r\n%s",
                        count == 0 ? "503 Service Unavailable" : "200 OK", close_after ? "Connection: close\r\n" : "", date,
                        blen, head_only ? "" : body);
    if (!send_all(fd, response, (size_t)rlen) || close_after) return;
  }
}

static void serve_service(int fd, void *context) {
  const struct service *svc = context;
  serve_connection(fd, svc->ns, svc->name, svc->file);
}

int main(int argc, char **argv) {
  const char *port = option(argc, argv, "--port"), *ns = option(argc, argv, "--namespace");
  const char *name = option(argc, argv, "--name"), *file = option(argc, argv, "--endpoints");
  if (!port || !ns || !name || !file) {
    fprintf(stderr, "usage: health-check --port P --namespace NS --name SVC --endpoints FILE\n");
    return 2;
  }
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((unsigned short)atoi(port))};
  if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(fd, 128) != 0) {
    perror("health-check: listen");
    return 1;
  }
  char ready[64];
  snprintf(ready, sizeof ready, "ready health-check %s", port);
  struct service svc = {ns, name, file};
  serve_forked(fd, ready, serve_service, &svc);
}
