# Production image: compiled JavaScript and production dependencies only (no TypeScript runner, no
# compiler, no dev stack: anvil, embedded Postgres, Alto and the Temporal test server stay out).
# Build: docker build -t stablepay . ; run: node dist/api/main.js | dist/signer/main.js, and the worker as
# MALLOC_ARENA_MAX=2 node --max-semi-space-size=16 dist/workers/main.js (workers/processMemory.ts)

FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm install --no-audit --no-fund
COPY . .
RUN npx tsx contracts/build.ts && npx tsx dev/buildProduction.ts

FROM node:24-bookworm-slim AS runtime
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm install --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
USER node
CMD ["node", "dist/api/main.js"]
