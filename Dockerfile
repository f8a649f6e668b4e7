# nbspamd in a container: built and tested in the first stage, run as a non-root user from a
# slim Debian 12 in the second. The model lives on the volume /var/lib/nbspamd.
#   docker build -t nbspamd .
#   docker run -d -p 127.0.0.1:7830:7830 -v nbspamd-data:/var/lib/nbspamd nbspamd
FROM debian:bookworm-slim AS build
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      build-essential cmake ninja-build pkg-config \
      libboost1.81-dev libboost-json1.81-dev libboost-program-options1.81-dev \
      libboost-url1.81-dev librocksdb-dev libicu-dev libxxhash-dev libtomlplusplus-dev \
      libgmime-3.0-dev libxml2-dev libpsl-dev libgtest-dev libgmock-dev libbenchmark-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release \
 && cmake --build build \
 && ctest --test-dir build --output-on-failure

FROM debian:bookworm-slim
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      librocksdb7.8 libicu72 libxxhash0 libtomlplusplus3 libgmime-3.0-0 libxml2 libpsl5 \
      libboost-json1.81.0 libboost-program-options1.81.0 libboost-url1.81.0 curl \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --home-dir /var/lib/nbspamd --shell /usr/sbin/nologin nbspamd \
 && mkdir -p /var/lib/nbspamd && chown nbspamd:nbspamd /var/lib/nbspamd
COPY --from=build /src/build/server/nbspamd /usr/local/bin/nbspamd
USER nbspamd
VOLUME /var/lib/nbspamd
# Inside the container the daemon listens on all interfaces; publish the port to loopback (or
# put it behind the mail server's network) on the host.
ENV NBSPAMD_DATA_DIR=/var/lib/nbspamd \
    NBSPAMD_LISTEN=0.0.0.0:7830
EXPOSE 7830
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s \
  CMD curl -fsS http://127.0.0.1:7830/healthz || exit 1
# The daemon is PID 1 and handles SIGTERM itself: it finishes requests in flight and closes the
# model cleanly.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/nbspamd"]
