#!/usr/bin/env bash
# One-time build of what `--provider kind` needs on a host without Docker or a registry, cached outside the
# checkout beside the Kubernetes build (scripts/build-kubernetes.sh, which it runs before the node's root):
#   ${NETREPRO_CACHE:-$HOME/.cache/netrepro}/kind/<kind version>+<kubernetes debian version>/
#     bin/kind      kind from its source tree with Debian's Go and Go libraries (GOPATH mode)
#     bin/kubeadm   from the same Debian Kubernetes tree as the other binaries (build-kubernetes.sh --with kubeadm);
#                   bin/kubectl beside it, for the harness
#     docker/       Debian's docker.io unpacked (dockerd, docker, docker-proxy), not installed
#     rootfs/       the node's root: debootstrap bookworm, kind's base files, Debian's containerd/runc/CNI
#                   plugins, the Kubernetes binaries, the control-plane images in its containerd
#     node.tar      that root as a docker-archive image (node.ref names it); pod.tar the project's pod image
#     docker-data/  a Docker data root with both loaded, which each cluster's engine starts from
#     stamps/       one file per finished phase; a phase with a stamp is skipped
# kind is in neither Debian nor npm: its source comes from $NETREPRO_KIND_SRC (a tree of
# kubernetes-sigs/kind at the pinned tag), copied once into ${cache}/kind/source/<version>/, where later builds
# find it. Without one, nothing is built and the kind tests skip, saying this.
# Needs root (apt-get, debootstrap) on Debian 12 bookworm. Options: --print-dir.
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
. "$repo/scripts/lib/image-archive.sh"
cache="${NETREPRO_CACHE:-$HOME/.cache/netrepro}"
kind_version=v0.32.0 # src/providers/real/real-options.ts PINNED.kindVersion
started=$(date +%s)
say() { printf 'build-kind [%4ss] %s\n' "$(($(date +%s) - started))" "$*" >&2; }
die() { say "error: $*"; exit 1; }
trap 'say "error: line $LINENO: $BASH_COMMAND failed (exit $?)"' ERR

# 1. kind's source: the variable, else the cache.
source_dir="$cache/kind/source/$kind_version"
if [ -n "${NETREPRO_KIND_SRC:-}" ] && [ ! -e "$source_dir/go.mod" ]; then
  grep -q '^module sigs.k8s.io/kind$' "$NETREPRO_KIND_SRC/go.mod" 2>/dev/null || die "NETREPRO_KIND_SRC=$NETREPRO_KIND_SRC is not a kind source tree (no go.mod of sigs.k8s.io/kind)"
  mkdir -p "$source_dir"; cp -a "$NETREPRO_KIND_SRC/." "$source_dir/"
fi
if [ ! -e "$source_dir/go.mod" ]; then
  say "no kind source: set NETREPRO_KIND_SRC to a tree of kubernetes-sigs/kind at $kind_version (e.g. git -C KIND_CLONE archive $kind_version | tar -x -C DIR), or put it at $source_dir; kind is not built"
  exit 0
fi
grep -q "versionCore = \"${kind_version#v}\"" "$source_dir/pkg/cmd/kind/version/version.go" \
  || die "$source_dir is not kind $kind_version (pkg/cmd/kind/version/version.go)"

# 2. Debian packages: Go and the Go libraries kind's go.mod names, debootstrap, jq (the runtime wrapper).
need_pkgs=(debootstrap jq golang-1.19-go golang-github-alessio-shellescape-dev golang-github-burntsushi-toml-dev
  golang-github-evanphx-json-patch-dev golang-github-mattn-go-isatty-dev golang-github-pelletier-go-toml-dev
  golang-github-pkg-errors-dev golang-github-spf13-cobra-dev golang-github-spf13-pflag-dev golang-gopkg-yaml.v3-dev
  golang-k8s-sigs-yaml-dev golang-gopkg-yaml.v2-dev golang-golang-x-sys-dev golang-github-inconshreveable-mousetrap-dev)
missing=()
for p in "${need_pkgs[@]}"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  say "installing Debian packages: ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

# 3. Where the Kubernetes build is (built in step 7, before the first step that needs it).
kdir="$(bash "$repo/scripts/build-kubernetes.sh" --print-dir | tail -1)"
kver="$(basename "$kdir")"
k8s_release="v$(echo "$kver" | sed -E 's/^.*really//; s/-[^-]*$//')"
dir="$cache/kind/$kind_version+$kver"
if [ "${1:-}" = "--print-dir" ]; then echo "$dir"; exit 0; fi
mkdir -p "$dir/stamps" "$dir/bin" "$dir/images"
exec 9>"$dir/.lock"
flock 9
stamp() { [ -e "$dir/stamps/$1" ]; }
done_() { date -u +%FT%TZ > "$dir/stamps/$1"; }
say "kind $kind_version for Kubernetes $k8s_release -> $dir"

# 4. kind, GOPATH mode: Debian's libraries under /usr/share/gocode, two import paths kind took after
# Debian packaged them pointed at the packaged trees.
if ! stamp kind || [ ! -x "$dir/bin/kind" ]; then
  t0=$(date +%s)
  gopath="$dir/gopath"
  mkdir -p "$gopath/src/sigs.k8s.io" "$gopath/src/al.essio.dev/pkg" "$gopath/src/go.yaml.in/yaml"
  ln -sfn "$source_dir" "$gopath/src/sigs.k8s.io/kind"
  ln -sfn /usr/share/gocode/src/github.com/alessio/shellescape "$gopath/src/al.essio.dev/pkg/shellescape"
  ln -sfn /usr/share/gocode/src/gopkg.in/yaml.v3 "$gopath/src/go.yaml.in/yaml/v3"
  (
    export GOROOT=/usr/lib/go-1.19 GOPATH="$gopath:/usr/share/gocode" GOCACHE="$dir/gocache" GO111MODULE=off \
      GOPROXY=off GOFLAGS= CGO_ENABLED=0 GOTOOLCHAIN=local PATH="/usr/lib/go-1.19/bin:$PATH"
    cd "$gopath/src/sigs.k8s.io/kind"
    nice -n 10 go build -o "$dir/bin/kind.tmp" -trimpath \
      -ldflags "-s -w -X sigs.k8s.io/kind/pkg/cmd/kind/version.gitCommit=$kind_version" .
  )
  mv "$dir/bin/kind.tmp" "$dir/bin/kind"
  done_ kind
  say "built kind in $(($(date +%s) - t0)) s: $("$dir/bin/kind" version)"
fi
# 5. Docker from Debian's docker.io, unpacked: the run starts it as a private engine in namespaces of its own.
if ! stamp docker || [ ! -x "$dir/docker/usr/sbin/dockerd" ]; then
  say "docker.io unpacked (apt-get download; not installed)"
  rm -rf "$dir/docker" "$dir/debs"; mkdir -p "$dir/debs"
  (cd "$dir/debs" && apt-get download -qq docker.io >&2)
  dpkg-deb -x "$dir"/debs/docker.io_*.deb "$dir/docker"
  rm -rf "$dir/debs"
  done_ docker
fi

# 6. The node's root: Debian bookworm with what kind's base image installs, from Debian.
rootfs="$dir/rootfs"
if ! stamp rootfs; then
  t0=$(date +%s)
  mirror="$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)"
  say "debootstrap bookworm from ${mirror:-http://deb.debian.org/debian} (minutes)"
  rm -rf "$rootfs"
  # its own mount namespace: the /proc and /sys it mounts in the target vanish with it, also on failure
  nice -n 10 unshare --mount --propagation private debootstrap --variant=minbase \
    --include=systemd,systemd-sysv,dbus,conntrack,iptables,nftables,iproute2,ethtool,util-linux,mount,kmod,libseccomp2,pigz,bash,ca-certificates,curl,jq,procps,containerd,runc,containernetworking-plugins,tcpdump,socat,ebtables \
    bookworm "$rootfs" "${mirror:-http://deb.debian.org/debian}" >"$dir/debootstrap.log" 2>&1 \
    || die "debootstrap failed: see $dir/debootstrap.log"
  rm -f "$dir/stamps/node-root"
  done_ rootfs
  say "rootfs in $(($(date +%s) - t0)) s ($(du -sh "$rootfs" | cut -f1))"
fi

# 7. kind's base image on that root: its files, its systemd set-up, the Kubernetes binaries. Two changes of
# netrepro's to the entrypoint (docs/kind-build.md):
#  - no self bind mount of the kubelet cgroup root: kubelet 1.20 on cgroup v1 takes a subsystem's last mount
#    as its root and then finds no /kubelet under it;
#  - kubelet's kernel-wide tunables (vm.*, kernel.panic*) are files in the node's mount namespace, bind-mounted
#    over /proc/sys with kubelet's values: it reads them as set and never writes the host's kernel.
bash "$repo/scripts/build-kubernetes.sh" --with kubeadm >/dev/null
[ -x "$kdir/bin/kubeadm" ] || die "build-kubernetes.sh built no kubeadm in $kdir/bin"
cp "$kdir/bin/kubeadm" "$kdir/bin/kubectl" "$dir/bin/"
if ! stamp node-root; then
  files="$source_dir/images/base/files"
  install -m 0755 "$files"/usr/local/bin/* "$rootfs/usr/local/bin/"
  mkdir -p "$rootfs/kind/bin" "$rootfs/etc/containerd" "$rootfs/etc/systemd/system/kubelet.service.d" "$rootfs/etc/kubernetes/manifests"
  cp -r "$files/kind/." "$rootfs/kind/"; chmod 0755 "$rootfs/kind" "$rootfs/kind/bin" "$rootfs"/kind/bin/*
  cp -r "$files/etc/default" "$files/etc/sysctl.d" "$rootfs/etc/"
  install -m 0644 "$files/etc/crictl.yaml" "$rootfs/etc/"
  for f in "$files"/etc/systemd/system/*; do [ -f "$f" ] && install -m 0644 "$f" "$rootfs/etc/systemd/system/"; done
  install -m 0644 "$files"/etc/systemd/system/kubelet.service.d/* "$rootfs/etc/systemd/system/kubelet.service.d/"
  entry="$rootfs/usr/local/bin/entrypoint"
  grep -q 'mount --bind "${subsystem}/${cgroup_root}" "${subsystem}/${cgroup_root}"' "$entry" \
    || die "kind's entrypoint has no kubelet cgroup self bind mount where netrepro expects one"
  sed -i 's|^\( *\)mount --bind "${subsystem}/${cgroup_root}" "${subsystem}/${cgroup_root}"|\1: # netrepro: no self bind mount (kubelet 1.20, cgroup v1)|' "$entry"
  grep -q '^enable_network_magic$' "$entry" || die "kind's entrypoint has no enable_network_magic call to follow"
  cat > "$rootfs/kind/bin/netrepro-kernel-tunables.sh" <<'EOF'
#!/bin/sh
# netrepro: kubelet writes these kernel-wide settings when they differ from its values, and in a privileged
# node container that would be the host's kernel. Files with its values over them: it reads them as set.
set -e
mkdir -p /kind/kernel-tunables
for kv in vm/overcommit_memory=1 vm/panic_on_oom=0 kernel/panic=10 kernel/panic_on_oops=1 kernel/keys/root_maxkeys=1000000 kernel/keys/root_maxbytes=25000000; do
  key="${kv%%=*}"; f="/kind/kernel-tunables/$(echo "$key" | tr / _)"
  echo "${kv#*=}" > "$f"
  mount --bind "$f" "/proc/sys/$key"
done
EOF
  chmod 0755 "$rootfs/kind/bin/netrepro-kernel-tunables.sh"
  sed -i 's|^enable_network_magic$|enable_network_magic\n/kind/bin/netrepro-kernel-tunables.sh|' "$entry"
  # Debian's containerd and runc where kind's units look; kind's containerd config with what its node-image
  # build sets below Kubernetes 1.24 (cgroupfs), kubeadm 1.20's pause image, and no negative oom_score_adj
  # (refused where the bounding set lacks CAP_SYS_RESOURCE)
  for b in containerd ctr containerd-shim-runc-v2; do ln -sfn "/usr/bin/$b" "$rootfs/usr/local/bin/$b"; done
  sed -e 's/SystemdCgroup = true/SystemdCgroup = false/' \
    -e 's|sandbox_image = .*|sandbox_image = "k8s.gcr.io/pause:3.2"|' \
    -e 's/restrict_oom_score_adj = false/restrict_oom_score_adj = true/' \
    "$files/etc/containerd/config.toml" > "$rootfs/etc/containerd/config.toml"
  chroot "$rootfs" ctr oci spec \
    | jq '.hooks.createContainer[.hooks.createContainer | length] |= . + {"path": "/kind/bin/mount-product-files.sh"}' \
    | jq 'del(.process.rlimits)' > "$rootfs/etc/containerd/cri-base.json"
  # the CNI plugins kind's base ships, and bridge for netrepro's bridge shape, from Debian's package
  mkdir -p "$rootfs/opt/cni/bin" "$rootfs/etc/cni/net.d"
  for p in host-local loopback ptp portmap bridge; do cp "$rootfs/usr/lib/cni/$p" "$rootfs/opt/cni/bin/$p"; done
  for b in kubeadm kubelet kubectl; do install -m 0755 "$kdir/bin/$b" "$rootfs/usr/bin/$b"; done
  printf '%s' "$k8s_release" > "$rootfs/kind/version"
  find "$rootfs/lib/systemd/system/sysinit.target.wants/" -name systemd-tmpfiles-setup.service -delete
  rm -f "$rootfs"/lib/systemd/system/multi-user.target.wants/* "$rootfs"/etc/systemd/system/*.wants/* \
    "$rootfs"/lib/systemd/system/local-fs.target.wants/* "$rootfs"/lib/systemd/system/sockets.target.wants/*udev* \
    "$rootfs"/lib/systemd/system/sockets.target.wants/*initctl* "$rootfs"/lib/systemd/system/basic.target.wants/*
  grep -q '^ReadKMsg=no' "$rootfs/etc/systemd/journald.conf" || echo 'ReadKMsg=no' >> "$rootfs/etc/systemd/journald.conf"
  ln -sfn /usr/lib/systemd/systemd "$rootfs/sbin/init"
  chroot "$rootfs" systemctl enable kubelet.service containerd.service undo-mount-hacks.service >&2
  chroot "$rootfs" systemctl mask systemd-binfmt.service >&2
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  : > "$rootfs/etc/machine-id"
  rm -f "$dir/stamps/images"
  done_ node-root
fi

# 8. The images kubeadm 1.20 runs, under the names it asks for, built as build-kubernetes-images.sh builds the
# project's: the control plane from our binaries, Debian's etcd, the project's pause, and a DNS server for the
# kube-dns Deployment from the project's pod image (its agent answers A records; CoreDNS is not in Debian).
if ! stamp images; then
  work="$(mktemp -d "${TMPDIR:-/tmp}/netrepro-kind-images.XXXXXX")"
  trap 'rm -rf "$work"' EXIT
  image() { image_archive "$1" "$2" "$3" "$dir/images/$4.tar"; say "  $1 ($(du -h "$dir/images/$4.tar" | cut -f1))"; }
  for c in kube-apiserver kube-controller-manager kube-scheduler; do
    r="$work/$c"; busybox_rootfs "$r"; install -m 0755 "$kdir/bin/$c" "$r/usr/local/bin/$c"
    image "k8s.gcr.io/$c:$k8s_release" "$r" "{\"Cmd\":[\"/usr/local/bin/$c\"],\"Env\":[\"PATH=/usr/local/bin:/usr/bin:/bin\"]}" "$c"
  done
  # kube-proxy with iptables (both backends) and conntrack; the backend is chosen as upstream's image does:
  # the one holding more rules (kubelet writes its chains first)
  r="$work/kube-proxy"; busybox_rootfs "$r"; install -m 0755 "$kdir/bin/kube-proxy" "$r/usr/local/bin/kube-proxy"
  for t in /usr/sbin/xtables-legacy-multi /usr/sbin/xtables-nft-multi /usr/sbin/conntrack; do copy_with_libs "$r" "$t"; done
  xt=/usr/lib/x86_64-linux-gnu/xtables
  mkdir -p "$r$xt"; cp -a "$xt/." "$r$xt/"
  for so in "$xt"/*.so; do ldd "$so" 2>/dev/null | grep -o '/[^ ]*' | while read -r lib; do [ -e "$r$lib" ] || { mkdir -p "$r$(dirname "$lib")"; cp -L "$lib" "$r$lib"; }; done; done
  cat > "$r/usr/sbin/iptables-wrapper" <<'EOF'
#!/bin/sh
legacy=$( (xtables-legacy-multi iptables-save; xtables-legacy-multi ip6tables-save) 2>/dev/null | grep -c '^-')
nft=$( (xtables-nft-multi iptables-save; xtables-nft-multi ip6tables-save) 2>/dev/null | grep -c '^-')
if [ "${legacy:-0}" -gt "${nft:-0}" ]; then mode=legacy; else mode=nft; fi
for c in iptables iptables-save iptables-restore ip6tables ip6tables-save ip6tables-restore; do ln -sf "xtables-$mode-multi" "/usr/sbin/$c"; done
exec "$0" "$@"
EOF
  chmod 0755 "$r/usr/sbin/iptables-wrapper"
  for c in iptables iptables-save iptables-restore ip6tables ip6tables-save ip6tables-restore; do rm -f "$r/usr/sbin/$c" "$r/bin/$c" "$r/sbin/$c"; ln -s iptables-wrapper "$r/usr/sbin/$c"; done
  image "k8s.gcr.io/kube-proxy:$k8s_release" "$r" '{"Cmd":["/usr/local/bin/kube-proxy"],"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]}' kube-proxy
  # etcd: Debian's etcd-server (3.4) under the tag kubeadm 1.20 asks for
  r="$work/etcd"; busybox_rootfs "$r"; copy_with_libs "$r" /usr/bin/etcd
  mv "$r/usr/bin/etcd" "$r/usr/local/bin/"; mkdir -p "$r/var/lib/etcd"
  image k8s.gcr.io/etcd:3.4.13-0 "$r" '{"Cmd":["/usr/local/bin/etcd"],"Env":["PATH=/usr/local/bin:/usr/bin:/bin"]}' etcd
  # pause: the project's, under kubeadm 1.20's name
  r="$work/pause"; mkdir -p "$r"; tar -xOf "$kdir/images/pause.tar" --wildcards '*/layer.tar' | tar -x -C "$r"
  image k8s.gcr.io/pause:3.2 "$r" '{"Entrypoint":["/pause"]}' pause
  # kube-dns: the pod agent's A-record server on 53 (kubernetes.default and kube-dns), HTTP on 8080 and 8181
  # for the Deployment's liveness (/health) and readiness (/ready) probes
  r="$work/coredns"; mkdir -p "$r"; tar -xOf "$kdir/images/pod.tar" --wildcards '*/layer.tar' | tar -x -C "$r"
  cat > "$r/coredns" <<'EOF'
#!/bin/sh
# kube-dns on a netrepro kind node: the pod agent answers A records for the cluster's own names
/netrepro/pod-agent http --port 8080 --name coredns &
/netrepro/pod-agent http --port 8181 --name coredns &
exec /netrepro/pod-agent dns --port 53 --name coredns \
  --record kubernetes.default.svc.cluster.local=10.96.0.1 --record kube-dns.kube-system.svc.cluster.local=10.96.0.10
EOF
  chmod 0755 "$r/coredns"
  image k8s.gcr.io/coredns:1.7.0 "$r" '{"Entrypoint":["/coredns"]}' coredns
  # the project's pod image: pods, the tcpdump/conntrack helpers beside a node, hosts outside the cluster
  cp "$kdir/images/pod.tar" "$dir/images/pod.tar"; cp "$kdir/images/pod.ref" "$dir/pod.ref"
  rm -rf "$work"
  trap - EXIT

  # into the node's containerd (what `kind build node-image` does with `ctr images import`), with a containerd of
  # this host rooted in the node's /var/lib/containerd, in namespaces of its own, its CRI plugin off
  say "importing the images into the node root's containerd"
  state="$(mktemp -d "${TMPDIR:-/tmp}/netrepro-kind-ctr.XXXXXX")"
  printf 'version = 2\nroot = "%s"\nstate = "%s"\ndisabled_plugins = ["io.containerd.grpc.v1.cri"]\n[grpc]\n  address = "%s/sock"\n' \
    "$rootfs/var/lib/containerd" "$state" "$state" > "$state/config.toml"
  unshare --net --mount --propagation private sh -c '
    containerd --config "$1/config.toml" >"$1/containerd.log" 2>&1 & pid=$!
    for i in $(seq 100); do ctr -a "$1/sock" version >/dev/null 2>&1 && break; sleep 0.1; done
    for t in "$2"/images/*.tar; do
      ctr -a "$1/sock" -n k8s.io images import --label io.cri-containerd.pinned=pinned --all-platforms --no-unpack --digests - < "$t" >/dev/null
    done
    ctr -a "$1/sock" -n k8s.io images list -q | grep -v "^import-"
    kill "$pid"; wait "$pid" || true' sh "$state" "$dir" >&2
  rm -rf "$state"
  rm -f "$dir/stamps/node-image"
  done_ images
fi

# 9. The node image: the root as one layer with kind's base image settings.
node_ref="localhost/netrepro/kind-node:$k8s_release"
if ! stamp node-image || [ ! -s "$dir/node.tar" ]; then
  t0=$(date +%s)
  image_archive "$node_ref" "$rootfs" \
    '{"Entrypoint":["/usr/local/bin/entrypoint","/sbin/init"],"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin","container=docker"],"StopSignal":"SIGRTMIN+3"}' \
    "$dir/node.tar"
  echo "$node_ref" > "$dir/node.ref"
  done_ node-image
  say "node image $node_ref in $(($(date +%s) - t0)) s ($(du -h "$dir/node.tar" | cut -f1))"
fi

# 10. A Docker data root holding both images: each cluster's engine starts from a copy of it, the image layers'
# files hard-linked (no container writes them: overlayfs copies a file up before changing it), in well under
# a second instead of loading 1 GB. Made by the engine the runs use (private-dockerd.sh), in a namespace of its own.
if ! stamp docker-data || [ ! -d "$dir/docker-data/overlay2" ]; then
  t0=$(date +%s)
  # a short state path: dockerd's containerd socket lives under it, and a unix socket path has at most 107 bytes
  ns=netrepro-kind-build state=/var/tmp/netrepro-kind-build
  cleanup_engine() {
    if [ -s "$state/dockerd.pid" ]; then kill "$(cat "$state/dockerd.pid")" 2>/dev/null || true; fi
    for i in $(seq 100); do [ -z "$(ip netns pids "$ns" 2>/dev/null)" ] && break; sleep 0.1; done
    { ip netns pids "$ns" 2>/dev/null || true; } | xargs -r kill -9
    ip netns delete "$ns" 2>/dev/null || true
    for c in /sys/fs/cgroup/*/netrepro-kind-build; do if [ -d "$c" ]; then rmdir "$c" 2>/dev/null || true; fi; done
    rm -rf "$state"
  }
  cleanup_engine
  trap cleanup_engine EXIT
  ip netns add "$ns"; ip -n "$ns" link set lo up
  mkdir -p "$state"
  unshare --mount --propagation slave nsenter --net="/run/netns/$ns" \
    "$repo/src/providers/real/containers/private-dockerd.sh" "$state" "$dir/docker" >"$state/dockerd.log" 2>&1 &
  for i in $(seq 600); do grep -q 'API listen on' "$state/dockerd.log" 2>/dev/null && break; sleep 0.1; done
  grep -q 'API listen on' "$state/dockerd.log" || die "the build's Docker engine did not start: $(tail -5 "$state/dockerd.log")"
  for t in "$dir/node.tar" "$dir/images/pod.tar"; do "$dir/docker/usr/bin/docker" -H "unix://$state/docker.sock" load -q -i "$t" >&2; done
  kill "$(cat "$state/dockerd.pid")"; wait || true
  rm -rf "$dir/docker-data"; mv "$state/data" "$dir/docker-data"
  cleanup_engine
  trap - EXIT
  done_ docker-data
  say "docker data root with both images in $(($(date +%s) - t0)) s ($(du -sh "$dir/docker-data" | cut -f1))"
fi

date -u +%FT%TZ > "$dir/complete"
say "done in $(($(date +%s) - started)) s; cache $(du -sh "$dir" | cut -f1) ($dir)"
echo "$dir"
