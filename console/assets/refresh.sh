#!/usr/bin/env bash
# Refreshes the vendored htmx from the npm registry at the version package.json pins (exactly, as
# package-lock.json records it with its integrity hash), then copies the minified file next to this
# script, where console/src/assets.rs embeds it. Run it after changing the pin; commit the three
# files. The build never runs it: nothing is fetched at build or run time.
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v npm >/dev/null 2>&1; then
  echo "refresh.sh: npm is needed (apt-get install npm)" >&2
  exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp package.json "$work/"
if [ -f package-lock.json ]; then cp package-lock.json "$work/"; fi
# `npm install` writes a lock when there is none (or the pin changed); `ci` would refuse then.
(cd "$work" && npm install --no-audit --no-fund --ignore-scripts --silent)
cp "$work/package-lock.json" package-lock.json
cp "$work/node_modules/htmx.org/dist/htmx.min.js" htmx.min.js
version=$(sed -n 's/.*"version": *"\([^"]*\)".*/\1/p' "$work/node_modules/htmx.org/package.json" | head -n 1)
echo "refresh.sh: htmx.org $version -> $(pwd)/htmx.min.js ($(wc -c <htmx.min.js) bytes)"
