#!/bin/sh
# Prints RabbitMQ definitions (JSON) for a deployment, from the environment: one user per service, named after it
# (AMQP_USER_PREFIX in front when set), its password from <SERVICE>_AMQP_PASSWORD (so none sits in the repository),
# and its permissions. Consumers refuse an event whose publisher (the message's user_id, which the broker checks
# against the connection's user) is not the user of one of its type's producers (packages/events publishers.ts),
# so the names matter. start.sh loads this at boot in compose; deploy/k8s operators import it into their own broker
# (rabbitmqctl import_definitions), and tests/security/broker-producers.test.ts makes its users from it.
#
# Permissions (regular expressions over exchange and queue names, vhost /). A service's queues are
# named <exchange>.<service>.<consumer> (+ .retry.<n>, .dlq, or a random suffix for the gateway's
# per-instance queue), so each service may create, bind and read only its own queues and the exchange:
#   configure: declare the exchange and its own queues
#   write:     publish to the exchange (outbox relay: every service but the gateway, identity included for its
#              user.* events); bind its own queues; publish to the default
#              exchange (amq.default) to move a failed message to its own retry or dead-letter queue
#   read:      bind from the exchange; consume its own queues
set -euf

# Regular expressions go into JSON, so a literal dot is written \\. here (\. once decoded).
exchange=$(printf '%s' "${EVENTS_EXCHANGE:-crm.events}" | sed 's/\./\\\\./g')
prefix="${AMQP_USER_PREFIX:-}"
case "$prefix" in
  *[!A-Za-z0-9_.-]*) echo "rabbitmq: AMQP_USER_PREFIX may hold letters, digits, _ . - only" >&2; exit 1 ;;
esac

# user password-variable configure write read
permissions() {
  own="${exchange}\\\\.$1\\\\..+"
  case "$1" in
    # Publish their outbox, consume nothing.
    chatnet-connector | ai) printf '%s ' "^${exchange}\$" "^${exchange}\$" '^$' ;;
    # Publishes nothing to the exchange. Each instance's socket queue is exclusive; the queue its instances shared
    # before (drained after an upgrade) is durable, with a retry level and a dead-letter queue: declaring a queue whose
    # dead-letter exchange is amq.default needs write there, as forwarding to them does.
    gateway) printf '%s ' "^(${exchange}|${own})\$" "^(amq\\\\.default|${own})\$" "^(${exchange}|${own})\$" ;;
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
    {\"name\": \"$prefix$service\", \"password\": \"$password\", \"tags\": []}"
  perms="${perms}${perms:+,}
    {\"user\": \"$prefix$service\", \"vhost\": \"/\", \"configure\": \"$1\", \"write\": \"$2\", \"read\": \"$3\"}"
done

cat <<JSON
{
  "vhosts": [{"name": "/"}],
  "users": [$users
  ],
  "permissions": [$perms
  ]
}
JSON
