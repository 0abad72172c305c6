#!/bin/sh
# Prints the Redis ACL file for a deployment, from the environment: one user per service that uses Redis, each
# reaching only its own keys (REDIS_PREFIX + its area), read-only where it only reads, and none of the @dangerous
# commands (FLUSHALL, KEYS, CONFIG, DEBUG, ...); INFO stays allowed (operators' checks). The default user is off.
#   identity   login throttles; API-key cache entries and revocation keys (it writes them), and the two channels
#              it announces revocations on
#   gateway    rate limits, socket counts and presence; API-key cache entries and the revocation keys read-only (identity
#              writes its answers there: no other service can mint a key's grant), and pub/sub (the socket.io adapter's channels, the revocation channels)
#   messaging  the send governor; chatnet-connector its leases, QR codes, sends and lookups, and the sandbox network;
#   ai         its quotas
# So a compromised ai or connector cannot mint an API key for any org, or undo a logout (NOPERM).
# Used by start.sh in compose; deploy/k8s operators run it against their own Redis (README).
set -euf

p="${REDIS_PREFIX:-crm:}"
echo 'user default off'
for service in identity gateway messaging chatnet-connector ai; do
  var="$(echo "$service" | tr 'a-z-' 'A-Z_')_REDIS_PASSWORD"
  password=$(printenv "$var" || true)
  # The password also goes into REDIS_URL as is: refuse anything that would need escaping there.
  case "$password" in
    '' | *[!A-Za-z0-9_.~-]*) echo "redis: set $var (letters, digits, _ . ~ -; e.g. openssl rand -hex 24)" >&2; exit 1 ;;
  esac
  case "$service" in
    identity) keys="~${p}login:* ~${p}apikey:* ~${p}auth:*"; channels="&${p}auth:revocations &${p}auth:api-key-revocations" ;;
    # The socket.io adapter PSUBSCRIBEs to its namespace pattern, which an ACL grants only when named literally.
    gateway) keys="~${p}rl:* ~${p}sockets:* %R~${p}apikey:* %R~${p}auth:*"; channels="&${p}* &${p}socket.io#/#*" ;;
    messaging) keys="~${p}msg:*"; channels='resetchannels' ;;
    chatnet-connector) keys="~${p}chatnet:* ~${p}sandbox:*"; channels='resetchannels' ;;
    ai) keys="~${p}ai:*"; channels='resetchannels' ;;
  esac
  echo "user $service on >$password $keys $channels +@all -@dangerous +info"
done
