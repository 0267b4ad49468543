package bot

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/threadwright/threadwright/conversation"
)

// Button values are signed (docs/workflows.md, "Buttons are signed"): a button, menu option or
// modal carries its conversation.Action with Sig set to an HMAC-SHA256 of the
// Action's other fields (their JSON, Action.Encode) under the installation's key, cut
// to sigBytes and written in unpadded base64url (see encodeValue for where a value
// puts it). A click is honoured only when the signature is the bot's, so a
// value the bot did not write (a forged payload, or a button posted before signing
// existed) is refused.

// SigningKeyName is the name of the installation secret (the store's Secret) that
// keys the signatures.
const SigningKeyName = "action-signing"

// MinSigningKeyBytes is the shortest key NewSigner accepts.
const MinSigningKeyBytes = 16

// sigBytes is how much of the HMAC a value carries: 96 bits, sigChars base64url
// characters, so that a signed action still fits an option's 150-character value.
const (
	sigBytes = 12
	sigChars = sigBytes * 4 / 3
)

// Errors of Signer.Verify.
var (
	errUnsigned     = errors.New("bot: action not signed")
	errBadSignature = errors.New("bot: action signature does not match")
)

// Signer signs and verifies the Actions that buttons carry. It is safe for
// concurrent use.
type Signer struct {
	key []byte
}

// NewSigner returns a Signer keyed by key (at least MinSigningKeyBytes bytes; every
// replica must use the same key). Errors: key too short.
func NewSigner(key []byte) (*Signer, error) {
	if len(key) < MinSigningKeyBytes {
		return nil, fmt.Errorf("bot: signing key of %d bytes, want at least %d", len(key), MinSigningKeyBytes)
	}
	return &Signer{key: append([]byte(nil), key...)}, nil
}

// tag returns the signature of a's fields other than Sig.
func (s *Signer) tag(a conversation.Action) (string, error) {
	a.Sig = ""
	enc, err := a.Encode()
	if err != nil {
		return "", err
	}
	mac := hmac.New(sha256.New, s.key)
	mac.Write([]byte(enc))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil)[:sigBytes]), nil
}

// Sign returns a with its signature in Sig. Errors: a cannot be encoded.
func (s *Signer) Sign(a conversation.Action) (conversation.Action, error) {
	t, err := s.tag(a)
	if err != nil {
		return a, err
	}
	a.Sig = t
	return a, nil
}

// Verify returns a without its signature when Sig is the signature of a's other
// fields. Errors: errUnsigned (no Sig), errBadSignature (another one).
func (s *Signer) Verify(a conversation.Action) (conversation.Action, error) {
	if a.Sig == "" {
		return a, errUnsigned
	}
	want, err := s.tag(a)
	if err != nil || !hmac.Equal([]byte(want), []byte(a.Sig)) {
		return a, errBadSignature
	}
	a.Sig = ""
	return a, nil
}

// SignCard returns a copy of c whose buttons and menu items carry signed actions. An
// action that cannot be encoded is left as it is: rendering reports it.
func (s *Signer) SignCard(c conversation.Card) conversation.Card {
	sign := func(bs []conversation.Button) []conversation.Button {
		if bs == nil {
			return nil
		}
		out := make([]conversation.Button, len(bs))
		for i, b := range bs {
			if a, err := s.Sign(b.Action); err == nil {
				b.Action = a
			}
			out[i] = b
		}
		return out
	}
	blocks := make([]conversation.Block, len(c.Blocks))
	for i, b := range c.Blocks {
		b.Buttons, b.Menu = sign(b.Buttons), sign(b.Menu)
		blocks[i] = b
	}
	c.Blocks = blocks
	return c
}

// SigningMessenger is a Messenger whose cards' buttons carry signed actions: what a
// Bot with the same Signer accepts.
type SigningMessenger struct {
	*Messenger
	signer *Signer
}

var _ conversation.StreamingMessenger = (*SigningMessenger)(nil)

// NewSigningMessenger returns m signing its cards' actions with s.
func NewSigningMessenger(m *Messenger, s *Signer) *SigningMessenger {
	return &SigningMessenger{Messenger: m, signer: s}
}

// PostCard is Messenger.PostCard with c's actions signed.
func (m *SigningMessenger) PostCard(ctx context.Context, key conversation.Key, c conversation.Card, tag conversation.Tag) (string, error) {
	return m.Messenger.PostCard(ctx, key, m.signer.SignCard(c), tag)
}

// UpdateCard is Messenger.UpdateCard with c's actions signed.
func (m *SigningMessenger) UpdateCard(ctx context.Context, key conversation.Key, ts string, c conversation.Card) error {
	return m.Messenger.UpdateCard(ctx, key, ts, m.signer.SignCard(c))
}

// PostEphemeralCard is Messenger.PostEphemeralCard with c's actions signed.
func (m *SigningMessenger) PostEphemeralCard(ctx context.Context, key conversation.Key, userID string, c conversation.Card) error {
	return m.Messenger.PostEphemeralCard(ctx, key, userID, m.signer.SignCard(c))
}
