# Helpers for images built without a registry or a container engine, sourced by the build scripts.
# A docker-archive tarball (what `docker load` and `ctr images import` read) is a manifest, an image config
# and one layer tar; timestamps, owners and order are fixed so the same rootfs gives the same tarball.

# image_archive REF ROOTFS CONFIG_JSON OUT_TAR: CONFIG_JSON is the image's "config" object (Entrypoint, Cmd, Env...)
image_archive() {
  local ref="$1" rootfs="$2" config="$3" tarfile="$4"
  local d; d="$(mktemp -d "${TMPDIR:-/tmp}/netrepro-archive.XXXXXX")"
  tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner --xattrs -C "$rootfs" -cf "$d/layer.tar" .
  local diff; diff="$(sha256sum "$d/layer.tar" | cut -d' ' -f1)"
  mkdir -p "$d/$diff"; mv "$d/layer.tar" "$d/$diff/layer.tar"
  printf '{"architecture":"amd64","os":"linux","created":"1970-01-01T00:00:00Z","config":%s,"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
    "$config" "$diff" > "$d/config.json"
  local cfg; cfg="$(sha256sum "$d/config.json" | cut -d' ' -f1)"
  mv "$d/config.json" "$d/$cfg.json"
  printf '[{"Config":"%s.json","RepoTags":["%s"],"Layers":["%s/layer.tar"]}]' "$cfg" "$ref" "$diff" > "$d/manifest.json"
  printf '{"%s":{"%s":"%s"}}' "${ref%:*}" "${ref##*:}" "$diff" > "$d/repositories"
  tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$d" -cf "$tarfile.tmp" .
  mv "$tarfile.tmp" "$tarfile"
  rm -rf "$d"
}

# copy_with_libs ROOTFS FILE: FILE at its own path under ROOTFS, with every shared library it loads
copy_with_libs() {
  local r="$1" f="$2"
  mkdir -p "$r$(dirname "$f")"; cp -L "$f" "$r$f"
  ldd "$f" 2>/dev/null | grep -o '/[^ ]*' | while read -r lib; do
    [ -e "$r$lib" ] && continue
    mkdir -p "$r$(dirname "$lib")"; cp -L "$lib" "$r$lib"
  done
}

# busybox_rootfs ROOTFS: busybox-static with every applet, and the /etc files a container expects
busybox_rootfs() {
  local r="$1"
  mkdir -p "$r"/{bin,sbin,usr/bin,usr/sbin,usr/local/bin,etc,tmp,proc,sys,dev,run,var/run,root}
  chmod 1777 "$r/tmp"
  cp /bin/busybox "$r/bin/busybox"
  local applet
  for applet in $("$r/bin/busybox" --list); do [ -e "$r/bin/$applet" ] || ln -s busybox "$r/bin/$applet"; done
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' > "$r/etc/passwd"
  printf 'root:x:0:\nnobody:x:65534:\n' > "$r/etc/group"
  printf 'hosts: files dns\n' > "$r/etc/nsswitch.conf"
  printf '127.0.0.1 localhost\n' > "$r/etc/hosts"
}
