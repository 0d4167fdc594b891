#!/usr/bin/env bash
# The published crates' public API, held to docs/public-api/<crate>.txt and to CHANGELOG.md.
#   bash .ci/public-api.sh           check (CI)
#   bash .ci/public-api.sh --bless   write the snapshots after an intended API change
#
# 1. rustdoc's JSON output (the stable toolchain, with RUSTC_BOOTSTRAP=1 for the unstable
#    output format; hidden items included; the features a user turns on, `amqp`, not the
#    internals of `unstable-internals`) is rendered one line per item by
#    .ci/public_api.py: paths, signatures, fields, variants, trait items, trait impls. Each crate's
#    lines must equal its committed snapshot: an API change comes with its snapshot.
# 2. Every item whose line differs between the snapshot of the base commit (PUBLIC_API_BASE,
#    default HEAD^1: the main before a merge, or the commit before) and the working tree must be
#    named in CHANGELOG.md's newest version section: its path without the crate's name, at most
#    its last two segments (`amqp::connect`, `Settings::new`, `Counts::reconnects`, `Replay`).
#    A base without the snapshot (or no git history) skips this step, saying so.
# The same rendering of the API before and after is what is compared, so a change of the
# renderer itself shows as a change of every line it touches: bless, and announce nothing (the
# API did not change) only when the base commit's snapshot was rendered by the same script.
set -euo pipefail
cd "$(dirname "$0")/.."

crates=(outbox outbox-support outbox-relay outbox-inbox)
# The whole workspace, as `cargo clippy` and `cargo doc` in .ci/run select it: the same
# selection resolves the same features for every dependency, so this run reuses their builds
# (the four crates alone would resolve fewer features and build most dependencies anew). The
# services turn on `amqp`; only tests turn on `unstable-internals`, and tests are not documented.
# `-D warnings`: rustdoc's lints (broken or private links, bad HTML) fire in this output format as
# in HTML, so this run is also .ci/run's check that every crate's docs resolve.
RUSTC_BOOTSTRAP=1 RUSTDOCFLAGS="-D warnings -Z unstable-options --output-format json --document-hidden-items" \
  cargo doc --locked --no-deps --workspace
target="$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failed=0
for c in "${crates[@]}"; do
  python3 .ci/public_api.py "$target/doc/${c//-/_}.json" >"$work/$c.txt"
  if [ "${1:-}" = "--bless" ]; then
    cp "$work/$c.txt" "docs/public-api/$c.txt"
  elif ! diff -u "docs/public-api/$c.txt" "$work/$c.txt"; then
    echo "public-api: $c's public API differs from docs/public-api/$c.txt (above: - snapshot, + now)." >&2
    echo "public-api: if intended, run \`bash .ci/public-api.sh --bless\` and announce each item in CHANGELOG.md." >&2
    failed=1
  fi
done
[ "$failed" -eq 0 ] || exit 1

base="${PUBLIC_API_BASE:-HEAD^1}"
if ! git rev-parse --verify --quiet "$base^{commit}" >/dev/null; then
  echo "public-api: no base commit $base: the CHANGELOG check is skipped" >&2
  exit 0
fi
for c in "${crates[@]}"; do
  if ! git show "$base:docs/public-api/$c.txt" >"$work/$c.base.txt" 2>/dev/null; then
    echo "public-api: $base has no snapshot of $c: its CHANGELOG check is skipped" >&2
    continue
  fi
  python3 .ci/public_api.py --announced "$work/$c.base.txt" "docs/public-api/$c.txt" CHANGELOG.md
done
echo "public-api: the crates' public API matches docs/public-api/, every change announced"
