#!/bin/sh
# Builds the Debian bookworm root (debootstrap's minbase) that the service stand-ins start from, as a
# local image named $1, when it is not there yet (about 60 s, once per machine). Only for these machines,
# which reach Debian's mirrors and the npm registry but no image registry.
# Usage: debian-base.sh <image name>
set -eu
image=$1
if podman image exists "$image"; then exit 0; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "building $image (debootstrap bookworm)"
debootstrap --variant=minbase bookworm "$work/root" http://deb.debian.org/debian >"$work/debootstrap.log" 2>&1 ||
  { tail -20 "$work/debootstrap.log" >&2; exit 1; }
rm -rf "$work/root/var/cache/apt/archives"/*.deb "$work/root/var/lib/apt/lists"/*
tar -C "$work/root" -c . | podman import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'CMD ["bash"]' - "$image" >/dev/null
echo "built $image"
