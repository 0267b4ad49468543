package main

import (
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/threadwright/threadwright/agents/web"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/webhook"
)

// WebhookConfig is the configuration of webhooks (docs/api.md, "Webhooks").
type WebhookConfig struct {
	WebhookURLs       []string      `envconfig:"WEBHOOK_URLS" desc:"Comma-separated http(s) URLs that receive the signed JSON events of workflow runs (docs/api.md, \"Webhooks\"), each delivered on its own; an entry url|secret signs that URL's events with its own secret (no comma in it). Unset: no webhooks, and no events are recorded"`
	WebhookSecret     string        `envconfig:"WEBHOOK_SECRET" desc:"Secret the events are signed with (HMAC-SHA256) for the WEBHOOK_URLS entries without a secret of their own; required when there is one"`
	WebhookAllowHosts []string      `envconfig:"WEBHOOK_ALLOW_HOSTS" desc:"Comma-separated exceptions to fetch_url's address rules for webhook targets, hosts they may reach although they are private, loopback or link-local: name, name:port, *.suffix or a CIDR"`
	WebhookTimeout    time.Duration `envconfig:"WEBHOOK_TIMEOUT" default:"10s" desc:"Timeout of one webhook request"`
	WebhookMaxBackoff time.Duration `envconfig:"WEBHOOK_MAX_BACKOFF" default:"1h" desc:"Longest wait between two attempts of a failing event"`
	WebhookMaxAge     time.Duration `envconfig:"WEBHOOK_MAX_AGE" default:"24h" desc:"An event still failing this long after it happened is abandoned for a URL (its error kept in webhook_deliveries.last_error)"`
	WebhookMinBackoff time.Duration `envconfig:"WEBHOOK_MIN_BACKOFF" default:"5s" desc:"Wait after an event's first failed attempt; each next wait doubles, with jitter"`
	WebhookPoll       time.Duration `envconfig:"WEBHOOK_POLL" default:"1s" desc:"How often each replica reads the webhook outbox when it had nothing due"`
}

func (c *WebhookConfig) validate() error {
	if len(c.WebhookURLs) == 0 {
		return nil
	}
	own := true
	for _, r := range c.webhookReceivers() {
		if !isHTTPURL(r.URL) {
			return errors.New("WEBHOOK_URLS: expected comma-separated http(s) URLs, each optionally followed by |secret")
		}
		own = own && r.Secret != ""
	}
	switch {
	case c.WebhookSecret == "" && !own:
		return errors.New("WEBHOOK_SECRET: expected the secret webhooks are signed with (required when a WEBHOOK_URLS entry has no |secret of its own)")
	case c.WebhookTimeout <= 0:
		return errors.New("WEBHOOK_TIMEOUT: expected a positive duration")
	case c.WebhookMinBackoff <= 0 || c.WebhookMaxBackoff < c.WebhookMinBackoff:
		return errors.New("WEBHOOK_MIN_BACKOFF, WEBHOOK_MAX_BACKOFF: expected positive durations, the minimum not above the maximum")
	case c.WebhookPoll <= 0:
		return errors.New("WEBHOOK_POLL: expected a positive duration")
	case c.WebhookMaxAge <= 0:
		return errors.New("WEBHOOK_MAX_AGE: expected a positive duration")
	}
	if err := (web.FetchConfig{AllowHosts: c.WebhookAllowHosts}).Validate(); err != nil {
		return fmt.Errorf("WEBHOOK_ALLOW_HOSTS: %w", err)
	}
	return nil
}

// webhookReceivers returns the receivers of WEBHOOK_URLS: each entry url or
// url|secret (split at the first "|"; a URL's own "|" is percent-encoded), the secret
// empty when the entry has none (webhook.New signs those with WEBHOOK_SECRET).
func (c *WebhookConfig) webhookReceivers() []webhook.Receiver {
	out := make([]webhook.Receiver, 0, len(c.WebhookURLs))
	for _, e := range c.WebhookURLs {
		u, secret, _ := strings.Cut(strings.TrimSpace(e), "|")
		out = append(out, webhook.Receiver{URL: strings.TrimSpace(u), Secret: secret})
	}
	return out
}

// webhookSecrets returns every secret webhooks are signed with, for the scrubber.
func (c *WebhookConfig) webhookSecrets() []string {
	out := []string{c.WebhookSecret}
	for _, r := range c.webhookReceivers() {
		out = append(out, r.Secret)
	}
	return out
}

// newDeliverer returns the deliverer of st's webhook outbox, nil when WEBHOOK_URLS is
// unset; links gives the events' thread links.
func (c *WebhookConfig) newDeliverer(st conversation.Store, links conversation.Permalinker, log *slog.Logger) (*webhook.Deliverer, error) {
	if len(c.WebhookURLs) == 0 {
		return nil, nil
	}
	outbox, ok := st.(webhook.Outbox)
	if !ok {
		return nil, errors.New("WEBHOOK_URLS: this store has no webhook outbox")
	}
	client, err := web.GuardedClient(web.FetchConfig{AllowHosts: c.WebhookAllowHosts}, c.WebhookTimeout)
	if err != nil {
		return nil, fmt.Errorf("WEBHOOK_ALLOW_HOSTS: %w", err)
	}
	host, _ := os.Hostname()
	d, err := webhook.New(webhook.Config{
		Receivers: c.webhookReceivers(), Secret: c.WebhookSecret, Outbox: outbox, Client: client,
		Owner:      fmt.Sprintf("%s/%d/%s", host, os.Getpid(), rand.Text()[:8]),
		Permalinks: links, Logger: log, Timeout: c.WebhookTimeout, Poll: c.WebhookPoll,
		FirstBackoff: c.WebhookMinBackoff, MaxBackoff: c.WebhookMaxBackoff, MaxAge: c.WebhookMaxAge,
	})
	if err != nil {
		return nil, fmt.Errorf("WEBHOOK_URLS: %w", err)
	}
	log.Info("webhooks on", "urls", len(c.WebhookURLs))
	return d, nil
}
