package sqlstore_test

import (
	"encoding/json"
	"testing"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/store/internal/sqlstore"
)

func TestText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"plain ascii", "plain ascii"},
		{"Grüße, 世界 👋🏽", "Grüße, 世界 👋🏽"},
		{"a\x00b", "ab"},
		{"\x00\x00", ""},
		{"a\xffb", "a\uFFFDb"},
		{"a\xfe\xfdb", "a\uFFFD\uFFFDb"},       // a replacement for each byte, as encoding/json does
		{"\xe4\xb8", "\uFFFD\uFFFD"},           // a truncated encoding
		{"\xed\xa0\x80", "\uFFFD\uFFFD\uFFFD"}, // an encoded surrogate is not UTF-8
		{"x\x00\xffy\U0010FFFF", "x\uFFFDy\U0010FFFF"},
		{"\uFFFD stays", "\uFFFD stays"},
	} {
		if got := sqlstore.Text(tc.in); got != tc.want {
			t.Errorf("Text(%q) = %q; want %q", tc.in, got, tc.want)
		}
	}
}

func TestTextClean(t *testing.T) {
	s := "a clean string, 世界"
	if n := testing.AllocsPerRun(100, func() { _ = sqlstore.Text(s) }); n != 0 {
		t.Errorf("Text of a clean string: %v allocations; want 0", n)
	}
	j := []byte(`{"a": "b \u00e9 \\u0000", "c": [1, 2]}`)
	if n := testing.AllocsPerRun(100, func() { _ = sqlstore.JSON(j) }); n != 0 {
		t.Errorf("JSON of clean JSON: %v allocations; want 0", n)
	}
	if got := sqlstore.JSON(j); &got[0] != &j[0] {
		t.Error("JSON of clean JSON returned a copy; want j itself")
	}
}

func TestJSON(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`null`, `null`},
		{`{"a":"b"}`, `{"a":"b"}`},
		{`"\u0000"`, `""`},
		{`{"a\u0000b":"c\u0000d\u0000"}`, `{"ab":"cd"}`},
		// An escaped backslash followed by the text u0000 is no escape of NUL.
		{`"\\u0000"`, `"\\u0000"`},
		{`"\\\u0000"`, `"\\"`},
		{`"\\\\u0000"`, `"\\\\u0000"`},
		{`["\"\u0000\"", "\/"]`, `["\"\"", "\/"]`},
		{`"\u00001"`, `"1"`},
		{`"\u0001\u00e9\u20AC"`, `"\u0001\u00e9\u20AC"`}, // other escapes are kept
		// Escapes outside strings cannot occur; numbers and literals pass through.
		{`[0, -1.5e3, true, false, null, {}]`, `[0, -1.5e3, true, false, null, {}]`},
		// Surrogates: a pair is kept; a half without the other is U+FFFD.
		{`"\ud83d\ude00"`, `"\ud83d\ude00"`},
		{`"\uD83D\uDE00"`, `"\uD83D\uDE00"`},
		{`"\ud83dx"`, `"\ufffdx"`},
		{`"\ud83d"`, `"\ufffd"`},
		{`"\ud83d\u0041"`, `"\ufffd\u0041"`},
		{`"\ude00\ud83d"`, `"\ufffd\ufffd"`},
		{`"\ud83d\ud83d\ude00"`, `"\ufffd\ud83d\ude00"`},
		{`"\ud83d\u0000"`, `"\ufffd"`},
		// Bytes that are not UTF-8 (which json.Valid lets through in strings).
		{"\"a\xffb\"", "\"a\uFFFDb\""},
		{"{\"\xff\": \"\\u0000\xfe\"}", "{\"\uFFFD\": \"\uFFFD\"}"},
	} {
		if !json.Valid([]byte(tc.in)) {
			t.Fatalf("test input %s is not JSON", tc.in)
		}
		got := string(sqlstore.JSON([]byte(tc.in)))
		if got != tc.want {
			t.Errorf("JSON(%s) = %s; want %s", tc.in, got, tc.want)
		}
		if !json.Valid([]byte(got)) {
			t.Errorf("JSON(%s) = %s, which is not JSON", tc.in, got)
		}
	}
}

// TestJSONOfMarshal checks what the stores meet most: JSON that encoding/json wrote
// from strings holding NUL and bytes that are not UTF-8 decodes to what Text makes of
// the strings.
func TestJSONOfMarshal(t *testing.T) {
	in := conversation.UserMessage{UserID: "U\x001", Text: "a\x00b\xffc\xfe\xfdd \\u0000 \"q\""}
	j, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var got conversation.UserMessage
	if err := json.Unmarshal(sqlstore.JSON(j), &got); err != nil {
		t.Fatal(err)
	}
	if want := sqlstore.Text(in.Text); got.Text != want || got.UserID != "U1" {
		t.Errorf("decoded = %+v; want text %q, user U1", got, want)
	}
}

func TestMessages(t *testing.T) {
	clean := []conversation.Message{{Role: conversation.RoleUser, Text: "hi", Meta: json.RawMessage(`{"a": 1}`)}}
	if got := sqlstore.Messages(clean); &got[0] != &clean[0] {
		t.Error("Messages of clean messages returned a copy; want the slice itself")
	}
	msgs := []conversation.Message{
		{Role: conversation.RoleUser, Text: "ok"},
		{Role: conversation.RoleAssistant, UserID: "U\x00", Text: "a\x00", SlackTS: "1.\xff", Meta: json.RawMessage(`{"n": "\u0000"}`)},
	}
	got := sqlstore.Messages(msgs)
	if got[0].Text != "ok" || got[0].Role != conversation.RoleUser {
		t.Errorf("message 0 = %+v; want it unchanged", got[0])
	}
	if m := got[1]; m.UserID != "U" || m.Text != "a" || m.SlackTS != "1.\uFFFD" || string(m.Meta) != `{"n": ""}` {
		t.Errorf("message 1 = %+v (meta %s); want repaired", m, m.Meta)
	}
	if msgs[1].Text != "a\x00" {
		t.Error("Messages changed its argument")
	}
}
