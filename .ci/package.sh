#!/usr/bin/env bash
# The four published crates as a stranger gets them: `cargo package` with verification (each
# builds from its .crate alone, the others it depends on taken from their own .crate files), then
# the packages' unit tests and doctests run outside the repository, so nothing unpublished (the
# test helpers, the services) can reach them. Without debug info (nothing here is debugged; the
# verification builds take no profile of the repository's). Needs the test PostgreSQL (TEST_PG_URL, default
# the local trust-auth server) for the doctests that run against a database.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_PROFILE_DEV_DEBUG=0 CARGO_PROFILE_TEST_DEBUG=0

crates=(outbox outbox-support outbox-relay outbox-inbox)
args=()
for c in "${crates[@]}"; do args+=(-p "$c"); done
cargo package --locked "${args[@]}"

target="$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')"
version() { sed -n 's/^version = "\(.*\)"/\1/p' "crates/$1/Cargo.toml" | head -n 1; }

# Outside the repository: a package under it would be taken for a stray workspace member.
unpacked="$(mktemp -d)"
trap 'rm -rf "$unpacked"' EXIT
members=()
patches=()
for c in "${crates[@]}"; do
  tar -xzf "$target/package/$c-$(version "$c").crate" -C "$unpacked"
  members+=("\"$c-$(version "$c")\"")
  patches+=("$c = { path = \"$c-$(version "$c")\" }")
done
# The four packages as one workspace of their own, each other's dependencies taken from their
# packages: one build of the dependencies for all four (cargo builds each package's verification
# apart), the repository's lock file for the same versions, nothing of the repository in reach.
{
  echo '[workspace]'
  echo 'resolver = "3"'
  echo "members = [$(IFS=,; echo "${members[*]}")]"
  echo '[patch.crates-io]'
  printf '%s\n' "${patches[@]}"
} >"$unpacked/Cargo.toml"
cp Cargo.lock "$unpacked/Cargo.lock"
echo "== the packaged crates: unit tests and doctests"
CARGO_TARGET_DIR="$target" cargo test --workspace --all-features --manifest-path "$unpacked/Cargo.toml"
