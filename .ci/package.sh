#!/usr/bin/env bash
# The four published crates as a stranger gets them: `cargo package` with verification (each
# builds from its .crate alone, the others it depends on taken from their own .crate files), then
# each package's unit tests and doctests run outside the workspace, so nothing unpublished (the
# test helpers, the services) can reach them. Needs the test PostgreSQL (TEST_PG_URL, default
# the local trust-auth server) for the doctests that run against a database.
set -euo pipefail
cd "$(dirname "$0")/.."

crates=(outbox outbox-support outbox-relay outbox-inbox)
args=()
for c in "${crates[@]}"; do args+=(-p "$c"); done
cargo package --locked "${args[@]}"

target="$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')"
version() { sed -n 's/^version = "\(.*\)"/\1/p' "crates/$1/Cargo.toml" | head -n 1; }

# Outside the repository: a package under it would be taken for a stray workspace member.
unpacked="$(mktemp -d)"
trap 'rm -rf "$unpacked"' EXIT
patches=()
for c in "${crates[@]}"; do
  tar -xzf "$target/package/$c-$(version "$c").crate" -C "$unpacked"
  patches+=(--config "patch.crates-io.$c.path=\"$unpacked/$c-$(version "$c")\"")
done
for c in "${crates[@]}"; do
  echo "== the packaged $c: unit tests and doctests"
  CARGO_TARGET_DIR="$target" cargo test --all-features "${patches[@]}" \
    --manifest-path "$unpacked/$c-$(version "$c")/Cargo.toml"
done
