# syntax=docker/dockerfile:1
# One image with all three services, outboxctl and outbox-console; compose picks the binary per service
# (deploy/compose.yaml).

FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
# Cache the registry and the target dir between builds; copy the binaries out of the cache mount,
# stripped (the release profile keeps line tables for local profiling; the image does not need them).
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked -p orders-svc -p relay-svc -p mail-svc -p outboxctl -p outbox-console \
    && mkdir -p /out \
    && cp target/release/orders-svc target/release/relay-svc target/release/mail-svc \
          target/release/outboxctl target/release/outbox-console /out/ \
    && strip /out/orders-svc /out/relay-svc /out/mail-svc /out/outboxctl /out/outbox-console

FROM debian:bookworm-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 outbox
COPY --from=build /out/ /usr/local/bin/
USER outbox
# gRPC: orders-svc 50051, relay-svc 50052, mail-svc 50053; Prometheus metrics: 9101, 9102, 9103;
# the console: 8080.
EXPOSE 50051 50052 50053 9101 9102 9103 8080
# Each service sets its command (`<binary>`, or `<binary> healthcheck` for the health check); this
# one only says what is inside.
CMD ["orders-svc", "--help"]
