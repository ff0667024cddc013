#!/bin/sh
# The Debian programs some suites drive (faketime for the sunset clock, chromium for the browser suites,
# nginx for the reverse-proxy suite, script from bsdutils for a terminal, pgbouncer for the suites through a
# pooler, podman with runc and debootstrap for the container image, prometheus for its rules), installed
# when missing, as the
# first step of `pnpm test`: the README's test command is the whole set-up. Without root or apt-get nothing is installed; the suites that
# need a missing program are then skipped, each with one line naming the package (failures under CI=true;
# see src/tools.ts). Never fails by itself: a failed install leaves those suites to skip or fail.
missing=""
command -v faketime >/dev/null 2>&1 || missing="$missing faketime"
command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || [ -n "$CHROMIUM_PATH" ] ||
  missing="$missing chromium"
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing="$missing nginx"
command -v script >/dev/null 2>&1 || missing="$missing bsdutils"
command -v pgbouncer >/dev/null 2>&1 || [ -x /usr/sbin/pgbouncer ] || missing="$missing pgbouncer"
command -v podman >/dev/null 2>&1 || missing="$missing podman"
command -v runc >/dev/null 2>&1 || [ -x /usr/sbin/runc ] || missing="$missing runc"
command -v debootstrap >/dev/null 2>&1 || [ -x /usr/sbin/debootstrap ] || missing="$missing debootstrap"
command -v promtool >/dev/null 2>&1 || missing="$missing prometheus"
[ -z "$missing" ] && exit 0
if [ -n "$SKIP_DEBIAN_INSTALL" ]; then
  echo "SKIP_DEBIAN_INSTALL is set: not installing$missing; the suites that need them are skipped" >&2
  exit 0
fi

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing the Debian packages some tests drive:$missing"
  if apt-get update -qq >/dev/null 2>&1 &&
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null 2>&1; then
    exit 0
  fi
  echo "could not install$missing (apt-get failed); the suites that need them are skipped" >&2
else
  echo "not installed:$missing (needs root and apt-get: apt-get install$missing); the suites that need them are skipped" >&2
fi
exit 0
