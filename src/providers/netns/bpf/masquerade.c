// SPDX-License-Identifier: GPL-2.0
/*
 * netrepro: a model of Cilium's BPF masquerade (bpf.masquerade=true) on the node's native
 * device, written for the netns lab (the cilium-kube-proxy-forward-race incident and the multi-node cilium shape).
 *
 * egress  (tc clsact egress on the node's eth0):
 *   IPv4 TCP/UDP from the pod CIDR to anywhere outside the native-routing CIDR is SNATed to
 *   the node IP. State is kept per full tuple in cilium_snat_v4_external, as Cilium does:
 *   one entry for the original direction (-> to_saddr/to_sport) and one for the reply
 *   direction (-> to_daddr/to_dport). The source port is kept when the reply tuple is free;
 *   otherwise another port in [min_port, max_port] is picked (random first, then +1), so two
 *   pods using the same source port towards the same server both get their replies.
 *   Traffic to the native-routing CIDR (other nodes' pods) is not translated: it is routed.
 *   ICMP echo requests are translated too, their identifier playing the source port.
 * ingress (tc clsact ingress on the node's eth0):
 *   - TCP/UDP to the node IP matching a reply tuple: destination rewritten to the pod, the
 *     L2 header rewritten for the pod's lxc veth (nr_masq_ep) and redirected there with
 *     bpf_redirect. The reply never traverses the node's netfilter, so the node's conntrack
 *     saw the pod's SYN but never the SYN-ACK: the asymmetry of the cilium-kube-proxy-forward-race incident.
 *   - ICMP errors (destination unreachable, time exceeded) quoting a translated packet are
 *     reverse-translated too (RFC 5508: outer destination, inner source address and port,
 *     and every checksum involved), so "fragmentation needed" reaches the pod and PMTU works.
 *
 *   - ICMP echo replies: the echo identifier is translated like a port (not clamped to the range).
 *
 * Not modelled: non-first IP fragments, IPv6, entry expiry (the map is LRU, like Cilium's).
 *
 * Maps are plain (no LIBBPF_PIN_BY_NAME): `bpftool prog loadall ... pinmaps DIR` pins them
 * under DIR/<map name> and both programs of one load share them. No global variables: they
 * would become extra maps to pin and manage.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/pkt_cls.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <stddef.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

/* Cilium's tuple flags (bpf/lib/common.h): NAT_DIR_EGRESS = TUPLE_F_OUT, NAT_DIR_INGRESS = TUPLE_F_IN. */
#define TUPLE_F_OUT 0
#define TUPLE_F_IN 1
#define SNAT_COLLISION_RETRIES 32

/* linux/icmp.h pulls in libc headers that do not build for -target bpf: the few bits we need. */
#define ICMP_DEST_UNREACH 3
#define ICMP_TIME_EXCEEDED 11
#define NR_ICMP_UNREACH 15
#define ICMP_EXC_FRAGTIME 1
struct icmphdr {
	__u8 type;
	__u8 code;
	__sum16 checksum;
	__be32 rest;
};

/* Key 0 only. Written by the harness before traffic; node_ip == 0 means "not configured,
 * pass everything", so an attached but unconfigured program is harmless. */
struct masq_cfg {
	__be32 node_ip;     /* SNAT address (node's eth0 address) */
	__be32 pod_net;     /* this node's pod CIDR */
	__be32 pod_mask;
	__be32 native_net;  /* native-routing CIDR: never masqueraded */
	__be32 native_mask;
	__u16 min_port;     /* host order: ports SNAT may hand out */
	__u16 max_port;
};

/* Cilium's struct ipv4_ct_tuple: 14 bytes, packed. */
struct ipv4_ct_tuple {
	__be32 daddr;
	__be32 saddr;
	__be16 dport;
	__be16 sport;
	__u8 nexthdr;
	__u8 flags;
} __attribute__((packed));

/* Cilium's struct nat_entry + struct ipv4_nat_entry: 40 bytes. */
struct nat_entry {
	__u64 created;
	__u64 needs_ct;
	__u64 pad1;
	__u64 pad2;
};

struct ipv4_nat_entry {
	struct nat_entry common;
	union {
		struct {
			__be32 to_saddr;
			__be16 to_sport;
		};
		struct {
			__be32 to_daddr;
			__be16 to_dport;
		};
	};
};

/* Keyed by pod IP; written by the harness (the "CNI"), like Cilium's endpoint map. */
struct masq_ep {
	__u32 ifindex;     /* lxc host veth in the node netns, host byte order */
	__u8 pod_mac[6];   /* pod eth0 MAC: L2 destination of redirected replies */
	__u8 lxc_mac[6];   /* lxc MAC: L2 source, the pod's gateway MAC */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct masq_cfg);
} nr_masq_cfg SEC(".maps");

/* The name Cilium gives its map (15-char kernel name: cilium_snat_v4_); LRU, never deleted explicitly. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct ipv4_ct_tuple);
	__type(value, struct ipv4_nat_entry);
} cilium_snat_v4_external SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, __be32);
	__type(value, struct masq_ep);
} nr_masq_ep SEC(".maps");

#define IP_OFF    sizeof(struct ethhdr)
#define IP_CSUM   (IP_OFF + offsetof(struct iphdr, check))
#define IP_SADDR  (IP_OFF + offsetof(struct iphdr, saddr))
#define IP_DADDR  (IP_OFF + offsetof(struct iphdr, daddr))

struct pkt {
	__u32 l4_off;   /* offset of the TCP/UDP/ICMP header */
	__u32 csum_off; /* offset of the TCP/UDP checksum */
	__u8 proto;
	__be32 saddr, daddr;
	__be16 sport, dport;
};

/* Parse Ethernet/IPv4 and the ports of TCP/UDP. Returns 0 for TCP/UDP, 1 for ICMP, -1 otherwise. */
static __always_inline int parse(struct __sk_buff *skb, struct pkt *p)
{
	void *data = (void *)(long)skb->data;
	void *end = (void *)(long)skb->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = data + IP_OFF;

	if ((void *)(ip + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP))
		return -1;
	/* Non-first fragments carry no ports. */
	if (ip->frag_off & bpf_htons(0x1fff))
		return -1;
	if (ip->ihl < 5)
		return -1;
	p->proto = ip->protocol;
	p->saddr = ip->saddr;
	p->daddr = ip->daddr;
	p->l4_off = IP_OFF + ip->ihl * 4;
	if (p->proto == IPPROTO_ICMP)
		return 1;

	/* Ports sit at the same place in TCP and UDP. */
	__be16 *ports = data + p->l4_off;
	if ((void *)(ports + 2) > end)
		return -1;
	p->sport = ports[0];
	p->dport = ports[1];

	if (p->proto == IPPROTO_TCP)
		p->csum_off = p->l4_off + offsetof(struct tcphdr, check);
	else if (p->proto == IPPROTO_UDP)
		p->csum_off = p->l4_off + offsetof(struct udphdr, check);
	else
		return -1;
	return 0;
}

static __always_inline __u64 l4_flags(__u8 proto, __u64 size)
{
	/* UDP checksum 0 means "none" and must stay 0. */
	return proto == IPPROTO_UDP ? size | BPF_F_MARK_MANGLED_0 : size;
}

/* Replace one IPv4 address at addr_off and fix both checksums. The L4 checksum covers the
 * address through the pseudo header, hence BPF_F_PSEUDO_HDR. Without it a fully computed
 * checksum is still fixed, but a CHECKSUM_PARTIAL one (veth TX offload: the field holds only
 * the pseudo-header sum) is left stale and the packet goes out with a bad checksum once a
 * device without offload finalises it. */
static __always_inline int rewrite_addr(struct __sk_buff *skb, const struct pkt *p,
					__u32 addr_off, __be32 old, __be32 new)
{
	if (bpf_l4_csum_replace(skb, p->csum_off, old, new, l4_flags(p->proto, BPF_F_PSEUDO_HDR | sizeof(new))))
		return -1;
	if (bpf_l3_csum_replace(skb, IP_CSUM, old, new, sizeof(new)))
		return -1;
	return bpf_skb_store_bytes(skb, addr_off, &new, sizeof(new), 0);
}

/* A port is not in the pseudo header: a plain 2-byte checksum update. */
static __always_inline int rewrite_port(struct __sk_buff *skb, const struct pkt *p,
					__u32 port_off, __be16 old, __be16 new)
{
	if (old == new)
		return 0;
	if (bpf_l4_csum_replace(skb, p->csum_off, old, new, l4_flags(p->proto, sizeof(new))))
		return -1;
	return bpf_skb_store_bytes(skb, port_off, &new, sizeof(new), 0);
}

static __always_inline int in_net(__be32 addr, __be32 net, __be32 mask)
{
	return mask && (addr & mask) == net;
}

/* The reply tuple for an original tuple translated to (addr, port): what the reply carries. */
static __always_inline void reply_tuple(const struct ipv4_ct_tuple *o, struct ipv4_ct_tuple *r,
					__be32 addr, __be16 port)
{
	r->daddr = addr;
	r->saddr = o->daddr;
	r->dport = port;
	r->sport = o->dport;
	r->nexthdr = o->nexthdr;
	r->flags = TUPLE_F_IN;
}

/* Cilium's __snat_try_keep_port + collision loop: keep the source port if it is in range and its
 * reply tuple is free, else a random port, then the following ones. Both entries are created
 * with BPF_NOEXIST, reply first, so two CPUs racing for one port cannot both win it. */
static __always_inline struct ipv4_nat_entry *new_mapping(const struct masq_cfg *cfg,
							  const struct ipv4_ct_tuple *o,
							  __u32 min_port, __u32 max_port)
{
	struct ipv4_nat_entry ostate = {}, rstate = {};
	struct ipv4_ct_tuple r = {};
	__u32 span = max_port - min_port + 1;
	__u32 port = bpf_ntohs(o->sport);
	int i;

	if (!span || span > 65536)
		return 0;
	if (port < min_port || port > max_port)
		port = min_port + bpf_get_prandom_u32() % span;
	ostate.common.created = rstate.common.created = bpf_ktime_get_ns();
	ostate.to_saddr = cfg->node_ip;
	rstate.to_daddr = o->saddr;
	rstate.to_dport = o->sport;
	for (i = 0; i < SNAT_COLLISION_RETRIES; i++) {
		reply_tuple(o, &r, cfg->node_ip, bpf_htons((__u16)port));
		ostate.to_sport = bpf_htons((__u16)port);
		if (!bpf_map_update_elem(&cilium_snat_v4_external, &r, &rstate, BPF_NOEXIST)) {
			if (!bpf_map_update_elem(&cilium_snat_v4_external, o, &ostate, BPF_NOEXIST))
				return bpf_map_lookup_elem(&cilium_snat_v4_external, o);
			bpf_map_delete_elem(&cilium_snat_v4_external, &r);
			/* another CPU created the original entry first: use it */
			return bpf_map_lookup_elem(&cilium_snat_v4_external, o);
		}
		port = i ? port + 1 : min_port + bpf_get_prandom_u32() % span;
		if (port < min_port || port > max_port)
			port = min_port;
	}
	return 0;
}

/* Echo request/reply: the identifier plays the port (source port going out, destination port of
 * the reply); Cilium does not clamp it to the port range. Only the ICMP checksum covers it, and
 * ICMP has no pseudo header, so the address rewrite touches the IP checksum alone. */
struct echo {
	__u8 type;
	__u8 code;
	__sum16 checksum;
	__be16 id;
};
#define ICMP_ECHOREPLY 0
#define ICMP_ECHO 8

static __always_inline int echo_egress(struct __sk_buff *skb, const struct masq_cfg *cfg, const struct pkt *p)
{
	struct echo e;

	if (bpf_skb_load_bytes(skb, p->l4_off, &e, sizeof(e)) || e.type != ICMP_ECHO)
		return TC_ACT_OK;
	struct ipv4_ct_tuple o = {
		.daddr = p->daddr, .saddr = p->saddr, .dport = 0, .sport = e.id,
		.nexthdr = IPPROTO_ICMP, .flags = TUPLE_F_OUT,
	};
	struct ipv4_nat_entry *state = bpf_map_lookup_elem(&cilium_snat_v4_external, &o);
	if (!state)
		state = new_mapping(cfg, &o, 0, 65535);
	if (!state)
		return TC_ACT_SHOT;
	__be32 to_saddr = state->to_saddr;
	__be16 to_id = state->to_sport;

	if (to_id != e.id &&
	    (bpf_l4_csum_replace(skb, p->l4_off + offsetof(struct echo, checksum), e.id, to_id, sizeof(to_id)) ||
	     bpf_skb_store_bytes(skb, p->l4_off + offsetof(struct echo, id), &to_id, sizeof(to_id), 0)))
		return TC_ACT_SHOT;
	if (bpf_l3_csum_replace(skb, IP_CSUM, p->saddr, to_saddr, 4) ||
	    bpf_skb_store_bytes(skb, IP_SADDR, &to_saddr, sizeof(to_saddr), 0))
		return TC_ACT_SHOT;
	return TC_ACT_OK;
}

SEC("tc")
int nr_masq_egress(struct __sk_buff *skb)
{
	__u32 zero = 0;
	struct masq_cfg *cfg = bpf_map_lookup_elem(&nr_masq_cfg, &zero);
	struct ipv4_nat_entry *state;
	struct pkt p;

	int kind;

	if (!cfg || !cfg->node_ip)
		return TC_ACT_OK;
	kind = parse(skb, &p);
	if (kind < 0 || !in_net(p.saddr, cfg->pod_net, cfg->pod_mask))
		return TC_ACT_OK;
	/* IPV4_SNAT_EXCLUSION_DST_CIDR: pods on other nodes are reached by native routing */
	if (in_net(p.daddr, cfg->native_net, cfg->native_mask))
		return TC_ACT_OK;
	if (kind == 1)
		return echo_egress(skb, cfg, &p);

	struct ipv4_ct_tuple o = {
		.daddr = p.daddr, .saddr = p.saddr, .dport = p.dport, .sport = p.sport,
		.nexthdr = p.proto, .flags = TUPLE_F_OUT,
	};
	state = bpf_map_lookup_elem(&cilium_snat_v4_external, &o);
	if (!state)
		state = new_mapping(cfg, &o, cfg->min_port, cfg->max_port);
	if (!state)
		return TC_ACT_SHOT; /* no free port: Cilium drops with DROP_NAT_NO_MAPPING */
	__be32 to_saddr = state->to_saddr;
	__be16 to_sport = state->to_sport;

	if (rewrite_port(skb, &p, p.l4_off, p.sport, to_sport))
		return TC_ACT_SHOT;
	if (rewrite_addr(skb, &p, IP_SADDR, p.saddr, to_saddr))
		return TC_ACT_SHOT;
	return TC_ACT_OK;
}

/* bpf_redirect to the lxc's egress skips the node's routing and neighbour layer, so the L2
 * header must already be what the pod expects. */
static __always_inline int to_endpoint(struct __sk_buff *skb, __be32 pod_ip)
{
	struct masq_ep *ep = bpf_map_lookup_elem(&nr_masq_ep, &pod_ip);

	if (!ep)
		return TC_ACT_OK;
	if (bpf_skb_store_bytes(skb, offsetof(struct ethhdr, h_dest), ep->pod_mac, ETH_ALEN, 0) ||
	    bpf_skb_store_bytes(skb, offsetof(struct ethhdr, h_source), ep->lxc_mac, ETH_ALEN, 0))
		return TC_ACT_SHOT;
	return bpf_redirect(ep->ifindex, 0);
}

/* Update the ICMP checksum at csum_off for a 2- or 4-byte change inside the ICMP message. */
static __always_inline int icmp_csum(struct __sk_buff *skb, __u32 csum_off, __u32 old, __u32 new, __u64 size)
{
	return bpf_l4_csum_replace(skb, csum_off, old, new, size);
}

/* RFC 5508: an ICMP error quotes the packet that caused it, here node:port -> server. Find the
 * flow by that quote (as a reply tuple), then rewrite the quote's source back to the pod, the
 * outer destination to the pod, and every checksum covering what changed. */
static __always_inline int icmp_error_ingress(struct __sk_buff *skb, const struct masq_cfg *cfg,
					      const struct pkt *p)
{
	struct icmphdr icmp;
	struct iphdr inner;
	__u32 icmp_csum_off = p->l4_off + offsetof(struct icmphdr, checksum);
	__u32 in_ip = p->l4_off + sizeof(struct icmphdr);
	__be16 ports[2];
	__u32 in_l4;

	if (bpf_skb_load_bytes(skb, p->l4_off, &icmp, sizeof(icmp)))
		return TC_ACT_OK;
	if (!(icmp.type == ICMP_DEST_UNREACH && icmp.code <= NR_ICMP_UNREACH) &&
	    !(icmp.type == ICMP_TIME_EXCEEDED && icmp.code <= ICMP_EXC_FRAGTIME))
		return TC_ACT_OK;
	if (bpf_skb_load_bytes(skb, in_ip, &inner, sizeof(inner)) || inner.ihl < 5)
		return TC_ACT_OK;
	if (inner.protocol != IPPROTO_TCP && inner.protocol != IPPROTO_UDP)
		return TC_ACT_OK;
	in_l4 = in_ip + inner.ihl * 4;
	if (bpf_skb_load_bytes(skb, in_l4, ports, sizeof(ports)))
		return TC_ACT_OK;

	struct ipv4_ct_tuple r = {
		.daddr = inner.saddr, .saddr = inner.daddr, .dport = ports[0], .sport = ports[1],
		.nexthdr = inner.protocol, .flags = TUPLE_F_IN,
	};
	struct ipv4_nat_entry *state = bpf_map_lookup_elem(&cilium_snat_v4_external, &r);
	if (!state || inner.saddr != cfg->node_ip)
		return TC_ACT_OK;
	__be32 pod_ip = state->to_daddr;
	__be16 pod_port = state->to_dport;
	__u32 in_csum_off = in_ip + offsetof(struct iphdr, check);
	__u32 in_l4_csum_off = in_l4 + (inner.protocol == IPPROTO_TCP ? offsetof(struct tcphdr, check) : offsetof(struct udphdr, check));
	__be16 old_in_csum, new_in_csum, old_l4, new_l4;

	/* quoted L4 checksum, when the quote is long enough to carry it (UDP: 0 = none) */
	if (!bpf_skb_load_bytes(skb, in_l4_csum_off, &old_l4, sizeof(old_l4)) &&
	    !(inner.protocol == IPPROTO_UDP && old_l4 == 0)) {
		if (bpf_l4_csum_replace(skb, in_l4_csum_off, inner.saddr, pod_ip, 4) ||
		    bpf_l4_csum_replace(skb, in_l4_csum_off, ports[0], pod_port, 2) ||
		    bpf_skb_load_bytes(skb, in_l4_csum_off, &new_l4, sizeof(new_l4)) ||
		    icmp_csum(skb, icmp_csum_off, old_l4, new_l4, 2))
			return TC_ACT_SHOT;
	}
	/* quoted source port */
	if (icmp_csum(skb, icmp_csum_off, ports[0], pod_port, 2) ||
	    bpf_skb_store_bytes(skb, in_l4, &pod_port, sizeof(pod_port), 0))
		return TC_ACT_SHOT;
	/* quoted source address and the quoted IP header checksum */
	if (bpf_skb_load_bytes(skb, in_csum_off, &old_in_csum, sizeof(old_in_csum)) ||
	    bpf_l3_csum_replace(skb, in_csum_off, inner.saddr, pod_ip, 4) ||
	    bpf_skb_load_bytes(skb, in_csum_off, &new_in_csum, sizeof(new_in_csum)) ||
	    icmp_csum(skb, icmp_csum_off, old_in_csum, new_in_csum, 2) ||
	    icmp_csum(skb, icmp_csum_off, inner.saddr, pod_ip, 4) ||
	    bpf_skb_store_bytes(skb, in_ip + offsetof(struct iphdr, saddr), &pod_ip, sizeof(pod_ip), 0))
		return TC_ACT_SHOT;
	/* outer destination: the ICMP checksum has no pseudo header */
	if (bpf_l3_csum_replace(skb, IP_CSUM, p->daddr, pod_ip, 4) ||
	    bpf_skb_store_bytes(skb, IP_DADDR, &pod_ip, sizeof(pod_ip), 0))
		return TC_ACT_SHOT;
	return to_endpoint(skb, pod_ip);
}

/* An echo reply to a translated echo request: identifier and destination back to the pod. */
static __always_inline int echo_ingress(struct __sk_buff *skb, const struct pkt *p, __be16 id)
{
	struct ipv4_ct_tuple r = {
		.daddr = p->daddr, .saddr = p->saddr, .dport = id, .sport = 0,
		.nexthdr = IPPROTO_ICMP, .flags = TUPLE_F_IN,
	};
	struct ipv4_nat_entry *state = bpf_map_lookup_elem(&cilium_snat_v4_external, &r);
	if (!state)
		return TC_ACT_OK;
	__be32 pod_ip = state->to_daddr;
	__be16 pod_id = state->to_dport;

	if (pod_id != id &&
	    (bpf_l4_csum_replace(skb, p->l4_off + offsetof(struct echo, checksum), id, pod_id, sizeof(pod_id)) ||
	     bpf_skb_store_bytes(skb, p->l4_off + offsetof(struct echo, id), &pod_id, sizeof(pod_id), 0)))
		return TC_ACT_SHOT;
	if (bpf_l3_csum_replace(skb, IP_CSUM, p->daddr, pod_ip, 4) ||
	    bpf_skb_store_bytes(skb, IP_DADDR, &pod_ip, sizeof(pod_ip), 0))
		return TC_ACT_SHOT;
	return to_endpoint(skb, pod_ip);
}

static __always_inline int icmp_ingress(struct __sk_buff *skb, const struct masq_cfg *cfg, const struct pkt *p)
{
	struct echo e;

	if (bpf_skb_load_bytes(skb, p->l4_off, &e, sizeof(e)))
		return TC_ACT_OK;
	if (e.type == ICMP_ECHOREPLY)
		return echo_ingress(skb, p, e.id);
	return icmp_error_ingress(skb, cfg, p);
}

SEC("tc")
int nr_masq_ingress(struct __sk_buff *skb)
{
	__u32 zero = 0;
	struct masq_cfg *cfg = bpf_map_lookup_elem(&nr_masq_cfg, &zero);
	struct pkt p;
	int kind;

	if (!cfg || !cfg->node_ip)
		return TC_ACT_OK;
	kind = parse(skb, &p);
	if (kind < 0 || p.daddr != cfg->node_ip)
		return TC_ACT_OK;
	if (kind == 1)
		return icmp_ingress(skb, cfg, &p);

	struct ipv4_ct_tuple r = {
		.daddr = p.daddr, .saddr = p.saddr, .dport = p.dport, .sport = p.sport,
		.nexthdr = p.proto, .flags = TUPLE_F_IN,
	};
	struct ipv4_nat_entry *state = bpf_map_lookup_elem(&cilium_snat_v4_external, &r);
	if (!state)
		return TC_ACT_OK; /* traffic for the node itself */
	__be32 pod_ip = state->to_daddr;
	__be16 pod_port = state->to_dport;

	if (rewrite_port(skb, &p, p.l4_off + 2, p.dport, pod_port))
		return TC_ACT_SHOT;
	if (rewrite_addr(skb, &p, IP_DADDR, p.daddr, pod_ip))
		return TC_ACT_SHOT;
	return to_endpoint(skb, pod_ip);
}

char _license[] SEC("license") = "GPL";
