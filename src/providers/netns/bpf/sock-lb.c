// SPDX-License-Identifier: GPL-2.0
/*
 * netrepro: a model of Cilium's socket load balancer (bpf_sock.c) for the netns lab, used by
 * the stale-sock-lb-program incident (a stale socket-LB program with an outdated service map) and its UDP variant.
 *
 *   cgroup/connect4     cil_sock4_connect      TCP/UDP connect() to a service -> a backend
 *   cgroup/sendmsg4     cil_sock4_sendmsg      unconnected UDP sendto() to a service -> a backend
 *   cgroup/recvmsg4     cil_sock4_recvmsg      recvfrom() of a backend's reply -> shows the service
 *   cgroup/getpeername4 cil_sock4_getpeername  getpeername() of a translated socket -> the service
 *
 * The service address never appears on the wire. A service whose frontend has no backends
 * fails connect()/sendmsg() at once with EHOSTUNREACH, as Cilium's cil_sock4_connect does
 * (bpf_set_retval + reject), so no packet is sent. A known backend is remembered per socket
 * cookie in cilium_lb4_reverse_sk so replies and getpeername() show the service again; the
 * reverse entry is dropped when its service is gone or renumbered (rev_nat_index differs).
 *
 * Map names and key/value layouts follow Cilium (bpf/lib/common.h, bpf/lib/lb.h), so the
 * evidence reads like the incident's: `bpftool map show` prints the kernel's 15-char names
 * (cilium_lb4_serv, cilium_lb4_back, cilium_lb4_reve), and every independent load of this
 * object creates its own maps with the same names. That is how a stale program keeps an
 * outdated service map. An unknown destination passes unchanged, which is why a second,
 * correct program attached after a stale one cannot undo the stale rewrite.
 */
#include <linux/bpf.h>
#include <linux/in.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#define SYS_REJECT 0
#define SYS_PROCEED 1
#define EHOSTUNREACH 113
#define ENOMEM 12
#define ENOENT 2
#define ENXIO 6

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
	__u16 rev_nat_index; /* the frontend's id in cilium_lb4_reverse_nat */
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

struct lb4_reverse_nat {
	__be32 address;
	__be16 port;
} __attribute__((packed));

struct ipv4_revnat_tuple {
	__u64 cookie;
	__be32 address;
	__be16 port;
	__u16 pad;
};

struct ipv4_revnat_entry {
	__be32 address;
	__be16 port;
	__u16 rev_nat_index;
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

/* Written by the harness like the agent does; the tc datapath reads it, socket LB does not. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, __u16);
	__type(value, struct lb4_reverse_nat);
} cilium_lb4_reverse_nat SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct ipv4_revnat_tuple);
	__type(value, struct ipv4_revnat_entry);
} cilium_lb4_reverse_sk SEC(".maps");

static __always_inline struct lb4_service *lookup_frontend(struct lb4_key *key, __u8 proto)
{
	struct lb4_service *svc;

	/* Exact protocol first, then the protocol-agnostic entry, like newer Cilium. */
	key->backend_slot = 0;
	key->proto = proto;
	svc = bpf_map_lookup_elem(&cilium_lb4_services_v2, key);
	if (svc)
		return svc;
	key->proto = 0;
	return bpf_map_lookup_elem(&cilium_lb4_services_v2, key);
}

static __always_inline int xlate_fwd(struct bpf_sock_addr *ctx)
{
	struct lb4_key key = {
		.address = ctx->user_ip4,
		.dport = (__be16)ctx->user_port, /* low 16 bits, network order */
	};
	struct lb4_service *svc = lookup_frontend(&key, (__u8)ctx->protocol);
	struct ipv4_revnat_tuple rkey = {};
	struct ipv4_revnat_entry rval = {};
	struct lb4_backend *be;
	__u32 backend_id;

	if (!svc)
		return -ENXIO;
	if (!svc->count)
		return -EHOSTUNREACH;
	rval.address = key.address;
	rval.port = key.dport;
	rval.rev_nat_index = svc->rev_nat_index;
	/* key.proto is now whichever protocol matched the frontend. */
	key.backend_slot = (bpf_get_prandom_u32() % svc->count) + 1;
	svc = bpf_map_lookup_elem(&cilium_lb4_services_v2, &key);
	if (!svc)
		return -ENOENT;
	backend_id = svc->backend_id;
	be = bpf_map_lookup_elem(&cilium_lb4_backends_v3, &backend_id);
	if (!be)
		return -ENOENT;

	rkey.cookie = bpf_get_socket_cookie(ctx);
	rkey.address = be->address;
	rkey.port = be->port;
	if (bpf_map_update_elem(&cilium_lb4_reverse_sk, &rkey, &rval, BPF_ANY))
		return -ENOMEM;
	ctx->user_ip4 = be->address;
	ctx->user_port = be->port;
	return 0;
}

/* A backend address this socket was sent to by xlate_fwd -> the service it stood for. */
static __always_inline void xlate_rev(struct bpf_sock_addr *ctx)
{
	struct ipv4_revnat_tuple rkey = {
		.cookie = bpf_get_socket_cookie(ctx),
		.address = ctx->user_ip4,
		.port = (__be16)ctx->user_port,
	};
	struct ipv4_revnat_entry *rval = bpf_map_lookup_elem(&cilium_lb4_reverse_sk, &rkey);
	struct lb4_key key = {};
	struct lb4_service *svc;

	if (!rval)
		return;
	key.address = rval->address;
	key.dport = rval->port;
	svc = lookup_frontend(&key, (__u8)ctx->protocol);
	if (!svc || svc->rev_nat_index != rval->rev_nat_index) {
		/* the service is gone or was renumbered: the entry is stale */
		bpf_map_delete_elem(&cilium_lb4_reverse_sk, &rkey);
		return;
	}
	ctx->user_ip4 = rval->address;
	ctx->user_port = rval->port;
}

/* EHOSTUNREACH (no backends) and ENOMEM fail the system call; everything else proceeds. */
static __always_inline int verdict(int err)
{
	if (err == -EHOSTUNREACH || err == -ENOMEM) {
		bpf_set_retval(err);
		return SYS_REJECT;
	}
	return SYS_PROCEED;
}

SEC("cgroup/connect4")
int cil_sock4_connect(struct bpf_sock_addr *ctx)
{
	return verdict(xlate_fwd(ctx));
}

SEC("cgroup/sendmsg4")
int cil_sock4_sendmsg(struct bpf_sock_addr *ctx)
{
	return verdict(xlate_fwd(ctx));
}

SEC("cgroup/recvmsg4")
int cil_sock4_recvmsg(struct bpf_sock_addr *ctx)
{
	xlate_rev(ctx);
	return SYS_PROCEED;
}

SEC("cgroup/getpeername4")
int cil_sock4_getpeername(struct bpf_sock_addr *ctx)
{
	xlate_rev(ctx);
	return SYS_PROCEED;
}

char _license[] SEC("license") = "GPL";
