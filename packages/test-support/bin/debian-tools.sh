#!/bin/sh
# The Debian programs some suites drive (debian-tools.list beside this script: the sunset clock, the
# browser suites, the reverse proxy, a terminal, the pooler, the container image, the alert rules, the Redis
# topologies and TLS, the shell linter of the workflows and scripts), installed when missing, as the first step of `pnpm test` (and of the GitHub CI, with
# sudo): the README's test command is the whole set-up. Without root or apt-get nothing is installed; the
# suites that need a missing program are then skipped, each with one line naming the package (failures
# under CI=true; see src/tools.ts). Chromium may come from CHROMIUM_PATH instead (a runner's own Chrome).
# Never fails by itself: a failed install leaves those suites to skip or fail.
list="${0%/*}/debian-tools.list"
found() {
  command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ] || [ -x "/usr/bin/$1" ] ||
    { [ "$1" = chromium ] && { command -v chromium-browser >/dev/null 2>&1 || [ -n "$CHROMIUM_PATH" ]; }; }
}
missing=""
while read -r command package; do
  case "$command" in '' | '#'*) continue ;; esac
  found "$command" || case " $missing " in *" $package "*) ;; *) missing="$missing $package" ;; esac
done <"$list"
[ -z "$missing" ] && exit 0
if [ -n "$SKIP_DEBIAN_INSTALL" ]; then
  echo "SKIP_DEBIAN_INSTALL is set: not installing$missing; the suites that need them are skipped" >&2
  exit 0
fi

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing the Debian packages some tests drive:$missing"
  # shellcheck disable=SC2086 # $missing is a list of packages: split on purpose
  if apt-get update -qq >/dev/null 2>&1 &&
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null 2>&1; then
    exit 0
  fi
  echo "could not install$missing (apt-get failed); the suites that need them are skipped" >&2
else
  echo "not installed:$missing (needs root and apt-get: apt-get install$missing); the suites that need them are skipped" >&2
fi
exit 0
