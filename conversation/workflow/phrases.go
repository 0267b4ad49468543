package workflow

import (
	"strings"
	"unicode"
)

// Decision is what a typed reply to an artifact under review asks for (docs/workflows.md,
// "Typed decisions").
type Decision string

// The decisions.
const (
	// DecisionUnknown: the phrase list does not decide; the small model does.
	DecisionUnknown  Decision = ""
	DecisionApprove  Decision = "approve"
	DecisionChange   Decision = "change"
	DecisionQuestion Decision = "question"
	// DecisionAmbiguous: the reply could be read more than one way; the person is asked.
	DecisionAmbiguous Decision = "ambiguous"
)

// approvals are whole replies that approve, in each supported language, normalized
// (normalizeReply).
var approvals = map[string]bool{}

func init() {
	for _, p := range []string{
		// en
		"approve", "approved", "i approve", "approve it", "ok", "okay", "k", "yes", "yep", "yeah", "y",
		"lgtm", "looks good", "looks good to me", "looks great", "good", "great", "perfect", "fine",
		"all good", "sounds good", "ship it", "go ahead", "good to go", "accept", "accepted",
		"confirm", "confirmed", "agreed", "done", "love it", "nice", "excellent", "thats good",
		"that works", "works for me", "go on", "continue", "next", "good job", "well done",
		// ru
		"ок", "окей", "ok", "да", "ага", "подтверждаю", "утверждаю", "одобряю", "согласен",
		"согласна", "принято", "принимаю", "годится", "отлично", "хорошо", "норм", "нормально",
		"супер", "класс", "пойдет", "подходит", "все хорошо", "все отлично", "выглядит хорошо",
		"вперед", "дальше", "продолжай", "продолжаем", "давай", "да подтверждаю", "утверждено",
		"одобрено", "так и оставим", "оставляем", "отлично спасибо", "хорошо спасибо",
		"спасибо отлично", "looks good thanks", "thanks looks good", "great thanks", "perfect thanks",
	} {
		approvals[normalizeReply(p)] = true
	}
}

// buts start the rest of a reply that asks for something on top of an approval.
var buts = []string{"but", "except", "however", "though", "only", "just", "although", "and",
	"но", "только", "кроме", "однако", "хотя", "и", "а"}

// thanks are whole replies of thanks, normalized, that may follow an approval and a
// conjunction ("looks good, and thank you").
var thanks = map[string]bool{"thanks": true, "thank you": true, "thx": true, "thanks a lot": true,
	"thank you so much": true, "спасибо": true, "благодарю": true, "спасибо большое": true, "большое спасибо": true}

// questionStarts begin a question about the artifact rather than a request to change it.
var questionStarts = []string{"why", "what does", "what is", "whats", "who is", "where does",
	"is this", "is it", "does this", "does it", "how does", "how is",
	"почему", "зачем", "что значит", "что такое", "что это", "откуда", "кто такой", "это правда"}

// approvalEmoji approve when a reply is only made of them.
var approvalEmoji = []string{"👍", "✅", "👌", "🙌", "💯", "🚀", ":+1:", ":thumbsup:", ":white_check_mark:", ":ok_hand:"}

// ClassifyReply decides from a fixed list of common phrases (English and Russian)
// what a typed reply to an artifact under review asks for: an approval alone approves;
// an approval followed by "but …" asks for a change; a reply opening as a question
// about the text ("why …?", "почему …?") is a question; an approval phrase asked as a
// question ("ok?") is ambiguous. Anything else is DecisionUnknown, for the model.
func ClassifyReply(text string) Decision {
	t := strings.TrimSpace(text)
	if t == "" {
		return DecisionUnknown
	}
	onlyEmoji := t
	for _, e := range approvalEmoji {
		onlyEmoji = strings.ReplaceAll(onlyEmoji, e, "")
	}
	if onlyEmoji != t && strings.TrimFunc(onlyEmoji, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsPunct(r) || r == '\uFE0F' || unicode.Is(unicode.Sk, r)
	}) == "" {
		return DecisionApprove
	}
	asked := strings.HasSuffix(strings.TrimRightFunc(onlyEmoji, func(r rune) bool { return unicode.IsSpace(r) || r == '!' || r == '.' }), "?")
	n := normalizeReply(onlyEmoji)
	if n == "" {
		return DecisionUnknown
	}
	if approvals[n] {
		if asked {
			return DecisionAmbiguous
		}
		return DecisionApprove
	}
	words := strings.Fields(n)
	// An approval followed by more: "approve but change the title", "ок, только короче".
	for i := len(words) - 1; i >= 1; i-- {
		if approvals[strings.Join(words[:i], " ")] {
			rest := words[i:]
			for _, b := range buts {
				if rest[0] == b {
					// "approve and continue", "да, и спасибо": more approval or
					// thanks, not a change.
					if after := strings.Join(rest[1:], " "); approvals[after] || thanks[after] {
						return DecisionApprove
					}
					return DecisionChange
				}
			}
			break
		}
	}
	if asked {
		for _, q := range questionStarts {
			if n == q || strings.HasPrefix(n, q+" ") {
				return DecisionQuestion
			}
		}
	}
	return DecisionUnknown
}

// normalizeReply lower-cases text, folds ё to е, drops punctuation, symbols and
// emoji, and collapses spaces.
func normalizeReply(text string) string {
	var b strings.Builder
	space := true
	for _, r := range strings.ToLower(text) {
		switch {
		case r == 'ё':
			r = 'е'
		case r == '\'' || r == '’':
			continue // "that's" → "thats"
		}
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
			space = false
			continue
		}
		if !space {
			b.WriteByte(' ')
			space = true
		}
	}
	return strings.TrimSpace(b.String())
}
