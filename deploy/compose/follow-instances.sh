#!/bin/sh
# The compose proxy's process (compose.yaml): nginx, and a look every second at the instances' addresses.
# nginx resolves an upstream server's name once, when it loads its configuration, and a restarted instance
# comes back at a new address on the project's network (podman gives one): nginx went on sending to the old
# one (0 of 40 requests reached it, every fifth waited a second). When every instance's name resolves and an
# address changed, nginx reloads its configuration: gracefully, its old workers finish what they have.
# Written by hand: docs/decisions.md#compose-proxy-follow (nginx 1.22 has no `resolve` for upstream
# servers; nginx 1.27.3 and later have).
set -u
conf=/etc/nginx/conf.d/default.conf
# The instances, as the upstream block names them: `server <name>:<port> …;`.
names=$(sed -n 's/^ *server \([A-Za-z0-9_.-]*\):[0-9]*.*;/\1/p' "$conf")
addresses() {
  for name in $names; do
    found=$(getent hosts "$name") || return 1
    echo "$name ${found%% *}"
  done
}

nginx -g 'daemon off;' &
nginx=$!
trap 'kill -QUIT "$nginx" 2>/dev/null' QUIT TERM INT
known=$(addresses || true)
while kill -0 "$nginx" 2>/dev/null; do
  sleep 1
  now=$(addresses) || continue # an instance stopped: nginx keeps what it has until it is back
  if [ "$now" != "$known" ] && nginx -s reload 2>/dev/null; then
    echo "proxy: an instance's address changed; nginx reloaded its configuration" >&2
    known=$now
  fi
done
wait "$nginx"
