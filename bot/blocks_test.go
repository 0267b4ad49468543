package bot_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/threadwright/threadwright/bot"
	"github.com/threadwright/threadwright/conversation"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name, or rewrites the file with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./bot -run %s -update to create it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file; run with -update if the change is intended.\n--- got ---\n%s", path, got)
	}
}

func TestRenderCardGolden(t *testing.T) {
	tests := []struct {
		name        string
		card        conversation.Card
		maxMessages int
		messages    int
	}{
		{"options", optionsCard(), bot.MaxCardMessages, 1},
		{"artifact", artifactCard(budgetText), bot.MaxCardMessages, 1},
		{"stale", staleCard(), bot.MaxCardMessages, 1},
		{"long_artifact", artifactCard(longText(30000)), bot.MaxCardMessages, 3},
		{"long_artifact_one_message", artifactCard(longText(30000)), 1, 1},
		{"russian", russianCard(), 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msgs, err := bot.RenderCard(tt.card, tt.maxMessages)
			if err != nil {
				t.Fatal(err)
			}
			if len(msgs) != tt.messages {
				t.Errorf("%d messages, want %d", len(msgs), tt.messages)
			}
			for i, m := range msgs {
				checkLimits(t, fmt.Sprintf("message %d", i), m)
			}
			out, err := json.MarshalIndent(msgs, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden(t, tt.name+".golden.json", append(out, '\n'))
		})
	}
}

// TestRenderCardLongText checks how a 30,000-character artifact is spread: every
// character of the text is posted once, in order, the header comes first and the
// buttons and evaluation last.
func TestRenderCardLongText(t *testing.T) {
	text := longText(30000)
	msgs, err := bot.RenderCard(artifactCard(text), bot.MaxCardMessages)
	if err != nil {
		t.Fatal(err)
	}
	var sections []string
	for _, m := range msgs {
		for _, b := range decodeBlocks(t, m) {
			if b.Type == "section" {
				sections = append(sections, b.Text.Text)
			}
		}
	}
	if got := strings.Join(sections, ""); strip(got) != strip(text) {
		t.Errorf("the sections do not hold the artifact's text (%d characters, want %d)", len(strip(got)), len(strip(text)))
	}
	first, last := decodeBlocks(t, msgs[0]), decodeBlocks(t, msgs[len(msgs)-1])
	if first[0].Type != "header" {
		t.Errorf("first block of the first message is %s", first[0].Type)
	}
	if last[len(last)-1].Type != "actions" || last[len(last)-2].Type != "context" {
		t.Errorf("the last message does not end with the evaluation and the buttons")
	}
	if msgs[len(msgs)-1].Text != "Budget is ready for review" || msgs[0].Text == msgs[len(msgs)-1].Text {
		t.Errorf("fallback texts: %q ... %q", msgs[0].Text, msgs[len(msgs)-1].Text)
	}

	t.Run("OneMessage", func(t *testing.T) {
		msgs, err := bot.RenderCard(artifactCard(text), 1)
		if err != nil {
			t.Fatal(err)
		}
		blocks := decodeBlocks(t, msgs[0])
		var note, evaluation bool
		for _, b := range blocks {
			if b.Type == "context" && strings.Contains(b.text(), "Shortened to fit Slack") {
				note = true
			}
			if b.Type == "context" && strings.Contains(b.text(), "Itemised") {
				evaluation = true
			}
		}
		if !note || !evaluation || blocks[len(blocks)-1].Type != "actions" {
			t.Errorf("shortened message: note %v, evaluation %v, last block %s", note, evaluation, blocks[len(blocks)-1].Type)
		}
	})
}

func strip(s string) string { return strings.Join(strings.Fields(s), "") }

// TestRenderCardLimits renders cards that push every limit and checks each message.
func TestRenderCardLimits(t *testing.T) {
	many := func(n int) []conversation.Button {
		var bs []conversation.Button
		for i := range n {
			bs = append(bs, conversation.Button{Label: fmt.Sprintf("Option %d", i), Action: action(conversation.ActionPick, "name", 1, fmt.Sprint(i))})
		}
		return bs
	}
	hugeArg := action(conversation.ActionCommand, "", 0, strings.Repeat("x", 1900))
	tests := []struct {
		name        string
		card        conversation.Card
		maxMessages int
	}{
		{"Empty", conversation.Card{Text: "nothing"}, 1},
		{"HugeText", conversation.Card{Blocks: []conversation.Block{{Kind: conversation.BlockSection, Text: longText(200000)}}}, bot.MaxCardMessages},
		{"HugeTextNoParagraphs", conversation.Card{Blocks: []conversation.Block{{Kind: conversation.BlockSection, Text: strings.Repeat("й", 50000)}}}, 2},
		{"HugeContext", conversation.Card{Blocks: []conversation.Block{{Kind: conversation.BlockContext, Text: longText(9000)}}}, 1},
		{"ManySections", conversation.Card{Blocks: repeatBlocks(120, conversation.Block{Kind: conversation.BlockSection, Text: "short"})}, 1},
		{"ManyActionBlocks", conversation.Card{Blocks: repeatBlocks(70, conversation.Block{Kind: conversation.BlockActions, Buttons: many(2)})}, 1},
		{"SixtyButtons", conversation.Card{Blocks: []conversation.Block{{Kind: conversation.BlockActions, Buttons: many(60), Menu: many(3)}}}, 1},
		{"BigMenu", conversation.Card{Blocks: []conversation.Block{{Kind: conversation.BlockActions, Menu: many(120)}}}, 1},
		{"MenuItemTooLongForAnOption", conversation.Card{Blocks: []conversation.Block{{Kind: conversation.BlockActions, Menu: []conversation.Button{{Label: "Run", Action: hugeArg}}}}}, 1},
		{"LongHeaderAndLabels", conversation.Card{Text: strings.Repeat("t", 5000), Blocks: []conversation.Block{
			{Kind: conversation.BlockHeader, Text: strings.Repeat("h", 400)},
			{Kind: conversation.BlockActions, Buttons: []conversation.Button{{Label: strings.Repeat("l", 200), Style: "weird", Action: hugeArg,
				Confirm: &conversation.Confirm{Title: strings.Repeat("c", 200), Text: strings.Repeat("c", 500)}}}},
		}}, 1},
		{"ModalWithHugeInitial", conversation.Card{Blocks: []conversation.Block{{Kind: conversation.BlockActions, Buttons: []conversation.Button{{Label: "Edit",
			Action: action(conversation.ActionEdit, "budget", 1, ""),
			Modal:  &conversation.Modal{Title: strings.Repeat("T", 50), Label: strings.Repeat("L", 3000), Initial: strings.Repeat("i", 5000), Submit: "Go"}}}}}}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msgs, err := bot.RenderCard(tt.card, tt.maxMessages)
			if err != nil {
				t.Fatal(err)
			}
			if len(msgs) == 0 || len(msgs) > tt.maxMessages {
				t.Fatalf("%d messages, want 1 to %d", len(msgs), tt.maxMessages)
			}
			for i, m := range msgs {
				checkLimits(t, fmt.Sprintf("message %d", i), m)
			}
		})
	}

	t.Run("ActionTooLong", func(t *testing.T) {
		card := conversation.Card{Blocks: []conversation.Block{{Kind: conversation.BlockActions, Buttons: []conversation.Button{
			{Label: "x", Action: action(conversation.ActionCommand, "", 0, strings.Repeat("x", 2100))}}}}}
		if _, err := bot.RenderCard(card, 1); err == nil {
			t.Error("an action that cannot be encoded rendered")
		}
	})
}

func repeatBlocks(n int, b conversation.Block) []conversation.Block {
	out := make([]conversation.Block, n)
	for i := range out {
		out[i] = b
	}
	return out
}

// TestRenderCardValues checks that every button and menu option carries its action,
// and its modal, and that labels and modal texts are cut.
func TestRenderCardValues(t *testing.T) {
	card := russianCard()
	msgs, err := bot.RenderCard(card, 1)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{} // label -> value
	for _, b := range decodeBlocks(t, msgs[0]) {
		for _, el := range b.elements(t) {
			if el.Type == "button" {
				got[el.Text.Text] = el.Value
			}
			for _, o := range el.Options {
				got[o.Text.Text] = o.Value
			}
		}
	}
	want := append(append([]conversation.Button(nil), card.Blocks[2].Buttons...), card.Blocks[2].Menu...)
	for _, btn := range want {
		label := btn.Label
		if utf8.RuneCountInString(label) > 75 {
			label = string([]rune(label)[:74])
			label = strings.TrimRight(label, " ") + "…"
		}
		v, ok := got[label]
		if !ok {
			t.Errorf("no element labelled %q (have %v)", label, keys(got))
			continue
		}
		a, m, err := bot.DecodeValue(v)
		if err != nil {
			t.Errorf("%s: %v", label, err)
			continue
		}
		if a != btn.Action {
			t.Errorf("%s: action %+v, want %+v", label, a, btn.Action)
		}
		if (m == nil) != (btn.Modal == nil) {
			t.Errorf("%s: modal %+v, want %+v", label, m, btn.Modal)
		}
		if m != nil && (utf8.RuneCountInString(m.Title) > 24 || utf8.RuneCountInString(m.Submit) > 24 || m.Label != btn.Modal.Label) {
			t.Errorf("%s: modal %+v", label, m)
		}
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestEncodeValue(t *testing.T) {
	a := action(conversation.ActionRequestChanges, "budget", 3, "")
	t.Run("Plain", func(t *testing.T) {
		v, err := bot.EncodeValue(a, nil, 2000)
		if err != nil {
			t.Fatal(err)
		}
		if want, _ := a.Encode(); v != want {
			t.Errorf("value %s, want Action.Encode's %s", v, want)
		}
	})
	t.Run("ModalRoundTrip", func(t *testing.T) {
		m := &conversation.Modal{Title: "Request changes", Label: "What <should> change?", Placeholder: "e.g. \"shorter\"", Submit: "Send", Initial: "line 1\nline 2"}
		v, err := bot.EncodeValue(a, m, 2000)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(v, "m:") {
			t.Errorf("value %s", v)
		}
		ga, gm, err := bot.DecodeValue(v)
		if err != nil || ga != a || !reflect.DeepEqual(gm, m) {
			t.Errorf("decoded %+v %+v %v", ga, gm, err)
		}
	})
	t.Run("FieldsRoundTrip", func(t *testing.T) {
		m := &conversation.Modal{Title: "Blog", Submit: "Start", Lang: "ru", Fields: []conversation.Field{
			{ID: "topic", Label: "What is it <about>?", Required: true},
			{ID: "wordcount", Label: "Words", Number: true},
		}}
		v, err := bot.EncodeValue(a, m, 2000)
		if err != nil {
			t.Fatal(err)
		}
		ga, gm, err := bot.DecodeValue(v)
		if err != nil || ga != a || !reflect.DeepEqual(gm, m) {
			t.Errorf("decoded %+v %+v %v from %s", ga, gm, err, v)
		}
	})
	t.Run("ShortensInitialFirst", func(t *testing.T) {
		m := &conversation.Modal{Title: "Edit", Label: "What should change?", Placeholder: "Say it", Submit: "Edit", Initial: strings.Repeat("ё", 3000)}
		v, err := bot.EncodeValue(a, m, 2000)
		if err != nil {
			t.Fatal(err)
		}
		if n := utf8.RuneCountInString(v); n > 2000 || n < 1990 {
			t.Errorf("value is %d characters", n)
		}
		_, gm, _ := bot.DecodeValue(v)
		if gm.Label != m.Label || gm.Placeholder != m.Placeholder || !strings.HasSuffix(gm.Initial, "…") {
			t.Errorf("modal %+v", gm)
		}
	})
	t.Run("OptionLimit", func(t *testing.T) {
		m := &conversation.Modal{Title: "Edit", Label: strings.Repeat("What should change? ", 10), Placeholder: "Say it", Submit: "Edit"}
		v, err := bot.EncodeValue(a, m, 150)
		if err != nil {
			t.Fatal(err)
		}
		_, gm, _ := bot.DecodeValue(v)
		if utf8.RuneCountInString(v) > 150 || gm.Placeholder != "" || gm.Label == "" {
			t.Errorf("value %s (%d characters)", v, utf8.RuneCountInString(v))
		}
		if _, err := bot.EncodeValue(action(conversation.ActionCommand, "", 0, strings.Repeat("x", 200)), nil, 150); err == nil {
			t.Error("a 200-character argument fit 150 characters")
		}
	})
	t.Run("Malformed", func(t *testing.T) {
		for _, v := range []string{"", "hello", "{}", `{"n":"approve"}`, "m:", "m:[", "m:[]", `m:[{"n":"x"}]`, `m:["str"]`, `m:{"a":{}}`,
			`m:[{"n":"edit","c":"C1","t":"1.2"},7]`} {
			if _, _, err := bot.DecodeValue(v); err == nil {
				t.Errorf("%q decoded", v)
			}
		}
	})
}

// The Block Kit JSON the limits are checked on.
type textObj struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type elementJSON struct {
	Type     string   `json:"type"`
	ActionID string   `json:"action_id"`
	Text     *textObj `json:"text"`
	Value    string   `json:"value"`
	Style    string   `json:"style"`
	Options  []struct {
		Text  textObj `json:"text"`
		Value string  `json:"value"`
	} `json:"options"`
	Confirm *struct {
		Title, Text, Confirm, Deny *textObj
	} `json:"confirm"`
}

type blockJSON struct {
	Type     string            `json:"type"`
	Text     *textObj          `json:"text"`
	Elements []json.RawMessage `json:"elements"`
}

func (b blockJSON) text() string {
	if b.Text != nil {
		return b.Text.Text
	}
	var parts []string
	for _, raw := range b.Elements {
		var t textObj
		if json.Unmarshal(raw, &t) == nil {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, " ")
}

func (b blockJSON) elements(t *testing.T) []elementJSON {
	t.Helper()
	if b.Type != "actions" {
		return nil
	}
	var out []elementJSON
	for _, raw := range b.Elements {
		var el elementJSON
		if err := json.Unmarshal(raw, &el); err != nil {
			t.Fatal(err)
		}
		out = append(out, el)
	}
	return out
}

func decodeBlocks(t *testing.T, m bot.CardMessage) []blockJSON {
	t.Helper()
	data, err := json.Marshal(m.Blocks)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []blockJSON
	if err := json.Unmarshal(data, &blocks); err != nil {
		t.Fatal(err)
	}
	return blocks
}

// checkLimits checks a message against Slack's limits (Block Kit reference: blocks,
// elements, texts and option counts) and threadwright's MaxCardChars.
func checkLimits(t *testing.T, where string, m bot.CardMessage) {
	t.Helper()
	n := utf8.RuneCountInString
	errorf := func(format string, args ...any) { t.Errorf(where+": "+format, args...) }
	if n(m.Text) > bot.MaxFallbackChars {
		errorf("text has %d characters", n(m.Text))
	}
	blocks := decodeBlocks(t, m)
	if len(blocks) > bot.MaxBlocks {
		errorf("%d blocks", len(blocks))
	}
	if len(blocks) == 0 && m.Text == "" {
		errorf("neither text nor blocks")
	}
	chars := 0
	actionIDs := map[string]bool{}
	for i, b := range blocks {
		switch b.Type {
		case "header":
			if b.Text.Type != "plain_text" || n(b.Text.Text) > 150 || b.Text.Text == "" {
				errorf("block %d: header %q", i, b.Text.Text)
			}
			chars += n(b.Text.Text)
		case "section":
			if b.Text.Type != "mrkdwn" || n(b.Text.Text) > bot.MaxSectionChars || strings.TrimSpace(b.Text.Text) == "" {
				errorf("block %d: section of %d characters", i, n(b.Text.Text))
			}
			chars += n(b.Text.Text)
		case "context":
			if len(b.Elements) == 0 || len(b.Elements) > 10 || n(b.text()) > bot.MaxSectionChars {
				errorf("block %d: context with %d elements, %d characters", i, len(b.Elements), n(b.text()))
			}
			chars += n(b.text())
		case "divider":
		case "actions":
			els := b.elements(t)
			if len(els) == 0 || len(els) > 25 {
				errorf("block %d: %d elements", i, len(els))
			}
			for _, el := range els {
				if actionIDs[el.ActionID] || el.ActionID == "" || n(el.ActionID) > 255 || !strings.HasPrefix(el.ActionID, "tw:") {
					errorf("block %d: action_id %q duplicate or invalid", i, el.ActionID)
				}
				actionIDs[el.ActionID] = true
				checkElement(t, where, el)
			}
		default:
			errorf("block %d: unexpected type %s", i, b.Type)
		}
	}
	if chars > bot.MaxCardChars {
		errorf("%d characters of text", chars)
	}
}

func checkElement(t *testing.T, where string, el elementJSON) {
	t.Helper()
	n := utf8.RuneCountInString
	errorf := func(format string, args ...any) { t.Errorf(where+": "+el.ActionID+": "+format, args...) }
	if c := el.Confirm; c != nil {
		if c.Title == nil || n(c.Title.Text) > 100 || c.Text == nil || n(c.Text.Text) > 300 || c.Confirm == nil || n(c.Confirm.Text) > 30 || c.Deny == nil || n(c.Deny.Text) > 30 {
			errorf("confirm %+v", c)
		}
	}
	switch el.Type {
	case "button":
		if el.Text == nil || el.Text.Type != "plain_text" || n(el.Text.Text) > 75 || el.Text.Text == "" {
			errorf("label %+v", el.Text)
		}
		if n(el.Value) > 2000 {
			errorf("value of %d characters", n(el.Value))
		}
		if el.Style != "" && el.Style != "primary" && el.Style != "danger" {
			errorf("style %q", el.Style)
		}
		if _, _, err := bot.DecodeValue(el.Value); err != nil {
			errorf("value: %v", err)
		}
	case "overflow", "static_select":
		limit := 5
		if el.Type == "static_select" {
			limit = 100
		}
		if len(el.Options) == 0 || len(el.Options) > limit {
			errorf("%d options", len(el.Options))
		}
		for _, o := range el.Options {
			if n(o.Text.Text) > 75 || n(o.Value) > 150 {
				errorf("option %q with a value of %d characters", o.Text.Text, n(o.Value))
			}
			if _, _, err := bot.DecodeValue(o.Value); err != nil {
				errorf("option value: %v", err)
			}
		}
	default:
		errorf("unexpected element type %s", el.Type)
	}
}
