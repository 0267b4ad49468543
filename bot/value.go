package bot

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/threadwright/threadwright/conversation"
)

// A button's value (and an overflow or select option's value) is one of:
//
//   - the button's Action as conversation.Action.Encode makes it, a JSON object
//     ({"n":"approve","c":"C1","t":"1700000000.000100","a":"budget","r":3}), when the
//     button acts at once;
//   - modalValuePrefix followed by a JSON array [<the Action, encoded the same way>,
//     title, label, submit, placeholder, initial text] (trailing empty strings left
//     out), when the button opens a modal first:
//     m:[{"n":"edit","c":"C1","t":"1700000000.000100","a":"budget","r":3},"Edit","What should change?","Edit"].
//     A modal with several inputs (conversation.Modal.Fields) has a seventh element,
//     {"l":lang,"f":[[id,label,flags],…]}, flags holding "r" for a required field and
//     "n" for a number: m:[…,"Blog","","Start","","",{"l":"en","f":[["topic","Topic","r"]]}].
//
// A signed action (docs/workflows.md, "Buttons are signed") is preceded by its signature, Sig:
// sigChars base64url characters, which can begin neither "{" nor "m:", and left out
// of the JSON:
// krubV7G45i0OcBtA{"n":"approve","c":"C1","t":"1700000000.000100","a":"budget","r":3}.
//
// The prefixes keep the kinds apart without guessing from JSON; the array keeps the
// value short, since an option's value holds at most 150 characters. Modal texts are
// cut to what a modal can show (title and submit 24 characters, placeholder 150,
// label 2,000, initial text 3,000) before encoding, and the initial text, then the
// placeholder, then the label are shortened until the value fits its limit: 2,000
// characters for a button, 150 for an option (Block Kit reference, button element and
// option object).
const modalValuePrefix = "m:"

// errValueTooLong reports an action (and modal) that cannot be encoded within a limit.
var errValueTooLong = errors.New("bot: button value too long")

// encodeValue encodes a button's action and modal (nil for none) in at most limit
// characters. Errors: the Action alone cannot be encoded, or the value cannot fit
// limit (errValueTooLong).
func encodeValue(a conversation.Action, m *conversation.Modal, limit int) (string, error) {
	sig := a.Sig
	if sig != "" && (len(sig) != sigChars || strings.HasPrefix(sig, "{") || strings.HasPrefix(sig, modalValuePrefix)) {
		return "", fmt.Errorf("encode action %s: signature %q is not %d base64url characters", a.Name, sig, sigChars)
	}
	a.Sig = ""
	enc, err := a.Encode()
	if err != nil {
		return "", err
	}
	enc = sig + enc
	if m == nil {
		if runes(enc) > limit {
			return "", fmt.Errorf("%w: action %s takes %d characters, limit %d", errValueTooLong, a.Name, runes(enc), limit)
		}
		return enc, nil
	}
	enc = enc[len(sig):]
	// The modal's texts, in the order of the array.
	texts := []string{
		truncate(m.Title, maxModalTitleChars),
		truncate(m.Label, maxInputLabelChars),
		truncate(m.Submit, maxModalButtonChars),
		truncate(m.Placeholder, maxPlaceholderChars),
		truncate(m.Initial, maxInputChars),
	}
	var form []byte
	if len(m.Fields) > 0 {
		if form, err = encodeForm(*m); err != nil {
			return "", err
		}
	}
	build := func() string {
		n := len(texts)
		for n > 0 && texts[n-1] == "" && form == nil {
			n--
		}
		var buf bytes.Buffer
		buf.WriteString(sig + modalValuePrefix + "[" + enc)
		e := json.NewEncoder(&buf)
		e.SetEscapeHTML(false)
		for _, t := range texts[:n] {
			buf.WriteByte(',')
			_ = e.Encode(t) // a string: cannot fail
			buf.Truncate(buf.Len() - 1)
		}
		if form != nil {
			buf.WriteByte(',')
			buf.Write(form)
		}
		buf.WriteByte(']')
		return buf.String()
	}
	v := build()
	// Shorten the least important texts first (initial, placeholder, label), each at
	// most as far as needed.
	for _, i := range []int{4, 3, 1} {
		for over := runes(v) - limit; over > 0 && texts[i] != ""; over = runes(v) - limit {
			if keep := runes(texts[i]) - over; keep <= 1 {
				texts[i] = ""
			} else {
				texts[i] = truncate(texts[i], keep) // keep-1 characters and "…"
			}
			v = build()
		}
	}
	if runes(v) > limit {
		return "", fmt.Errorf("%w: action %s with its modal takes %d characters, limit %d", errValueTooLong, a.Name, runes(v), limit)
	}
	return v, nil
}

// decodeValue parses a value made by encodeValue: the action, and the modal to open
// first (nil when the action runs at once). Errors: not such a value.
func decodeValue(v string) (conversation.Action, *conversation.Modal, error) {
	var sig string
	if !strings.HasPrefix(v, "{") && !strings.HasPrefix(v, modalValuePrefix) && len(v) > sigChars {
		sig, v = v[:sigChars], v[sigChars:]
	}
	a, m, err := decodeUnsigned(v)
	if sig != "" {
		a.Sig = sig
	}
	return a, m, err
}

// decodeUnsigned is decodeValue of a value without its signature prefix.
func decodeUnsigned(v string) (conversation.Action, *conversation.Modal, error) {
	rest, isModal := strings.CutPrefix(v, modalValuePrefix)
	if !isModal {
		a, err := conversation.DecodeAction(v)
		return a, nil, err
	}
	var parts []json.RawMessage
	if err := json.Unmarshal([]byte(rest), &parts); err != nil {
		return conversation.Action{}, nil, fmt.Errorf("decode modal value: %w", err)
	}
	if len(parts) == 0 {
		return conversation.Action{}, nil, errors.New("decode modal value: no action")
	}
	a, err := conversation.DecodeAction(string(parts[0]))
	if err != nil {
		return a, nil, err
	}
	var texts [5]string
	for i, raw := range parts[1:min(len(parts), len(texts)+1)] {
		if err := json.Unmarshal(raw, &texts[i]); err != nil {
			return a, nil, fmt.Errorf("decode modal value: %w", err)
		}
	}
	m := &conversation.Modal{Title: texts[0], Label: texts[1], Submit: texts[2], Placeholder: texts[3], Initial: texts[4]}
	if len(parts) > len(texts)+1 {
		if err := decodeForm(parts[len(texts)+1], m); err != nil {
			return a, nil, err
		}
	}
	return a, m, nil
}

// form is the JSON of a modal's fields in a button's value (see encodeValue).
type form struct {
	Lang   string      `json:"l,omitempty"`
	Fields [][3]string `json:"f"`
}

// encodeForm returns m's fields and language as a value's form element, labels cut
// to an input label's 2,000 characters.
func encodeForm(m conversation.Modal) ([]byte, error) {
	f := form{Lang: m.Lang}
	for _, fd := range m.Fields {
		f.Fields = append(f.Fields, [3]string{fd.ID, truncate(fd.Label, maxInputLabelChars), fieldFlags(fd)})
	}
	var buf bytes.Buffer
	e := json.NewEncoder(&buf)
	e.SetEscapeHTML(false)
	if err := e.Encode(f); err != nil {
		return nil, fmt.Errorf("encode modal fields: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// decodeForm reads a value's form element into m.
func decodeForm(raw json.RawMessage, m *conversation.Modal) error {
	var f form
	if err := json.Unmarshal(raw, &f); err != nil {
		return fmt.Errorf("decode modal fields: %w", err)
	}
	m.Lang = f.Lang
	for _, fd := range f.Fields {
		if fd[0] == "" {
			return errors.New("decode modal fields: a field without id")
		}
		m.Fields = append(m.Fields, conversation.Field{ID: fd[0], Label: fd[1],
			Required: strings.Contains(fd[2], "r"), Number: strings.Contains(fd[2], "n")})
	}
	return nil
}

// fieldFlags returns f's flags: "r" when required, "n" when a number.
func fieldFlags(f conversation.Field) string {
	flags := ""
	if f.Required {
		flags += "r"
	}
	if f.Number {
		flags += "n"
	}
	return flags
}
