#!/bin/sh
# A private Docker engine for one kind cluster, started by private-docker.ts as
#   unshare --mount --propagation slave nsenter --net=/run/netns/NETNS private-dockerd.sh STATE DOCKER_ROOT [RUNTIME]
# so its bridges, iptables chains, ip_forward and mounts live in the run's own network and mount namespaces.
# The mount namespace also gets:
#  - a sysfs of the engine's network namespace (what dockerd and runc read of interfaces is that namespace's),
#    the host's cgroup tree kept under it;
#  - where the host has no /lib/modules (kind mounts it into every node), an overlay over /usr/lib whose upper
#    directory is in STATE, so the empty directory Docker would create never lands on the host.
set -eu
state="$1"; root="$2"; runtime="${3:-}"
mkdir -p "$state/cgroup" "$state/data" "$state/exec"
mount --rbind /sys/fs/cgroup "$state/cgroup"
umount -l /sys
mount -t sysfs sysfs /sys
mount --rbind "$state/cgroup" /sys/fs/cgroup
umount -l "$state/cgroup"
if [ ! -e /lib/modules ]; then
  lib="$(readlink -f /lib)"
  mkdir -p "$state/lib-upper/modules" "$state/lib-work"
  mount -t overlay overlay -o "lowerdir=$lib,upperdir=$state/lib-upper,workdir=$state/lib-work" "$lib"
fi
export PATH="$root/usr/sbin:$root/usr/bin:$PATH"
if [ -n "$runtime" ]; then set -- --add-runtime "netrepro-runc=$runtime" --default-runtime netrepro-runc; else set --; fi
exec dockerd --data-root "$state/data" --exec-root "$state/exec" --pidfile "$state/dockerd.pid" \
  -H "unix://$state/docker.sock" --bridge=none --iptables=true --ip-masq=true --userland-proxy=true \
  --cgroup-parent="/$(basename "$state")" --exec-opt native.cgroupdriver=cgroupfs --storage-driver=overlay2 \
  --oom-score-adjust=0 --log-level=info "$@"
