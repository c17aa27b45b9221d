/* SPDX-License-Identifier: GPL-2.0 */
/* What the drop tracer's BPF program (drop-trace.c) and its loader (../agent/drop-trace.c) share: the
 * kernel struct offsets the loader reads from BTF and hands over, and the event the program reports. */
#ifndef NETREPRO_DROP_EVENT_H
#define NETREPRO_DROP_EVENT_H

#include <linux/types.h>

struct drop_cfg {
	__u32 skb_dev;        /* offsetof(struct sk_buff, dev) */
	__u32 dev_nd_net;     /* offsetof(struct net_device, nd_net) (possible_net_t: one pointer) */
	__u32 net_inum;       /* offsetof(struct net, ns) + offsetof(struct ns_common, inum) */
	__u32 dev_name;       /* offsetof(struct net_device, name) */
	__u32 skb_head;       /* offsetof(struct sk_buff, head) */
	__u32 skb_nh;         /* offsetof(struct sk_buff, network_header) (u16) */
	__u32 skb_sk;         /* offsetof(struct sk_buff, sk) */
	__u32 sk_net;         /* offsetof(struct sock_common, skc_net) (struct sock begins with it) */
	__u32 skb_mac;        /* offsetof(struct sk_buff, mac_header) (u16) */
};

struct drop_event {
	__u32 netns;
	__u32 reason;
	__u64 location;
	__u32 saddr;
	__u32 daddr;
	__u16 sport;
	__u16 dport;
	__u8 proto;
	__u8 tcp_flags;
	__u8 icmp_type;       /* ICMP only */
	__u8 icmp_code;
	char ifname[16];
	/* an ICMP error (destination unreachable, time exceeded): the header it quotes, the packet it is about */
	__u32 inner_saddr;
	__u32 inner_daddr;
	__u16 inner_sport;
	__u16 inner_dport;
	__u8 inner_proto;
	__u8 pad;
	__u16 icmp_mtu;       /* fragmentation needed: the next hop's MTU */
	/* the Ethernet destination of a frame that has a MAC header (a bridge drops by it: which port it is behind) */
	__u8 dmac[6];
	__u16 pad2;
};

#endif
