#!/usr/bin/env bash
# The two images the `local` provider's nodes import (`ctr -n k8s.io images import`), built without a
# registry or container engine: a docker-archive tarball is a manifest, an image config and one layer tar.
#   pause.tar  localhost/netrepro/pause:3.2  pause from the Kubernetes tree (build/pause/linux/pause.c), static
#   pod.tar    localhost/netrepro/pod:<hash> the pods' containers: the native pod agent and the scenarios' helper
#              programs (static, in /netrepro), busybox-static,
#              and the probe tools the real-cluster layer runs in pods (curl, nslookup, tcpdump, ip, iptables,
#              conntrack, sysctl, ss), copied from this host's Debian packages with the shared libraries they load
# Usage: build-kubernetes-images.sh KUBERNETES_TREE OUT_DIR. Rebuilt when an input changed (a hash per image).
set -euo pipefail
tree="$1"
out="$2"
repo="$(cd "$(dirname "$0")/.." && pwd)"
say() { printf 'build-kubernetes-images: %s\n' "$*" >&2; }
mkdir -p "$out"
work="$(mktemp -d "${TMPDIR:-/tmp}/netrepro-images.XXXXXX")"
trap 'rm -rf "$work"' EXIT

. "$repo/scripts/lib/image-archive.sh"
ENV_PATH='"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]'

# pause
pause_src="$tree/build/pause/linux/pause.c"
pause_hash="$(sha256sum "$pause_src" | cut -c1-12)"
if [ "$(cat "$out/pause.hash" 2>/dev/null)" != "$pause_hash" ] || [ ! -s "$out/pause.tar" ]; then
  say "pause image from $pause_src"
  mkdir -p "$work/pause"
  gcc -Os -Wall -static -DVERSION=v3.2-netrepro -o "$work/pause/pause" "$pause_src"
  strip "$work/pause/pause"
  image_archive localhost/netrepro/pause:3.2 "$work/pause" "{\"Entrypoint\":[\"/pause\"],$ENV_PATH}" "$out/pause.tar"
  echo "$pause_hash" > "$out/pause.hash"
  echo localhost/netrepro/pause:3.2 > "$out/pause.ref"
fi

# pod image
tools=(curl nslookup tcpdump ip iptables iptables-save iptables-restore ip6tables conntrack sysctl ss)
agent_src="$repo/src/providers/netns/agent/pod-agent.c"
# the helper programs scenarios name as {bin/NAME} (local-cluster.ts: POD_HELPERS), at /netrepro/NAME
helpers=(inject-ahead)
helper_srcs=("${helpers[@]/#/$repo/src/providers/netns/agent/}"); helper_srcs=("${helper_srcs[@]/%/.c}")
inputs="$(sha256sum "$agent_src" "${helper_srcs[@]}" "$repo"/src/providers/netns/agent/*.h "$0" "$repo/scripts/lib/image-archive.sh" | cut -c1-64; for t in "${tools[@]}"; do p="$(command -v "$t")"; sha256sum "$(readlink -f "$p")" | cut -c1-64; done; sha256sum /bin/busybox | cut -c1-64)"
pod_hash="$(echo "$inputs" | sha256sum | cut -c1-12)"
if [ "$(cat "$out/pod.hash" 2>/dev/null)" != "$pod_hash" ] || [ ! -s "$out/pod.tar" ]; then
  say "pod image (agent, busybox, ${tools[*]})"
  r="$work/pod"
  mkdir -p "$r"/{bin,sbin,usr/bin,usr/sbin,etc,tmp,netrepro,proc,sys,dev,run,var/run,root}
  chmod 1777 "$r/tmp"
  gcc -O2 -Wall -static -o "$r/netrepro/pod-agent" "$agent_src"
  strip "$r/netrepro/pod-agent"
  for h in "${helpers[@]}"; do
    gcc -O2 -Wall -static -o "$r/netrepro/$h" "$repo/src/providers/netns/agent/$h.c"
    strip "$r/netrepro/$h"
  done
  cp /bin/busybox "$r/bin/busybox"
  for applet in $("$r/bin/busybox" --list); do
    [ -e "$r/bin/$applet" ] || ln -s busybox "$r/bin/$applet"
  done
  for t in "${tools[@]}"; do
    p="$(command -v "$t")"
    real="$(readlink -f "$p")"
    rm -f "$r$p"  # a busybox applet of the same name gives way to the real tool
    copy_with_libs "$r" "$real"
    [ "$real" = "$p" ] || { mkdir -p "$r$(dirname "$p")"; ln -sfn "$real" "$r$p"; }
  done
  # iptables' matches and targets are shared objects it opens by name
  xt=/usr/lib/x86_64-linux-gnu/xtables
  if [ -d "$xt" ]; then
    mkdir -p "$r$xt"; cp -a "$xt/." "$r$xt/"
    for so in "$xt"/*.so; do ldd "$so" 2>/dev/null | grep -o '/[^ ]*' | while read -r lib; do [ -e "$r$lib" ] || { mkdir -p "$r$(dirname "$lib")"; cp -L "$lib" "$r$lib"; }; done; done
  fi
  cp /etc/protocols /etc/services "$r/etc/" 2>/dev/null || true
  printf 'root:x:0:0:root:/root:/bin/sh\ntcpdump:x:0:0:tcpdump:/:/bin/false\n' > "$r/etc/passwd"
  printf 'root:x:0:\n' > "$r/etc/group"
  printf 'hosts: files dns\n' > "$r/etc/nsswitch.conf"
  printf '127.0.0.1 localhost\n' > "$r/etc/hosts"
  image_archive "localhost/netrepro/pod:$pod_hash" "$r" "{\"Entrypoint\":[\"/bin/sleep\",\"infinity\"],$ENV_PATH}" "$out/pod.tar"
  echo "$pod_hash" > "$out/pod.hash"
  echo "localhost/netrepro/pod:$pod_hash" > "$out/pod.ref"
  say "pod image localhost/netrepro/pod:$pod_hash ($(du -h "$out/pod.tar" | cut -f1))"
fi
