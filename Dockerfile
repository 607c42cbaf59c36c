FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npx tsx contracts/build.ts
ENV NODE_ENV=production
CMD ["npx", "tsx", "api/main.ts"]
