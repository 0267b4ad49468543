package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/kelseyhightower/envconfig"
)

// healthcheckTimeout bounds the healthcheck's request: Docker's HEALTHCHECK has a
// timeout of its own (30 s by default), and a hung server is as unhealthy as a down one.
const healthcheckTimeout = 3 * time.Second

// healthConfig is what the healthcheck reads from the environment.
type healthConfig struct {
	HTTPAddr string `envconfig:"HTTP_ADDR" default:"127.0.0.1:8080"`
}

// runHealthcheck runs "threadwright healthcheck": GET /readyz of the server on
// HTTP_ADDR, on the loopback address when HTTP_ADDR listens on every address (as in
// the Docker image, 0.0.0.0:8080). It prints "ready" and returns nil on 200, and
// otherwise an error of one line with the reason (the process exits 1), for the
// Dockerfile's HEALTHCHECK, which runs without a shell or curl in the distroless image.
func runHealthcheck(ctx context.Context, stdout io.Writer) error {
	var c healthConfig
	if err := envconfig.Process("", &c); err != nil {
		return configError(err)
	}
	u, err := readyzURL(c.HTTPAddr)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, healthcheckTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	// Straight to the server: never through an HTTP_PROXY of the environment.
	client := &http.Client{Transport: &http.Transport{Proxy: nil}}
	resp, err := client.Do(req)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return fmt.Errorf("healthcheck: %s did not answer within %s", u, healthcheckTimeout)
		}
		return fmt.Errorf("healthcheck: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	reason := strings.Join(strings.Fields(string(body)), " ")
	if resp.StatusCode != http.StatusOK {
		if reason == "" {
			reason = resp.Status
		}
		return fmt.Errorf("healthcheck: %s: %s", u, reason)
	}
	fmt.Fprintln(stdout, "ready")
	return nil
}

// readyzURL returns the URL of GET /readyz on addr (HTTP_ADDR): on 127.0.0.1 when addr
// has no host or a wildcard one, a named port by its number. Errors: addr is empty
// (the server serves no health endpoints then), not host:port, or its port unknown.
func readyzURL(addr string) (string, error) {
	if addr == "" {
		return "", errors.New("HTTP_ADDR is empty, so no /readyz is served")
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("HTTP_ADDR: expected host:port such as 127.0.0.1:8080: %w", err)
	}
	// A named port ("http"), which the server's net.Listen takes, goes by its number.
	n, err := net.LookupPort("tcp", port)
	if err != nil {
		return "", fmt.Errorf("HTTP_ADDR: %w", err)
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, strconv.Itoa(n)) + "/readyz", nil
}
