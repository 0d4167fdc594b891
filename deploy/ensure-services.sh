#!/usr/bin/env bash
# Makes sure PostgreSQL (127.0.0.1:5432, user postgres, trust auth for local TCP) and RabbitMQ
# (127.0.0.1:5672, guest/guest) answer: starts them when installed but stopped, installs them with
# apt-get when absent; checks the build toolchain first (installs a C toolchain, explains Rust). Used
# by the test command, CI and deploy/local.sh.
set -euo pipefail

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

log() { printf 'ensure-services: %s\n' "$*" >&2; }

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

wait_port() { # port seconds
  for _ in $(seq 1 "$2"); do port_open "$1" && return 0; sleep 1; done
  return 1
}

apt_install() {
  log "installing $* with apt-get"
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

pg_version() { find /etc/postgresql -mindepth 1 -maxdepth 1 -printf '%f\n' | sort -V | tail -n 1; }

# The tests and the default DATABASE_URLs connect as postgres over TCP without a password: trust
# local TCP connections on this development machine. Returns 0 when the file changed.
trust_local_tcp() {
  local hba
  hba="/etc/postgresql/$(pg_version)/main/pg_hba.conf"
  [ -f "$hba" ] || return 1
  if grep -qE '^host\s+all\s+all\s+(127\.0\.0\.1/32|::1/128)\s+trust' "$hba"; then return 1; fi
  log "trusting local TCP connections in $hba"
  $SUDO sed -i -E 's/^(host\s+all\s+all\s+(127\.0\.0\.1\/32|::1\/128)\s+)\S+/\1trust/' "$hba"
}

# One statement as the tests' passwordless user; its rows on stdout.
pg_query() { psql -w -h 127.0.0.1 -U postgres -d postgres -Atqc "$1" </dev/null; }

# True when the passwordless URL the tests default to is accepted.
pg_accepts_us() {
  command -v psql >/dev/null 2>&1 || return 0 # nothing to ask with; the tests will tell
  pg_query 'select 1' >/dev/null 2>&1
}

ensure_postgres() {
  if ! port_open 5432; then
    if ! ls /etc/postgresql/*/main >/dev/null 2>&1; then
      apt_install postgresql postgresql-client
      trust_local_tcp || true
    fi
    log "starting PostgreSQL $(pg_version)"
    $SUDO pg_ctlcluster --skip-systemctl-redirect "$(pg_version)" main start || true
    wait_port 5432 30 || { log "PostgreSQL did not come up on 127.0.0.1:5432"; exit 1; }
  fi
  pg_accepts_us && return 0
  # A running server of this machine's own that wants a password: trust local TCP and reload.
  if ls /etc/postgresql/*/main >/dev/null 2>&1 && trust_local_tcp; then
    log "reloading PostgreSQL $(pg_version)"
    $SUDO pg_ctlcluster --skip-systemctl-redirect "$(pg_version)" main reload || true
    for _ in $(seq 1 10); do pg_accepts_us && return 0; sleep 0.5; done
  fi
  if [ -n "${TEST_PG_URL:-}" ]; then
    log "postgres@127.0.0.1:5432 refuses passwordless login; the tests use TEST_PG_URL instead"
    return 0
  fi
  log "PostgreSQL answers on 127.0.0.1:5432 but refuses user postgres without a password."
  log "Allow it (trust for 127.0.0.1 in pg_hba.conf), or point the tests elsewhere:"
  log "  TEST_PG_URL=postgres://user:password@host:5432 TEST_AMQP_URL=amqp://user:password@host:5672/%2f bash deploy/test.sh"
  exit 1
}

# The suite's binaries run side by side (deploy/test.sh's lanes), each test with services whose
# pools stay open: up to ~100 sessions at once were counted in a CI run, PostgreSQL's default
# limit. A test whose pool finds no free slot for 30 s fails (PoolTimedOut), so this machine's own
# server gets room (ALTER SYSTEM, then a restart, logged); another server is only named.
# The bench's fleet section (10) needs more than the suite: 200 outbox databases, each with its
# owning relay's LISTEN connection and a pool of up to 2, are up to 600 sessions at once, and the
# section's writers (a pooled session per database: 200 more) and the registry come on top.
PG_MIN_CONNECTIONS=1000
ensure_pg_connections() {
  command -v psql >/dev/null 2>&1 || return 0
  local limit
  limit=$(pg_query 'show max_connections' 2>/dev/null) || return 0
  [ "$limit" -ge "$PG_MIN_CONNECTIONS" ] && return 0
  if [ -n "${TEST_PG_URL:-}" ] || ! ls /etc/postgresql/*/main >/dev/null 2>&1; then
    log "PostgreSQL allows $limit connections; the suite may need up to $PG_MIN_CONNECTIONS (max_connections)"
    return 0
  fi
  log "raising PostgreSQL $(pg_version)'s max_connections from $limit to $PG_MIN_CONNECTIONS and restarting it"
  pg_query "alter system set max_connections = $PG_MIN_CONNECTIONS" >/dev/null
  $SUDO pg_ctlcluster --skip-systemctl-redirect "$(pg_version)" main restart
  wait_port 5432 30 || { log "PostgreSQL did not come back on 127.0.0.1:5432"; exit 1; }
  for _ in $(seq 1 20); do pg_accepts_us && return 0; sleep 0.5; done
  log "PostgreSQL does not accept logins after its restart"
  exit 1
}

ensure_rabbitmq() {
  if port_open 5672; then return 0; fi
  if ! command -v rabbitmq-server >/dev/null 2>&1 && [ ! -x /usr/sbin/rabbitmq-server ]; then
    apt_install rabbitmq-server
  fi
  log "starting RabbitMQ"
  # The broker may be running with its application stopped (rabbitmqctl stop_app).
  if $SUDO rabbitmqctl -q status >/dev/null 2>&1; then
    $SUDO rabbitmqctl -q start_app || true
  else
    $SUDO rabbitmq-server -detached || true
  fi
  $SUDO rabbitmqctl -q await_startup --timeout 60 >/dev/null 2>&1 || true
  wait_port 5672 60 || { log "RabbitMQ did not come up on 127.0.0.1:5672"; exit 1; }
}

# The build needs Rust (rustup; the workspace's rust-version) and a C toolchain for the crates that
# compile C (ring, aws-lc): install the latter, explain the former.
ensure_toolchain() {
  if ! command -v cargo >/dev/null 2>&1; then
    log "cargo is not installed: install Rust (>= the rust-version in Cargo.toml) with rustup,"
    log "  curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh   (then open a new shell)"
    exit 1
  fi
  if ! command -v cc >/dev/null 2>&1 || ! command -v pkg-config >/dev/null 2>&1; then
    apt_install build-essential pkg-config
  fi
}

ensure_toolchain
ensure_postgres
ensure_pg_connections
ensure_rabbitmq
log "PostgreSQL and RabbitMQ are up"
