#!/usr/bin/env bash
# The test command: brings up PostgreSQL and RabbitMQ if needed, then runs every test of the
# workspace against them. Extra arguments go to `cargo test`.
set -euo pipefail
cd "$(dirname "$0")/.."

bash deploy/ensure-services.sh

# Test databases are named <prefix>_test_<pid>_<time>_<n>; drop those left by test processes that
# are gone, so that a machine running the suite often does not collect them.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "select datname from pg_database where datname ~ '_test_[0-9]+_[0-9]+_[0-9]+$'" 2>/dev/null |
  while read -r db; do
    pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+$/\1/' <<<"$db")
    if ! kill -0 "$pid" 2>/dev/null; then
      psql -h 127.0.0.1 -U postgres -d postgres -qc "drop database if exists \"$db\" with (force)" \
        >/dev/null 2>&1 || true
    fi
  done

# Likewise for test queues (quorum queues hold memory on the broker) of test processes that are gone.
if command -v rabbitmqctl >/dev/null 2>&1; then
  rabbitmqctl -q list_queues name 2>/dev/null | grep -E '_test_[0-9]+_[0-9]+_[0-9]+' |
    while read -r queue; do
      pid=$(sed -E 's/.*_test_([0-9]+)_[0-9]+_[0-9]+.*/\1/' <<<"$queue")
      if ! kill -0 "$pid" 2>/dev/null; then
        rabbitmqctl -q delete_queue "$queue" >/dev/null 2>&1 || true
      fi
    done
fi

cargo test --workspace --locked "$@"
