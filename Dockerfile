# walbox: multi-stage build; the runtime image holds dist/, sql/ and production dependencies only, runs as the
# unprivileged `node` user, and checks /healthz with node itself (no curl in the image).
FROM node:24-alpine AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.base.json tsconfig.build.json ./
RUN npm ci --no-audit --no-fund
COPY src ./src
RUN npm run build && npm prune --omit=dev

FROM node:24-alpine
# NODE_OPTIONS: 2 MB semi-spaces instead of V8's default (16 MB and more, by host memory) keep the relay's peak
# RSS 20-100 MiB lower at the same CPU; a 256 MB old space, which Node picks itself under the Deployment's 384 MiB
# limit, keeps V8 from growing the heap up to 4x its live size where the host has memory to spare: peak RSS
# 30-40 MiB lower on Node 24, for up to 13% more CPU on 8 KB events (docs/performance.md, "Large events"; raise
# it with the memory limit for events of tens of MB).
# The README's MALLOC_MMAP_THRESHOLD_ is glibc's; musl, here, already gives every allocation over about 128 KiB
# its own mapping, returned when freed.
ENV NODE_ENV=production \
    NODE_OPTIONS="--max-semi-space-size=2 --max-old-space-size=256" \
    WALBOX_METRICS_HOST=0.0.0.0 \
    WALBOX_METRICS_PORT=9464 \
    WALBOX_LOG_FORMAT=json
WORKDIR /app
COPY --from=build --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/dist ./dist
COPY --chown=node:node sql ./sql
COPY --chown=node:node package.json LICENSE README.md ./
USER node
EXPOSE 9464
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+process.env.WALBOX_METRICS_PORT+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["node", "dist/cli/main.js"]
CMD ["run"]
