# syntax=docker/dockerfile:1
# Build: a static binary (pure-Go SQLite driver, so CGO stays off). The module and
# build caches are BuildKit cache mounts: a rebuild after a source change downloads
# nothing and recompiles only what changed; neither cache ends up in an image layer.
FROM golang:1.27.3-bookworm AS build
WORKDIR /src
ENV GOMODCACHE=/go/pkg/mod GOCACHE=/root/.cache/go-build
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod \
    go mod download
COPY . .
ARG VERSION=dev
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/threadwright ./cmd/threadwright \
 && mkdir -p /out/data

# Run: distroless static, non-root; no shell, so the health check is the binary's own.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/threadwright /usr/local/bin/threadwright
# The embedded SQLite store's directory (and, with Postgres, the spool's), writable by
# the nonroot user (uid 65532). A volume, so that it outlives the container.
COPY --from=build --chown=65532:65532 /out/data /data
VOLUME ["/data"]
WORKDIR /data
ENV DATA_DIR=/data HTTP_ADDR=0.0.0.0:8080
EXPOSE 8080
USER nonroot:nonroot
# GET /readyz on HTTP_ADDR's port (on 127.0.0.1): exit 0 when ready, 1 with the reason.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["/usr/local/bin/threadwright", "healthcheck"]
ENTRYPOINT ["/usr/local/bin/threadwright"]
CMD ["run"]
