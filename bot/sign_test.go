package bot

import (
	"errors"
	"strings"
	"testing"

	"github.com/slack-go/slack"

	"github.com/threadwright/threadwright/conversation"
)

func TestSignVerify(t *testing.T) {
	s := signed(t, approve)
	if s.Sig == "" || len(s.Sig) != 16 {
		t.Fatalf("signature %q; want 16 characters", s.Sig)
	}
	got, err := testSigner.Verify(s)
	if err != nil || got != approve {
		t.Fatalf("Verify = %+v, %v; want %+v", got, err, approve)
	}
	t.Run("Unsigned", func(t *testing.T) {
		if _, err := testSigner.Verify(approve); !errors.Is(err, errUnsigned) {
			t.Errorf("err %v; want errUnsigned", err)
		}
	})
	t.Run("EveryFieldCovered", func(t *testing.T) {
		for name, change := range map[string]func(a *conversation.Action){
			"Name":     func(a *conversation.Action) { a.Name = conversation.ActionRestart },
			"Channel":  func(a *conversation.Action) { a.Channel = "C2" },
			"ThreadTS": func(a *conversation.Action) { a.ThreadTS = "10.2" },
			"Artifact": func(a *conversation.Action) { a.Artifact = "timeline" },
			"Rev":      func(a *conversation.Action) { a.Rev++ },
			"Arg":      func(a *conversation.Action) { a.Arg = "x" },
			"Sig":      func(a *conversation.Action) { a.Sig = strings.ToUpper(a.Sig) },
		} {
			a := s
			change(&a)
			if _, err := testSigner.Verify(a); !errors.Is(err, errBadSignature) {
				t.Errorf("%s changed: err %v; want errBadSignature", name, err)
			}
		}
	})
	t.Run("AnotherKey", func(t *testing.T) {
		other, err := NewSigner([]byte("another installation's key, 32 b"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := other.Verify(s); !errors.Is(err, errBadSignature) {
			t.Errorf("err %v; want errBadSignature", err)
		}
	})
	t.Run("ShortKey", func(t *testing.T) {
		if _, err := NewSigner(make([]byte, MinSigningKeyBytes-1)); err == nil {
			t.Error("a 15-byte key accepted")
		}
	})
}

// TestSignCard: every button and menu item of a card gets signed, the card given is
// left as it was, and the signed menu of an artifact (Restart, and Edit with its
// modal) still fits Slack's 150-character option values with realistic ids.
func TestSignCard(t *testing.T) {
	a := conversation.Action{Channel: "C0123456789", ThreadTS: "1700000000.000100", Artifact: "value_proposition", Rev: 12}
	restartA, editA := a, a
	restartA.Name, editA.Name = conversation.ActionRestart, conversation.ActionEdit
	for _, lang := range []struct{ title, label, submit string }{
		{"Edit", "How should it change?", "Submit"},
		{"Изменить", "Как изменить?", "Отправить"}, // the catalogs' texts
	} {
		card := conversation.Card{Text: "menu", Blocks: []conversation.Block{
			{Kind: conversation.BlockActions, Buttons: []conversation.Button{{Label: "Approve", Action: approve}},
				Menu: []conversation.Button{
					{Label: "Restart this artifact", Action: restartA},
					{Label: "Edit this artifact", Action: editA, Modal: &conversation.Modal{Title: lang.title, Label: lang.label, Submit: lang.submit}},
				}},
		}}
		signedCard := testSigner.SignCard(card)
		if card.Blocks[0].Buttons[0].Action.Sig != "" || card.Blocks[0].Menu[1].Action.Sig != "" {
			t.Fatal("SignCard changed the card it was given")
		}
		msgs, err := RenderCard(signedCard, 1)
		if err != nil {
			t.Fatal(err)
		}
		var options, buttons int
		for _, b := range msgs[0].Blocks {
			ab, ok := b.(*slack.ActionBlock)
			if !ok {
				continue
			}
			for _, el := range ab.Elements.ElementSet {
				switch el := el.(type) {
				case *slack.ButtonBlockElement:
					buttons++
					checkSigned(t, el.Value)
				case *slack.OverflowBlockElement:
					for _, o := range el.Options {
						options++
						if runes(o.Value) > maxOptionValueChars {
							t.Errorf("option value of %d characters", runes(o.Value))
						}
						checkSigned(t, o.Value)
					}
				}
			}
		}
		if options != 2 || buttons != 1 {
			t.Errorf("%s: %d menu options and %d buttons; want the 2 menu items as options, and 1 button", lang.title, options, buttons)
		}
	}
}

func checkSigned(t *testing.T, value string) {
	t.Helper()
	a, _, err := decodeValue(value)
	if err != nil {
		t.Fatalf("decode %q: %v", value, err)
	}
	if _, err := testSigner.Verify(a); err != nil {
		t.Errorf("value %q: %v", value, err)
	}
}

// BenchmarkVerifyClick measures what signing adds to a click: decoding the value and
// checking its signature.
func BenchmarkVerifyClick(b *testing.B) {
	s, err := testSigner.Sign(approve)
	if err != nil {
		b.Fatal(err)
	}
	v, err := encodeValue(s, nil, maxButtonValueChars)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		a, _, err := decodeValue(v)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := testSigner.Verify(a); err != nil {
			b.Fatal(err)
		}
	}
}
