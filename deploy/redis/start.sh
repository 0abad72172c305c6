#!/bin/sh
# Redis with one ACL user per service instead of one shared (or no) password: written from the
# environment at every start, then the image's own entrypoint runs the server. The default user is off.
# Each user reaches only the deployment's keys (REDIS_PREFIX) and cannot run the @dangerous commands
# (FLUSHALL, KEYS, CONFIG, DEBUG, ...); INFO stays allowed (operators' checks). Only the
# gateway gets pub/sub channels (the socket.io adapter's, also under the prefix), and identity the two
# channels it publishes revocations on (tokens and users; rotated API keys).
set -euf

prefix="${REDIS_PREFIX:-crm:}"
acl=/usr/local/etc/redis/users.acl
mkdir -p "$(dirname "$acl")"
umask 077
echo 'user default off' > "$acl"
for service in identity gateway messaging chatnet-connector ai; do
  var="$(echo "$service" | tr 'a-z-' 'A-Z_')_REDIS_PASSWORD"
  password=$(printenv "$var" || true)
  # The password also goes into REDIS_URL as is: refuse anything that would need escaping there.
  case "$password" in
    '' | *[!A-Za-z0-9_.~-]*) echo "redis: set $var (letters, digits, _ . ~ -; e.g. openssl rand -hex 24)" >&2; exit 1 ;;
  esac
  channels='resetchannels'
  [ "$service" = gateway ] && channels="&${prefix}*"
  # identity announces revocations (logout, deactivation, role change; a rotated API key) to every gateway.
  [ "$service" = identity ] && channels="&${prefix}auth:revocations &${prefix}auth:api-key-revocations"
  echo "user $service on >$password ~${prefix}* $channels +@all -@dangerous +info" >> "$acl"
done
chown redis:redis "$acl"

exec docker-entrypoint.sh redis-server --appendonly yes --aclfile "$acl"
