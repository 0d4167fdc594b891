# One image with all three services; compose picks the binary per service.
# syntax=docker/dockerfile:1

FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
# Cache the registry and the target dir between builds; copy the binaries out of the cache mount.
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked -p orders-svc -p relay-svc -p mail-svc \
    && mkdir -p /out \
    && cp target/release/orders-svc target/release/relay-svc target/release/mail-svc /out/

FROM debian:bookworm-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 outbox
COPY --from=build /out/ /usr/local/bin/
USER outbox
# Each service sets its command; this one only says what is inside.
CMD ["orders-svc", "--help"]
