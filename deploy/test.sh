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

# Queues (quorum queues hold memory on the broker), then exchanges.
sweep_broker() {
  if ! command -v rabbitmqctl >/dev/null 2>&1; then
    log "rabbitmqctl not installed: skipping the test-queue sweep"
    return 0
  fi
  local queues exchanges exchange name
  queues=$(rabbitmqctl -q list_queues name </dev/null 2>/dev/null || true)
  while read -r name; do
    [ -n "$name" ] || continue
    [[ $name =~ $TEST_NAME_RE ]] || continue
    owner_gone "$name" || continue
    rabbitmqctl -q delete_queue "$name" </dev/null >/dev/null 2>&1 || true
  done <<<"$queues"
  # rabbitmqctl has no delete_exchange (the management plugin's CLI has, when it is enabled):
  # the broker's own function, in the default vhost the tests use. A test name holds no quote.
  exchanges=$(rabbitmqctl -q list_exchanges name </dev/null 2>/dev/null || true)
  while read -r name; do
    [ -n "$name" ] || continue
    [[ $name =~ $TEST_NAME_RE ]] || continue
    owner_gone "$name" || continue
    exchange="rabbit_misc:r(<<\"/\">>, exchange, <<\"$name\">>)"
    rabbitmqctl -q eval "rabbit_exchange:delete($exchange, false, <<\"test-sweep\">>)." \
      </dev/null >/dev/null 2>&1 || true
  done <<<"$exchanges"
}

sweep() {
  sweep_databases
  sweep_broker
}

# What this run's test processes left behind: databases, queues and exchanges whose name carries
# the pid of one of them. Every test removes what it made, passing or failing; prints each
# leftover and fails when there is one.
check_left_behind() {
  local pids kind name pid left=0
  pids=" $(sort -u "$OUTBOX_TEST_PIDS_FILE" | tr '\n' ' ') "
  rm -f "$OUTBOX_TEST_PIDS_FILE"
  while read -r kind name; do
    [ -n "$name" ] || continue
    [[ $name =~ $TEST_NAME_RE ]] || continue
    pid=$(test_pid "$name")
    [[ $pids == *" $pid "* ]] || continue
    log "left behind by this run: $kind $name"
    left=$((left + 1))
  done < <(
    if command -v psql >/dev/null 2>&1; then
      psql -w -h 127.0.0.1 -U postgres -d postgres -Atqc "select datname from pg_database" \
        </dev/null 2>/dev/null | sed 's/^/database /' || true
    fi
    if command -v rabbitmqctl >/dev/null 2>&1; then
      rabbitmqctl -q list_queues name </dev/null 2>/dev/null | sed 's/^/queue /' || true
      rabbitmqctl -q list_exchanges name </dev/null 2>/dev/null | sed 's/^/exchange /' || true
    fi
  )
  if [ "$left" -gt 0 ]; then
    log "$left names left behind by this run's tests (each test removes what it made)"
    return 1
  fi
}

if [ "${1:-}" = "--sweep-only" ]; then
  sweep
  log "sweep done"
  exit 0
fi

bash deploy/ensure-services.sh
bash deploy/ensure-test-tools.sh
# Every test process of this run writes its pid to this file the first time it makes a name
# (outbox_testkit::unique), and so does each binary this script starts: the check at the end
# counts this run's names only, never those of another run on the same machine.
export OUTBOX_TEST_PIDS_FILE
OUTBOX_TEST_PIDS_FILE=$(mktemp)
if [ "$#" -gt 0 ]; then
  sweep
  rc=0
  cargo test --workspace --locked "$@" || rc=$?
  check_left_behind || rc=1
  exit "$rc"
fi
# The sweep runs beside the build and the tests (rabbitmqctl alone takes seconds, longer on a busy
# machine): it only drops what a finished process left, never a running test's names.
sweep &
sweep_pid=$!
# Build every test binary once, for the whole workspace, then run the binaries themselves: two
# `cargo test` runs over different package sets would each resolve features anew (the crates'
# own dev-dependencies turn on `unstable-internals`, the console's tests pull in an HTTP client)
# and rebuild most of the dependency tree a second and a third time.
listing=$(mktemp)
cargo test --workspace --locked --no-run --message-format=json-render-diagnostics >"$listing"
# One line per test binary: its package's directory, then the executable (cargo runs each in its
# package's directory, with CARGO and CARGO_MANIFEST_DIR set; so does run_binary).
mapfile -t binaries < <(python3 -c '
import json, os, sys
for line in open(sys.argv[1]):
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        print(os.path.dirname(m["manifest_path"]) + "\t" + m["executable"])
' "$listing" | sort -u)
rm -f "$listing"
if [ "${#binaries[@]}" -eq 0 ]; then
  log "no test binaries were built"
  exit 1
fi
cargo_bin=$(command -v cargo)

# The binaries run side by side, TEST_LANES at a time (default 3), the doctests as one more job:
# the tests mostly wait (services starting, brokers restarting a node of their own, chaos runs of
# a fixed length), and no test needs the machine to itself. The longest start first: the packages
# in LONGEST_FIRST (slowest first, as measured in CI), their integration binaries before their unit
# tests. The end-to-end package's binaries get more test threads than libtest's one per core, so
# that their waiting tests overlap. Each job's output is printed whole when it ends, so lines of
# different binaries never interleave; every job runs even when one fails, so one run names every
# failure.
LONGEST_FIRST=(e2e mail-svc relay-svc crates/outbox-relay orders-svc outboxctl crates/outbox-inbox)
rank() {
  local dir=${1#"$PWD"/} exe=$2 i
  for i in "${!LONGEST_FIRST[@]}"; do
    if [ "$dir" = "${LONGEST_FIRST[$i]}" ]; then
      # Integration binaries (`tests/it`, named `it-…`) before a package's unit tests.
      case "$(basename "$exe")" in it-*) echo $((2 * i)) ;; *) echo $((2 * i + 1)) ;; esac
      return
    fi
  done
  echo 99
}
mapfile -t ordered < <(for entry in "${binaries[@]}"; do
  printf '%s\t%s\n' "$(rank "${entry%%$'\t'*}" "${entry#*$'\t'}")" "$entry"
done | sort -s -n -k1,1 | cut -f2-)

jobs_dir=$(mktemp -d)
trap 'rm -rf "$jobs_dir"' EXIT

# Runs one test binary as `cargo test` would.
run_binary() {
  local dir=$1 exe=$2
  printf '\n     Running %s (%s)\n' "${exe#"$PWD"/}" "${dir#"$PWD"/}"
  if [ "$(basename "$dir")" = e2e ]; then
    export RUST_TEST_THREADS="${E2E_TEST_THREADS:-4}"
  fi
  # The binary takes the subshell's pid (exec): recorded for the check at the end, also when
  # none of its tests makes a name through the testkit.
  (cd "$dir" && echo "$BASHPID" >>"$OUTBOX_TEST_PIDS_FILE" &&
    CARGO="$cargo_bin" CARGO_MANIFEST_DIR="$dir" exec "$exe")
}

# Runs job $1 (a command and its arguments after it), keeps its output, prints it whole under a
# lock when it ends, and leaves a failure mark when it fails.
run_job() {
  local name=$1
  shift
  local out="$jobs_dir/$name.log" rc=0 TIMEFORMAT='%0R s, CPU %0U s user and %0S s system'
  # The CPU the binary and the processes it waited for (the services it started) spent.
  { time "$@" >"$out" 2>&1 || rc=$?; } 2>"$jobs_dir/$name.time"
  {
    flock 9
    cat "$out"
    printf 'test.sh: %s ended (exit %s) after %s\n' "$name" "$rc" "$(cat "$jobs_dir/$name.time")"
  } 9>"$jobs_dir/print.lock" >&2
  if [ "$rc" -ne 0 ]; then
    : >"$jobs_dir/$name.failed"
  fi
}

lanes="${TEST_LANES:-3}"
n=0
for entry in "${ordered[@]}" doctests; do
  # Test jobs running (the sweep does not take a lane).
  while [ "$(jobs -rp | grep -cvx "$sweep_pid")" -ge "$lanes" ]; do
    wait -n || true
  done
  n=$((n + 1))
  if [ "$entry" = doctests ]; then
    # The doctests (the crates' READMEs among them), from the same build.
    run_job "$n-doctests" cargo test --workspace --locked --doc &
  else
    run_job "$n-$(basename "${entry#*$'\t'}")" run_binary "${entry%%$'\t'*}" "${entry#*$'\t'}" &
  fi
done
wait
wait "$sweep_pid" || true
if ! check_left_behind; then
  : >"$jobs_dir/0-left-behind.failed"
fi
shopt -s nullglob
failed=("$jobs_dir"/*.failed)
if [ "${#failed[@]}" -gt 0 ]; then
  for f in "${failed[@]}"; do
    f=$(basename "$f" .failed)
    log "failed: ${f#*-}"
  done
  exit 1
fi
