#!/usr/bin/env bash
# One-time build of real Kubernetes for the `local` provider, from Debian's own `kubernetes` source
# package with Debian's Go, cached outside the checkout by source version:
#   ${NETREPRO_CACHE:-$HOME/.cache/netrepro}/kubernetes/<debian-version>/
#     src/       apt-get source output (the upstream tree with vendor/)
#     bin/       kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl
#     images/    pause.tar and pod.tar (docker-archive tarballs for `ctr -n k8s.io images import`)
#     stamps/    one file per finished phase; a phase with a stamp is skipped
# Nothing fetched or built lands in the repository. Run it niced: `nice -n 10 scripts/build-kubernetes.sh`
# (npm run build:kubernetes does). Needs root (apt-get) on Debian 12 bookworm.
# Options: --print-dir (print the cache directory and stop); --with NAME (also build cmd/NAME, e.g. kubeadm).
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
cache_root="${NETREPRO_CACHE:-$HOME/.cache/netrepro}/kubernetes"
started=$(date +%s)
say() { printf 'build-kubernetes [%4ss] %s\n' "$(( $(date +%s) - started ))" "$*" >&2; }
die() { say "error: $*"; exit 1; }
trap 'say "error: line $LINENO: $BASH_COMMAND failed (exit $?)"' ERR

# 1. Debian packages. The deb-src entry is a file of its own next to the distribution's, with the
# same URIs and keyring, so apt-get source can fetch the source package.
need_pkgs=(golang-1.19-go golang-github-modern-go-reflect2-dev etcd-server containerd runc
  containernetworking-plugins busybox-static dpkg-dev gcc libc6-dev openssl iptables conntrack util-linux
  curl dnsutils tcpdump iproute2)
src_list=/etc/apt/sources.list.d/netrepro-deb-src.sources
missing=()
for p in "${need_pkgs[@]}"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p"); done
if [ ! -e "$src_list" ] && ! grep -rqs '^Types:.*deb-src\|^deb-src ' /etc/apt/sources.list /etc/apt/sources.list.d/; then
  [ -r /etc/apt/sources.list.d/debian.sources ] || die "no /etc/apt/sources.list.d/debian.sources to copy a deb-src entry from; add a deb-src line for bookworm yourself"
  say "adding $src_list (deb-src with the same URIs and keyring as debian.sources)"
  sed -e 's/^Types:.*/Types: deb-src/' /etc/apt/sources.list.d/debian.sources > "$src_list"
  apt_updated=
fi
if [ ${#missing[@]} -gt 0 ] || [ -z "$(apt-cache showsrc kubernetes 2>/dev/null | head -1)" ]; then
  say "apt-get update"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
fi
if [ ${#missing[@]} -gt 0 ]; then
  say "installing Debian packages: ${missing[*]}"
  # keep apt from starting the packages' system services (containerd, etcd): the provider runs its own
  policy=/usr/sbin/policy-rc.d
  made_policy=
  if [ ! -e "$policy" ]; then printf '#!/bin/sh\nexit 101\n' > "$policy"; chmod +x "$policy"; made_policy=1; fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2 || { [ -n "$made_policy" ] && rm -f "$policy"; die "apt-get install failed"; }
  [ -n "$made_policy" ] && rm -f "$policy"
  # the packages enable their units on install (even where systemd is not running): undo that
  if command -v systemctl >/dev/null; then
    for unit in containerd etcd; do
      if systemctl is-enabled -q "$unit" 2>/dev/null; then
        say "disabling the system $unit service (the provider runs its own)"
        if [ -d /run/systemd/system ]; then systemctl disable --now "$unit" >&2 || true; else systemctl disable "$unit" >&2 || true; fi
      fi
    done
  fi
fi

extra=()
args=("$@")
for i in "${!args[@]}"; do [ "${args[$i]}" = --with ] && extra+=("${args[$((i + 1))]:-}"); done

version="$(apt-cache showsrc kubernetes | awk '/^Version:/ {print $2}' | sort -V | tail -1)"
[ -n "$version" ] || die "apt-cache showsrc kubernetes found no source package (is the deb-src entry there?)"
dir="$cache_root/$version"
if [ "${1:-}" = "--print-dir" ]; then echo "$dir"; exit 0; fi
mkdir -p "$dir/stamps" "$dir/bin" "$dir/images"
# one build of a version at a time (two runs sharing the machine wait for each other)
exec 9>"$dir/.lock"
flock 9
stamp() { [ -e "$dir/stamps/$1" ]; }
done_() { date -u +%FT%TZ > "$dir/stamps/$1"; }
say "Kubernetes source package $version -> $dir"

# 2. The source package.
if ! stamp source; then
  rm -rf "$dir/src"; mkdir -p "$dir/src"
  say "apt-get source kubernetes=$version (about 34 MB)"
  (cd "$dir/src" && apt-get source -qq "kubernetes=$version" >&2)
  done_ source
fi
tree="$(find "$dir/src" -mindepth 1 -maxdepth 1 -type d -name 'kubernetes-*' | head -1)"
[ -n "$tree" ] || die "no kubernetes-* directory under $dir/src"
orig="$(find "$dir/src" -maxdepth 1 -name 'kubernetes_*.orig.tar.*' | head -1)"

export GOROOT=/usr/lib/go-1.19 GOPATH="$dir/gopath" GOCACHE="$dir/gocache" GO111MODULE=off GOPROXY=off \
  GOFLAGS= CGO_ENABLED=0 GOTOOLCHAIN=local
export PATH="$GOROOT/bin:$PATH"
pkg=k8s.io/kubernetes
mkdir -p "$GOPATH/src/k8s.io"
ln -sfn "$tree" "$GOPATH/src/$pkg"
cd "$GOPATH/src/$pkg"

# 3. reflect2: the vendored v1.0.1 crashes under Go >= 1.18 when json-iterator encodes a map; Debian's 1.0.2.
if ! stamp reflect2; then
  deb_reflect2=/usr/share/gocode/src/github.com/modern-go/reflect2
  [ -d "$deb_reflect2" ] || die "$deb_reflect2 missing (golang-github-modern-go-reflect2-dev)"
  say "replacing vendor/github.com/modern-go/reflect2 (1.0.1) with Debian's 1.0.2"
  rm -rf vendor/github.com/modern-go/reflect2
  mkdir -p vendor/github.com/modern-go/reflect2
  find "$deb_reflect2" -maxdepth 1 -type f \( -name '*.go' -o -name '*.s' \) ! -name '*_test.go' -exec cp {} vendor/github.com/modern-go/reflect2/ \;
  done_ reflect2
fi

# 4. The OpenAPI definitions kube-apiserver needs (not in the tarball), as Makefile.generated_files makes
# them: every Go directory of the tree (staging named as vendor/, the rest of vendor/ left out), the files
# there with a `// +k8s:` tag, those with +k8s:openapi-gen=, minus code-generator and sample-apiserver.
# The rule-violation report must equal the tree's api/api-rules/violation_exceptions.list, as upstream checks.
if ! stamp openapi; then
  say "building openapi-gen and generating pkg/generated/openapi/zz_generated.openapi.go"
  nice -n 10 go build -o "$dir/openapi-gen" ./vendor/k8s.io/kube-openapi/cmd/openapi-gen
  dirs="$(find -H . \( -path './_*' -o -path './.*' -o -path ./vendor \) -prune -o -type f -name '*.go' -print \
    | sed 's|^\./||; s|/[^/]*$||; s|^staging/src/k8s.io/|vendor/k8s.io/|' | LC_ALL=C sort -u \
    | grep -v -e '^vendor/k8s.io/code-generator/' -e '^vendor/k8s.io/sample-apiserver/' \
    | while read -r d; do
        for f in "$d"/*.go; do
          if [ -f "$f" ] && grep -q '^// *+k8s:' "$f" && grep -q '+k8s:openapi-gen=' "$f"; then echo "$pkg/$d"; break; fi
        done
      done | paste -sd, -)"
  [ -n "$dirs" ] || die "no package carries a +k8s:openapi-gen tag"
  say "openapi-gen over $(echo "$dirs" | tr , '\n' | wc -l) packages"
  nice -n 10 "$dir/openapi-gen" --logtostderr --v 0 --input-dirs "$dirs" \
    --output-base "$GOPATH/src" --output-package "$pkg/pkg/generated/openapi" --output-file-base zz_generated.openapi \
    --go-header-file hack/boilerplate/boilerplate.generatego.txt --report-filename "$dir/openapi-violations.txt" >&2
  [ "$(wc -c < pkg/generated/openapi/zz_generated.openapi.go)" -gt 1000000 ] || die "openapi-gen wrote a short file: the package list is wrong"
  diff <(LC_ALL=C sort "$dir/openapi-violations.txt") <(LC_ALL=C sort api/api-rules/violation_exceptions.list) >&2 \
    || die "openapi-gen's API rule report differs from api/api-rules/violation_exceptions.list (the package list is wrong)"
  rm -f "$dir/stamps/bin-kube-apiserver"  # built against whatever was there before
  done_ openapi
fi

# 5. The binaries, version-stamped as hack/lib/version.sh does (GOPATH mode: the vendor path in -X).
commit="$( [ -n "$orig" ] && { zcat -f "$orig" | git get-tar-commit-id 2>/dev/null || true; } )"
upstream="v$(echo "$version" | sed -E 's/^.*really//; s/-[^-]*$//')"
ldflags="-s -w"
for p in client-go/pkg/version component-base/version; do
  ldflags+=" -X $pkg/vendor/k8s.io/$p.gitVersion=$upstream -X $pkg/vendor/k8s.io/$p.gitMajor=$(echo "$upstream" | cut -d. -f1 | tr -d v)"
  ldflags+=" -X $pkg/vendor/k8s.io/$p.gitMinor=$(echo "$upstream" | cut -d. -f2) -X $pkg/vendor/k8s.io/$p.gitTreeState=clean"
  ldflags+=" -X $pkg/vendor/k8s.io/$p.gitCommit=${commit:-unknown} -X $pkg/vendor/k8s.io/$p.buildDate=1970-01-01T00:00:00Z"
done
for cmd in kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl "${extra[@]}"; do
  stamp "bin-$cmd" && [ -x "$dir/bin/$cmd" ] && continue
  t0=$(date +%s)
  say "go build $cmd (minutes; Go 1.19, GOPATH mode, CGO_ENABLED=0)"
  nice -n 10 go build -o "$dir/bin/$cmd.tmp" -ldflags "$ldflags" "$pkg/cmd/$cmd"
  mv "$dir/bin/$cmd.tmp" "$dir/bin/$cmd"
  done_ "bin-$cmd"
  case "$cmd" in
    kubectl) v="$("$dir/bin/$cmd" version --client --short 2>/dev/null | head -1)" ;;
    kubeadm) v="$("$dir/bin/$cmd" version -o short 2>/dev/null | head -1)" ;;
    *) v="$("$dir/bin/$cmd" --version 2>/dev/null | head -1)" ;;
  esac
  say "built $cmd in $(( $(date +%s) - t0 )) s ($v)"
done

# 6. Images: pause from the source tree, and the pod image (static binaries only).
bash "$repo/scripts/build-kubernetes-images.sh" "$tree" "$dir/images"

say "done in $(( $(date +%s) - started )) s; cache $(du -sh "$dir" | cut -f1) ($dir)"
echo "$dir"
