// inject-ahead: the deterministic trigger of the conntrack-invalid-reset incident (conntrack marks an out-of-window packet
// INVALID; it is not de-NATed; the client answers with a RST that kills the real connection).
//
// Run inside the SERVER pod's network namespace. It sniffs (AF_PACKET, outgoing IPv4) the pod's
// interface for an outgoing server->client TCP data segment from --port, and once at least
// --after-bytes of payload have gone out it sends ONE forged segment on the same 4-tuple through
// an IPPROTO_RAW socket:
//   seq   = live seq + ahead   (--behind: live seq - ahead; the upstream e2e style)
//   ack   = live ack exactly   (the server's rcv_nxt: the client's RST copies it as its seq, and
//                               the server accepts a RST only on an exact match)
//   flags = PSH|ACK (or ACK), a small payload, no TCP options.
// It prints one JSON line on stdout and exits 0; on timeout or error it prints a JSON line with
// "outcome" != "injected", a message on stderr, and exits 1 (usage), 2 (timeout) or 3 (system error).
// Only the first flow seen from --port is followed; --after-bytes counts its sequence progress.
//
// Build: gcc -O2 -Wall -Wextra -o inject-ahead inject-ahead.c     (needs CAP_NET_RAW to run)

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { EXIT_OK = 0, EXIT_USAGE = 1, EXIT_TIMEOUT = 2, EXIT_SYS = 3 };

#define TCP_FIN 0x01
#define TCP_SYN 0x02
#define TCP_RST 0x04
#define TCP_PSH 0x08
#define TCP_ACK 0x10

#define IP_HDR_LEN 20
#define TCP_HDR_LEN 20
#define MAX_PAYLOAD 1024

// ---------------------------------------------------------------------------------------------
// Pure part: checksums, parsing and building of IPv4/TCP headers (all fields in host order here).

struct segment {
  uint32_t saddr, daddr; // network byte order, as on the wire
  uint16_t sport, dport;
  uint32_t seq, ack;
  uint8_t flags;
  uint16_t window;
  uint32_t payload_len; // from the IP total length (the capture itself may be truncated)
};

static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t get32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }
static void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static void put32(uint8_t *p, uint32_t v) { put16(p, (uint16_t)(v >> 16)); put16(p + 2, (uint16_t)v); }

// One's-complement sum of 16-bit big-endian words (odd trailing byte padded with zero).
static uint32_t csum_add(uint32_t sum, const uint8_t *p, size_t len) {
  for (; len > 1; p += 2, len -= 2) sum += get16(p);
  if (len) sum += (uint32_t)p[0] << 8;
  return sum;
}

static uint16_t csum_fold(uint32_t sum) {
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return (uint16_t)~sum;
}

// TCP checksum over the pseudo-header (saddr, daddr, zero, protocol, TCP length) and the segment.
static uint16_t tcp_checksum(uint32_t saddr, uint32_t daddr, const uint8_t *tcp, size_t tcp_len) {
  uint8_t pseudo[12];
  memcpy(pseudo, &saddr, 4);
  memcpy(pseudo + 4, &daddr, 4);
  pseudo[8] = 0;
  pseudo[9] = IPPROTO_TCP;
  put16(pseudo + 10, (uint16_t)tcp_len);
  return csum_fold(csum_add(csum_add(0, pseudo, sizeof pseudo), tcp, tcp_len));
}

// Parses an IPv4 packet (starting at the IP header) carrying TCP. Returns 0 on success.
// Non-first fragments and truncated headers are rejected.
static int parse_ipv4_tcp(const uint8_t *pkt, size_t len, struct segment *s) {
  if (len < IP_HDR_LEN || pkt[0] >> 4 != 4 || pkt[9] != IPPROTO_TCP) return -1;
  size_t ihl = (size_t)(pkt[0] & 0x0f) * 4;
  if (ihl < IP_HDR_LEN || len < ihl + TCP_HDR_LEN) return -1;
  if (get16(pkt + 6) & 0x1fff) return -1; // fragment offset != 0
  const uint8_t *tcp = pkt + ihl;
  size_t doff = (size_t)(tcp[12] >> 4) * 4;
  if (doff < TCP_HDR_LEN) return -1;
  size_t tot_len = get16(pkt + 2);
  if (tot_len == 0) tot_len = len; // IPv4 BIG TCP GSO packets carry 0 here
  memcpy(&s->saddr, pkt + 12, 4);
  memcpy(&s->daddr, pkt + 16, 4);
  s->sport = get16(tcp);
  s->dport = get16(tcp + 2);
  s->seq = get32(tcp + 4);
  s->ack = get32(tcp + 8);
  s->flags = tcp[13];
  s->window = get16(tcp + 14);
  s->payload_len = tot_len > ihl + doff ? (uint32_t)(tot_len - ihl - doff) : 0;
  return 0;
}

// Builds IPv4 + TCP (no options) + payload into out, with both checksums. Returns the length.
static size_t build_ipv4_tcp(uint8_t *out, const struct segment *s, const uint8_t *payload, size_t payload_len) {
  size_t total = IP_HDR_LEN + TCP_HDR_LEN + payload_len;
  uint8_t *ip = out, *tcp = out + IP_HDR_LEN;
  memset(out, 0, IP_HDR_LEN + TCP_HDR_LEN);
  ip[0] = 0x45;                 // version 4, IHL 5
  put16(ip + 2, (uint16_t)total);
  put16(ip + 4, 0x4e52);        // id ("NR"), recognisable in captures
  put16(ip + 6, 0x4000);        // DF
  ip[8] = 64;                   // TTL
  ip[9] = IPPROTO_TCP;
  memcpy(ip + 12, &s->saddr, 4);
  memcpy(ip + 16, &s->daddr, 4);
  put16(ip + 10, csum_fold(csum_add(0, ip, IP_HDR_LEN)));

  put16(tcp, s->sport);
  put16(tcp + 2, s->dport);
  put32(tcp + 4, s->seq);
  put32(tcp + 8, s->ack);
  tcp[12] = (TCP_HDR_LEN / 4) << 4;
  tcp[13] = s->flags;
  put16(tcp + 14, s->window);
  memcpy(tcp + TCP_HDR_LEN, payload, payload_len);
  put16(tcp + 16, tcp_checksum(s->saddr, s->daddr, tcp, TCP_HDR_LEN + payload_len));
  return total;
}

// The forged segment: same 4-tuple and ACK as the live one, sequence number moved by ahead.
static struct segment forge(const struct segment *live, uint32_t ahead, int behind, uint8_t flags) {
  struct segment f = *live;
  f.seq = behind ? live->seq - ahead : live->seq + ahead; // modulo 2^32, like TCP
  f.flags = flags;
  return f;
}

// ---------------------------------------------------------------------------------------------
// I/O part.

struct options {
  const char *iface;
  uint16_t port;
  uint32_t ahead;
  uint64_t after_bytes;
  long timeout_ms;
  int behind;
  uint8_t flags;
  size_t payload_len;
};

static const char *mode_name(const struct options *o) { return o->behind ? "behind" : "ahead"; }

static void usage(FILE *f) {
  fprintf(f,
          "usage: inject-ahead --iface IF --port P [--ahead N] [--behind] [--after-bytes N]\n"
          "                    [--timeout-ms MS] [--flags psh-ack|ack] [--payload-len N]\n"
          "  --ahead N        sequence offset of the forged segment (default 1073741824 = 1 GiB)\n"
          "  --behind         seq = live seq - N instead of + N (the upstream e2e style)\n"
          "  --after-bytes N  inject once the flow has sent N payload bytes since first seen (default 1048576;\n"
          "                   0 = first data segment, e.g. HTTP headers, where nothing may be in flight)\n"
          "  --timeout-ms MS  give up after MS milliseconds (default 5000)\n"
          "  --flags F        psh-ack (default) or ack\n"
          "  --payload-len N  forged payload size, 0..%d (default 16)\n",
          MAX_PAYLOAD);
}

static int parse_u64(const char *s, uint64_t max, uint64_t *out) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 0);
  if (errno || end == s || *end || s[0] == '-' || v > max) return -1;
  *out = v;
  return 0;
}

static int parse_options(int argc, char **argv, struct options *o) {
  static const struct option longopts[] = {
      {"iface", required_argument, 0, 'i'},       {"port", required_argument, 0, 'p'},
      {"ahead", required_argument, 0, 'a'},       {"behind", no_argument, 0, 'b'},
      {"after-bytes", required_argument, 0, 'n'}, {"timeout-ms", required_argument, 0, 't'},
      {"flags", required_argument, 0, 'f'},       {"payload-len", required_argument, 0, 'l'},
      {"help", no_argument, 0, 'h'},              {0, 0, 0, 0},
  };
  *o = (struct options){.ahead = 1u << 30, .after_bytes = 1u << 20, .timeout_ms = 5000, .flags = TCP_PSH | TCP_ACK, .payload_len = 16};
  uint64_t v;
  int c;
  while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
    switch (c) {
    case 'i': o->iface = optarg; break;
    case 'p': if (parse_u64(optarg, 65535, &v) || v == 0) return -1; o->port = (uint16_t)v; break;
    case 'a': if (parse_u64(optarg, 0x7fffffff, &v) || v == 0) return -1; o->ahead = (uint32_t)v; break;
    case 'b': o->behind = 1; break;
    case 'n': if (parse_u64(optarg, 0x7fffffff, &v)) return -1; o->after_bytes = v; break;
    case 't': if (parse_u64(optarg, 3600000, &v) || v == 0) return -1; o->timeout_ms = (long)v; break;
    case 'f':
      if (!strcmp(optarg, "psh-ack")) o->flags = TCP_PSH | TCP_ACK;
      else if (!strcmp(optarg, "ack")) o->flags = TCP_ACK;
      else return -1;
      break;
    case 'l': if (parse_u64(optarg, MAX_PAYLOAD, &v)) return -1; o->payload_len = (size_t)v; break;
    case 'h': usage(stdout); exit(EXIT_OK);
    default: return -1;
    }
  }
  if (optind != argc || !o->iface || !o->port || strlen(o->iface) >= IFNAMSIZ) return -1;
  for (const char *ch = o->iface; *ch; ch++) // keeps the JSON output free of escapes
    if (!(isalnum((unsigned char)*ch) || *ch == '-' || *ch == '_' || *ch == '.' || *ch == '@')) return -1;
  return 0;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static const char *ip_str(uint32_t addr, char *buf) {
  return inet_ntop(AF_INET, &addr, buf, INET_ADDRSTRLEN);
}

static int fail(const struct options *o, const char *outcome, int code, const char *what) {
  if (code == EXIT_SYS) fprintf(stderr, "inject-ahead: %s: %s\n", what, strerror(errno));
  else fprintf(stderr, "inject-ahead: %s\n", what);
  printf("{\"outcome\":\"%s\",\"mode\":\"%s\",\"iface\":\"%s\",\"port\":%u,\"error\":\"%s\"}\n", outcome,
         mode_name(o), o->iface ? o->iface : "", o->port, what);
  return code;
}

int main(int argc, char **argv) {
  struct options o;
  if (parse_options(argc, argv, &o)) {
    usage(stderr);
    return EXIT_USAGE;
  }
  double started = now_ms();
  unsigned ifindex = if_nametoindex(o.iface);
  if (!ifindex) return fail(&o, "error", EXIT_SYS, "unknown interface");

  // Sniffer: cooked (SOCK_DGRAM), so every frame starts at the IP header. Outgoing frames are only
  // tapped for ETH_P_ALL sockets, so it binds ETH_P_ALL and keeps outgoing IPv4 with a filter that is
  // attached before the bind (protocol 0 receives nothing until then).
  int sniff = socket(AF_PACKET, SOCK_DGRAM, 0);
  if (sniff < 0) return fail(&o, "error", EXIT_SYS, "socket(AF_PACKET)");
  struct sock_filter code[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (uint32_t)(SKF_AD_OFF + SKF_AD_PKTTYPE)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PACKET_OUTGOING, 0, 3),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (uint32_t)(SKF_AD_OFF + SKF_AD_PROTOCOL)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ETH_P_IP, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, 256), // headers only: keeps the socket's queue small
      BPF_STMT(BPF_RET | BPF_K, 0),
  };
  struct sock_fprog prog = {.len = sizeof code / sizeof code[0], .filter = code};
  if (setsockopt(sniff, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof prog))
    return fail(&o, "error", EXIT_SYS, "SO_ATTACH_FILTER");
  struct sockaddr_ll sll = {.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL), .sll_ifindex = (int)ifindex};
  if (bind(sniff, (struct sockaddr *)&sll, sizeof sll)) return fail(&o, "error", EXIT_SYS, "bind(AF_PACKET)");

  // Sender: IPPROTO_RAW implies IP_HDRINCL; pinned to the interface the flow uses.
  int raw = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);
  if (raw < 0) return fail(&o, "error", EXIT_SYS, "socket(IPPROTO_RAW)");
  if (setsockopt(raw, SOL_SOCKET, SO_BINDTODEVICE, o.iface, (socklen_t)strlen(o.iface) + 1))
    return fail(&o, "error", EXIT_SYS, "SO_BINDTODEVICE");

  // The first outgoing data segment from --port fixes the flow; its seq is the byte-count base.
  struct segment flow = {0}, live = {0};
  int have_flow = 0;
  uint64_t segments = 0, sent_bytes = 0;
  uint8_t buf[2048]; // headers are enough: the payload length comes from the IP header
  for (;;) {
    long left = o.timeout_ms - (long)(now_ms() - started);
    if (left <= 0) {
      char what[160];
      snprintf(what, sizeof what, "timeout: %llu data segments from port %u seen, %llu bytes (wanted %llu)",
               (unsigned long long)segments, o.port, (unsigned long long)sent_bytes,
               (unsigned long long)o.after_bytes);
      return fail(&o, "timeout", EXIT_TIMEOUT, what);
    }
    struct pollfd pfd = {.fd = sniff, .events = POLLIN};
    int r = poll(&pfd, 1, (int)left);
    if (r < 0 && errno != EINTR) return fail(&o, "error", EXIT_SYS, "poll");
    if (r <= 0) continue;
    struct sockaddr_ll from;
    socklen_t fromlen = sizeof from;
    ssize_t n = recvfrom(sniff, buf, sizeof buf, 0, (struct sockaddr *)&from, &fromlen);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail(&o, "error", EXIT_SYS, "recvfrom");
    }
    struct segment s;
    if (from.sll_pkttype != PACKET_OUTGOING || from.sll_protocol != htons(ETH_P_IP) || parse_ipv4_tcp(buf, (size_t)n, &s)) continue;
    if (s.sport != o.port || s.payload_len == 0 || !(s.flags & TCP_ACK) || (s.flags & (TCP_SYN | TCP_RST | TCP_FIN)))
      continue;
    if (!have_flow) {
      flow = s;
      have_flow = 1;
    } else if (s.saddr != flow.saddr || s.daddr != flow.daddr || s.dport != flow.dport) {
      continue; // another connection: stay on the first one
    }
    segments++;
    uint32_t offset = s.seq + s.payload_len - flow.seq;
    if (offset < 0x80000000u && offset > sent_bytes) sent_bytes = offset;
    if (sent_bytes >= o.after_bytes) {
      live = s;
      break;
    }
  }

  static const char pattern[] = "NETREPRO-INJECT\n";
  uint8_t payload[MAX_PAYLOAD];
  for (size_t i = 0; i < o.payload_len; i++) payload[i] = (uint8_t)pattern[i % (sizeof pattern - 1)];
  struct segment forged = forge(&live, o.ahead, o.behind, o.flags);
  uint8_t pkt[IP_HDR_LEN + TCP_HDR_LEN + MAX_PAYLOAD];
  size_t len = build_ipv4_tcp(pkt, &forged, payload, o.payload_len);
  struct sockaddr_in dst = {.sin_family = AF_INET, .sin_addr.s_addr = forged.daddr};
  if (sendto(raw, pkt, len, 0, (struct sockaddr *)&dst, sizeof dst) != (ssize_t)len)
    return fail(&o, "error", EXIT_SYS, "sendto(IPPROTO_RAW)");

  char src[INET_ADDRSTRLEN], dsts[INET_ADDRSTRLEN];
  printf("{\"outcome\":\"injected\",\"mode\":\"%s\",\"iface\":\"%s\",\"src\":\"%s\",\"sport\":%u,\"dst\":\"%s\","
         "\"dport\":%u,\"liveSeq\":%u,\"liveAck\":%u,\"liveWindow\":%u,\"livePayloadLen\":%u,"
         "\"segmentsSeen\":%llu,\"bytesSeen\":%llu,\"ahead\":%u,\"forgedSeq\":%u,\"forgedAck\":%u,"
         "\"forgedFlags\":\"%s\",\"forgedPayloadLen\":%zu,\"elapsedMs\":%.1f}\n",
         mode_name(&o), o.iface, ip_str(live.saddr, src), live.sport, ip_str(live.daddr, dsts), live.dport,
         live.seq, live.ack, live.window, live.payload_len, (unsigned long long)segments,
         (unsigned long long)sent_bytes, o.ahead, forged.seq, forged.ack,
         o.flags & TCP_PSH ? "PSH|ACK" : "ACK", o.payload_len, now_ms() - started);
  return EXIT_OK;
}
