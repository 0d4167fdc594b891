#!/usr/bin/env bash
# A 3-node RabbitMQ cluster on this machine, next to (never touching) its own broker on 5672:
#
#   deploy/rabbit-cluster.sh up                 start the nodes (if down) and join them into one cluster
#   deploy/rabbit-cluster.sh down               stop the nodes and remove everything they stored
#   deploy/rabbit-cluster.sh kill-node N        SIGKILL node N's Erlang VM (N = 1..3), no goodbye
#   deploy/rabbit-cluster.sh restart-node N     start node N again; it rejoins the cluster
#   deploy/rabbit-cluster.sh partition-node N S cut node N off from the other two for S seconds
#   deploy/rabbit-cluster.sh status             which nodes run, and the cluster they see
#   deploy/rabbit-cluster.sh urls               the AMQP_URL list of the three nodes
#
# Node N is `outbox-cN@localhost`, AMQP on 127.0.0.1:569N (user guest/guest, allowed from loopback),
# Erlang distribution on 2569N, its files under $OUTBOX_RABBIT_CLUSTER_DIR/nodeN (default
# /tmp/outbox-rabbit-cluster), owned by the `rabbitmq` user the server runs as. The nodes share the
# machine's Erlang cookie (the `rabbitmq` user's). `cluster_partition_handling = pause_minority`:
# a node cut off from the majority stops serving clients (they fail over to another node) and
# resumes by itself once it sees the others again. Every command is idempotent.
set -euo pipefail

BASE="${OUTBOX_RABBIT_CLUSTER_DIR:-/tmp/outbox-rabbit-cluster}"
NODES=(1 2 3)

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

log() { printf 'rabbit-cluster: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

node_name() { printf 'outbox-c%s@localhost' "$1"; }
amqp_port() { printf '%s' "$((5690 + $1))"; }
dist_port() { printf '%s' "$((25690 + $1))"; }
node_dir() { printf '%s/node%s' "$BASE" "$1"; }

check_n() {
  case "${1:-}" in
    1 | 2 | 3) ;;
    *) die "node number must be 1, 2 or 3 (got '${1:-}')" ;;
  esac
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# rabbitmqctl against node N (stdin closed: it would swallow a caller's loop input).
ctl() {
  local n="$1"
  shift
  $SUDO rabbitmqctl -q -n "$(node_name "$n")" "$@" </dev/null
}

# The PID of node N's Erlang VM, verified: the PID file names a live beam.smp started for this node
# (its environment names the node: RabbitMQ 3.10 sets the node name at boot, not on the command
# line). Prints nothing when the node is not running.
node_pid() {
  local pidfile pid
  pidfile="$(node_dir "$1")/pid"
  [ -f "$pidfile" ] || return 0
  pid="$(tr -dc '0-9' <"$pidfile")"
  [ -n "$pid" ] || return 0
  case "$(readlink "/proc/$pid/exe" 2>/dev/null || true)" in
    */beam.smp) ;;
    *) return 0 ;;
  esac
  if $SUDO cat "/proc/$pid/environ" 2>/dev/null | tr '\0' '\n' | grep -qx "RABBITMQ_NODENAME=$(node_name "$1")"; then
    printf '%s' "$pid"
  fi
}

prepare_dir() {
  local n="$1" dir
  dir="$(node_dir "$n")"
  $SUDO mkdir -p "$dir/mnesia" "$dir/log"
  # loopback_users = none: guest may log in (from 127.0.0.1 only: the listener binds loopback).
  printf '%s\n' \
    "listeners.tcp.default = 127.0.0.1:$(amqp_port "$n")" \
    "loopback_users = none" \
    "cluster_partition_handling = pause_minority" \
    "vm_memory_high_watermark.relative = 0.2" |
    $SUDO tee "$dir/rabbitmq.conf" >/dev/null
  [ -f "$dir/enabled_plugins" ] || printf '[].\n' | $SUDO tee "$dir/enabled_plugins" >/dev/null
  $SUDO chown -R rabbitmq:rabbitmq "$BASE"
}

start_node() {
  local n="$1" dir
  dir="$(node_dir "$n")"
  if [ -n "$(node_pid "$n")" ]; then return 0; fi
  port_open "$(amqp_port "$n")" && die "port $(amqp_port "$n") is taken by something else"
  prepare_dir "$n"
  log "starting $(node_name "$n") (AMQP 127.0.0.1:$(amqp_port "$n"), dist $(dist_port "$n"))"
  $SUDO env \
    RABBITMQ_NODENAME="$(node_name "$n")" \
    RABBITMQ_NODE_PORT="$(amqp_port "$n")" \
    RABBITMQ_DIST_PORT="$(dist_port "$n")" \
    RABBITMQ_CONFIG_FILE="$dir/rabbitmq.conf" \
    RABBITMQ_ADVANCED_CONFIG_FILE="$dir/advanced.config" \
    RABBITMQ_MNESIA_BASE="$dir/mnesia" \
    RABBITMQ_LOG_BASE="$dir/log" \
    RABBITMQ_ENABLED_PLUGINS_FILE="$dir/enabled_plugins" \
    RABBITMQ_PID_FILE="$dir/pid" \
    rabbitmq-server -detached </dev/null
}

# Waits until node N's broker runs and takes connections.
await_node() {
  local n="$1"
  for _ in $(seq 1 120); do
    if ctl "$n" await_startup --timeout 5 >/dev/null 2>&1 && port_open "$(amqp_port "$n")"; then
      return 0
    fi
    sleep 1
  done
  die "$(node_name "$n") did not start: see $(node_dir "$n")/log"
}

# The running members node N sees (one per line; none while it is down or paused).
running_nodes() {
  { ctl "$1" eval 'rabbit_nodes:all_running().' 2>/dev/null || true; } |
    { grep -o 'outbox-c[0-9]*@localhost' || true; }
}

join_node() {
  local n="$1" seed
  seed="$(node_name 1)"
  if running_nodes "$n" | grep -qx "$seed"; then return 0; fi
  log "joining $(node_name "$n") to $seed"
  ctl "$n" stop_app >/dev/null
  ctl "$n" join_cluster "$seed" >/dev/null
  ctl "$n" start_app >/dev/null
  await_node "$n"
}

cmd_up() {
  command -v rabbitmq-server >/dev/null || die "rabbitmq-server is not installed (deploy/ensure-services.sh installs it)"
  for n in "${NODES[@]}"; do start_node "$n"; done
  for n in "${NODES[@]}"; do await_node "$n"; done
  for n in 2 3; do join_node "$n"; done
  # A node that was partitioned away resumes by itself once it sees the others: wait for it.
  local members=0
  for _ in $(seq 1 60); do
    members="$(running_nodes 1 | wc -l)"
    [ "$members" -eq 3 ] && break
    sleep 1
  done
  [ "$members" -eq 3 ] || die "the cluster has $members running nodes, not 3"
  log "up: AMQP on 127.0.0.1:$(amqp_port 1), $(amqp_port 2), $(amqp_port 3) (user guest; \`$0 urls\` prints the AMQP_URL list)"
}

cmd_down() {
  for n in "${NODES[@]}"; do
    if [ -n "$(node_pid "$n")" ]; then
      log "stopping $(node_name "$n")"
      ctl "$n" stop >/dev/null 2>&1 || true
    fi
  done
  for n in "${NODES[@]}"; do
    for _ in $(seq 1 30); do [ -z "$(node_pid "$n")" ] && break; sleep 1; done
    local pid
    pid="$(node_pid "$n")"
    if [ -n "$pid" ]; then
      log "$(node_name "$n") did not stop: killing pid $pid"
      $SUDO kill -KILL "$pid"
    fi
  done
  $SUDO rm -rf "$BASE"
  log "down"
}

cmd_kill_node() {
  check_n "${1:-}"
  local pid
  pid="$(node_pid "$1")"
  if [ -z "$pid" ]; then
    log "$(node_name "$1") is not running"
    return 0
  fi
  log "killing $(node_name "$1") (pid $pid)"
  $SUDO kill -KILL "$pid"
  for _ in $(seq 1 50); do [ -e "/proc/$pid" ] || break; sleep 0.1; done
  # A later start must not take a stale file for a live node.
  $SUDO rm -f "$(node_dir "$1")/pid"
}

cmd_restart_node() {
  check_n "${1:-}"
  start_node "$1"
  await_node "$1"
}

# Node N changes its Erlang cookie and drops its links to the others, so neither side can
# reconnect; a timer inside the node restores the cookie after S seconds and the links come back.
# With pause_minority the node pauses (closes its clients and listener) and resumes by itself.
cmd_partition_node() {
  check_n "${1:-}"
  local n="$1" seconds="${2:-}"
  if ! [[ "$seconds" =~ ^[1-9][0-9]*$ ]]; then
    die "partition-node needs a duration in seconds (got '$seconds')"
  fi
  [ -n "$(node_pid "$n")" ] || die "$(node_name "$n") is not running"
  local others=() m
  for m in "${NODES[@]}"; do [ "$m" = "$n" ] || others+=("'$(node_name "$m")'"); done
  local code
  code="Cookie = erlang:get_cookie(),
    {ok, _} = timer:apply_after($((seconds * 1000)), erlang, set_cookie, [node(), Cookie]),
    erlang:set_cookie(node(), 'outbox-partitioned'),
    [erlang:disconnect_node(N) || N <- [$(IFS=,; printf '%s' "${others[*]}")]],
    ok."
  log "partitioning $(node_name "$n") away for ${seconds}s"
  ctl "$n" eval "$code" >/dev/null
}

cmd_status() {
  for n in "${NODES[@]}"; do
    local pid
    pid="$(node_pid "$n")"
    if [ -n "$pid" ]; then
      printf '%s pid=%s amqp=127.0.0.1:%s running_nodes=%s\n' "$(node_name "$n")" "$pid" \
        "$(amqp_port "$n")" "$(running_nodes "$n" | paste -sd, -)"
    else
      printf '%s down\n' "$(node_name "$n")"
    fi
  done
}

cmd_urls() {
  local urls=() n
  for n in "${NODES[@]}"; do urls+=("amqp://guest:guest@127.0.0.1:$(amqp_port "$n")/%2f"); done
  (IFS=,; printf '%s\n' "${urls[*]}")
}

case "${1:-}" in
  up) cmd_up ;;
  down) cmd_down ;;
  kill-node) cmd_kill_node "${2:-}" ;;
  restart-node) cmd_restart_node "${2:-}" ;;
  partition-node) cmd_partition_node "${2:-}" "${3:-}" ;;
  status) cmd_status ;;
  urls) cmd_urls ;;
  *)
    sed -n '2,10s/^# \{0,1\}//p' "$0" >&2
    exit 2
    ;;
esac
