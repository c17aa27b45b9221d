// The pod agent's `dns-query` (pod-agent.mjs) as a native program for the netns lab: the same arguments,
// the same JSON, without starting Node for every query (~0.1 s of CPU each). Real clusters run the
// agent's own, in its container. A resolver that reads the source of every reply (an unconnected
// socket), so a reply from an unexpected source is observed exactly.
//   dns-query --server=IP --port=P --qname=NAME --timeout=MS [--sport=P]
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static const char *arg(int argc, char **argv, const char *name) {
  size_t n = strlen(name);
  for (int i = 1; i < argc; i++)
    if (strncmp(argv[i], name, n) == 0 && argv[i][n] == '=') return argv[i] + n + 1;
  return NULL;
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

int main(int argc, char **argv) {
  const char *server = arg(argc, argv, "--server"), *qname = arg(argc, argv, "--qname");
  const char *port_arg = arg(argc, argv, "--port"), *timeout_arg = arg(argc, argv, "--timeout"), *sport = arg(argc, argv, "--sport");
  int port = port_arg ? atoi(port_arg) : 53;
  double deadline = timeout_arg ? atof(timeout_arg) : 1000;
  struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(port)};
  if (!server || !qname || inet_pton(AF_INET, server, &to.sin_addr) != 1) {
    fprintf(stderr, "usage: dns-query --server=IP --port=P --qname=NAME --timeout=MS [--sport=P]\n");
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
  printf("],\"durationMs\":%ld}\n", (long)(now_ms() - started + 0.5));
  return 0;
}
