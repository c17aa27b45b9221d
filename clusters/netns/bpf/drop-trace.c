// SPDX-License-Identifier: GPL-2.0
/*
 * netrepro: the kernel's drop reasons for one lab, and nothing else.
 *
 * raw_tracepoint/kfree_skb fires for every dropped packet on the host. The tracepoint carries the
 * drop reason and location but no namespace, and this kernel has no kprobe/eprobe events and no
 * BTF tracing programs (fentry, tp_btf), so a tracefs filter cannot keep to the lab. This program
 * can: it reads skb->dev->nd_net->ns.inum and reports only namespaces listed in nr_drop_netns (the
 * lab's own). Struct offsets come from the running kernel's BTF, written by the harness into
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
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, __u32);
} nr_drop_netns SEC(".maps");

/* A queue, popped by the loader: perf and ring buffers need an mmap that faults (SIGBUS) on this VM. */
struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, 4096);
	__type(value, struct drop_event);
} nr_drop_events SEC(".maps");

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
	void *dev = 0, *net = 0;
	struct drop_event ev = {};
	if (READ(dev, skb, cfg->skb_dev) || !dev)
		return 0;
	if (READ(net, dev, cfg->dev_nd_net) || !net)
		return 0;
	if (READ(ev.netns, net, cfg->net_inum) || !bpf_map_lookup_elem(&nr_drop_netns, &ev.netns))
		return 0;
	ev.reason = (__u32)ctx->args[2];
	ev.location = ctx->args[1];
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
		}
	}
	bpf_map_push_elem(&nr_drop_events, &ev, BPF_ANY);
	return 0;
}

char _license[] SEC("license") = "GPL";
