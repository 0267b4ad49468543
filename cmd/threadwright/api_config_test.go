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
		{"BadAddr", map[string]string{"API_ADDR": "8081", "API_TOKENS": "ci:" + secret + ";scope=admin"}, "API_ADDR: expected host:port"},
		{"NoTokens", map[string]string{"API_ADDR": "127.0.0.1:8081", "API_TOKENS": ""}, "API_TOKENS: expected at least one name:secret;scope=… token"},
		{"NoSecret", map[string]string{"API_ADDR": "127.0.0.1:8081", "API_TOKENS": "ci"}, "API_TOKENS: expected comma-separated name:secret;scope=… tokens: token 1: want name:secret;scope=…"},
		{"ShortSecret", map[string]string{"API_ADDR": "127.0.0.1:8081", "API_TOKENS": "ci:short1"}, `API_TOKENS: expected comma-separated name:secret;scope=… tokens: token "ci": the secret has fewer than 16 characters`},
		{"TwiceNamed", map[string]string{"API_TOKENS": "ci:" + secret + ";scope=admin,ci:" + secret + "x;scope=admin"}, `API_TOKENS: expected comma-separated name:secret;scope=… tokens: token 2: name "ci" appears twice`},
		{"NoScope", map[string]string{"API_ADDR": "127.0.0.1:8081", "API_TOKENS": "ci:" + secret}, `API_TOKENS: expected comma-separated name:secret;scope=… tokens: token "ci": no scope: append ;scope= with what it needs, e.g. ci:…;scope=runs:read runs:write`},
		{"BadName", map[string]string{"API_TOKENS": "ci bot:" + secret}, `API_TOKENS: expected comma-separated name:secret;scope=… tokens: token 1: name "ci bot"`},
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
		setEnv(t, map[string]string{"API_ADDR": "127.0.0.1:8081", "API_TOKENS": "ci-bot:" + secret + ";scope=admin, portal:" + secret + "2;scope=runs:read"})
		var c Config
		if err := LoadConfig(&c); err != nil {
			t.Fatal(err)
		}
		if got := c.redactor(mcp.Config{}, nil).String("token " + secret + "2"); strings.Contains(got, secret) {
			t.Errorf("the redactor leaves a token's secret: %q", got)
		}
	})
}
