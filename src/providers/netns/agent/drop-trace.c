// SPDX-License-Identifier: GPL-2.0
/*
 * netrepro drop tracer: loads bpf/drop-trace.o, attaches it to the kfree_skb raw tracepoint and
 * prints one line per packet the kernel dropped in one of the namespaces in its filter map:
 *
 *   drop ns=4026532301 reason=NO_SOCKET loc=__udp4_lib_rcv+0x4bc if=eth0 proto=17 10.244.1.3:53 > 10.244.1.2:41234 flags=0x00
 *   drop ns=4026532388 reason=NETFILTER_DROP loc=nft_do_chain+0x3e8 if=- proto=1 10.244.2.1:0 > 10.244.2.2:0 flags=0x00 icmp=3/4 mtu=1400 inner=6 10.244.2.2:8080 > 10.244.1.2:36238
 *
 * A frame that has a MAC header adds its Ethernet destination, ` dmac=0a:58:0a:f4:01:02`
 * (identical drops that come in one poll are one line ending in ` repeat=N`: see drain()).
 *
 * One loader serves every lab of a harness process: it starts with an empty filter and prints
 * `ready map=ID`; the harness adds a lab's namespace inodes to map ID (bpftool map update id) when the
 * lab starts and deletes them at its teardown.
 * A line `flush N` on stdin is answered, once every drop queued before it has been printed, with
 * `flushed N`: the harness knows it has every drop up to its request without a packet to watch for.
 * Why a loader of our own: bpftool 7.1 cannot attach a raw tracepoint, and this kernel has neither
 * kprobe/eprobe events nor fentry. Everything lives as long as this process: no pin, no bpffs, no
 * tracefs instance; it ends at SIGTERM/SIGINT and when its parent (the harness) dies, however it dies
 * (PR_SET_PDEATHSIG), and its end detaches the program.
 * Struct offsets and drop-reason names come from the running kernel's BTF (/sys/kernel/btf/vmlinux).
 *
 * usage: drop-trace OBJECT
 */
#include <arpa/inet.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>
#include "../bpf/drop-event.h"

static struct btf *vmlinux;
static volatile sig_atomic_t stop;

/* Byte offset of member `name` in struct/union `type_id`, looking through anonymous members; -1 if absent. */
static long member_offset(__u32 type_id, const char *name)
{
	const struct btf_type *t = btf__type_by_id(vmlinux, type_id);
	while (t && (btf_is_typedef(t) || btf_is_mod(t))) {
		type_id = t->type;
		t = btf__type_by_id(vmlinux, type_id);
	}
	if (!t || !btf_is_composite(t))
		return -1;
	const struct btf_member *m = btf_members(t);
	for (int i = 0; i < btf_vlen(t); i++, m++) {
		__u32 bits = btf_member_bit_offset(t, i);
		const char *n = btf__name_by_offset(vmlinux, m->name_off);
		if (n && strcmp(n, name) == 0)
			return bits / 8;
		if (!n || !*n) {
			long inner = member_offset(m->type, name);
			if (inner >= 0)
				return bits / 8 + inner;
		}
	}
	return -1;
}

static long offset_of(const char *type, const char *member)
{
	__s32 id = btf__find_by_name_kind(vmlinux, type, BTF_KIND_STRUCT);
	long off = id < 0 ? -1 : member_offset(id, member);
	if (off < 0) {
		fprintf(stderr, "drop-trace: no %s.%s in the kernel's BTF\n", type, member);
		exit(3);
	}
	return off;
}

/* skb_drop_reason's names by value, read from BTF once at start-up (a lookup per event scanned ~100k
 * types). The core reasons are small numbers; anything else prints as its number. */
#define REASONS 1024
static const char *reason_names[REASONS];

static void load_reason_names(void)
{
	__s32 id = btf__find_by_name_kind(vmlinux, "skb_drop_reason", BTF_KIND_ENUM);
	if (id < 0)
		return;
	const struct btf_type *t = btf__type_by_id(vmlinux, id);
	const struct btf_enum *e = btf_enum(t);
	for (int i = 0; i < btf_vlen(t); i++, e++) {
		__u32 value = e->val;
		const char *n = btf__name_by_offset(vmlinux, e->name_off);
		if (value < REASONS && n && !reason_names[value])
			reason_names[value] = strncmp(n, "SKB_DROP_REASON_", 16) == 0 ? n + 16 : n;
	}
}

static const char *reason_name(__u32 value)
{
	static char buf[16];
	if (value < REASONS && reason_names[value])
		return reason_names[value];
	snprintf(buf, sizeof(buf), "%u", value);
	return buf;
}

struct sym {
	unsigned long long addr;
	char *name;
};
static struct sym *syms;
static size_t nsyms;

static int by_addr(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The kernel function a drop happened in (`nft_do_chain+0x3e8`), from /proc/kallsyms, read on first use. */
static const char *symbol(unsigned long long addr)
{
	static char buf[160];
	if (!syms) {
		FILE *f = fopen("/proc/kallsyms", "r");
		size_t cap = 0;
		char line[256], type, name[128];
		unsigned long long a;
		while (f && fgets(line, sizeof(line), f)) {
			if (sscanf(line, "%llx %c %127s", &a, &type, name) != 3 || (type != 't' && type != 'T') || !a)
				continue;
			if (nsyms == cap) {
				cap = cap ? cap * 2 : 65536;
				syms = realloc(syms, cap * sizeof(*syms));
			}
			syms[nsyms].addr = a;
			syms[nsyms++].name = strdup(name);
		}
		if (f)
			fclose(f);
		if (!syms)
			syms = calloc(1, sizeof(*syms));
		qsort(syms, nsyms, sizeof(*syms), by_addr);
	}
	size_t lo = 0, hi = nsyms;
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		if (syms[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	if (nsyms && syms[lo].addr <= addr)
		snprintf(buf, sizeof(buf), "%s+0x%llx", syms[lo].name, addr - syms[lo].addr);
	else
		snprintf(buf, sizeof(buf), "0x%llx", addr);
	return buf;
}

static void print_event(struct drop_event *e, unsigned repeat)
{
	char src[INET_ADDRSTRLEN], dst[INET_ADDRSTRLEN];
	inet_ntop(AF_INET, &e->saddr, src, sizeof(src));
	inet_ntop(AF_INET, &e->daddr, dst, sizeof(dst));
	e->ifname[15] = 0;
	printf("drop ns=%u reason=%s loc=%s if=%s proto=%u %s:%u > %s:%u flags=0x%02x", e->netns, reason_name(e->reason),
	       symbol(e->location), e->ifname[0] ? e->ifname : "-", e->proto, src, ntohs(e->sport), dst, ntohs(e->dport), e->tcp_flags);
	if (e->proto == IPPROTO_ICMP)
		printf(" icmp=%u/%u", e->icmp_type, e->icmp_code);
	if (e->icmp_mtu)
		printf(" mtu=%u", e->icmp_mtu);
	if (e->inner_proto) {
		inet_ntop(AF_INET, &e->inner_saddr, src, sizeof(src));
		inet_ntop(AF_INET, &e->inner_daddr, dst, sizeof(dst));
		printf(" inner=%u %s:%u > %s:%u", e->inner_proto, src, ntohs(e->inner_sport), dst, ntohs(e->inner_dport));
	}
	static const __u8 none[6];
	if (memcmp(e->dmac, none, sizeof(none)))
		printf(" dmac=%02x:%02x:%02x:%02x:%02x:%02x", e->dmac[0], e->dmac[1], e->dmac[2], e->dmac[3], e->dmac[4], e->dmac[5]);
	if (repeat > 1)
		printf(" repeat=%u", repeat);
	printf("\n");
}

/*
 * A bulk transfer through a full qdisc has thousands of its segments dropped a second, each the same
 * line; the harness would parse every one and learn nothing new. So each poll prints every distinct
 * event it popped once, where it first occurred, and appends ` repeat=N` when N identical events came
 * in that poll (identical in every field: the same line N times). Nothing waits for a later poll: a
 * flow's first drop is printed at the end of the poll that popped it (early verdicts wait for it),
 * and counts stay exact (the harness sums them). ICMP errors are printed one by one: each pairs with
 * its own rule verdicts. Done here rather than in the BPF program: the program would need a map of
 * recent flows, and a poll (5 ms) is already the finest time the harness sees.
 */
#define BATCH 512     /* distinct events */
#define MAX_POPS 4096 /* the queue's size: a flood is printed in slices of at most ~4 ms of popping */
#define LOOKBACK 32   /* distinct events compared with: a burst interleaves a few flows */
struct batched {
	struct drop_event event;
	unsigned repeat;
};
static struct batched batch[BATCH];

/* Pops the queue until it is empty, or the batch is full (*full = 1): the number of distinct events in batch[]. */
static size_t drain(int events_fd, int *full)
{
	size_t n = 0, pops = 0;
	struct drop_event e;
	*full = 0;
	while (bpf_map_lookup_and_delete_elem(events_fd, NULL, &e) == 0) {
		struct batched *same = NULL;
		size_t oldest = n > LOOKBACK ? n - LOOKBACK : 0;
		for (size_t i = n; e.proto != IPPROTO_ICMP && i > oldest && !same; i--)
			if (memcmp(&batch[i - 1].event, &e, sizeof(e)) == 0)
				same = &batch[i - 1];
		if (same)
			same->repeat++;
		else
			batch[n++] = (struct batched){ e, 1 };
		if (n == BATCH || ++pops == MAX_POPS) {
			*full = 1;
			break;
		}
	}
	return n;
}

/* Pops and prints until the queue is empty: everything dropped before the call is printed when it returns. */
static void drain_all(int events_fd)
{
	int full = 1;
	while (full) {
		size_t n = drain(events_fd, &full);
		for (size_t i = 0; i < n; i++)
			print_event(&batch[i].event, batch[i].repeat);
	}
}

/* Flush requests from stdin, `flush N` a line: each is answered `flushed N` after a full drain. At EOF
 * (or a stdin that is not ours to read) stdin is no longer polled: *fd becomes -1. */
static void serve_requests(int *fd, int events_fd)
{
	static char line[128];
	static size_t len;
	ssize_t n = read(*fd, line + len, sizeof(line) - 1 - len);
	if (n <= 0) {
		if (n == 0 || (errno != EINTR && errno != EAGAIN))
			*fd = -1;
		return;
	}
	len += (size_t)n;
	line[len] = 0;
	char *start = line, *end;
	while ((end = strchr(start, '\n'))) {
		*end = 0;
		if (strncmp(start, "flush ", 6) == 0) {
			drain_all(events_fd);
			printf("flushed %s\n", start + 6);
		}
		start = end + 1;
	}
	len -= (size_t)(start - line);
	memmove(line, start, len);
	if (len == sizeof(line) - 1) /* a line longer than any request: not one */
		len = 0;
	fflush(stdout);
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: drop-trace OBJECT\n");
		return 2;
	}
	/* the harness may die without a word (kill -9): end with it */
	pid_t parent = getppid();
	if (prctl(PR_SET_PDEATHSIG, SIGTERM) || getppid() != parent)
		return 3;
	vmlinux = btf__load_vmlinux_btf();
	if (!vmlinux) {
		fprintf(stderr, "drop-trace: no kernel BTF (/sys/kernel/btf/vmlinux): %s\n", strerror(errno));
		return 3;
	}
	struct drop_cfg cfg = {
		.skb_dev = offset_of("sk_buff", "dev"),
		.dev_nd_net = offset_of("net_device", "nd_net"),
		.net_inum = offset_of("net", "ns") + offset_of("ns_common", "inum"),
		.dev_name = offset_of("net_device", "name"),
		.skb_head = offset_of("sk_buff", "head"),
		.skb_nh = offset_of("sk_buff", "network_header"),
		.skb_sk = offset_of("sk_buff", "sk"),
		.sk_net = offset_of("sock_common", "skc_net"),
		.skb_mac = offset_of("sk_buff", "mac_header"),
	};
	load_reason_names();
	struct bpf_object *obj = bpf_object__open_file(argv[1], NULL);
	if (!obj || bpf_object__load(obj)) {
		fprintf(stderr, "drop-trace: cannot load %s: %s\n", argv[1], strerror(errno));
		return 3;
	}
	__u32 zero = 0;
	int cfg_fd = bpf_object__find_map_fd_by_name(obj, "nr_drop_cfg");
	int ns_fd = bpf_object__find_map_fd_by_name(obj, "nr_drop_netns");
	int events_fd = bpf_object__find_map_fd_by_name(obj, "nr_drop_events");
	if (cfg_fd < 0 || ns_fd < 0 || events_fd < 0 || bpf_map_update_elem(cfg_fd, &zero, &cfg, BPF_ANY)) {
		fprintf(stderr, "drop-trace: maps missing in %s\n", argv[1]);
		return 3;
	}
	struct bpf_map_info info = {};
	__u32 info_len = sizeof(info);
	if (bpf_obj_get_info_by_fd(ns_fd, &info, &info_len)) {
		fprintf(stderr, "drop-trace: no id for the filter map: %s\n", strerror(errno));
		return 3;
	}
	struct bpf_program *prog = bpf_object__find_program_by_name(obj, "nr_drop");
	struct bpf_link *link = prog ? bpf_program__attach(prog) : NULL;
	if (!link) {
		fprintf(stderr, "drop-trace: cannot attach to raw_tracepoint/kfree_skb: %s\n", strerror(errno));
		return 3;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	printf("ready map=%u\n", info.id);
	fflush(stdout);
	/* a queue map, popped every 5 ms: perf/ring buffers need an mmap that faults on some VMs; the
	 * wait between pops is a poll of stdin, so a flush request is served at once */
	struct pollfd requests = { .fd = STDIN_FILENO, .events = POLLIN };
	while (!stop) {
		int full;
		size_t n = drain(events_fd, &full);
		for (size_t i = 0; i < n; i++)
			print_event(&batch[i].event, batch[i].repeat);
		fflush(stdout); /* once per batch: one write for every line of it */
		/* a full batch: more may be waiting, so no wait */
		if (poll(&requests, 1, full ? 0 : 5) > 0)
			serve_requests(&requests.fd, events_fd);
	}
	bpf_link__destroy(link);
	bpf_object__close(obj);
	btf__free(vmlinux);
	return 0;
}
