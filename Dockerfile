# syntax=docker/dockerfile:1
# The product's one image (SPEC §9): `serve` by default, `installer` as the installer Deployment's command.
# The build stage compiles TypeScript with the dev dependencies; the dependencies stage installs the
# production ones; the runtime stage copies both results and runs no package manager: it removes the base
# image's npm, npx, corepack and yarn (decision 191). It runs as a numeric non-root user (so the kubelet can
# verify runAsNonRoot) and starts under tini so SIGTERM reaches node (which handles it: SPEC §7 graceful
# shutdown) and zombies of any child process are reaped.
#
# Not yet as SPEC §9 asks: the base is not pinned by digest, nor Red Hat UBI's Node.js image (the
# OpenShift convention, FIPS-capable). Both need a registry to resolve from; see decision 191.

FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# No install scripts: nothing the compile needs runs one, and it keeps the build hermetic.
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

FROM node:24-bookworm-slim AS dependencies
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts

FROM node:24-bookworm-slim AS runtime
# The node image's package managers (Node's tarball under /usr/local, yarn 1 under /opt) and Node's C headers
# for native addons: nothing here runs them, and a shell in the container should not find them.
RUN apt-get update \
  && apt-get install -y --no-install-recommends tini \
  && rm -rf /var/lib/apt/lists/* \
  && rm -rf /usr/local/lib/node_modules/npm /usr/local/lib/node_modules/corepack \
    /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack \
    /usr/local/bin/yarn /usr/local/bin/yarnpkg /opt/yarn-v* \
    /usr/local/include/node
WORKDIR /app
ENV NODE_ENV=production
# V8's young generation capped at 32 MB semi-spaces: Node 24 grows them to 64 MB under the informer
# cache's allocation, which doubled the resident memory per cached Machine; the cap's CPU cost was within
# this project's measurement noise (decision 96, PERFORMANCE.md). The bench runs the product with this value.
ENV NODE_OPTIONS=--max-semi-space-size=32
# package.json: `"type": "module"` makes node load dist/ as ES modules.
COPY package.json ./
COPY --from=dependencies /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# 1000 is the `node` user of the base image. OpenShift's restricted SCC replaces it with a UID from the
# namespace's range; the files are root-owned and world-readable, so either UID can run them and neither
# can change them.
USER 1000:1000
# The webhook (9443) and the metrics listener (8443), as the Deployment declares them.
EXPOSE 9443 8443
# `serve` is only the default argument, so every subcommand runs from the image: `podman run IMAGE preflight …`.
ENTRYPOINT ["/usr/bin/tini", "--", "node", "dist/cli.js"]
CMD ["serve"]
