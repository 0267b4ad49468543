package main

import (
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/threadwright/threadwright/agents/web"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/webhook"
)

// WebhookConfig is the configuration of webhooks (docs/api.md, "Webhooks").
type WebhookConfig struct {
	WebhookURLs       []string      `envconfig:"WEBHOOK_URLS" desc:"Comma-separated http(s) URLs that receive the signed JSON events of workflow runs (docs/api.md, \"Webhooks\"). Unset: no webhooks, and no events are recorded"`
	WebhookSecret     string        `envconfig:"WEBHOOK_SECRET" desc:"Secret the events are signed with (HMAC-SHA256); required with WEBHOOK_URLS"`
	WebhookAllowHosts []string      `envconfig:"WEBHOOK_ALLOW_HOSTS" desc:"Comma-separated exceptions to fetch_url's address rules for webhook targets, hosts they may reach although they are private, loopback or link-local: name, name:port, *.suffix or a CIDR"`
	WebhookTimeout    time.Duration `envconfig:"WEBHOOK_TIMEOUT" default:"10s" desc:"Timeout of one webhook request"`
	WebhookMaxBackoff time.Duration `envconfig:"WEBHOOK_MAX_BACKOFF" default:"1h" desc:"Longest wait between two attempts of a failing event"`
	WebhookMaxAge     time.Duration `envconfig:"WEBHOOK_MAX_AGE" default:"24h" desc:"An event still failing this long after it happened is abandoned (its error kept in webhook_events.last_error)"`
	WebhookMinBackoff time.Duration `envconfig:"WEBHOOK_MIN_BACKOFF" default:"5s" desc:"Wait after an event's first failed attempt; each next wait doubles, with jitter"`
	WebhookPoll       time.Duration `envconfig:"WEBHOOK_POLL" default:"1s" desc:"How often each replica reads the webhook outbox when it had nothing due"`
}

func (c *WebhookConfig) validate() error {
	if len(c.WebhookURLs) == 0 {
		return nil
	}
	for _, u := range c.WebhookURLs {
		if !isHTTPURL(u) {
			return errors.New("WEBHOOK_URLS: expected comma-separated http(s) URLs")
		}
	}
	switch {
	case c.WebhookSecret == "":
		return errors.New("WEBHOOK_SECRET: expected the secret webhooks are signed with (required when WEBHOOK_URLS is set)")
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
		URLs: c.WebhookURLs, Secret: c.WebhookSecret, Outbox: outbox, Client: client,
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
