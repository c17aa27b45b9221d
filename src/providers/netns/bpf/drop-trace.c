// SPDX-License-Identifier: GPL-2.0
/*
 * netrepro: the kernel's drop reasons for one lab, and nothing else.
 *
 * raw_tracepoint/kfree_skb fires for every dropped packet on the host. The tracepoint carries the
 * drop reason and location but no namespace, and this kernel has no kprobe/eprobe events and no
 * BTF tracing programs (fentry, tp_btf), so a tracefs filter cannot keep to the lab. This program
 * can: it reads skb->dev->nd_net->ns.inum (or, for a packet the namespace itself sends and drops before
 * it has a device, skb->sk's namespace) and reports only namespaces listed in nr_drop_netns (the labs'
 * own; the loader is shared by every lab of one harness process). Struct offsets come from the running kernel's BTF, written by the harness into
 * nr_drop_cfg (no CO-RE, no vmlinux.h: one small object that loads on any kernel with BTF).
 *
 * Events go to a queue map that our loader (agent/drop-trace.c) pops; the program lives as long
 * as that process: killing it detaches the program.
 */
#include <linux/bpf.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include "drop-event.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct drop_cfg);
} nr_drop_cfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u32);
} nr_drop_netns SEC(".maps");

/* A queue, popped by the loader: perf and ring buffers need an mmap that faults (SIGBUS) on this VM. */
struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, 4096);
	__type(value, struct drop_event);
} nr_drop_events SEC(".maps");

/* linux/icmp.h pulls in libc's socket headers, which a BPF target cannot include: the few fields we read */
struct icmp_error {
	__u8 type;
	__u8 code;
	__u16 checksum;
	__u16 unused;
	__u16 mtu; /* fragmentation needed */
};
#define ICMP_DEST_UNREACH 3
#define ICMP_FRAG_NEEDED 4
#define ICMP_TIME_EXCEEDED 11

#define READ(dst, base, off) bpf_probe_read_kernel(&(dst), sizeof(dst), (void *)((char *)(base) + (off)))

/* args: struct sk_buff *skb, void *location, enum skb_drop_reason reason, struct sock *rx_sk */
SEC("raw_tracepoint/kfree_skb")
int nr_drop(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 zero = 0;
	struct drop_cfg *cfg = bpf_map_lookup_elem(&nr_drop_cfg, &zero);
	if (!cfg || !cfg->skb_dev)
		return 0;
	void *skb = (void *)ctx->args[0];
	void *dev = 0, *net = 0, *sk = 0;
	struct drop_event ev = {};
	if (READ(dev, skb, cfg->skb_dev) || !dev) {
		/* no device yet: a packet the namespace sent itself (an ICMP error dropped in OUTPUT) */
		dev = 0;
		if (READ(sk, skb, cfg->skb_sk) || !sk || READ(net, sk, cfg->sk_net) || !net)
			return 0;
	} else if (READ(net, dev, cfg->dev_nd_net) || !net)
		return 0;
	if (READ(ev.netns, net, cfg->net_inum) || !bpf_map_lookup_elem(&nr_drop_netns, &ev.netns))
		return 0;
	ev.reason = (__u32)ctx->args[2];
	ev.location = ctx->args[1];
	if (dev)
		bpf_probe_read_kernel_str(ev.ifname, sizeof(ev.ifname), (char *)dev + cfg->dev_name);

	unsigned char *head = 0;
	__u16 nh = 0;
	struct iphdr ip = {};
	if (!READ(head, skb, cfg->skb_head) && !READ(nh, skb, cfg->skb_nh) && head &&
	    !bpf_probe_read_kernel(&ip, sizeof(ip), head + nh) && ip.version == 4) {
		ev.saddr = ip.saddr;
		ev.daddr = ip.daddr;
		ev.proto = ip.protocol;
		unsigned char *l4 = head + nh + ip.ihl * 4;
		if (ip.protocol == IPPROTO_TCP) {
			struct tcphdr tcp = {};
			if (!bpf_probe_read_kernel(&tcp, sizeof(tcp), l4)) {
				ev.sport = tcp.source;
				ev.dport = tcp.dest;
				ev.tcp_flags = ((unsigned char *)&tcp)[13];
			}
		} else if (ip.protocol == IPPROTO_UDP) {
			struct udphdr udp = {};
			if (!bpf_probe_read_kernel(&udp, sizeof(udp), l4)) {
				ev.sport = udp.source;
				ev.dport = udp.dest;
			}
		} else if (ip.protocol == IPPROTO_ICMP) {
			struct icmp_error icmp = {};
			struct iphdr inner = {};
			if (!bpf_probe_read_kernel(&icmp, sizeof(icmp), l4)) {
				ev.icmp_type = icmp.type;
				ev.icmp_code = icmp.code;
				if (icmp.type == ICMP_DEST_UNREACH && icmp.code == ICMP_FRAG_NEEDED)
					ev.icmp_mtu = __builtin_bswap16(icmp.mtu);
			}
			/* an error quotes the header of the packet it is about, and its first 8 bytes (the ports) */
			unsigned char *quoted = l4 + sizeof(icmp);
			if ((icmp.type == ICMP_DEST_UNREACH || icmp.type == ICMP_TIME_EXCEEDED) && !bpf_probe_read_kernel(&inner, sizeof(inner), quoted) && inner.version == 4) {
				__u16 ports[2] = {};
				ev.inner_saddr = inner.saddr;
				ev.inner_daddr = inner.daddr;
				ev.inner_proto = inner.protocol;
				if ((inner.protocol == IPPROTO_TCP || inner.protocol == IPPROTO_UDP) && !bpf_probe_read_kernel(ports, sizeof(ports), quoted + inner.ihl * 4)) {
					ev.inner_sport = ports[0];
					ev.inner_dport = ports[1];
				}
			}
		}
	}
	/* a frame's Ethernet destination, where it has a MAC header (~0: none, e.g. a packet the namespace sent itself) */
	__u16 mac = 0xffff;
	if (dev && head && cfg->skb_mac && !READ(mac, skb, cfg->skb_mac) && mac != 0xffff)
		bpf_probe_read_kernel(ev.dmac, sizeof(ev.dmac), head + mac);
	bpf_map_push_elem(&nr_drop_events, &ev, BPF_ANY);
	return 0;
}

char _license[] SEC("license") = "GPL";
