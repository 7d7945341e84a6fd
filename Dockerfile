# Multi-stage build of this project's binaries into a small, non-root image.
# One image, several commands: frontend, worker, agents (and dev).
FROM golang:1.26.8-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ENV CGO_ENABLED=0
RUN go build -trimpath -ldflags="-s -w" -o /out/frontend ./cmd/frontend && \
    go build -trimpath -ldflags="-s -w" -o /out/worker ./cmd/worker && \
    go build -trimpath -ldflags="-s -w" -o /out/agents ./cmd/agents

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/ /usr/local/bin/
COPY a2a.compose.toml /etc/a2a/a2a.toml
USER nonroot:nonroot
ENTRYPOINT []
