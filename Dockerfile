# syntax=docker/dockerfile:1
#
# bpa's image: docker build -t bpa:"$(node -p 'require("./package.json").version')" .
# Stages: build (TypeScript → dist/), deps (production node_modules only), runtime (Node.js,
# git and the OpenSSH client, running as uid 10001). docs/deploy.md describes the image.

ARG NODE_IMAGE=node:20-bookworm-slim

# ---- build: compile src/ to dist/ with the dev dependencies ----------------------------------
FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
# --ignore-scripts: "prepare" would build before the sources are copied, and no dependency
# needs an install script (ssh2 falls back to Node's own crypto without its optional addon).
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
# npm run build: tsc, then the CLI bundled into dist/bundle/ (what bin/bpa runs).
COPY scripts/bundle.mjs ./scripts/
RUN npm run build

# ---- deps: the production dependencies alone -------------------------------------------------
FROM ${NODE_IMAGE} AS deps
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund

# ---- runtime ---------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime

# The image label; bpa --version reads package.json. docs/deploy.md passes package.json's version.
ARG VERSION=unknown
ARG REVISION=unknown
LABEL org.opencontainers.image.title="bpa" \
      org.opencontainers.image.description="GitOps reconciler for bare-metal edge sites: validate, plan and provision clusters from a site repository" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.vendor="bpa" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.base.name="${NODE_IMAGE}"

# git: for local installer commands and for inspecting the working copy in the state volume
# (bpa's own git traffic is isomorphic-git); openssh-client: ssh-keygen (bpa's key pair) and
# ssh-keyscan (node host keys), ssh-keygen -Y verify (SSH-signed commits); gnupg, gpgv:
# OpenPGP-signed commits (--verify-signatures); age: the data keys of the site's SOPS-encrypted
# Secrets; ca-certificates: HTTPS to the git host. Node.js's package
# managers are removed: nothing is installed at run time.
RUN apt-get update \
 && apt-get install -y --no-install-recommends git openssh-client ca-certificates gnupg gpgv age \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb \
 && rm -rf /usr/local/lib/node_modules/npm /usr/local/lib/node_modules/corepack \
           /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack \
           /usr/local/bin/yarn /usr/local/bin/yarnpkg /opt/yarn-* \
 && groupadd --system --gid 10001 bpa \
 && useradd --system --uid 10001 --gid bpa --home-dir /home/bpa --create-home \
            --shell /usr/sbin/nologin bpa \
 && install -d -o bpa -g bpa -m 0750 /var/lib/bpa

# The application is owned by root and read-only for bpa.
WORKDIR /app
COPY package.json ./
COPY bin ./bin
COPY schemas ./schemas
COPY --from=deps /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist

ENV NODE_ENV=production \
    BPA_STATE_DIR=/var/lib/bpa
VOLUME ["/var/lib/bpa"]
WORKDIR /home/bpa
# Numeric, so that Kubernetes can verify runAsNonRoot without a passwd lookup.
USER 10001:10001
EXPOSE 8080
ENTRYPOINT ["node", "/app/bin/bpa"]
CMD ["serve"]
