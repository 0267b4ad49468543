package api

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"regexp"
	"strings"

	"github.com/threadwright/threadwright/conversation"
)

// Token is a bearer token of the API (API_TOKENS): Name identifies it in logs and
// as the actor of its writes ("api:" + Name); Secret is what clients send.
type Token struct {
	Name   string
	Secret string
}

// Actor returns the id the token acts as: "api:" + Name
// (conversation.APIActorPrefix).
func (t Token) Actor() string { return conversation.APIActorPrefix + t.Name }

var tokenName = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// minSecret is the shortest secret accepted.
const minSecret = 16

// ParseTokens parses API_TOKENS: comma-separated name:secret pairs, such as
// "ci-bot:s3cr3t-of-32-chars,portal:…". A name is 1–64 letters, digits, '.', '_'
// or '-', unique; a secret has at least 16 characters. Errors name the pair by its
// position and name, never the secret.
func ParseTokens(s string) ([]Token, error) {
	var out []Token
	seen := map[string]bool{}
	for i, pair := range strings.Split(s, ",") {
		pair = strings.TrimSpace(pair)
		if pair == "" {
			continue
		}
		name, secret, ok := strings.Cut(pair, ":")
		switch {
		case !ok:
			return nil, fmt.Errorf("token %d: want name:secret", i+1)
		case !tokenName.MatchString(name):
			return nil, fmt.Errorf("token %d: name %q: use 1-64 letters, digits, '.', '_' or '-'", i+1, name)
		case seen[name]:
			return nil, fmt.Errorf("token %d: name %q appears twice", i+1, name)
		case len(secret) < minSecret:
			return nil, fmt.Errorf("token %q: the secret has fewer than %d characters", name, minSecret)
		}
		seen[name] = true
		out = append(out, Token{Name: name, Secret: secret})
	}
	return out, nil
}

// keyring checks bearer secrets in constant time.
type keyring struct {
	names  []string
	hashes [][sha256.Size]byte
}

func newKeyring(tokens []Token) *keyring {
	k := &keyring{}
	for _, t := range tokens {
		k.names = append(k.names, t.Name)
		k.hashes = append(k.hashes, sha256.Sum256([]byte(t.Secret)))
	}
	return k
}

// match returns the name of the token whose secret is secret. Every token is
// compared, each with subtle.ConstantTimeCompare of SHA-256 digests (equal lengths
// whatever was sent), so the time taken says nothing of which token or how much of
// it matched.
func (k *keyring) match(secret string) (name string, ok bool) {
	got := sha256.Sum256([]byte(secret))
	found := -1
	for i, h := range k.hashes {
		if subtle.ConstantTimeCompare(got[:], h[:]) == 1 && found < 0 {
			found = i
		}
	}
	if found < 0 || secret == "" {
		return "", false
	}
	return k.names[found], true
}
