#!/usr/bin/env bash
# Prints the directory of a cached guest kernel, fetching one first if the
# cache has none: Debian's generic amd64 kernel (the package the
# `linux-image-amd64` metapackage names, linux-image-6.1.0-<N>-amd64; the
# cloud kernel has no 9p), downloaded with `apt-get download`, never
# installed. Only vmlinuz and the modules the guest loads are kept (a few
# MB); the 70 MB package is unpacked into a temporary directory and removed.
#
# Cache: $ARENA_GUEST_CACHE, default target/guest under the repository (so
# `cargo clean` drops it). A cached kernel is used as it is; delete the cache
# to fetch the newest. Fetching needs the network and apt's package lists.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cache=${ARENA_GUEST_CACHE:-$repo/target/guest}

# The guest's module set, roots only: their dependencies are added from each
# module's own `depends` field, and the load order follows from them.
wanted=(virtio_pci 9pnet_virtio 9p overlay)

newest_cached() {
    local dir
    dir=$(find "$cache" -maxdepth 1 -type d -name 'linux-image-*' 2>/dev/null | sort -V | tail -n 1)
    if [ -n "$dir" ] && [ -f "$dir/ok" ]; then
        echo "$dir"
    fi
}

dir=$(newest_cached)
if [ -n "$dir" ]; then
    echo "$dir"
    exit 0
fi

for tool in apt-cache apt-get dpkg-deb modinfo; do
    command -v "$tool" >/dev/null 2>&1 || {
        echo "guest kernel: $tool is missing (Debian's apt, dpkg and kmod are needed to fetch the kernel)" >&2
        exit 1
    }
done

package=$(apt-cache depends linux-image-amd64 2>/dev/null |
    sed -n 's/^ *Depends: \(linux-image-[0-9.]*-[0-9]*-amd64\)$/\1/p' | head -n 1)
if [ -z "$package" ]; then
    echo "guest kernel: apt-cache names no generic kernel for linux-image-amd64 (apt-get update?)" >&2
    exit 1
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/arena-guest-kernel.XXXXXX")
trap 'rm -rf "$work"' EXIT
# apt fetches as its own user `_apt` where it can write.
chmod 0755 "$work"
if [ "$(id -u)" -eq 0 ] && id _apt >/dev/null 2>&1; then
    chown _apt "$work"
fi
echo "guest kernel: fetching $package with apt-get download" >&2
if ! (cd "$work" && apt-get download -q "$package" >&2 2>&1); then
    # The lists may name a version the mirror has dropped: refresh once.
    echo "guest kernel: apt-get download failed; refreshing the package lists" >&2
    as_root=()
    [ "$(id -u)" -eq 0 ] || as_root=(sudo)
    "${as_root[@]}" apt-get update -qq
    (cd "$work" && apt-get download -q "$package" >&2)
fi
deb=$(find "$work" -maxdepth 1 -name "${package}_*.deb" | head -n 1)
[ -n "$deb" ] || { echo "guest kernel: no .deb for $package" >&2; exit 1; }

mkdir "$work/x"
dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$work/x" --wildcards \
    './boot/vmlinuz-*' \
    './lib/modules/*/kernel/drivers/virtio/*' \
    './lib/modules/*/kernel/fs/9p/*' \
    './lib/modules/*/kernel/fs/fscache/*' \
    './lib/modules/*/kernel/fs/netfs/*' \
    './lib/modules/*/kernel/fs/overlayfs/*' \
    './lib/modules/*/kernel/net/9p/*'

stage="$work/out"
mkdir -p "$stage/modules"
cp "$work"/x/boot/vmlinuz-* "$stage/vmlinuz"

# A module's file by its name (`-` and `_` are the same to the kernel).
module_file() {
    local name=${1//-/_} file base
    while IFS= read -r file; do
        base=$(basename "$file" .ko)
        if [ "${base//-/_}" = "$name" ]; then
            echo "$file"
            return 0
        fi
    done < <(find "$work/x/lib/modules" -name '*.ko')
    return 1
}

# Depth-first: every module after its dependencies, each once.
order=()
visit() {
    local name=$1 file dep seen
    for seen in "${order[@]+"${order[@]}"}"; do
        [ "$seen" = "$name" ] && return 0
    done
    file=$(module_file "$name") || {
        echo "guest kernel: module $name is not in $package" >&2
        exit 1
    }
    for dep in $(modinfo -F depends "$file" | tr ',' ' '); do
        visit "$dep"
    done
    cp "$file" "$stage/modules/$name.ko"
    order+=("$name")
}
for module in "${wanted[@]}"; do
    visit "${module//-/_}"
done
printf '%s\n' "${order[@]}" > "$stage/modules/order"
echo "$package" > "$stage/package"
touch "$stage/ok"

mkdir -p "$cache"
rm -rf "${cache:?}/$package"
mv "$stage" "$cache/$package"
echo "guest kernel: cached $package in $cache/$package" >&2
echo "$cache/$package"
