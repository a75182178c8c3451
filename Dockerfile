# Production image: one static binary, no shell.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=0.1.0
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /countersign ./cmd/countersign

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /countersign /countersign
ENV COUNTERSIGN_LISTEN=0.0.0.0:8080
# /metrics on its own listener; publish it only to the scraper's network.
ENV COUNTERSIGN_METRICS_LISTEN=0.0.0.0:9090
EXPOSE 8080 9090
ENTRYPOINT ["/countersign"]
CMD ["serve"]
