#!/bin/sh
# PgBouncer's start (compose: the pgbouncer service; deploy/k8s: base/pgbouncer). Written from the environment at every
# start: the auth file, each service's role with the password deploy/postgres/init.sh gave it, and the [databases]
# section, every database of the server at POSTGRES_HOST:POSTGRES_PORT. The settings are pgbouncer.ini beside this file.
set -eu

run=/tmp/pgbouncer
mkdir -p "$run"
umask 077
: > "$run/userlist.txt"
for service in identity crm messaging chatnet-connector automation ai webhooks; do
  role=$(echo "$service" | tr '-' '_')
  var="$(echo "$service" | tr 'a-z-' 'A-Z_')_DB_PASSWORD"
  password=$(printenv "$var" || true)
  # As init.sh requires, so the line needs no quoting.
  case "$password" in
    '' | *[!A-Za-z0-9_.~-]*) echo "pgbouncer: set $var (letters, digits, _ . ~ -; e.g. openssl rand -hex 24)" >&2; exit 1 ;;
  esac
  printf '"%s" "%s"\n' "$role" "$password" >> "$run/userlist.txt"
done

cat > "$run/pgbouncer.ini" <<INI
[databases]
* = host=${POSTGRES_HOST:?set POSTGRES_HOST, the PostgreSQL server} port=${POSTGRES_PORT:-5432}
%include $(dirname "$0")/pgbouncer.ini
INI

exec pgbouncer "$run/pgbouncer.ini"
