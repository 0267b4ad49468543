package main

import (
	"strings"
	"testing"

	"github.com/threadwright/threadwright/agents/mcp"
)

func TestLoadConfigAPI(t *testing.T) {
	const secret = "a-secret-of-24-characters"
	for _, tt := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"BadAddr", map[string]string{"API_ADDR": "8081", "API_TOKENS": "ci:" + secret}, "API_ADDR: expected host:port"},
		{"NoTokens", map[string]string{"API_ADDR": "127.0.0.1:8081", "API_TOKENS": ""}, "API_TOKENS: expected at least one name:secret pair"},
		{"NoSecret", map[string]string{"API_ADDR": "127.0.0.1:8081", "API_TOKENS": "ci"}, "API_TOKENS: expected comma-separated name:secret pairs: token 1: want name:secret"},
		{"ShortSecret", map[string]string{"API_ADDR": "127.0.0.1:8081", "API_TOKENS": "ci:short1"}, `API_TOKENS: expected comma-separated name:secret pairs: token "ci": the secret has fewer than 16 characters`},
		{"TwiceNamed", map[string]string{"API_TOKENS": "ci:" + secret + ",ci:" + secret + "x"}, `API_TOKENS: expected comma-separated name:secret pairs: token 2: name "ci" appears twice`},
		{"BadName", map[string]string{"API_TOKENS": "ci bot:" + secret}, `API_TOKENS: expected comma-separated name:secret pairs: token 1: name "ci bot"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			setEnv(t, tt.env)
			var c Config
			err := LoadConfig(&c)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q, want one line starting %q", err, tt.want)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("the error holds the secret: %q", err)
			}
		})
	}
	t.Run("Enabled", func(t *testing.T) {
		setEnv(t, map[string]string{"API_ADDR": "127.0.0.1:8081", "API_TOKENS": "ci-bot:" + secret + ", portal:" + secret + "2"})
		var c Config
		if err := LoadConfig(&c); err != nil {
			t.Fatal(err)
		}
		if got := c.redactor(mcp.Config{}, nil).String("token " + secret + "2"); strings.Contains(got, secret) {
			t.Errorf("the redactor leaves a token's secret: %q", got)
		}
	})
}
