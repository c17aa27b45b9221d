#!/bin/sh
# runc for a private Docker engine on a host whose capability bounding set lacks some capability (e.g. a VM
# without CAP_SYS_RESOURCE): Docker's --privileged asks for every capability the kernel knows, and runc then
# fails with "unable to apply caps: operation not permitted". This drops the capabilities outside the bounding
# set from a container's config.json (create, run) and an exec's process.json, then runs runc.
# Registered as the engine's default runtime only where such a capability is missing (private-docker.ts).
names="CHOWN DAC_OVERRIDE DAC_READ_SEARCH FOWNER FSETID KILL SETGID SETUID SETPCAP LINUX_IMMUTABLE NET_BIND_SERVICE
NET_BROADCAST NET_ADMIN NET_RAW IPC_LOCK IPC_OWNER SYS_MODULE SYS_RAWIO SYS_CHROOT SYS_PTRACE SYS_PACCT SYS_ADMIN SYS_BOOT
SYS_NICE SYS_RESOURCE SYS_TIME SYS_TTY_CONFIG MKNOD LEASE AUDIT_WRITE AUDIT_CONTROL SETFCAP MAC_OVERRIDE MAC_ADMIN SYSLOG
WAKE_ALARM BLOCK_SUSPEND AUDIT_READ PERFMON BPF CHECKPOINT_RESTORE"
bnd=$((0x$(awk '/^CapBnd:/ {print $2}' /proc/self/status)))
missing='' i=0
for n in $names; do
  [ $(((bnd >> i) & 1)) = 1 ] || missing="$missing${missing:+,}\"CAP_$n\""
  i=$((i + 1))
done
strip() {
  [ -n "$missing" ] && [ -f "$1" ] || return 0
  jq -c "(.. | objects | select(has(\"bounding\"))) |= with_entries(if (.value | type) == \"array\" then .value -= [$missing] else . end)" "$1" > "$1.netrepro" \
    && mv "$1.netrepro" "$1"
}
prev=''
for a in "$@"; do
  case "$prev" in --bundle | -b) strip "$a/config.json" ;; --process | -p) strip "$a" ;; esac
  case "$a" in --bundle=*) strip "${a#--bundle=}/config.json" ;; --process=*) strip "${a#--process=}" ;; esac
  prev="$a"
done
exec runc "$@"
