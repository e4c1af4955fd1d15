#!/usr/bin/env bash
# Builds coinfer's container image offline with podman (no image registry is needed):
#
#   deploy/container/build_image.sh [--build-dir DIR] [--cache-dir DIR] [--tag TAG]
#                                   [--runtime RUNC] [--rebuild-base]
#                                   [-- PODMAN_GLOBAL_OPTIONS...]
#
# 1. The base, localhost/coinfer-base:bookworm: `debootstrap --variant=minbase bookworm` from
#    the Debian mirror in apt's own sources (COINFER_DEBIAN_MIRROR overrides it), apt's caches
#    and the man pages removed, saved as CACHE/bookworm-minbase.tar (kept: later builds reuse
#    it) and `podman import`ed when the storage lacks it.
# 2. The context, CACHE/context/ (removed after the build): the Containerfile and rootfs/
#    with coinfer-serve and coinfer-batch from the build directory, the shared libraries
#    `ldd` finds for them that the base does not already have, the healthcheck,
#    configs/default.toml, and the assets it refers to (the digits MLP, and MiniLM and
#    SmolLM2 with scripts/setup's links resolved).
# 3. `podman build --format docker` (HEALTHCHECK is Docker-format only) with runc (podman's
#    default crun fails on these machines' hybrid cgroups; --runtime names another runc
#    binary or wrapper), tagged TAG (default localhost/coinfer:latest).
#
# Everything after `--` goes to every podman call, e.g. `-- --root /tmp/x/root --runroot
# /tmp/x/run` for a private storage (tests/deploy/container_test.py does so). Needs root (for
# debootstrap), podman, runc and debootstrap (apt-get install podman runc debootstrap).
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build_dir="$repo_root/build"
cache_dir=""
tag="localhost/coinfer:latest"
base_tag="localhost/coinfer-base:bookworm"
runtime=runc
rebuild_base=0
podman_opts=()
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build_dir=$2; shift 2 ;;
    --cache-dir) cache_dir=$2; shift 2 ;;
    --tag) tag=$2; shift 2 ;;
    --runtime) runtime=$2; shift 2 ;;
    --rebuild-base) rebuild_base=1; shift ;;
    --) shift; podman_opts=("$@"); break ;;
    -h|--help) sed -n '2,23p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "build_image.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
build_dir=$(cd "$build_dir" && pwd)
cache_dir=${cache_dir:-$build_dir/container}
mkdir -p "$cache_dir"
cache_dir=$(cd "$cache_dir" && pwd)

podman() { command podman "${podman_opts[@]}" "$@"; }
log() { printf 'build_image.sh: %s\n' "$*" >&2; }

for tool in podman runc debootstrap ldd; do
  command -v "$tool" >/dev/null || { log "$tool is missing (apt-get install podman runc debootstrap)"; exit 1; }
done
binaries=("$build_dir/coinfer-serve" "$build_dir/coinfer-batch")
for b in "${binaries[@]}"; do
  [ -x "$b" ] || { log "$b is missing: build first (scripts/build)"; exit 1; }
done

# The first mirror apt itself uses for bookworm: deb822 stanzas (*.sources), then one-line
# entries (sources.list, *.list).
debian_mirror() {
  local f found=""
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] && [ -z "$found" ] || continue
    found=$(awk 'BEGIN { RS = ""; FS = "\n" }
      { uris = ""; suites = ""
        for (i = 1; i <= NF; i++) {
          if ($i ~ /^URIs:/) { uris = $i; sub(/^URIs:[ \t]*/, "", uris) }
          if ($i ~ /^Suites:/) { suites = $i; sub(/^Suites:[ \t]*/, " ", suites); suites = suites " " }
        }
        if (uris != "" && suites ~ / bookworm /) { split(uris, u, " "); print u[1]; exit } }' "$f")
  done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] && [ -z "$found" ] || continue
    found=$(sed -E 's/\[[^]]*\]//' "$f" | awk '$1 == "deb" && $3 == "bookworm" { print $2; exit }')
  done
  printf '%s\n' "$found"
}

base_tar="$cache_dir/bookworm-minbase.tar"
if [ "$rebuild_base" = 1 ] || [ ! -s "$base_tar" ]; then
  mirror=${COINFER_DEBIAN_MIRROR:-$(debian_mirror)}
  [ -n "$mirror" ] || { log "no bookworm mirror in apt's sources; set COINFER_DEBIAN_MIRROR"; exit 1; }
  log "debootstrap --variant=minbase bookworm from $mirror"
  rootfs="$cache_dir/base-rootfs"
  rm -rf "$rootfs"
  debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >"$cache_dir/debootstrap.log" 2>&1 ||
    { tail -n 20 "$cache_dir/debootstrap.log" >&2; exit 1; }
  # Package caches and lists (apt-get update restores them), man pages, and the build
  # machine's resolv.conf and hostname (podman provides both at run time).
  rm -rf "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/cache/apt/archives/*.deb \
    "$rootfs"/var/lib/apt/lists/* "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/*
  rm -f "$rootfs/etc/resolv.conf" "$rootfs/etc/hostname"
  tar --numeric-owner -C "$rootfs" -cf "$base_tar.tmp" .
  mv "$base_tar.tmp" "$base_tar"
  rm -rf "$rootfs"
  podman rmi --ignore "$base_tag" >/dev/null 2>&1 || true
fi
if ! podman image exists "$base_tag"; then
  log "podman import $base_tar as $base_tag"
  podman import --message "debootstrap --variant=minbase bookworm" \
    --change 'CMD ["/bin/bash"]' "$base_tar" "$base_tag" >/dev/null
fi

# The build context.
context="$cache_dir/context"
rm -rf "$context"
rootfs="$context/rootfs"
mkdir -p "$rootfs/usr/local/bin" "$rootfs/usr/local/lib/coinfer" "$rootfs/etc/ld.so.conf.d" \
  "$rootfs/opt/coinfer/configs" "$rootfs/opt/coinfer/assets"
install -m 0644 "$repo_root/deploy/container/Containerfile" "$context/Containerfile"
install -m 0755 "${binaries[@]}" "$repo_root/deploy/container/coinfer-healthcheck" \
  "$rootfs/usr/local/bin/"

# Shared libraries: what ldd resolves on this machine, less what the base already has (glibc,
# libstdc++, GnuTLS, ...: the same Debian 12 packages). Copied under their soname, links
# resolved (libblas.so.3 is an alternatives link to OpenBLAS).
base_libs=$(tar -tf "$base_tar" | sed -nE 's#^\./(usr/)?lib/x86_64-linux-gnu/([^/]+)$#\2#p' | sort -u)
missing=$(ldd "${binaries[@]}" | awk '/=> not found/ { print $1 }' | sort -u)
[ -z "$missing" ] || { log "ldd cannot resolve: $missing"; exit 1; }
shipped=0
while read -r soname path; do
  if grep -qxF "$soname" <<<"$base_libs"; then continue; fi
  install -m 0644 "$(readlink -f "$path")" "$rootfs/usr/local/lib/coinfer/$soname"
  shipped=$((shipped + 1))
done < <(ldd "${binaries[@]}" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' | sort -u)
echo /usr/local/lib/coinfer >"$rootfs/etc/ld.so.conf.d/coinfer.conf"
chmod 0644 "$rootfs/etc/ld.so.conf.d/coinfer.conf"
log "$shipped shared libraries ($(du -sh "$rootfs/usr/local/lib/coinfer" | cut -f1)) beside the base's"

# The default config and the files it names (scripts/setup links MiniLM and SmolLM2 into
# assets/ from their pip packages: copied here, links resolved).
install -m 0644 "$repo_root/configs/default.toml" "$rootfs/opt/coinfer/configs/"
for asset in digits_mlp all-MiniLM-L6-v2 SmolLM2-135M-Instruct.Q4_1.gguf; do
  src="$repo_root/assets/$asset"
  [ -e "$src" ] || { log "assets/$asset is missing: run scripts/setup"; exit 1; }
  cp -RL "$src" "$rootfs/opt/coinfer/assets/$asset"
done
chmod -R u=rwX,go=rX "$rootfs/opt/coinfer"
find "$rootfs/opt/coinfer/assets" -name '__pycache__' -prune -exec rm -rf {} +

log "podman build $tag (context $(du -sh "$context" | cut -f1))"
podman build --runtime "$runtime" --format docker --network host \
  --build-arg "BASE=$base_tag" -t "$tag" -f "$context/Containerfile" "$context"
podman image ls --format '{{.Repository}}:{{.Tag}} {{.Size}}' "$tag" >&2
rm -rf "$context"
