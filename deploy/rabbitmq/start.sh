#!/bin/sh
# RabbitMQ with one user per service and no guest: the users, their passwords (from the environment,
# so none sits in the repository) and their permissions are written as boot-time definitions, then the
# image's own entrypoint starts the broker. A node that imports definitions at boot creates no default
# guest user; the import runs on every start, so a changed password or permission applies on restart.
#
# Permissions (regular expressions over exchange and queue names, vhost /). A service's queues are
# named <exchange>.<service>.<consumer> (+ .retry.<n>, .dlq, or a random suffix for the gateway's
# per-instance queue), so each service may create, bind and read only its own queues and the exchange:
#   configure: declare the exchange and its own queues
#   write:     publish to the exchange (outbox relay); bind its own queues; publish to the default
#              exchange (amq.default) to move a failed message to its own retry or dead-letter queue
#   read:      bind from the exchange; consume its own queues
set -euf

# Regular expressions go into JSON, so a literal dot is written \\. here (\. once decoded).
exchange=$(printf '%s' "${EVENTS_EXCHANGE:-crm.events}" | sed 's/\./\\\\./g')
definitions=/etc/rabbitmq/definitions.json

# user password-variable configure write read
permissions() {
  own="${exchange}\\\\.$1\\\\..+"
  case "$1" in
    # Publish their outbox, consume nothing.
    chatnet-connector | ai) printf '%s ' "^${exchange}\$" "^${exchange}\$" '^$' ;;
    # Consumes into one exclusive per-instance queue, publishes nothing, never forwards to a retry queue.
    gateway) printf '%s ' "^(${exchange}|${own})\$" "^${own}\$" "^(${exchange}|${own})\$" ;;
    *) printf '%s ' "^(${exchange}|${own})\$" "^(${exchange}|amq\\\\.default|${own})\$" "^(${exchange}|${own})\$" ;;
  esac
}

users=''
perms=''
for service in identity crm messaging chatnet-connector automation ai webhooks gateway; do
  var="$(echo "$service" | tr 'a-z-' 'A-Z_')_AMQP_PASSWORD"
  password=$(printenv "$var" || true)
  # The password goes into AMQP_URL and this JSON as is: refuse anything that would need escaping.
  case "$password" in
    '' | *[!A-Za-z0-9_.~-]*) echo "rabbitmq: set $var (letters, digits, _ . ~ -; e.g. openssl rand -hex 24)" >&2; exit 1 ;;
  esac
  set -- $(permissions "$service")
  users="${users}${users:+,}
    {\"name\": \"$service\", \"password\": \"$password\", \"tags\": []}"
  perms="${perms}${perms:+,}
    {\"user\": \"$service\", \"vhost\": \"/\", \"configure\": \"$1\", \"write\": \"$2\", \"read\": \"$3\"}"
done

umask 077
cat > "$definitions" <<JSON
{
  "vhosts": [{"name": "/"}],
  "users": [$users
  ],
  "permissions": [$perms
  ]
}
JSON
chown rabbitmq:rabbitmq "$definitions"
echo "load_definitions = $definitions" > /etc/rabbitmq/conf.d/30-definitions.conf

exec docker-entrypoint.sh rabbitmq-server
