// SPDX-License-Identifier: GPL-2.0
/*
 * netrepro: a minimal model of Cilium's socket load balancer (cgroup/connect4), used by
 * incident 03 (a stale socket-LB program with an outdated service map).
 *
 * connect() to a service address:port is rewritten in the system call to a backend
 * address:port, so no packet ever carries the service address. Map names and key/value
 * layouts follow Cilium (bpf/lib/common.h) so the evidence looks like the incident's:
 * `bpftool map show` prints the kernel's 15-char names `cilium_lb4_serv` and
 * `cilium_lb4_back`, and every independent load of this object creates its own pair of
 * maps with the same names. That is how a stale program keeps an outdated service map.
 *
 * Lookup as in Cilium: slot 0 of a service (backend_slot = 0) is the frontend and carries
 * the backend count; slots 1..count carry backend ids, resolved in cilium_lb4_backends_v3.
 * The program always returns 1 (SYS_PROCEED): an unknown destination passes unchanged,
 * which is why a second, correct program attached after a stale one cannot undo the
 * stale rewrite (the stale backend address is no service).
 */
#include <linux/bpf.h>
#include <linux/in.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#define SYS_PROCEED 1

struct lb4_key {
	__be32 address;     /* service address */
	__be16 dport;       /* service port */
	__u16 backend_slot; /* 0: frontend entry, 1..count: backend entries (host order) */
	__u8 proto;         /* IPPROTO_TCP/UDP, or 0 = any (what Cilium < 1.15 always used) */
	__u8 scope;         /* 0 = external (LB_LOOKUP_SCOPE_EXT) */
	__u8 pad[2];
};

struct lb4_service {
	__u32 backend_id;    /* slot > 0: backend id; slot 0: 0 */
	__u16 count;         /* slot 0: number of backend slots */
	__u16 rev_nat_index; /* unused here, kept for Cilium's layout */
	__u8 flags;
	__u8 flags2;
	__u8 pad[2];
};

struct lb4_backend {
	__be32 address;
	__be16 port;
	__u8 proto;
	__u8 flags;
	__u16 cluster_id;
	__u8 zone;
	__u8 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, struct lb4_key);
	__type(value, struct lb4_service);
} cilium_lb4_services_v2 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, struct lb4_backend);
} cilium_lb4_backends_v3 SEC(".maps");

static __always_inline struct lb4_service *lookup_frontend(struct lb4_key *key, __u8 proto)
{
	struct lb4_service *svc;

	/* Exact protocol first, then the protocol-agnostic entry, like newer Cilium. */
	key->proto = proto;
	svc = bpf_map_lookup_elem(&cilium_lb4_services_v2, key);
	if (svc)
		return svc;
	key->proto = 0;
	return bpf_map_lookup_elem(&cilium_lb4_services_v2, key);
}

SEC("cgroup/connect4")
int cil_sock4_connect(struct bpf_sock_addr *ctx)
{
	struct lb4_key key = {
		.address = ctx->user_ip4,
		.dport = (__be16)ctx->user_port, /* low 16 bits, network order */
	};
	struct lb4_service *svc = lookup_frontend(&key, (__u8)ctx->protocol);
	struct lb4_backend *be;
	__u32 backend_id;

	if (!svc || !svc->count)
		return SYS_PROCEED;
	/* key.proto is now whichever protocol matched the frontend. */
	key.backend_slot = (bpf_get_prandom_u32() % svc->count) + 1;
	svc = bpf_map_lookup_elem(&cilium_lb4_services_v2, &key);
	if (!svc)
		return SYS_PROCEED;
	backend_id = svc->backend_id;
	be = bpf_map_lookup_elem(&cilium_lb4_backends_v3, &backend_id);
	if (!be)
		return SYS_PROCEED;

	ctx->user_ip4 = be->address;
	ctx->user_port = be->port;
	return SYS_PROCEED;
}

char _license[] SEC("license") = "GPL";
