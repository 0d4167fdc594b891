#!/usr/bin/env bash
# The test command: brings up PostgreSQL and RabbitMQ if needed, sweeps what finished test
# processes left behind, then runs every test of the workspace against them.
#   bash deploy/test.sh                        ensure services, sweep, test everything
#   bash deploy/test.sh [cargo test args...]   the same with those arguments (e.g. -p relay-svc)
#   bash deploy/test.sh --sweep-only           only the sweep (safe on a machine with nothing to sweep)
# Reads TEST_PG_URL and TEST_AMQP_URL (see README) only through the tests; the sweep uses the local
# psql and rabbitmqctl and is skipped, with a note, when they are not installed.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf 'test.sh: %s\n' "$*" >&2; }

# Every name a test creates (databases, queues, exchanges) is `<prefix>_<pid>_<time>_<n>`, optionally
# followed by a suffix such as `.dead-letter` (outbox_testkit::unique). The prefixes are the crates'.
TEST_NAME_RE='^(orders|relay|mail|e2e|bench|outbox|inbox|minimal)[A-Za-z0-9_.-]*_[0-9]+_[0-9]+_[0-9]+([._-].*)?$'

# The pid inside a test name, or nothing when the name is not one of ours.
test_pid() {
  sed -nE 's/^[A-Za-z0-9_.-]*_([0-9]+)_[0-9]+_[0-9]+([._-].*)?$/\1/p' <<<"$1" | head -n 1
}

# True when the test process that made a name is gone (its leftovers are safe to drop).
owner_gone() {
  local pid
  pid=$(test_pid "$1")
  [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null
}

sweep_databases() {
  if ! command -v psql >/dev/null 2>&1; then
    log "psql not installed: skipping the test-database sweep"
    return 0
  fi
  local names
  # `|| true`: a server that refuses us is a note, not a failed test run (the tests will say why).
  names=$(psql -w -h 127.0.0.1 -U postgres -d postgres -Atqc "select datname from pg_database" \
    2>/dev/null || true)
  local db
  while read -r db; do
    [ -n "$db" ] || continue
    [[ $db =~ $TEST_NAME_RE ]] || continue
    owner_gone "$db" || continue
    psql -w -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" \
      </dev/null >/dev/null 2>&1 || true
  done <<<"$names"
}

# Queues only: quorum queues hold memory on the broker, a leftover exchange costs next to nothing.
sweep_broker() {
  if ! command -v rabbitmqctl >/dev/null 2>&1; then
    log "rabbitmqctl not installed: skipping the test-queue sweep"
    return 0
  fi
  local queues name
  queues=$(rabbitmqctl -q list_queues name </dev/null 2>/dev/null || true)
  while read -r name; do
    [ -n "$name" ] || continue
    [[ $name =~ $TEST_NAME_RE ]] || continue
    owner_gone "$name" || continue
    rabbitmqctl -q delete_queue "$name" </dev/null >/dev/null 2>&1 || true
  done <<<"$queues"
}

sweep() {
  sweep_databases
  sweep_broker
}

if [ "${1:-}" = "--sweep-only" ]; then
  sweep
  log "sweep done"
  exit 0
fi

bash deploy/ensure-services.sh
bash deploy/ensure-test-tools.sh
sweep
if [ "$#" -gt 0 ]; then
  cargo test --workspace --locked "$@"
  exit 0
fi
# Build every test binary once, then run the end-to-end binary beside the others: its tests
# mostly wait (services starting, chaos runs of a fixed length), and no test needs the machine to
# itself (a test that restarts a broker restarts a node of its own). The end-to-end binary gets
# more test threads than libtest's one per core, so that its waiting tests overlap; its output is
# kept in a file and printed after the others', so the two runs' lines do not interleave. Every
# binary runs even when one fails (`--no-fail-fast`), so one run names every failure.
cargo test --workspace --locked --no-run
e2e_log=$(mktemp)
RUST_TEST_THREADS="${E2E_TEST_THREADS:-4}" cargo test --locked --no-fail-fast -p e2e >"$e2e_log" 2>&1 &
e2e_pid=$!
others=0
cargo test --workspace --locked --no-fail-fast --exclude e2e || others=$?
e2e=0
wait "$e2e_pid" || e2e=$?
log "the end-to-end package's tests:"
cat "$e2e_log"
rm -f "$e2e_log"
if [ "$others" -ne 0 ] || [ "$e2e" -ne 0 ]; then
  log "failed: the other packages' tests exited $others, the end-to-end package's $e2e"
  exit 1
fi
