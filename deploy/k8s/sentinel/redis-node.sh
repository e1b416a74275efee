#!/bin/sh
# Starts one node of Arena's Redis Sentinel topology (deploy/compose/sentinel.yaml,
# deploy/k8s/sentinel): `redis-node.sh redis` for a data node, `redis-node.sh
# sentinel` for a sentinel. The same file is in both places (a test checks).
#
# Environment:
#   SELF       this node's hostname, as the others reach it
#   INITIAL    the data node that is primary when the topology is first created
#   SENTINELS  the sentinels' hostnames, space-separated
#   MASTER     the name the sentinels monitor the primary under (arena)
#   QUORUM     sentinels that must agree the primary is down (2 of 3)
#
# Both kinds first ask the sentinels which node is primary now: after a
# failover that is not INITIAL, and a restarted old primary must come back as
# a replica of the new one (not as a second primary), and a restarted
# sentinel must monitor the new one. Only when no sentinel answers (the very
# first start) is INITIAL taken.
set -eu

current_primary() {
  for sentinel in $SENTINELS; do
    [ "$sentinel" = "$SELF" ] && continue
    if reply=$(redis-cli -h "$sentinel" -p 26379 --raw \
      SENTINEL GET-MASTER-ADDR-BY-NAME "$MASTER" 2>/dev/null); then
      host=$(printf '%s\n' "$reply" | head -n 1)
      if [ -n "$host" ]; then
        printf '%s\n' "$host"
        return
      fi
    fi
  done
  printf '%s\n' "$INITIAL"
}

primary=$(current_primary)

case "${1:-}" in
  redis)
    set -- --port 6379 --appendonly yes --appendfsync everysec --dir /data \
      --replica-announce-ip "$SELF"
    if [ "$primary" != "$SELF" ]; then
      set -- "$@" --replicaof "$primary" 6379
    fi
    exec redis-server "$@"
    ;;
  sentinel)
    # Sentinel rewrites its config file as it learns the topology, so it
    # gets a writable copy of its own.
    conf=/tmp/sentinel.conf
    cat >"$conf" <<CONF
port 26379
sentinel resolve-hostnames yes
sentinel announce-hostnames yes
sentinel announce-ip $SELF
sentinel monitor $MASTER $primary 6379 $QUORUM
sentinel down-after-milliseconds $MASTER 5000
sentinel failover-timeout $MASTER 60000
sentinel parallel-syncs $MASTER 1
CONF
    exec redis-server "$conf" --sentinel
    ;;
  *)
    echo "usage: $0 redis|sentinel" >&2
    exit 64
    ;;
esac
