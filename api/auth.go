package api

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/threadwright/threadwright/conversation"
)

// Scope is a permission of a token (docs/api.md, "Tokens"), in OAuth 2.0's shape
// (RFC 6749, section 3.3): resource:access.
type Scope string

// The scopes a token may hold.
const (
	// ScopeRunsRead lists workflows and reads runs and their reports.
	ScopeRunsRead Scope = "runs:read"
	// ScopeRunsWrite starts runs and acts on their artifacts.
	ScopeRunsWrite Scope = "runs:write"
	// ScopeConversationsRead reads the stored messages of channel threads.
	ScopeConversationsRead Scope = "conversations:read"
	// ScopeConversationsReadDM reads direct messages too: threads and runs in a
	// conversation whose id starts with D (an im) or G (an mpim or a private
	// group). No other scope, admin included, grants it.
	ScopeConversationsReadDM Scope = "conversations:read:dm"
	// ScopeKnowledgeRead lists the knowledge base's documents.
	ScopeKnowledgeRead Scope = "knowledge:read"
	// ScopeKnowledgeWrite uploads and deletes documents.
	ScopeKnowledgeWrite Scope = "knowledge:write"
	// ScopeAdmin grants every scope but conversations:read:dm.
	ScopeAdmin Scope = "admin"
)

// scopes are the scopes ParseTokens accepts, in the order docs list them.
var scopes = []Scope{ScopeRunsRead, ScopeRunsWrite, ScopeConversationsRead, ScopeConversationsReadDM,
	ScopeKnowledgeRead, ScopeKnowledgeWrite, ScopeAdmin}

// Token is a bearer token of the API (API_TOKENS): Name identifies it in logs and
// as the actor of its writes ("api:" + Name); Secret is what clients send.
type Token struct {
	Name   string
	Secret string
	// Scopes are what the token may do (Token.Has).
	Scopes []Scope
	// Channels, when set, are the only channel ids whose runs and threads the
	// token reads or writes.
	Channels []string
	// Trusted marks the documents the token uploads as trusted like an operator's
	// (threadwright ingest); otherwise the search_knowledge tool labels them
	// untrusted.
	Trusted bool
}

// Actor returns the id the token acts as: "api:" + Name
// (conversation.APIActorPrefix).
func (t Token) Actor() string { return conversation.APIActorPrefix + t.Name }

// Has reports whether t holds scope s: named, or through admin (which never
// grants conversations:read:dm).
func (t Token) Has(s Scope) bool {
	return slices.Contains(t.Scopes, s) || (s != ScopeConversationsReadDM && slices.Contains(t.Scopes, ScopeAdmin))
}

// MayChannel reports whether t may touch the threads of channel: the channel is
// in its allowlist (when it has one), and a direct message's only with
// conversations:read:dm.
func (t Token) MayChannel(channel string) bool {
	if len(t.Channels) > 0 && !slices.Contains(t.Channels, channel) {
		return false
	}
	return !DirectMessage(channel) || t.Has(ScopeConversationsReadDM)
}

// DirectMessage reports whether channel is the id of a direct message: an im (D…)
// or a multi-person one (G…, also the prefix of Slack's legacy private channels,
// which are held as closely).
func DirectMessage(channel string) bool {
	return strings.HasPrefix(channel, "D") || strings.HasPrefix(channel, "G")
}

var (
	tokenName = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)
	channelID = regexp.MustCompile(`^[A-Z0-9]{1,32}$`)
)

// minSecret is the shortest secret accepted.
const minSecret = 16

// ParseTokens parses API_TOKENS: comma-separated tokens, each name:secret followed
// by ';'-separated attributes (docs/api.md, "Tokens"):
//
//	ci-bot:s3cr3t-of-32-chars;scope=runs:read runs:write;channels=C0123 C0456,portal:…;scope=knowledge:write;trusted
//
// scope (required) is a space-separated list of scopes, as OAuth 2.0's scope
// parameter; channels an optional space-separated allowlist of channel ids; trusted
// marks the token's uploads as trusted. A name is 1–64 letters, digits, '.', '_' or
// '-', unique; a secret has at least 16 characters and no ',' or ';'. Errors name the
// token by its position or name, never the secret; a token without scope (the format
// before scopes) is refused with the way forward.
func ParseTokens(s string) ([]Token, error) {
	var out []Token
	seen := map[string]bool{}
	for i, entry := range strings.Split(s, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		attrs := strings.Split(entry, ";")
		name, secret, ok := strings.Cut(attrs[0], ":")
		switch {
		case !ok:
			return nil, fmt.Errorf("token %d: want name:secret;scope=…", i+1)
		case !tokenName.MatchString(name):
			return nil, fmt.Errorf("token %d: name %q: use 1-64 letters, digits, '.', '_' or '-'", i+1, name)
		case seen[name]:
			return nil, fmt.Errorf("token %d: name %q appears twice", i+1, name)
		case len(secret) < minSecret:
			return nil, fmt.Errorf("token %q: the secret has fewer than %d characters", name, minSecret)
		}
		seen[name] = true
		t := Token{Name: name, Secret: secret}
		if err := t.parseAttrs(attrs[1:]); err != nil {
			return nil, fmt.Errorf("token %q: %w", name, err)
		}
		out = append(out, t)
	}
	return out, nil
}

// parseAttrs sets t's scopes, channels and trust from its attributes.
func (t *Token) parseAttrs(attrs []string) error {
	for _, a := range attrs {
		key, value, _ := strings.Cut(strings.TrimSpace(a), "=")
		switch key {
		case "scope":
			for _, f := range strings.Fields(value) {
				if !slices.Contains(scopes, Scope(f)) {
					return fmt.Errorf("unknown scope %q: use %s", f, scopeList())
				}
				t.Scopes = append(t.Scopes, Scope(f))
			}
		case "channels":
			for _, f := range strings.Fields(value) {
				if !channelID.MatchString(f) {
					return fmt.Errorf("channels: %q is not a channel id such as C0123ABCD", f)
				}
				t.Channels = append(t.Channels, f)
			}
		case "trusted":
			t.Trusted = true
		default:
			return fmt.Errorf("unknown attribute %q: use scope=, channels= or trusted (a secret holds no ';')", key)
		}
	}
	if len(t.Scopes) == 0 {
		return fmt.Errorf("no scope: append ;scope= with what it needs, e.g. %s:…;scope=runs:read runs:write (%s; docs/api.md, \"Tokens\"), or ;scope=admin for the access it had before scopes", t.Name, scopeList())
	}
	return nil
}

func scopeList() string {
	s := make([]string, len(scopes))
	for i, sc := range scopes {
		s[i] = string(sc)
	}
	return strings.Join(s, ", ")
}

// keyring checks bearer secrets in constant time.
type keyring struct {
	tokens []Token
	hashes [][sha256.Size]byte
}

func newKeyring(tokens []Token) *keyring {
	k := &keyring{tokens: tokens}
	for _, t := range tokens {
		k.hashes = append(k.hashes, sha256.Sum256([]byte(t.Secret)))
	}
	return k
}

// match returns the token whose secret is secret. Every token is compared, each
// with subtle.ConstantTimeCompare of SHA-256 digests (equal lengths whatever was
// sent), so the time taken says nothing of which token or how much of it matched.
func (k *keyring) match(secret string) (tok Token, ok bool) {
	got := sha256.Sum256([]byte(secret))
	found := -1
	for i, h := range k.hashes {
		if subtle.ConstantTimeCompare(got[:], h[:]) == 1 && found < 0 {
			found = i
		}
	}
	if found < 0 || secret == "" {
		return Token{}, false
	}
	return k.tokens[found], true
}
