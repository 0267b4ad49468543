// Package focus keeps a conversation's current focus (conversation.State.Focus): the
// item the conversation is about now, with its attributes as tools reported them, so
// that "this one" or "is it compatible?" resolve (docs/architecture.md, "Assistant
// pipeline"). Next is the pure rule that moves it after a turn; the assistant
// (conversation/assistant) applies it and the executor (package agents) shows the
// focus to the model.
package focus

import (
	"cmp"
	"maps"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/threadwright/threadwright/conversation"
)

// Bounds of a conversation's focus (conversation.State.Focus), which is rewritten with the
// conversation's state on every turn.
const (
	// MaxAttributes bounds an entity's attributes.
	MaxAttributes = 16
	// MaxAttributeKey and MaxAttributeValue bound one attribute, in bytes.
	MaxAttributeKey   = 64
	MaxAttributeValue = 256
)

// Next returns the conversation's focus after a turn (docs/architecture.md,
// "Assistant pipeline"): old is the focus before it, said the person's words, session
// the session context before it (State.Entities), found the entities the turn's tools
// returned, in order, and outOfScope the items they marked out of scope. The rules, in
// order:
//
//  1. an entity found whose id (as a word) or title (four letters or more) the person's
//     words name becomes the focus;
//  2. else, when the tools found exactly one entity (by id), it does;
//  3. else, when the old focus is among those found, it stays, refreshed;
//  4. else, an entity of the session context the person's words name does;
//  5. else the old focus stays (nil when there was none).
//
// An entity that becomes the focus again (the same id) keeps the old attributes the
// new report does not replace; otherwise it has only its own. The focus is untrusted
// (Entity.Untrusted; it taints the turn it is shown to) when untrusted content reported
// it or, for the same entity, the old one. A focus marked out of scope is dropped (nil). It never changes its arguments.
func Next(old *conversation.Entity, said string, session, found, outOfScope []conversation.Entity) *conversation.Entity {
	next := pickFocus(old, said, session, found)
	if next == nil {
		return nil
	}
	for _, e := range outOfScope {
		if e.ID == next.ID {
			return nil
		}
	}
	return next
}

// pickFocus is Next without the out-of-scope rule.
func pickFocus(old *conversation.Entity, said string, session, found []conversation.Entity) *conversation.Entity {
	found = mergeByID(found)
	for _, e := range found {
		if names(said, e) {
			return refocus(old, e)
		}
	}
	if len(found) == 1 {
		return refocus(old, found[0])
	}
	for _, e := range found {
		if old != nil && e.ID == old.ID {
			return refocus(old, e)
		}
	}
	for _, e := range session {
		if e.ID != "" && names(said, e) {
			return refocus(old, e)
		}
	}
	if old == nil {
		return nil
	}
	return refocus(nil, *old)
}

// mergeByID returns found with one entity per id, in the order of first appearance,
// later reports' attributes and non-empty fields added to earlier ones. Entities
// without an id are left out.
func mergeByID(found []conversation.Entity) []conversation.Entity {
	var out []conversation.Entity
	at := map[string]int{}
	for _, e := range found {
		if e.ID = strings.TrimSpace(e.ID); e.ID == "" {
			continue
		}
		i, ok := at[e.ID]
		if !ok {
			at[e.ID] = len(out)
			out = append(out, conversation.Entity{ID: e.ID})
			i = len(out) - 1
		}
		merged := refocus(&out[i], e)
		out[i] = *merged
	}
	return out
}

// refocus returns e as the focus: its id, its non-empty title and type (else old's,
// when old is the same entity) and its attributes over old's, bounded; Reason is
// dropped. It is untrusted (Entity.Trust) when e or the same old entity is: what
// untrusted content said may be kept. old may be nil.
func refocus(old *conversation.Entity, e conversation.Entity) *conversation.Entity {
	f := &conversation.Entity{ID: e.ID, Title: e.Title, Type: e.Type, Trust: e.Trust}
	attrs := map[string]string{}
	untrusted := e.Untrusted()
	if old != nil && old.ID == e.ID {
		f.Title, f.Type, f.Trust = cmp.Or(e.Title, old.Title), cmp.Or(e.Type, old.Type), cmp.Or(e.Trust, old.Trust)
		maps.Copy(attrs, boundAttributes(old.Attributes))
		untrusted = untrusted || old.Untrusted()
	}
	if untrusted {
		f.Trust = conversation.EntityUntrusted // what untrusted content said may be kept
	}
	fresh := boundAttributes(e.Attributes)
	if len(attrs)+len(fresh) > MaxAttributes {
		attrs = map[string]string{} // the new report wins over the old one whole
	}
	maps.Copy(attrs, fresh)
	if len(attrs) > 0 {
		f.Attributes = attrs
	}
	return f
}

// boundAttributes returns attrs with keys and values made one line and cut to
// MaxAttributeKey and MaxAttributeValue bytes, empty ones left out, at most
// MaxAttributes of them (the first keys in sorted order).
func boundAttributes(attrs map[string]string) map[string]string {
	if len(attrs) == 0 {
		return nil
	}
	out := map[string]string{}
	keys := make([]string, 0, len(attrs))
	for k := range attrs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		key, v := cutBytes(oneLine(k), MaxAttributeKey), cutBytes(oneLine(attrs[k]), MaxAttributeValue)
		if key == "" || v == "" || len(out) == MaxAttributes {
			continue
		}
		out[key] = v
	}
	return out
}

// names reports whether the person's words said name e: its id as a word, or its
// title of four letters or more, in any case.
func names(said string, e conversation.Entity) bool {
	low := strings.ToLower(said)
	if id := strings.ToLower(strings.TrimSpace(e.ID)); id != "" && containsWord(low, id) {
		return true
	}
	title := strings.ToLower(oneLine(e.Title))
	return utf8.RuneCountInString(title) >= 4 && containsWord(low, title)
}

// containsWord reports whether s holds w with no letter or digit right before or
// after it.
func containsWord(s, w string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], w)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(w)
		before, _ := utf8.DecodeLastRuneInString(s[:start])
		after, _ := utf8.DecodeRuneInString(s[end:])
		if !isWordRune(before) && !isWordRune(after) {
			return true
		}
		i = start + 1
	}
}

func isWordRune(r rune) bool {
	return r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r))
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// cutBytes cuts s to at most n bytes, at a rune boundary.
func cutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
