// The pod agent (pod-agent.mjs) as a native program for the netns lab: the same subcommands, arguments,
// output lines and exit behaviour, without starting Node (~0.1-0.2 s of CPU) for every pod server and
// probe. Real clusters run pod-agent.mjs itself, from their ConfigMap. test/lab/native-agent.test.ts
// holds the two to the same answers.
//   http      --port P --name POD                      HTTP/1.1 echo that answers with its pod name (and the client's
//             address:port as it saw it, header x-client-address); GET /bytes/N streams N bytes
//   udp       --port P --name POD                      answers every datagram with one line: its pod name and the
//             sender's address:port as it saw it (`web 10.244.1.2:20001`)
//   dns       --port P --name POD --record NAME=IP ... [--records FILE]
//             authoritative A-record server; FILE holds NAME=IP lines, read anew for each query
//   dns-query --server IP --port P --qname NAME --timeout MS [--sport P]
//             a resolver that reads the source of every reply (unconnected socket), so a reply from an
//             unexpected source is observed exactly
//   udp-query --server IP --port P --timeout MS [--sport P]
//             one datagram, then the first reply from anywhere (unconnected socket, as dns-query), the name
//             and client address a udp server answered with read from it
//   connect   --server IP --port P --timeout MS
//             one TCP connect(); prints the errno it failed with
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <regex.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "forking-server.h"

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/** The next value of option `name` at or after argv[*i] (`--name=V` or `--name V`, as parseArgs takes them), *i moved past it; NULL when none is left. */
static const char *next_option(int argc, char **argv, const char *name, int *i) {
  size_t n = strlen(name);
  for (; *i < argc; (*i)++) {
    const char *a = argv[*i];
    if (strncmp(a, name, n) != 0) continue;
    if (a[n] == '=') return argv[(*i)++] + n + 1;
    if (a[n] == '\0' && *i + 1 < argc) return (*i += 2, argv[*i - 1]);
  }
  return NULL;
}

/** The last value given for `name` (a repeated option: the last one wins, as with parseArgs). */
static const char *option(int argc, char **argv, const char *name) {
  const char *last = NULL, *v;
  for (int i = 2; (v = next_option(argc, argv, name, &i));) last = v;
  return last;
}

static _Noreturn void fail(const char *what) {
  perror(what);
  exit(1);
}

/** A socket bound to 0.0.0.0:port (listening, for TCP); a server that cannot bind exits 1, as Node does. */
static int listening_socket(int type, int port) {
  int fd = socket(AF_INET, type | SOCK_CLOEXEC, 0), on = 1;
  struct sockaddr_in at = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_ANY)};
  if (fd < 0) fail("socket");
  // as libuv does for TCP servers: a restarted server binds while old connections linger in TIME_WAIT
  if (type == SOCK_STREAM) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  if (bind(fd, (struct sockaddr *)&at, sizeof at) < 0) fail("bind");
  if (type == SOCK_STREAM && listen(fd, 511) < 0) fail("listen");
  return fd;
}

static bool send_all(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w, n -= (size_t)w;
  }
  return true;
}

/** `IP:PORT` of an IPv4 peer, as Node prints remoteAddress and remotePort. */
static void peer_address(const struct sockaddr_in *peer, char *out, size_t size) {
  char ip[INET_ADDRSTRLEN];
  inet_ntop(AF_INET, &peer->sin_addr, ip, sizeof ip);
  snprintf(out, size, "%s:%u", ip, ntohs(peer->sin_port));
}

/** The value of header `name` in a request head (NUL-terminated, CRLF lines), copied into `out`; false when absent. */
static bool header(const char *head, const char *name, char *out, size_t size) {
  size_t n = strlen(name);
  for (const char *line = strstr(head, "\r\n"); line && line[2]; line = strstr(line + 2, "\r\n")) {
    const char *h = line + 2;
    if (strncasecmp(h, name, n) != 0 || h[n] != ':') continue;
    h += n + 1;
    while (*h == ' ' || *h == '\t') h++;
    size_t len = strcspn(h, "\r");
    while (len > 0 && (h[len - 1] == ' ' || h[len - 1] == '\t')) len--;
    snprintf(out, size, "%.*s", (int)len, h);
    return true;
  }
  return false;
}

/** Whether a comma-separated header value holds `token` (Connection: keep-alive, close). */
static bool has_token(char *value, const char *token) {
  char *rest = value;
  for (char *t; (t = strtok_r(rest, ", \t", &rest));)
    if (strcasecmp(t, token) == 0) return true;
  return false;
}

/**
 * One response, headers in the order Node's http server writes them; returns false when the client is gone.
 * The name's body has no length header where Node sends none (HEAD, HTTP/1.0: then it closes the connection).
 */
static bool respond(int fd, const char *name, const char *client, const char *method, const char *target, bool http11, bool *keep_alive) {
  static char chunk[256 * 1024];
  char head[1024], date[64], *end = NULL;
  time_t t = time(NULL);
  strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S GMT", gmtime(&t));
  bool body = strcmp(method, "HEAD") != 0;
  // GET /bytes/N streams N bytes (a large download); blocking writes are the backpressure
  unsigned long long left = strncmp(target, "/bytes/", 7) == 0 && isdigit((unsigned char)target[7]) ? strtoull(target + 7, &end, 10) : 0;
  bool bytes = end && *end == '\0';
  if (!bytes && body && !http11) *keep_alive = false;
  const char *connection = *keep_alive ? "Connection: keep-alive\r\nKeep-Alive: timeout=1\r\n" : "Connection: close\r\n";
  if (bytes) {
    snprintf(head, sizeof head, "HTTP/1.1 200 OK\r\nx-served-by: %s\r\nx-client-address: %s\r\ncontent-length: %llu\r\ncontent-type: application/octet-stream\r\nDate: %s\r\n%s\r\n", name, client, left, date, connection);
    if (!send_all(fd, head, strlen(head))) return false;
    if (!chunk[0]) memset(chunk, 0x61, sizeof chunk);
    for (size_t n; body && left > 0; left -= n) {
      n = left < sizeof chunk ? (size_t)left : sizeof chunk;
      if (!send_all(fd, chunk, n)) return false;
    }
    return true;
  }
  char length[48] = "";
  if (body && http11) snprintf(length, sizeof length, "Content-Length: %zu\r\n", strlen(name) + 1);
  snprintf(head, sizeof head, "HTTP/1.1 200 OK\r\nx-served-by: %s\r\nx-client-address: %s\r\nDate: %s\r\n%s%s\r\n%s%s", name, client, date, connection, length, body ? name : "", body ? "\n" : "");
  return send_all(fd, head, strlen(head));
}

/**
 * Requests on one connection until the client closes it, asks to, or stays idle for 2 s: the agent's
 * keepAliveTimeout (1 s, announced as `Keep-Alive: timeout=1`) plus the 1 s Node 20 adds before it closes
 * (HTTP_SERVER_KEEP_ALIVE_TIMEOUT_BUFFER, lib/_http_server.js).
 */
static void serve_connection(int fd, const char *name) {
  char buf[16 * 1024 + 1], client[INET_ADDRSTRLEN + 8] = "";
  size_t have = 0;
  struct sockaddr_in peer;
  socklen_t plen = sizeof peer;
  if (getpeername(fd, (struct sockaddr *)&peer, &plen) == 0) peer_address(&peer, client, sizeof client);
  for (;;) {
    char *end;
    while (!(buf[have] = '\0', end = strstr(buf, "\r\n\r\n"))) {
      struct pollfd p = {.fd = fd, .events = POLLIN};
      // idle between requests: the keep-alive timeout; within a request's head: Node's 60 s headersTimeout
      if (have == sizeof buf - 1 || poll(&p, 1, have == 0 ? 2000 : 60000) <= 0) return;
      ssize_t n = read(fd, buf + have, sizeof buf - 1 - have);
      if (n <= 0) return;
      have += (size_t)n;
    }
    end[2] = '\0'; // the head, with its last header's CRLF
    size_t used = (size_t)(end + 4 - buf);
    char method[16], target[4096], version[16], value[256];
    if (sscanf(buf, "%15s %4095s %15s", method, target, version) != 3) return;
    bool http11 = strcmp(version, "HTTP/1.0") != 0;
    bool keep_alive = http11 ? !(header(buf, "connection", value, sizeof value) && has_token(value, "close"))
                             : header(buf, "connection", value, sizeof value) && has_token(value, "keep-alive");
    // a request body is read and dropped (req.resume())
    unsigned long long body = header(buf, "content-length", value, sizeof value) ? strtoull(value, NULL, 10) : 0;
    size_t in_buffer = have - used < body ? have - used : (size_t)body;
    memmove(buf, buf + used + in_buffer, have - used - in_buffer);
    have -= used + in_buffer;
    for (body -= in_buffer; body > 0;) {
      char sink[4096];
      ssize_t n = read(fd, sink, body < sizeof sink ? (size_t)body : sizeof sink);
      if (n <= 0) return;
      body -= (unsigned long long)n;
    }
    if (!respond(fd, name, client, method, target, http11, &keep_alive) || !keep_alive) return;
  }
}

static void serve_named(int fd, void *name) { serve_connection(fd, name); }

static _Noreturn void serve_http(int port, const char *name) {
  char ready[32];
  snprintf(ready, sizeof ready, "ready http %d", port);
  serve_forked(listening_socket(SOCK_STREAM, port), ready, serve_named, (void *)name);
}

/** Every datagram answered with the server's name and its sender's address:port, as this socket saw them. */
static _Noreturn void serve_udp(int port, const char *name) {
  int fd = listening_socket(SOCK_DGRAM, port);
  printf("ready udp %d\n", port);
  fflush(stdout);
  for (;;) {
    char m[65536], client[INET_ADDRSTRLEN + 8], r[1024];
    struct sockaddr_in peer;
    socklen_t plen = sizeof peer;
    if (recvfrom(fd, m, sizeof m, 0, (struct sockaddr *)&peer, &plen) < 0) continue;
    peer_address(&peer, client, sizeof client);
    int n = snprintf(r, sizeof r, "%s %s\n", name, client);
    sendto(fd, r, n < (int)sizeof r ? (size_t)n : sizeof r - 1, 0, (struct sockaddr *)&peer, plen);
  }
}

struct record {
  char name[256]; // lowercase
  struct in_addr ip;
  bool has_ip;
};

/** `NAME=IP` (or a name alone, known without an address) into `r`; false for a name that does not fit. */
static bool parse_record(const char *text, struct record *r) {
  size_t n = strcspn(text, "=\n");
  if (n == 0 || n >= sizeof r->name) return false;
  for (size_t k = 0; k < n; k++) r->name[k] = (char)tolower((unsigned char)text[k]);
  r->name[n] = '\0';
  char ip[32] = "";
  if (text[n] == '=') snprintf(ip, sizeof ip, "%.*s", (int)strcspn(text + n + 1, "\n"), text + n + 1);
  r->has_ip = inet_pton(AF_INET, ip, &r->ip) == 1;
  return true;
}

/** The records of `file`, one `NAME=IP` a line, read anew for each query: a change shows at once (CoreDNS's watch). */
static int read_records(const char *file, struct record *records, int max) {
  FILE *f = fopen(file, "r");
  if (!f) return 0;
  char line[512];
  int count = 0;
  while (count < max && fgets(line, sizeof line, f)) count += parse_record(line, &records[count]);
  fclose(f);
  return count;
}

static _Noreturn void serve_dns(int port, struct record *records, int count, const char *file) {
  static struct record from_file[1024];
  int fd = listening_socket(SOCK_DGRAM, port);
  printf("ready dns %d\n", port);
  fflush(stdout);
  for (;;) {
    unsigned char m[4096], r[4096 + 16];
    char qname[4096];
    struct sockaddr_in peer;
    socklen_t plen = sizeof peer;
    ssize_t got = recvfrom(fd, m, sizeof m, 0, (struct sockaddr *)&peer, &plen);
    if (got < 17 || (m[4] << 8 | m[5]) != 1) continue;
    size_t n = (size_t)got, o = 12, q = 0;
    while (o < n && m[o] != 0) {
      for (size_t k = o + 1; k < o + 1 + m[o] && k < n; k++) qname[q++] = (char)tolower(m[k]);
      o += m[o] + 1u;
      if (o < n && m[o] != 0) qname[q++] = '.';
    }
    qname[q] = '\0';
    if (o + 5 > n) continue;
    unsigned type = m[o + 1] << 8 | m[o + 2];
    size_t end = o + 5;
    if (file) records = from_file, count = read_records(file, from_file, 1024);
    // every record of a name is answered, in the order given (a headless Service: one per endpoint); a known
    // name without a record of the asked type is NODATA, not NXDOMAIN
    bool known = false;
    unsigned answers = 0;
    memcpy(r, m, end);
    for (int i = 0; i < count; i++) {
      if (strcmp(records[i].name, qname) != 0) continue;
      known = true;
      if (!records[i].has_ip || type != 1 || end + 16 * (answers + 1) > sizeof r) continue;
      unsigned char rr[16] = {0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 5, 0, 4}; // pointer to the question name, A, IN, TTL 5
      memcpy(rr + 12, &records[i].ip, 4);
      memcpy(r + end + 16 * answers++, rr, 16);
    }
    r[2] = 0x84, r[3] = known ? 0 : 3; // response, authoritative, NOERROR or NXDOMAIN
    r[6] = answers >> 8, r[7] = answers & 0xff;
    memset(r + 8, 0, 4);
    sendto(fd, r, end + 16 * answers, 0, (struct sockaddr *)&peer, plen);
  }
}

/** An A query for `name`, recursion desired; its length, or 0 when the name does not fit. */
static size_t query(unsigned char *q, size_t size, unsigned id, const char *name) {
  size_t o = 12;
  memset(q, 0, 12);
  q[0] = id >> 8, q[1] = id & 0xff, q[2] = 0x01, q[5] = 1;
  while (*name) {
    const char *dot = strchr(name, '.');
    size_t len = dot ? (size_t)(dot - name) : strlen(name);
    if (len == 0 || len > 63 || o + len + 6 > size) return 0;
    q[o++] = len;
    memcpy(q + o, name, len);
    o += len;
    name += len + (dot ? 1 : 0);
  }
  q[o++] = 0;
  q[o++] = 0, q[o++] = 1, q[o++] = 0, q[o++] = 1; // type A, class IN
  return o;
}

/** The A records of a reply our agent built: fixed 16-byte records after the one question (as pod-agent.mjs reads them). */
static void print_answers(const unsigned char *m, size_t len) {
  const char *sep = "";
  if (len < 17 || (m[4] << 8 | m[5]) != 1) return;
  size_t o = 12;
  while (o < len && m[o] != 0) o += m[o] + 1;
  if (o + 5 > len) return;
  o += 5;
  for (unsigned i = 0, n = m[6] << 8 | m[7]; i < n && o + 16 <= len; i++, o += 16) {
    if ((m[o + 2] << 8 | m[o + 3]) == 1 && (m[o + 10] << 8 | m[o + 11]) == 4) {
      printf("%s\"%u.%u.%u.%u\"", sep, m[o + 12], m[o + 13], m[o + 14], m[o + 15]);
      sep = ",";
    }
  }
}

static int dns_query(const char *server, int port, const char *qname, double deadline, const char *sport) {
  struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(port)};
  if (!server || !qname || inet_pton(AF_INET, server, &to.sin_addr) != 1) {
    fprintf(stderr, "usage: pod-agent dns-query --server=IP --port=P --qname=NAME --timeout=MS [--sport=P]\n");
    return 2;
  }
  double started = now_ms();
  unsigned short id;
  if (getrandom(&id, sizeof id, 0) != sizeof id) return perror("getrandom"), 1;
  unsigned char q[512], m[4096];
  size_t qlen = query(q, sizeof q, id, qname);
  if (!qlen) return fprintf(stderr, "dns-query: bad name %s\n", qname), 2;

  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  if (fd < 0) return perror("socket"), 1;
  // a fixed source port: the same conntrack entry for every query, as a resolver reusing its socket
  if (sport) {
    struct sockaddr_in from = {.sin_family = AF_INET, .sin_port = htons(atoi(sport))};
    if (bind(fd, (struct sockaddr *)&from, sizeof from) < 0) return perror("bind"), 1;
  }
  if (sendto(fd, q, qlen, 0, (struct sockaddr *)&to, sizeof to) < 0) return perror("sendto"), 1;
  // the port the kernel chose: the probe knows its own reply by it, whatever NAT did to the reply's source
  struct sockaddr_in me;
  socklen_t mlen = sizeof me;
  unsigned own = getsockname(fd, (struct sockaddr *)&me, &mlen) == 0 ? ntohs(me.sin_port) : 0;

  const char *outcome = "timeout";
  char from[INET_ADDRSTRLEN + 8] = "";
  unsigned rcode = 0;
  ssize_t n = 0;
  for (;;) {
    int left = (int)(started + deadline - now_ms());
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (left <= 0 || poll(&p, 1, left) <= 0) break;
    struct sockaddr_in peer;
    socklen_t plen = sizeof peer;
    n = recvfrom(fd, m, sizeof m, 0, (struct sockaddr *)&peer, &plen);
    if (n < 2 || (m[0] << 8 | m[1]) != id) continue;
    char ip[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &peer.sin_addr, ip, sizeof ip);
    snprintf(from, sizeof from, "%s#%u", ip, ntohs(peer.sin_port));
    rcode = n > 3 ? m[3] & 0x0f : 0;
    // either reply is conclusive: from the server it is the answer; from anywhere else it is the symptom
    outcome = peer.sin_addr.s_addr == to.sin_addr.s_addr && peer.sin_port == to.sin_port ? "ok" : "unexpected-source";
    break;
  }
  printf("{\"outcome\":\"%s\",\"server\":\"%s#%d\",\"replies\":[", outcome, server, port);
  if (*from) {
    printf("{\"from\":\"%s\",\"rcode\":%u,\"answers\":[", from, rcode);
    print_answers(m, (size_t)n);
    printf("]}");
  }
  printf("],\"sport\":%u,\"durationMs\":%ld}\n", own, (long)(now_ms() - started + 0.5));
  return 0;
}

/**
 * The name and client address a udp server answered with (`NAME ADDRESS:PORT`, one optional newline), as JSON
 * fields after a comma; a reply of one word names only the server; anything else (a NUL byte included) nothing.
 */
static void print_echo_fields(const char *m, size_t len) {
  static regex_t echo;
  static bool compiled;
  char text[320];
  regmatch_t g[3];
  if (!compiled && regcomp(&echo, "^([A-Za-z0-9._-]{1,253})( ([0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}:[0-9]{1,5}))?\n?$", REG_EXTENDED) != 0) return;
  compiled = true;
  if (len >= sizeof text || memchr(m, '\0', len)) return;
  memcpy(text, m, len);
  text[len] = '\0';
  if (regexec(&echo, text, 3, g, 0) != 0) return;
  printf(",\"servedBy\":\"%.*s\"", (int)(g[1].rm_eo - g[1].rm_so), text + g[1].rm_so);
  if (g[2].rm_so >= 0) printf(",\"clientAddress\":\"%.*s\"", (int)(g[2].rm_eo - g[2].rm_so - 1), text + g[2].rm_so + 1);
}

static int udp_query(const char *server, int port, double deadline, const char *sport) {
  struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(port)};
  if (!server || inet_pton(AF_INET, server, &to.sin_addr) != 1) {
    fprintf(stderr, "usage: pod-agent udp-query --server=IP --port=P --timeout=MS [--sport=P]\n");
    return 2;
  }
  double started = now_ms();
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  if (fd < 0) return perror("socket"), 1;
  // a fixed source port: the same conntrack entry for every datagram, as a client reusing its socket (nc -u -p)
  if (sport) {
    struct sockaddr_in from = {.sin_family = AF_INET, .sin_port = htons(atoi(sport))};
    if (bind(fd, (struct sockaddr *)&from, sizeof from) < 0) return perror("bind"), 1;
  }
  if (sendto(fd, "hostname\n", 9, 0, (struct sockaddr *)&to, sizeof to) < 0) return perror("sendto"), 1;

  // the first datagram to this socket is the reply, wherever it came from: from the server it is the answer,
  // from anywhere else the symptom
  const char *outcome = "timeout";
  char m[65536], from[INET_ADDRSTRLEN + 8] = "";
  ssize_t n = 0;
  int left = (int)(started + deadline - now_ms());
  struct pollfd p = {.fd = fd, .events = POLLIN};
  struct sockaddr_in peer;
  socklen_t plen = sizeof peer;
  if (left > 0 && poll(&p, 1, left) > 0 && (n = recvfrom(fd, m, sizeof m, 0, (struct sockaddr *)&peer, &plen)) >= 0) {
    char ip[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &peer.sin_addr, ip, sizeof ip);
    snprintf(from, sizeof from, "%s#%u", ip, ntohs(peer.sin_port));
    outcome = peer.sin_addr.s_addr == to.sin_addr.s_addr && peer.sin_port == to.sin_port ? "ok" : "unexpected-source";
  }
  printf("{\"outcome\":\"%s\",\"server\":\"%s#%d\",\"replies\":[", outcome, server, port);
  if (*from) {
    printf("{\"from\":\"%s\",\"bytes\":%zd", from, n);
    print_echo_fields(m, (size_t)n);
    printf("}");
  }
  printf("],\"durationMs\":%ld}\n", (long)(now_ms() - started + 0.5));
  return 0;
}

/** One non-blocking connect() within `timeout` ms: the errno's name it failed with (Node's e.code), ETIMEDOUT, or null. */
static int tcp_connect(const char *server, int port, int timeout) {
  struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(port)};
  if (!server || inet_pton(AF_INET, server, &to.sin_addr) != 1) {
    fprintf(stderr, "usage: pod-agent connect --server=IP --port=P --timeout=MS\n");
    return 2;
  }
  double started = now_ms();
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), error = 0;
  if (fd < 0) return perror("socket"), 1;
  if (connect(fd, (struct sockaddr *)&to, sizeof to) < 0) error = errno;
  if (error == EINPROGRESS) {
    struct pollfd p = {.fd = fd, .events = POLLOUT};
    socklen_t len = sizeof error;
    int ready;
    while ((ready = poll(&p, 1, timeout)) < 0 && errno == EINTR) {}
    if (ready == 0) error = ETIMEDOUT;
    else getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len);
  }
  const char *errno_name = error ? strerrorname_np(error) : NULL;
  if (errno_name) printf("{\"errno\":\"%s\",\"durationMs\":%ld}\n", errno_name, (long)(now_ms() - started + 0.5));
  else printf("{\"errno\":null,\"durationMs\":%ld}\n", (long)(now_ms() - started + 0.5));
  return 0;
}

int main(int argc, char **argv) {
  const char *command = argc > 1 ? argv[1] : "";
  const char *port_arg = option(argc, argv, "--port"), *timeout = option(argc, argv, "--timeout"), *name = option(argc, argv, "--name");
  int port = port_arg ? atoi(port_arg) : 0;
  if (!name) name = "";
  if (strcmp(command, "http") == 0) serve_http(port, name);
  if (strcmp(command, "udp") == 0) serve_udp(port, name);
  if (strcmp(command, "dns") == 0) {
    struct record *records = calloc((size_t)argc, sizeof *records);
    int count = 0;
    const char *v;
    for (int i = 2; (v = next_option(argc, argv, "--record", &i));) count += parse_record(v, &records[count]);
    serve_dns(port, records, count, option(argc, argv, "--records"));
  }
  if (strcmp(command, "dns-query") == 0) return dns_query(option(argc, argv, "--server"), port, option(argc, argv, "--qname"), timeout ? atof(timeout) : 1000, option(argc, argv, "--sport"));
  if (strcmp(command, "udp-query") == 0) return udp_query(option(argc, argv, "--server"), port, timeout ? atof(timeout) : 1000, option(argc, argv, "--sport"));
  if (strcmp(command, "connect") == 0) return tcp_connect(option(argc, argv, "--server"), port, timeout ? atoi(timeout) : 1000);
  fprintf(stderr, "usage: pod-agent http|udp|dns|dns-query|udp-query|connect ...\n");
  return 2;
}
