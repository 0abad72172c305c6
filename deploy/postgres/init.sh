#!/bin/sh
# Runs once, when the PostgreSQL volume is first initialised (/docker-entrypoint-initdb.d): one login
# role per service, with the password from the environment, owning only its own database. No service
# connects as the superuser. A role may still connect to the `postgres` maintenance database (each
# service checks there that its database exists) but to no other service's database.
# To change a password later: ALTER ROLE <role> PASSWORD '...' (this script does not run again).
set -eu

for service in identity crm messaging chatnet-connector automation ai webhooks; do
  role=$(echo "$service" | tr '-' '_')
  var="$(echo "$service" | tr 'a-z-' 'A-Z_')_DB_PASSWORD"
  password=$(printenv "$var" || true)
  # The password also goes into DATABASE_URL as is: refuse anything that would need escaping there.
  case "$password" in
    '' | *[!A-Za-z0-9_.~-]*) echo "postgres init: set $var (letters, digits, _ . ~ -; e.g. openssl rand -hex 24)" >&2; exit 1 ;;
  esac
  psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres \
    -v role="$role" -v password="$password" -v database="crm_$role" <<'SQL'
CREATE ROLE :"role" LOGIN PASSWORD :'password' NOSUPERUSER NOCREATEDB NOCREATEROLE;
CREATE DATABASE :"database" OWNER :"role";
-- Only the owner connects to a service's database; the default grants CONNECT to every role.
REVOKE ALL ON DATABASE :"database" FROM PUBLIC;
SQL
done
