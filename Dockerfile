# One image for the producer, the worker and the migrate job; the command picks the app.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.base.json tsconfig.json ./
COPY packages ./packages
COPY apps ./apps
COPY examples ./examples
RUN npm ci --no-audit --no-fund \
 && npx tsc -b \
 && npm prune --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build --chown=node:node /app /app
USER node
# The worker as `npm run worker` starts it: a small young generation keeps it near 140 MB with 100 runs in flight.
CMD ["node", "--max-semi-space-size=1", "apps/worker/dist/main.js"]
