#!/usr/bin/env bash
# The development secrets of deploy/compose.yaml (its one-shot `secrets` service runs this), written
# into DIR with the openssl CLI:
#   DIR/grpc/ca.pem, ca.key          a CA of this stack only (ca.key stays, to sign a renewal)
#   DIR/grpc/server.pem, server.key  the services' TLS_CERT_FILE/TLS_KEY_FILE, valid for localhost,
#                                    127.0.0.1, ::1 and every gRPC service name of compose.yaml
#   DIR/grpc/auth-tokens             AUTH_TOKENS_FILE: `operator <random token>`
#   DIR/grpc/admin-tokens            ADMIN_TOKENS_FILE: `operator <another random token>`
#   DIR/console/viewer-tokens        outbox-console's CONSOLE_VIEWER_TOKENS_FILE: `viewer <token>`
#   DIR/console/operator-tokens      its CONSOLE_OPERATOR_TOKENS_FILE: `operator <token>` (sign in
#                                    at https://localhost:8080 with the token of the file)
#   DIR/rabbitmq/definitions.json    RabbitMQ's users, vhost and permissions: rabbitmq/definitions.json
#                                    with each user's password (RABBITMQ_<USER>_PASSWORD) as a salted
#                                    SHA-256 hash, the form RabbitMQ stores
# Certificates, keys and tokens are created only when absent (delete them to renew); the
# definitions are rewritten on every run, so a changed password takes effect at the broker's next
# start. Keys and tokens are mode 600. A password still set to its .env.example placeholder
# (change-me…) is refused, as is one unfit for a URL (POSTGRES_PASSWORD, GRAFANA_ADMIN_PASSWORD
# are checked too when set). Usage: deploy/dev-secrets.sh DIR
set -euo pipefail

die() { printf 'dev-secrets: %s\n' "$*" >&2; exit 1; }
log() { printf 'dev-secrets: %s\n' "$*" >&2; }

if [ "$#" -ne 1 ] || [ -z "$1" ]; then die "usage: dev-secrets.sh DIR"; fi
dir=$1
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
template="$here/rabbitmq/definitions.json"
command -v openssl >/dev/null 2>&1 || die "the openssl command is needed"

# The names the gRPC ports are called by: from the host, and from the other containers.
server_names=(localhost orders-svc relay-svc-1 relay-svc-2 mail-svc-1 mail-svc-2)
days=825

# Everything up front: nothing is written when a password is missing or unusable. The passwords
# compose passes for the other services are checked alike when set.
not_placeholder() {
  case "$2" in change-me*) die "$1 still has the placeholder of deploy/.env.example: set a password of your own" ;; esac
}
url_safe() {
  [[ "$2" =~ ^[A-Za-z0-9._~-]{12,}$ ]] ||
    die "$1 must be at least 12 of A-Z a-z 0-9 . _ ~ - (it is written into a URL unescaped)"
}
passwords=()
for user in admin relay mail; do
  var="RABBITMQ_${user^^}_PASSWORD"
  value=${!var:-}
  [ -n "$value" ] || die "$var is not set (the password of RabbitMQ's $user user; see deploy/.env.example)"
  not_placeholder "$var" "$value"
  url_safe "$var" "$value"
  passwords+=("$user=$value")
done
if [ -n "${POSTGRES_PASSWORD:-}" ]; then
  not_placeholder POSTGRES_PASSWORD "$POSTGRES_PASSWORD"
  url_safe POSTGRES_PASSWORD "$POSTGRES_PASSWORD"
fi
if [ -n "${GRAFANA_ADMIN_PASSWORD:-}" ]; then
  not_placeholder GRAFANA_ADMIN_PASSWORD "$GRAFANA_ADMIN_PASSWORD"
fi
[ -r "$template" ] || die "$template is missing"

umask 077
mkdir -p "$dir/grpc" "$dir/rabbitmq" "$dir/console"
# Readers of one file need to pass through the folders; each secret file keeps its own mode.
chmod 755 "$dir" "$dir/grpc" "$dir/rabbitmq" "$dir/console"
grpc="$dir/grpc"

if [ ! -s "$grpc/ca.pem" ] || [ ! -s "$grpc/ca.key" ]; then
  log "creating the development CA"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -sha256 -days "$days" \
    -subj "/CN=outbox development CA" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -keyout "$grpc/ca.key" -out "$grpc/ca.pem" 2>/dev/null
  rm -f "$grpc/server.pem" "$grpc/server.key" # signed by the CA that was replaced
fi

if [ ! -s "$grpc/server.pem" ] || [ ! -s "$grpc/server.key" ]; then
  log "creating the server certificate"
  san="IP:127.0.0.1,IP:::1"
  for name in "${server_names[@]}"; do san="$san,DNS:$name"; done
  openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -sha256 \
    -subj "/CN=outbox development server" -keyout "$grpc/server.key" -out "$grpc/server.csr" 2>/dev/null
  printf '%s\n' "subjectAltName=$san" "basicConstraints=critical,CA:FALSE" \
    "keyUsage=critical,digitalSignature" "extendedKeyUsage=serverAuth" >"$grpc/server.ext"
  openssl x509 -req -sha256 -days "$days" -in "$grpc/server.csr" -CA "$grpc/ca.pem" \
    -CAkey "$grpc/ca.key" -set_serial "0x$(openssl rand -hex 16)" -extfile "$grpc/server.ext" \
    -out "$grpc/server.pem" 2>/dev/null
  rm -f "$grpc/server.csr" "$grpc/server.ext"
fi
# Certificates are public; the keys stay 600.
chmod 644 "$grpc/ca.pem" "$grpc/server.pem"

for file in auth-tokens admin-tokens; do
  if [ ! -s "$grpc/$file" ]; then
    log "creating $file (one token, named operator)"
    printf '# <name> <token>, one a line (kit/src/auth.rs); re-read on SIGHUP\noperator %s\n' \
      "$(openssl rand -hex 24)" >"$grpc/$file.tmp"
    mv "$grpc/$file.tmp" "$grpc/$file"
  fi
done

# The console's sign-in tokens, one per role (a person signs in by pasting the token).
for role in viewer operator; do
  file="$dir/console/$role-tokens"
  if [ ! -s "$file" ]; then
    log "creating console/$role-tokens (one token, named $role)"
    printf '# <name> <token>, one a line (kit/src/auth.rs); re-read on SIGHUP\n%s %s\n' \
      "$role" "$(openssl rand -hex 24)" >"$file.tmp"
    mv "$file.tmp" "$file"
  fi
done

# RabbitMQ's rabbit_password_hashing_sha256: base64(salt ++ sha256(salt ++ password)), 4-byte salt.
hash_password() {
  local salt="$dir/rabbitmq/salt.tmp" digest="$dir/rabbitmq/digest.tmp"
  openssl rand -out "$salt" 4
  { cat "$salt"; printf '%s' "$1"; } | openssl dgst -sha256 -binary >"$digest"
  cat "$salt" "$digest" | openssl base64 -A
  rm -f "$salt" "$digest"
}

definitions=$(cat "$template")
for entry in "${passwords[@]}"; do
  user=${entry%%=*}
  placeholder="@${user}_password_hash@"
  [[ "$definitions" == *"$placeholder"* ]] || die "$template has no $placeholder"
  definitions=${definitions//"$placeholder"/$(hash_password "${entry#*=}")}
done
printf '%s\n' "$definitions" >"$dir/rabbitmq/definitions.tmp"
mv "$dir/rabbitmq/definitions.tmp" "$dir/rabbitmq/definitions.json"
log "wrote $dir"
