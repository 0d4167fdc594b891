#!/usr/bin/env bash
# Makes sure the tools some tests run are installed, installing them with apt-get when absent:
# spin and gcc (the protocol model, e2e/tests/it/model.rs), openssl (deploy/dev-secrets.sh, run by
# e2e/tests/it/scripts.rs), promtool (the alert rules, e2e/tests/it/alerts.rs) and Debian's
# chromium with chromium-driver (the console's browser stories, e2e/tests/it/console.rs; no
# browser is ever downloaded from anywhere else). Used by deploy/test.sh, so the README's test command works on a fresh
# machine; those tests fail with an install hint where this could not install them.
set -euo pipefail

log() { printf 'ensure-test-tools: %s\n' "$*" >&2; }

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

if ! command -v apt-get >/dev/null 2>&1; then
  for tool in spin gcc openssl promtool pgbench chromium chromedriver; do
    command -v "$tool" >/dev/null 2>&1 || log "$tool is missing and apt-get is not available: install it"
  done
  exit 0
fi

missing=()
command -v spin >/dev/null 2>&1 || missing+=(spin)
command -v gcc >/dev/null 2>&1 || missing+=(gcc)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v chromedriver >/dev/null 2>&1 || missing+=(chromium-driver)
if [ "${#missing[@]}" -gt 0 ]; then
  log "installing ${missing[*]} with apt-get"
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Installs Debian package $1 whose daemon must not start: where no policy-rc.d keeps services
# from starting at install, one is put in place for the install only; a daemon named $2 (init
# script or unit) is stopped and disabled if it runs anyway.
install_without_daemon() {
  local package=$1 service=${2:-} policy="" installed=0
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    policy=/usr/sbin/policy-rc.d
    printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null
    $SUDO chmod +x "$policy"
  fi
  { $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$package" >/dev/null; } || installed=$?
  # Removed whether or not the install worked: it would keep every later package's service down.
  if [ -n "$policy" ]; then $SUDO rm -f "$policy"; fi
  if [ "$installed" -ne 0 ]; then exit "$installed"; fi
  if [ -z "$service" ]; then return; fi
  if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
    $SUDO systemctl disable --now "$service" >/dev/null 2>&1 || true
  elif [ -x "/etc/init.d/$service" ]; then
    $SUDO "/etc/init.d/$service" stop >/dev/null 2>&1 || true
  fi
}

# Debian ships promtool in the `prometheus` package (port 9090 must stay free).
if ! command -v promtool >/dev/null 2>&1; then
  log "installing promtool (package prometheus, its daemon kept stopped) with apt-get"
  install_without_daemon prometheus prometheus
fi

# pgbench comes with Debian's PostgreSQL server package (`postgresql-contrib` pulls it in). The
# tests' PostgreSQL is not that one (or pgbench would be there), so the packaged cluster is kept
# from starting, and no `postgresql` service is stopped: it may be the tests' own. Debian's
# `pgbench` on PATH is a wrapper that fails when no installed version has the binary.
if ! pgbench --version >/dev/null 2>&1 && ! compgen -G '/usr/lib/postgresql/*/bin/pgbench' >/dev/null; then
  log "installing pgbench (package postgresql-contrib, its cluster kept stopped) with apt-get"
  install_without_daemon postgresql-contrib
fi
