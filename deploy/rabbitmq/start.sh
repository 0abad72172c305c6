#!/bin/sh
# RabbitMQ with one user per service and no guest: the users, their passwords (from the environment,
# so none sits in the repository) and their permissions are written as boot-time definitions
# (definitions.sh says who may do what), then the image's own entrypoint starts the broker. A node that
# imports definitions at boot creates no default guest user; the import runs on every start, so a
# changed password or permission applies on restart.
set -euf

definitions=/etc/rabbitmq/definitions.json
umask 077
sh "$(dirname "$0")/definitions.sh" > "$definitions"
chown rabbitmq:rabbitmq "$definitions"
echo "load_definitions = $definitions" > /etc/rabbitmq/conf.d/30-definitions.conf

exec docker-entrypoint.sh rabbitmq-server
