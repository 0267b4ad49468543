package main

import (
	"slices"
	"testing"

	"github.com/threadwright/threadwright/webhook"
)

// TestWebhookReceiversConfig: WEBHOOK_URLS entries carry their own secret after "|";
// an entry without one is signed with WEBHOOK_SECRET, which is then required, and
// is optional when every entry has its own.
func TestWebhookReceiversConfig(t *testing.T) {
	for _, tt := range []struct {
		name, urls, secret string
		want               []webhook.Receiver
	}{
		{"OwnSecrets", "https://a.example.com/h|secret-a, https://b.example.com/h|sec|ret-b", "",
			[]webhook.Receiver{{URL: "https://a.example.com/h", Secret: "secret-a"}, {URL: "https://b.example.com/h", Secret: "sec|ret-b"}}},
		{"Default", "https://a.example.com/h|secret-a,https://b.example.com/h", "default-secret",
			[]webhook.Receiver{{URL: "https://a.example.com/h", Secret: "secret-a"}, {URL: "https://b.example.com/h"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			setEnv(t, map[string]string{"WEBHOOK_URLS": tt.urls, "WEBHOOK_SECRET": tt.secret})
			var c Config
			if err := LoadConfig(&c); err != nil {
				t.Fatal(err)
			}
			if got := c.webhookReceivers(); !slices.Equal(got, tt.want) {
				t.Errorf("receivers %+v; want %+v", got, tt.want)
			}
		})
	}
}
