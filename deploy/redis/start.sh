#!/bin/sh
# Redis with one ACL user per service instead of one shared (or no) password: the ACL file is written from the
# environment at every start (acl.sh says who may touch which keys), then the image's own entrypoint runs the server.
set -euf

acl=/usr/local/etc/redis/users.acl
mkdir -p "$(dirname "$acl")"
umask 077
sh "$(dirname "$0")/acl.sh" > "$acl"
chown redis:redis "$acl"

exec docker-entrypoint.sh redis-server --appendonly yes --aclfile "$acl"
