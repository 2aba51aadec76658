# An image of YOUR app (the README quickstart's folder): its own package.json, lock file and vendor/
# tarballs of Cairn, its own agents. Build it with your folder as the context:
#
#   docker build -f path/to/cairn/docker/app.Dockerfile -t my-app ./my-app
#   docker build -f path/to/cairn/docker/app.Dockerfile --build-arg ENTRY=dist/producer.js -t my-app-producer ./my-app
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
# The script the container runs, relative to the app folder. @defaultValue dist/worker.js
ARG ENTRY=dist/worker.js
ENV NODE_ENV=production CAIRN_ENTRY=${ENTRY}
WORKDIR /app
COPY --from=build --chown=node:node /app /app
USER node
CMD ["sh", "-c", "exec node \"$CAIRN_ENTRY\""]
