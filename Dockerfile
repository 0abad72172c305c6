# One multi-stage Dockerfile for every service: `docker build --build-arg SERVICE=crm .`
# (docker-compose.yml passes SERVICE per service). Build stage compiles the whole workspace once;
# the runtime stage keeps production dependencies only and runs as the unprivileged `node` user.
FROM node:22-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json turbo.json tsconfig.base.json ./
COPY packages ./packages
COPY services ./services
COPY tests/package.json ./tests/package.json
COPY proto ./proto
COPY scripts ./scripts
RUN npm ci --no-audit --no-fund && npx turbo run build --output-logs=errors-only && npm prune --omit=dev

FROM node:22-bookworm-slim AS runtime
ARG SERVICE
ENV NODE_ENV=production SERVICE=${SERVICE} PROTO_DIR=/app/proto
WORKDIR /app
COPY --from=build --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/packages ./packages
COPY --from=build --chown=node:node /app/services/${SERVICE} ./services/${SERVICE}
COPY --from=build --chown=node:node /app/proto ./proto
# messaging's attachments volume is mounted here: a new named volume takes the owner of the directory it
# is mounted over, so the unprivileged user can write attachments without a root init step.
RUN mkdir -p /data/attachments && chown node:node /data/attachments
USER node
CMD ["sh", "-c", "exec node services/${SERVICE}/dist/main.js"]
