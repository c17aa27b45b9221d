// SPDX-License-Identifier: GPL-2.0
/*
 * netrepro: a minimal model of Cilium's BPF masquerade (bpf.masquerade=true) for the
 * node's native device, used by incident 01 (kube-proxy vs Cilium FORWARD chain race).
 *
 * egress  (tc clsact egress on the node's eth0):
 *   IPv4 TCP/UDP whose source is in the pod CIDR is SNATed to the node IP. The source port
 *   is kept, and (port, proto) -> pod IP is remembered in nr_masq_snat.
 * ingress (tc clsact ingress on the node's eth0):
 *   IPv4 TCP/UDP to the node IP whose destination port is in nr_masq_snat is reverse
 *   SNATed, its L2 header rewritten for the pod's lxc veth (nr_masq_ep) and redirected
 *   there with bpf_redirect. The reply therefore never traverses the node's netfilter:
 *   the node's conntrack saw the pod's SYN (it was forwarded before the tc egress hook)
 *   but never sees the SYN-ACK. That asymmetry is the whole point of incident 01.
 *
 * Deliberately NOT modelled: port collisions between pods (Cilium allocates a new port
 * then), ICMP (errors are not reverse-translated), non-first IP fragments, IPv6.
 *
 * Maps are plain (no LIBBPF_PIN_BY_NAME): `bpftool prog loadall ... pinmaps DIR` pins them
 * under DIR/<map name> and both programs of one load share them. There are no global
 * variables on purpose: .bss/.data/.rodata would become extra maps to pin and manage.
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

/* Key 0 only. Written by the harness before traffic; node_ip == 0 means "not configured,
 * pass everything", so an attached but unconfigured program is harmless. */
struct masq_cfg {
	__be32 node_ip;  /* SNAT address (node's eth0 address) */
	__be32 pod_net;  /* pod CIDR network address */
	__be32 pod_mask; /* pod CIDR netmask, e.g. ff.ff.ff.00 for /24 */
};

struct masq_snat_key {
	__be16 port; /* kept source port == reply destination port */
	__u8 proto;  /* IPPROTO_TCP / IPPROTO_UDP */
	__u8 pad;
};

struct masq_snat_val {
	__be32 pod_ip;
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

/* LRU like Cilium's SNAT maps: entries are never deleted explicitly. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct masq_snat_key);
	__type(value, struct masq_snat_val);
} nr_masq_snat SEC(".maps");

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
	__u32 l4_off;   /* offset of the TCP/UDP header */
	__u32 csum_off; /* offset of the L4 checksum */
	__u8 proto;
	__be32 saddr, daddr;
	__be16 sport, dport;
};

/* Parse Ethernet/IPv4/TCP|UDP. Returns 0 if the packet is one we may translate. */
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

/* Replace one IPv4 address at addr_off and fix both checksums. The L4 checksum covers the
 * address through the pseudo header, hence BPF_F_PSEUDO_HDR. Without it a fully computed
 * checksum is still fixed, but a CHECKSUM_PARTIAL one (veth TX offload: the field holds only
 * the pseudo-header sum) is left stale and the packet goes out with a bad checksum once a
 * device without offload finalises it. UDP checksum 0 means "none" and must stay 0:
 * BPF_F_MARK_MANGLED_0. */
static __always_inline int rewrite_addr(struct __sk_buff *skb, const struct pkt *p,
					__u32 addr_off, __be32 old, __be32 new)
{
	__u64 l4flags = BPF_F_PSEUDO_HDR | sizeof(new);

	if (p->proto == IPPROTO_UDP)
		l4flags |= BPF_F_MARK_MANGLED_0;
	if (bpf_l4_csum_replace(skb, p->csum_off, old, new, l4flags))
		return -1;
	if (bpf_l3_csum_replace(skb, IP_CSUM, old, new, sizeof(new)))
		return -1;
	return bpf_skb_store_bytes(skb, addr_off, &new, sizeof(new), 0);
}

SEC("tc")
int nr_masq_egress(struct __sk_buff *skb)
{
	__u32 zero = 0;
	struct masq_cfg *cfg = bpf_map_lookup_elem(&nr_masq_cfg, &zero);
	struct pkt p;

	if (!cfg || !cfg->node_ip || parse(skb, &p))
		return TC_ACT_OK;
	if ((p.saddr & cfg->pod_mask) != cfg->pod_net)
		return TC_ACT_OK;

	struct masq_snat_key k = { .port = p.sport, .proto = p.proto };
	struct masq_snat_val v = { .pod_ip = p.saddr };

	/* Record before rewriting: the reply may arrive as soon as the packet leaves. */
	bpf_map_update_elem(&nr_masq_snat, &k, &v, BPF_ANY);
	if (rewrite_addr(skb, &p, IP_SADDR, p.saddr, cfg->node_ip))
		return TC_ACT_SHOT;
	return TC_ACT_OK;
}

SEC("tc")
int nr_masq_ingress(struct __sk_buff *skb)
{
	__u32 zero = 0;
	struct masq_cfg *cfg = bpf_map_lookup_elem(&nr_masq_cfg, &zero);
	struct pkt p;

	if (!cfg || !cfg->node_ip || parse(skb, &p))
		return TC_ACT_OK;
	if (p.daddr != cfg->node_ip)
		return TC_ACT_OK;

	struct masq_snat_key k = { .port = p.dport, .proto = p.proto };
	struct masq_snat_val *v = bpf_map_lookup_elem(&nr_masq_snat, &k);
	if (!v)
		return TC_ACT_OK; /* traffic for the node itself */
	__be32 pod_ip = v->pod_ip;
	struct masq_ep *ep = bpf_map_lookup_elem(&nr_masq_ep, &pod_ip);
	if (!ep)
		return TC_ACT_OK;

	if (rewrite_addr(skb, &p, IP_DADDR, p.daddr, pod_ip))
		return TC_ACT_SHOT;
	/* bpf_redirect to the lxc's egress skips the node's routing and neighbour layer, so
	 * the L2 header must already be what the pod expects. */
	if (bpf_skb_store_bytes(skb, offsetof(struct ethhdr, h_dest), ep->pod_mac, ETH_ALEN, 0) ||
	    bpf_skb_store_bytes(skb, offsetof(struct ethhdr, h_source), ep->lxc_mac, ETH_ALEN, 0))
		return TC_ACT_SHOT;
	return bpf_redirect(ep->ifindex, 0);
}

char _license[] SEC("license") = "GPL";
