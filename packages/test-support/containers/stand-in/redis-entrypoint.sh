#!/bin/sh
# The official redis image's start, as far as compose.yaml uses it.
set -eu
if [ "${1:-}" = redis-server ]; then
  shift
  exec setpriv --reuid=redis --regid=redis --init-groups redis-server --protected-mode no "$@"
fi
exec "$@"
