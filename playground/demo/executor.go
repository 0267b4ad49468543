package demo

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"
	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/internal/textcut"
	"github.com/threadwright/threadwright/prompts"
)

// The executor's tool loop (agents.Executor): calling current_time, calculate
// or search_knowledge when a question asks for them, answering from their
// results, and the canned chat reply.

// toolLoop answers a request of the ReAct executor: it calls current_time or calculate
// when the question asks for them, answers from the tool results once they are in,
// and otherwise gives the demo's canned reply.
func toolLoop(req openai.ChatCompletionRequest, required bool) (string, []openai.ToolCall) {
	msgs := req.Messages
	if len(msgs) > 0 && msgs[len(msgs)-1].Role == openai.ChatMessageRoleTool {
		return answerFromTools(msgs), nil
	}
	q := lastUserText(msgs)
	if text, ok := focusReply(msgs, q); ok {
		return text, nil
	}
	var calls []openai.ToolCall
	for _, c := range plannedCalls(q, req.Tools, groundsFacts(msgs)) {
		calls = append(calls, toolCall(len(msgs), len(calls)+1, c.name, c.args))
	}
	if len(calls) == 0 && required {
		for _, t := range req.Tools {
			if t.Function != nil {
				calls = append(calls, toolCall(len(msgs), 1, t.Function.Name, marshal(exampleValue(schemaOf(t.Function), t.Function.Name))))
				break
			}
		}
	}
	if len(calls) > 0 {
		return "", calls
	}
	return chatReply(q), nil
}

// plainAnswer answers a request without tools: the summarizer, the executor's final
// answer after its step limit, or a chat message.
func plainAnswer(req openai.ChatCompletionRequest) (string, []openai.ToolCall) {
	msgs := req.Messages
	if len(msgs) > 0 && msgs[0].Role == openai.ChatMessageRoleSystem && strings.HasPrefix(messageText(msgs[0]), "You keep the running summary") {
		return threadSummary(msgs), nil
	}
	if text, ok := plannerText(lastUserText(msgs)); ok { // planner.go
		return text, nil
	}
	for _, m := range msgs {
		if m.Role == openai.ChatMessageRoleTool {
			return answerFromTools(msgs), nil
		}
	}
	if text, ok := focusReply(msgs, lastUserText(msgs)); ok {
		return text, nil
	}
	return chatReply(lastUserText(msgs)), nil
}

// backReferences are the words of a question about the conversation's focus.
var backReferences = []string{"this one", "that one", "this item", "is it ", "does it ", "about it", "этот", "эта", "это ", "он ", "она "}

// focusReply answers a question q that refers back ("is this one compatible?") when
// the request carries the conversation's focus (agents.FocusMessage): it names the
// item and the details the tools reported, since the demo cannot judge more.
func focusReply(msgs []openai.ChatCompletionMessage, q string) (string, bool) {
	low := strings.ToLower(q) + " "
	if !containsAny(low, backReferences) {
		return "", false
	}
	var block string
	for _, m := range msgs {
		if m.Role == openai.ChatMessageRoleSystem && strings.Contains(m.Content, `<tool_output name="conversation_focus"`) {
			block = agents.ToolOutputBody(m.Content[strings.Index(m.Content, "<tool_output"):])
		}
	}
	if block == "" {
		return "", false
	}
	fields := map[string]string{}
	var details []string
	for line := range strings.Lines(block) {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ": ")
		if !ok {
			continue
		}
		switch k {
		case "id", "title", "type":
			fields[k] = v
		default:
			details = append(details, fmt.Sprintf("- %s: %s", k, v))
		}
	}
	name := orDefault(fields["title"], fields["id"])
	ru := isRussian(q)
	text := pick2(ru, fmt.Sprintf("You mean **%s** (`%s`), what this conversation is about now.", name, fields["id"]),
		fmt.Sprintf("Вы про **%s** (`%s`): об этом сейчас разговор.", name, fields["id"]))
	if len(details) > 0 {
		text += pick2(ru, " What the tools reported about it:\n", " Что о нём сообщили инструменты:\n") + strings.Join(details, "\n")
	}
	return text + "\n\n" + pick2(ru, "_I'm the offline demo model: I can name the item, but not judge more than that._",
		"_Я офлайн-демомодель: могу назвать предмет, но судить о большем не могу._"), true
}

type plannedCall struct{ name, args string }

var (
	timeQuestions = []string{
		"what time", "time is it", "current time", "time now", "the time in", "what's the time", "whats the time",
		"what day is", "today's date", "todays date", "what date", "date today", "what is the date", "what's the date",
		"который час", "сколько времени", "сколько сейчас времени", "текущее время", "какое сегодня число",
		"какой сегодня день", "какая сегодня дата", "какое число", "время в ", "какое сейчас время",
	}
	calcWords = []string{
		"what is", "what's", "whats", "calculate", "compute", "how much is", "evaluate", "solve", "=",
		"сколько будет", "посчитай", "вычисли", "сколько", "чему равно",
	}
	cityZones = []struct{ stem, zone string }{
		{"new york", "America/New_York"}, {"нью-йорк", "America/New_York"}, {"нью йорк", "America/New_York"},
		{"san francisco", "America/Los_Angeles"}, {"los angeles", "America/Los_Angeles"},
		{"london", "Europe/London"}, {"лондон", "Europe/London"},
		{"paris", "Europe/Paris"}, {"париж", "Europe/Paris"},
		{"berlin", "Europe/Berlin"}, {"берлин", "Europe/Berlin"},
		{"moscow", "Europe/Moscow"}, {"москв", "Europe/Moscow"},
		{"tokyo", "Asia/Tokyo"}, {"токио", "Asia/Tokyo"},
		{"sydney", "Australia/Sydney"}, {"сидне", "Australia/Sydney"},
		{"singapore", "Asia/Singapore"}, {"сингапур", "Asia/Singapore"},
	}
	ianaRe   = regexp.MustCompile(`\b[A-Z][A-Za-z_]+/[A-Z][A-Za-z_]+\b`)
	timesRe  = regexp.MustCompile(`(\d)\s*[xXхХ]\s*(\d)`)
	exprRe   = regexp.MustCompile(`[-+(]*\s*\d[\d\s.()+\-*/%]*`)
	binaryRe = regexp.MustCompile(`\d\s*\)*\s*[-+*/%]\s*\(*\s*[-+]?\s*\d`)
)

// groundsFacts reports whether the system prompt carries the executor's grounding
// rule (prompts.GroundingRule): by default it does, and a deployment's own tool rules
// may relax it (docs/tools.md, "Executor instructions").
func groundsFacts(msgs []openai.ChatCompletionMessage) bool {
	return len(msgs) > 0 && msgs[0].Role == openai.ChatMessageRoleSystem && strings.Contains(messageText(msgs[0]), prompts.GroundingRule)
}

// plannedCalls returns the tool calls a question asks for, among the offered tools:
// current_time and calculate when it asks for them, and, under the grounding rule
// (ground), a search of the knowledge base, else of the web, for any other question.
func plannedCalls(q string, tools []openai.Tool, ground bool) []plannedCall {
	var out []plannedCall
	low := strings.ToLower(q)
	if findTool(tools, "current_time") != nil && containsAny(low, timeQuestions) {
		args := map[string]string{}
		if z := timeZone(q); z != "" {
			args["timezone"] = z
		}
		out = append(out, plannedCall{"current_time", marshal(args)})
	}
	if findTool(tools, "calculate") != nil {
		if expr := expression(q); expr != "" {
			out = append(out, plannedCall{"calculate", marshal(map[string]string{"expression": expr})})
		}
	}
	if len(out) > 0 || !ground {
		return out
	}
	for _, name := range []string{searchKnowledgeTool, webSearchTool} {
		if findTool(tools, name) == nil {
			continue
		}
		if query := knowledgeQuery(q); query != "" {
			out = append(out, plannedCall{name, marshal(map[string]string{"query": query})})
		}
		break
	}
	return out
}

func timeZone(q string) string {
	if z := ianaRe.FindString(q); z != "" {
		return z
	}
	low := strings.ToLower(q)
	for _, c := range cityZones {
		if strings.Contains(low, c.stem) {
			return c.zone
		}
	}
	if strings.Contains(low, "utc") || strings.Contains(low, "gmt") {
		return "UTC"
	}
	return ""
}

// expression returns the arithmetic expression of a question such as "what is 17*23?",
// or "" when it has none (or reads like a date or a plain number).
func expression(q string) string {
	s := strings.NewReplacer("×", "*", "·", "*", "÷", "/", "−", "-", "–", "-").Replace(q)
	s = timesRe.ReplaceAllString(s, "$1*$2")
	best := ""
	for _, m := range exprRe.FindAllString(s, -1) {
		m = strings.TrimSpace(strings.TrimRight(strings.TrimSpace(m), ".-+*/%("))
		if binaryRe.MatchString(m) && len(m) > len(best) {
			best = m
		}
	}
	if best == "" || strings.Count(best, "(") != strings.Count(best, ")") {
		return ""
	}
	rest := strings.TrimSpace(strings.Replace(s, best, "", 1))
	if containsAny(strings.ToLower(q), calcWords) || utf8.RuneCountInString(rest) <= 3 {
		return best
	}
	return ""
}

// answerFromTools writes the answer from the results of the last tool calls.
func answerFromTools(msgs []openai.ChatCompletionMessage) string {
	at := -1
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == openai.ChatMessageRoleAssistant && len(msgs[i].ToolCalls) > 0 {
			at = i
			break
		}
	}
	if at < 0 {
		return chatReply(lastUserText(msgs))
	}
	ru := isRussian(lastUserText(msgs[:at]))
	calls := map[string]openai.ToolCall{}
	for _, tc := range msgs[at].ToolCalls {
		calls[tc.ID] = tc
	}
	var lines []string
	for _, m := range msgs[at+1:] {
		if m.Role != openai.ChatMessageRoleTool {
			continue
		}
		tc := calls[m.ToolCallID]
		lines = append(lines, toolLine(tc, strings.TrimSpace(agents.ToolOutputBody(messageText(m))), ru))
	}
	if len(lines) == 0 {
		return chatReply(lastUserText(msgs))
	}
	footer := "_I'm the offline demo model: the values above come from threadwright's real tools; only the wording is canned._"
	if ru {
		footer = "_Я офлайн-демомодель: значения выше дали настоящие инструменты threadwright, заготовлены только формулировки._"
	}
	return strings.Join(lines, "\n") + "\n\n" + footer
}

func toolLine(tc openai.ToolCall, result string, ru bool) string {
	name := tc.Function.Name
	if msg, ok := strings.CutPrefix(result, "error:"); ok {
		if ru {
			return fmt.Sprintf("Инструмент `%s` не сработал: %s", name, strings.TrimSpace(msg))
		}
		return fmt.Sprintf("The `%s` tool failed: %s", name, strings.TrimSpace(msg))
	}
	switch name {
	case "current_time":
		if line, ok := timeLine(result, ru); ok {
			return line
		}
	case searchKnowledgeTool:
		return knowledgeLine(result, ru)
	case "calculate":
		var args struct {
			Expression string `json:"expression"`
		}
		_ = json.Unmarshal([]byte(tc.Function.Arguments), &args)
		return fmt.Sprintf("`%s` = **%s**", args.Expression, result) // the same in every language
	}
	if ru {
		return fmt.Sprintf("Инструмент `%s` ответил: %s", name, textcut.Ellipsis(oneLine(result), 300, unicode.IsSpace))
	}
	return fmt.Sprintf("The `%s` tool says: %s", name, textcut.Ellipsis(oneLine(result), 300, unicode.IsSpace))
}

var (
	ruWeekdays = map[string]string{
		"Monday": "понедельник", "Tuesday": "вторник", "Wednesday": "среда", "Thursday": "четверг",
		"Friday": "пятница", "Saturday": "суббота", "Sunday": "воскресенье",
	}
	ruMonths = strings.NewReplacer(
		"January", "января", "February", "февраля", "March", "марта", "April", "апреля", "May", "мая",
		"June", "июня", "July", "июля", "August", "августа", "September", "сентября", "October", "октября",
		"November", "ноября", "December", "декабря")
)

// timeLine reads current_time's result, "2024-05-14T11:30:00+02:00 (Tuesday, 14 May
// 2024, 11:30 CEST, Europe/Paris)".
func timeLine(result string, ru bool) (string, bool) {
	i := strings.Index(result, " (")
	if i < 0 || !strings.HasSuffix(result, ")") {
		return "", false
	}
	parts := strings.Split(result[i+2:len(result)-1], ", ")
	if len(parts) != 4 {
		return "", false
	}
	weekday, date, clock, zone := parts[0], parts[1], parts[2], parts[3]
	if ru {
		if strings.HasSuffix(clock, " "+zone) {
			return fmt.Sprintf("Сейчас **%s**, %s, %s.", clock, orDefault(ruWeekdays[weekday], weekday), ruMonths.Replace(date)), true
		}
		return fmt.Sprintf("Сейчас **%s**, %s, %s (%s).", clock, orDefault(ruWeekdays[weekday], weekday), ruMonths.Replace(date), zone), true
	}
	if strings.HasSuffix(clock, " "+zone) { // "22:47 UTC": the zone once
		return fmt.Sprintf("It's **%s** on %s, %s.", clock, weekday, date), true
	}
	return fmt.Sprintf("It's **%s** on %s, %s (%s).", clock, weekday, date, zone), true
}

// chatReply is the demo's answer to a message it cannot really answer.
func chatReply(q string) string {
	ru := isRussian(q)
	low := strings.ToLower(oneLine(q))
	words := tokens(low)
	first := ""
	if len(words) > 0 {
		first = words[0]
	}
	var lead string
	switch {
	case q == "":
		lead = pick2(ru, "Hi! I'm threadwright's **offline demo model**.", "Привет! Я **офлайн-демомодель** threadwright.")
	case containsAny(low, helpWords):
		lead = pick2(ru,
			"I'm threadwright's **offline demo model**: I run without a network or an API key, so my answers are canned. Here is what you can try.",
			"Я **офлайн-демомодель** threadwright: работаю без сети и без API-ключа, поэтому мои ответы заготовлены заранее. Вот что можно попробовать.")
	case slices.Contains(greetings, first) || containsAny(low, greetings[3:]):
		lead = pick2(ru,
			"Hi! I'm threadwright's **offline demo model**: no network, no API key, canned answers.",
			"Привет! Я **офлайн-демомодель** threadwright: без сети, без API-ключа, с заготовленными ответами.")
	case containsAny(low, thankWords):
		lead = pick2(ru, "You're welcome!", "Пожалуйста!")
	default:
		lead = pick2(ru,
			fmt.Sprintf("I'm threadwright's **offline demo model**, so I can't really answer “%s”: there is no language model behind me, only canned replies. Set `OPENAI_API_KEY` (or `OPENAI_BASE_URL` for a local server) to get real answers.", textcut.Ellipsis(oneLine(q), 80, unicode.IsSpace)),
			fmt.Sprintf("Я **офлайн-демомодель** threadwright, поэтому по-настоящему ответить на «%s» не могу: за мной нет языковой модели, только заготовленные ответы. Задайте `OPENAI_API_KEY` (или `OPENAI_BASE_URL` для локального сервера), чтобы получать настоящие ответы.", textcut.Ellipsis(oneLine(q), 80, unicode.IsSpace)))
	}
	tips := pick2(ru,
		"What works offline:\n- `/threadwright start product-brief`: decide a product brief step by step, with options to pick, reviews, changes and a final report;\n- `/threadwright start proposal`: write a grant proposal the same way;\n- `/threadwright start blog`: pick an outline, then watch a blog article researched and drafted section by section;\n- ask *what time is it?* or *what is 17 * 23?* to watch a tool call.",
		"Что работает без сети:\n- `/threadwright start product-brief`: продуктовый бриф шаг за шагом, с вариантами на выбор, проверкой, правками и итоговым отчётом;\n- `/threadwright start proposal`: так же пишется заявка на грант;\n- `/threadwright start blog`: выберите план, и статья для блога будет исследована и написана раздел за разделом;\n- спросите *который час?* или *сколько будет 17 * 23?*, чтобы увидеть вызов инструмента.")
	return lead + "\n\n" + tips
}
