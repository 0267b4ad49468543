# syntax=docker/dockerfile:1
# Build: a static binary (pure-Go SQLite driver, so CGO stays off).
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/threadwright ./cmd/threadwright \
 && mkdir -p /out/data

# Run: distroless static, non-root.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/threadwright /usr/local/bin/threadwright
# The embedded SQLite store's directory, writable by the nonroot user (uid 65532).
COPY --from=build --chown=65532:65532 /out/data /data
WORKDIR /data
ENV DATA_DIR=/data HTTP_ADDR=0.0.0.0:8080
EXPOSE 8080
USER nonroot:nonroot
ENTRYPOINT ["/usr/local/bin/threadwright"]
CMD ["run"]
