// The kernel settings kube-proxy (iptables mode) ensures when it starts, beside its rules: route_localnet on
// every interface of the node, so that a connection from the node to 127.0.0.1 may leave it once DNATed to a
// pod (a NodePort on localhost; a hostPort on 127.0.0.1 relies on it too). pkg/proxy/iptables/proxier.go
// NewProxier: EnsureSysctl(net/ipv4/conf/all/route_localnet, 1), in every release from 1.14 (later ones only
// while NodePorts on localhost are allowed, the default). Set at start only: nothing sets it back while it runs.
export const KUBE_PROXY_SYSCTLS: Readonly<Record<string, number>> = { 'net.ipv4.conf.all.route_localnet': 1 };
