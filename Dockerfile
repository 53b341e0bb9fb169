# syntax=docker/dockerfile:1
# The product's one image (SPEC §9): `serve` by default, `installer` as the installer Deployment's command.
# Build stage compiles TypeScript with the dev dependencies; the runtime stage holds only production
# dependencies and dist/, runs as a numeric non-root user (so the kubelet can verify runAsNonRoot), and
# starts under tini so SIGTERM reaches node (which handles it: SPEC §7 graceful shutdown) and zombies of
# any child process are reaped.

FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# No install scripts: nothing the compile needs runs one, and it keeps the build hermetic.
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

FROM node:24-bookworm-slim AS runtime
RUN apt-get update \
  && apt-get install -y --no-install-recommends tini \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NODE_ENV=production
# V8's young generation capped at 32 MB semi-spaces: Node 24 grows them to 64 MB under the informer
# cache's allocation, which doubled the resident memory per cached Machine; the cap's CPU cost was within
# this project's measurement noise (decision 96, PERFORMANCE.md). The bench runs the product with this value.
ENV NODE_OPTIONS=--max-semi-space-size=32
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force
COPY --from=build /app/dist ./dist
# 1000 is the `node` user of the base image. OpenShift's restricted SCC replaces it with a UID from the
# namespace's range; the files are root-owned and world-readable, so either UID can run them and neither
# can change them.
USER 1000:1000
EXPOSE 9443
# `serve` is only the default argument, so every subcommand runs from the image: `podman run IMAGE preflight …`.
ENTRYPOINT ["/usr/bin/tini", "--", "node", "dist/cli.js"]
CMD ["serve"]
