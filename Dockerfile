# The image of one example operator. Build from the workspace root, naming the example and the image its
# manifests' Deployment runs (`cargo run --example NAME -- manifests | grep image:`):
#
#   docker build --build-arg EXAMPLE=webapp   -t example.dev/webapp-operator:latest .
#   docker build --build-arg EXAMPLE=database -t example.dev/database-operator:latest .
#   docker build --build-arg EXAMPLE=tenants  -t example.dev/tenants-operator:latest .
#   docker build --build-arg EXAMPLE=teams    -t example.dev/teams-operator:latest .
#
# The build stage compiles the example in release mode with the locked dependencies and the toolchain
# `rust-toolchain.toml` pins, without the embedded in-memory cluster (a pod runs against its own cluster);
# the runtime stage holds that one binary on a slim Debian, running as a numeric non-root user so the
# Deployment's restricted security context (runAsNonRoot, read-only root filesystem) admits it. The Deployment passes the arguments (`--in-cluster`, probes, metrics, leader election).

ARG EXAMPLE=webapp

FROM rust:1.95-slim-bookworm AS build
ARG EXAMPLE
# jemalloc, the examples' allocator, builds with make, which the slim image lacks.
RUN apt-get update && apt-get install -y --no-install-recommends make && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked --no-default-features -p examples --example "${EXAMPLE}" \
    && cp "target/release/examples/${EXAMPLE}" /operator

FROM debian:bookworm-slim
COPY --from=build /operator /usr/local/bin/operator
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/operator"]
