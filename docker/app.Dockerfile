# An image of YOUR app (the README quickstart's folder): its own package.json, lock file and vendor/
# tarballs of Cairn, its own agents. Build it with your folder as the context:
#
#   docker build -f path/to/cairn/docker/app.Dockerfile -t my-app-worker ./my-app
#   docker build -f path/to/cairn/docker/app.Dockerfile --build-arg ENTRY="--import tsx producer.ts" -t my-app-producer ./my-app
#   docker build -f path/to/cairn/docker/app.Dockerfile --build-arg ENTRY=dist/worker.js -t my-app-worker ./my-app   (compiled)
#
# It installs with `npm ci` (dev dependencies too, for the build), runs the app's `build` script if it has
# one, keeps production dependencies only, and starts `node $ENTRY` as the unprivileged `node` user.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY . .
RUN npm ci --include=dev --no-audit --no-fund \
 && npm run build --if-present \
 && npm prune --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim
# What `node` runs, relative to the app folder: the quickstart's TypeScript through tsx by default.
ARG ENTRY="--import tsx worker.ts"
ENV NODE_ENV=production CAIRN_ENTRY="${ENTRY}"
WORKDIR /app
COPY --from=build --chown=node:node /app /app
USER node
# Unquoted on purpose: ENTRY may carry node flags (`--import tsx worker.ts`).
CMD ["sh", "-c", "exec node $CAIRN_ENTRY"]
