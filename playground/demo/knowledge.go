package demo

import (
	"regexp"
	"strings"
	"unicode"

	"github.com/threadwright/threadwright/internal/textcut"
)

// searchKnowledgeTool is the name of toolbox.KnowledgeTool (package agents/toolbox).
const searchKnowledgeTool = "search_knowledge"

var (
	// questionWords begin a question the knowledge base may answer.
	questionWords = []string{
		"how", "what", "when", "where", "who", "which", "why", "can", "could", "do", "does", "is", "are",
		"should", "may", "must", "will", "tell", "explain", "describe", "find",
		"как", "что", "когда", "где", "кто", "какой", "какая", "какие", "каков", "почему", "зачем", "можно",
		"нужно", "сколько", "расскажи", "объясни", "найди",
	}
	// queryStopWords are left out of the demo's search query: the search weighs words by
	// rarity, but a shorter query reads better in the thinking steps.
	queryStopWords = map[string]bool{
		"a": true, "an": true, "the": true, "is": true, "are": true, "was": true, "be": true, "do": true, "does": true,
		"did": true, "i": true, "we": true, "you": true, "my": true, "our": true, "your": true, "me": true, "us": true,
		"how": true, "what": true, "when": true, "where": true, "who": true, "which": true, "why": true, "can": true,
		"could": true, "should": true, "may": true, "must": true, "will": true, "would": true, "to": true, "of": true,
		"in": true, "on": true, "at": true, "for": true, "about": true, "with": true, "and": true, "or": true,
		"it": true, "this": true, "that": true, "there": true, "get": true, "tell": true, "explain": true,
		"describe": true, "find": true, "please": true, "much": true, "many": true, "long": true, "here": true,
		"как": true, "что": true, "когда": true, "где": true, "кто": true, "почему": true, "зачем": true, "можно": true,
		"нужно": true, "сколько": true, "у": true, "в": true, "на": true, "о": true, "об": true, "и": true, "или": true,
		"мне": true, "нам": true, "мы": true, "я": true, "ли": true, "расскажи": true, "объясни": true, "найди": true,
	}
	wordRe = regexp.MustCompile(`[\p{L}\p{N}][\p{L}\p{N}'-]*`)
	// passageRe is the first passage of a search_knowledge result: its numbered
	// source line and its text, up to the blank line after it.
	passageRe = regexp.MustCompile(`(?s)\[1\] ([^\n]+)\n(.+?)(?:\n\n|$)`)
)

// knowledgeQuery returns the query the demo searches the knowledge base with for the
// question q, or "" when q is not a question it could answer from it: a greeting,
// thanks, a request for help, or no question at all ("?" at its end or a question
// word first).
func knowledgeQuery(q string) string {
	low := strings.ToLower(oneLine(q))
	words := wordRe.FindAllString(low, -1)
	if len(words) == 0 || containsAny(low, helpWords) || containsAny(low, thankWords) {
		return ""
	}
	if !strings.HasSuffix(low, "?") && !containsWord(questionWords, words[0]) {
		return ""
	}
	var keep []string
	for _, w := range words {
		if !queryStopWords[w] && !strings.HasPrefix(w, "u0") && len(keep) < 8 {
			keep = append(keep, w)
		}
	}
	if len(keep) == 0 || containsWord(greetings, words[0]) && len(keep) < 2 {
		return ""
	}
	return strings.Join(keep, " ")
}

// knowledgeLine answers from a search_knowledge result: the first passage's first
// sentences, cited as [1] (the reply lists the source under the answer), or, when
// nothing was found, a line saying so and how to add documents.
func knowledgeLine(result string, ru bool) string {
	m := passageRe.FindStringSubmatch(result)
	if m == nil {
		return pick2(ru,
			"The knowledge base has nothing on this. Add documents with `threadwright ingest --dev PATH` and restart `threadwright dev`.",
			"В базе знаний об этом ничего нет. Добавьте документы командой `threadwright ingest --dev PATH` и перезапустите `threadwright dev`.")
	}
	text := textcut.Ellipsis(oneLine(firstSentences(m[2], 2)), 400, unicode.IsSpace)
	return pick2(ru, "From the knowledge base: ", "Из базы знаний: ") + text + " [1]"
}

var (
	greetings  = []string{"hi", "hello", "hey", "good morning", "good afternoon", "good evening", "привет", "здравствуй", "добрый день", "доброе утро", "добрый вечер"}
	helpWords  = []string{"help", "what can you do", "who are you", "what are you", "how does this work", "помощь", "помоги", "что ты умеешь", "что умеешь", "кто ты", "как это работает"}
	thankWords = []string{"thank", "thanks", "cheers", "спасибо", "благодарю"}
)
