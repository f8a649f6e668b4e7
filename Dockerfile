# nbspamd in a container: built and tested in the first stage, run as the unprivileged user
# nbspamd (uid and gid 7830) from a slim Debian 12 in the second. The model lives on the volume
# /var/lib/nbspamd (the model in model/, POST /admin/backup writes to backups/), so a restart or
# an upgrade keeps it. docs/CONTAINER.md has the details.
#   docker build -t nbspamd .
#   docker run -d --name nbspamd -p 127.0.0.1:7830:7830 -e NBSPAMD_AUTH_TOKENS=mx1:SECRET \
#     -v nbspamd-data:/var/lib/nbspamd nbspamd
# With buildah, build with --format docker: the OCI image format has no HEALTHCHECK.
FROM debian:bookworm-slim AS build
ARG DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      build-essential cmake ninja-build pkg-config \
      libboost1.81-dev libboost-json1.81-dev libboost-program-options1.81-dev \
      libboost-url1.81-dev librocksdb-dev libicu-dev libxxhash-dev libtomlplusplus-dev libjemalloc-dev \
      libgmime-3.0-dev libxml2-dev libpsl-dev libuchardet-dev libgtest-dev libgmock-dev libbenchmark-dev \
      libhiredis-dev libssl-dev redis-server openssl curl ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
# By default the image is only built when every unit and integration test of the Release build
# passes (the integration tests start the daemon on 127.0.0.1 inside the build container).
# --build-arg IMAGE_TESTS=OFF builds the daemon and nbspamc alone. (A build argument is in the
# environment of each RUN, so none is named NBSPAMD_*: the daemon under test would take it for a
# setting and refuse to start on an unknown one.)
# Except milter_postfix_test, spamc_test, exim_test, MilterDaemonTest.*, SpamdDaemonTest.*,
# DovecotTest.* and BrowserTest.*, which run Postfix, Debian's spamc, a throw-away Exim, Dovecot
# and Chromium that this stage does not have: they run in scripts/test (and so CI), where
# scripts/install-deps installs them. (openssl, curl and ca-certificates are here for TlsTest: a
# certificate made for the test, a real client, and the trust store it must not find it in.)
ARG IMAGE_TESTS=ON
# --build-arg PREBUILT_ID=ID with the folder that holds nbspamd and nbspamc mounted at
# /prebuilt (buildah bud -v DIR:/prebuilt:ro) takes those binaries instead of compiling: CI builds
# the image from the Release build whose tests it has just run on these sources, on the same
# Debian 12 (scripts/container-test --prebuilt). The configure step still runs, so this stage's
# packages are still proven to be what the build needs. ID (a hash of the binaries) keeps a cached
# layer from standing for other binaries.
ARG PREBUILT_ID=
RUN if [ -n "$PREBUILT_ID" ]; then \
      cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DNBSPAMD_BUILD_TESTS=OFF \
        -DNBSPAMD_BUILD_BENCH=OFF \
      && install -D /prebuilt/nbspamd build/server/nbspamd \
      && install -D /prebuilt/nbspamc build/client/nbspamc; \
    else \
      cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DNBSPAMD_BUILD_TESTS="$IMAGE_TESTS" \
        -DNBSPAMD_BUILD_BENCH=OFF \
      && if [ "$IMAGE_TESTS" = ON ]; then cmake --build build -j "$(nproc)"; \
         else cmake --build build -j "$(nproc)" --target nbspamd nbspamc; fi \
      && if [ "$IMAGE_TESTS" = ON ]; then \
           ctest --test-dir build --output-on-failure -j "$(nproc)" -E '^(milter_postfix_test|spamc_test|exim_test|MilterDaemonTest\..*|SpamdDaemonTest\..*|DovecotTest\..*|BrowserTest\..*)$'; fi; \
    fi \
 && strip build/server/nbspamd

FROM debian:bookworm-slim
ARG DEBIAN_FRONTEND=noninteractive
# curl is for the health check (and for looking at the daemon from inside the container).
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      librocksdb7.8 libicu72 libxxhash0 libtomlplusplus3 libjemalloc2 libgmime-3.0-0 libxml2 libpsl5 libuchardet0 \
      libhiredis0.14 libssl3 \
      libboost-json1.81.0 libboost-program-options1.81.0 libboost-url1.81.0 curl \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 7830 nbspamd \
 && useradd --system --uid 7830 --gid nbspamd --home-dir /var/lib/nbspamd --no-create-home \
      --shell /usr/sbin/nologin nbspamd \
 && mkdir -p /var/lib/nbspamd \
 && chown nbspamd:nbspamd /var/lib/nbspamd \
 && chmod 0750 /var/lib/nbspamd
COPY --from=build /src/build/server/nbspamd /src/build/client/nbspamc /usr/local/bin/
# A fresh named volume takes the owner of this folder (nbspamd), so the daemon can create model/
# and backups/ in it. A host folder mounted here must be writable by uid 7830.
VOLUME /var/lib/nbspamd
WORKDIR /var/lib/nbspamd
USER nbspamd:nbspamd
# Every setting can be given as NBSPAMD_* (README.md, "Configuration"). Inside the container the
# daemon listens on all interfaces: publish the port on the host's loopback (or on the mail
# server's network only), and give training a token (-e NBSPAMD_AUTH_TOKENS=mx1:SECRET), or the
# daemon warns at start-up. The drain on SIGTERM is kept under the 10 s that `docker stop` waits
# before SIGKILL; raise both together (docker stop -t, compose stop_grace_period).
ENV NBSPAMD_DATA_DIR=/var/lib/nbspamd/model \
    NBSPAMD_BACKUP_DIR=/var/lib/nbspamd/backups \
    NBSPAMD_LISTEN=0.0.0.0:7830 \
    NBSPAMD_SHUTDOWN_TIMEOUT_SECONDS=8
# 11332: the milter listener, when NBSPAMD_MILTER_LISTEN=inet:0.0.0.0:11332 turns it on
# (contrib/docker-compose/).
EXPOSE 7830 11332
# The health check asks the port of NBSPAMD_LISTEN on loopback.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD curl -fsS -o /dev/null "http://127.0.0.1:${NBSPAMD_LISTEN##*:}/healthz" || exit 1
# The daemon is PID 1 and handles SIGTERM itself: it stops accepting, finishes the requests in
# flight, closes the model and exits 0.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/nbspamd"]
