package demo

import (
	"strconv"
	"strings"
	"unicode"

	openai "github.com/sashabaranov/go-openai"
	"github.com/threadwright/threadwright/conversation/workflow"
	"github.com/threadwright/threadwright/internal/textcut"
)

// The forced-function request of a workflow task, as read from its prompts:
// what the other files' jobs answer from (options.go, write.go, review.go,
// blog_task.go, blog_brief.go, blog_article.go).

// workflowTask is a forced-function request, read from its messages: the first system
// message (the workflow_system template) and the first user message (the task).
type workflowTask struct {
	system, text string
	schema       map[string]any

	workflow      string // "## The document: …"
	artifactID    string // "## The artifact now: Title (`id`)"
	artifactTitle string
	description   string            // the artifact's description, one line
	approved      map[string]string // id → approved text
	approvedTitle map[string]string // id → title
	approvedOrder []string

	theme   *theme           // nil for a custom workflow
	content *artifactContent // nil for an artifact the theme does not know

	topic string   // the workflow's topic input, "" when none (see topic.go)
	item  *item    // the item of a foreach artifact's task; nil for the whole artifact
	batch []item   // the items of a batch write (prompt.go); nil for others
	blog  blogKind // the blog workflow's artifact, or blogNone

	results []searchResult // the search tools' results in the request (research_tools.go)
}

// themes maps a built-in workflow's title (prompts/workflows/*.yaml) to its content.
var themes = map[string]*theme{
	"Product brief":  &productBrief,
	"Grant proposal": &grantProposal,
	blogWorkflow:     &blogTheme, // its outline's options; see blog.go
}

func readTask(req openai.ChatCompletionRequest, fn *openai.FunctionDefinition) *workflowTask {
	t := &workflowTask{approved: map[string]string{}, approvedTitle: map[string]string{}}
	for _, m := range req.Messages {
		switch {
		case m.Role == openai.ChatMessageRoleSystem && t.system == "":
			t.system = messageText(m)
		case m.Role == openai.ChatMessageRoleUser && t.text == "":
			t.text = messageText(m)
		}
	}
	t.schema = schemaOf(fn)
	if m := documentRe.FindStringSubmatch(t.system); m != nil {
		t.workflow = strings.TrimSpace(m[1])
	}
	if m := artifactRe.FindStringSubmatch(t.system); m != nil {
		t.artifactTitle, t.artifactID = strings.TrimSpace(m[1]), m[2]
		t.description = artifactDescription(t.system[strings.Index(t.system, m[0])+len(m[0]):])
	}
	t.readApproved()
	if t.batch = readBatch(t.text); t.batch == nil {
		t.item = readItem(t.text)
	}
	t.results = searchResults(req.Messages)
	t.theme = themes[t.workflow]
	if t.theme != nil {
		if c, ok := t.theme.Artifacts[t.artifactID]; ok {
			t.content = &c
		}
	}
	if t.workflow == blogWorkflow {
		t.blog = blogKindOf(t.artifactID, t.artifactTitle)
		if t.blog == blogPlan && t.content == nil {
			c := blogPlanContent
			t.content = &c
		}
	}
	t.topic = readTopic(t.system)
	t.onTopic()
	return t
}

// readApproved reads the approved artifacts of the system prompt: the full texts of
// "## Approved artifacts to build on" and the excerpts of "## Other approved
// artifacts".
func (t *workflowTask) readApproved() {
	var section, id string
	var buf []string
	flush := func() {
		if id != "" {
			t.approved[id] = strings.TrimSpace(strings.Join(buf, "\n"))
		}
		id, buf = "", nil
	}
	for _, l := range strings.Split(t.system, "\n") {
		if strings.HasPrefix(l, "## ") && (!strings.HasPrefix(section, "## Approved artifacts") || isPromptSection(l)) {
			flush()
			section = l
			continue
		}
		switch {
		case strings.HasPrefix(section, "## Approved artifacts"):
			if m := depRe.FindStringSubmatch(l); m != nil {
				flush()
				id = m[2]
				t.addApproved(m[2], m[1])
				continue
			}
			if id != "" {
				buf = append(buf, l)
			}
		case strings.HasPrefix(section, "## Other approved artifacts"):
			if m := otherRe.FindStringSubmatch(l); m != nil {
				t.addApproved(m[2], m[1])
				t.approved[m[2]] = m[3]
			}
		}
	}
	flush()
}

func (t *workflowTask) addApproved(id, title string) {
	if _, ok := t.approvedTitle[id]; !ok {
		t.approvedOrder = append(t.approvedOrder, id)
	}
	t.approvedTitle[id] = title
}

// chosen returns the canned option whose title the approved text of artifact id
// contains: the option the team chose for it.
func (t *workflowTask) chosen(id string) (option, bool) {
	if t.theme == nil {
		return option{}, false
	}
	text := strings.ToLower(t.approved[id])
	if text == "" {
		return option{}, false
	}
	for _, o := range t.theme.Artifacts[id].Options {
		if strings.Contains(text, strings.ToLower(o.Title)) {
			return o, true
		}
	}
	return option{}, false
}

// fill replaces the placeholders {artifact_id} of s with the phrases of the chosen
// options, or the theme's defaults.
func (t *workflowTask) fill(s string) string {
	if t.theme == nil || !strings.Contains(s, "{") {
		return s
	}
	var pairs []string
	for id, def := range t.theme.Defaults {
		v := def
		if o, ok := t.chosen(id); ok && o.Phrase != "" {
			v = o.Phrase
		}
		pairs = append(pairs, "{"+id+"}", v)
	}
	return strings.NewReplacer(pairs...).Replace(s)
}

// approvedOf returns the approved text of the blog artifact of kind k in the prompt.
func (t *workflowTask) approvedOf(k blogKind) string {
	for _, id := range t.approvedOrder {
		if blogKindOf(id, t.approvedTitle[id]) == k {
			return t.approved[id]
		}
	}
	return ""
}

// itemTitle is the title of the request's item, or of the artifact without one.
func (t *workflowTask) itemTitle() string {
	if t.item != nil && t.item.Title != "" {
		return t.item.Title
	}
	return orDefault(t.artifactTitle, "this section")
}

// defaultWordcount is the article's length when the workflow has no wordcount input
// (blog.yaml's default).
const defaultWordcount = 1500

// wordcount is the article's target length: the wordcount input, within 100 to 10,000
// words, or defaultWordcount.
func (t *workflowTask) wordcount() int {
	m := numberRe.FindString(readInput(t.system, "wordcount"))
	n, err := strconv.Atoi(strings.ReplaceAll(m, ",", ""))
	if err != nil || n <= 0 {
		return defaultWordcount
	}
	return min(max(n, 100), 10000)
}

// angles are the blog's angles for this task: on its topic, or the canned ones.
func (t *workflowTask) angles() []blogAngle {
	if t.topic != "" && !ownTopic(blogWorkflow, t.topic) {
		return topicAngles(t.topic)
	}
	return blogAngles
}

// onTopic adapts the task to a topic its workflow's canned content is not about: the
// blog proposes and writes its outline from the topical angles; another built-in
// workflow is written as a custom one would be, with the topic in its options and
// drafts.
func (t *workflowTask) onTopic() {
	if t.topic == "" || t.theme == nil || ownTopic(t.workflow, t.topic) {
		return
	}
	if t.workflow == blogWorkflow {
		if t.blog == blogPlan {
			t.content = &artifactContent{Options: anglesOptions(t.angles())}
		}
		return
	}
	t.theme, t.content = nil, nil
}

// subject is what the document is about, for a search query: the topic input, else
// the canned subject of a built-in workflow, else its title.
func (t *workflowTask) subject() string {
	switch {
	case t.topic != "" && !ownTopic(t.workflow, t.topic):
		return t.topic
	case t.workflow == blogWorkflow:
		return "async stand-ups small teams"
	case t.workflow == "Grant proposal":
		return "Millbrook community solar energy poverty tenants"
	case t.topic != "":
		return t.topic
	}
	return orDefault(t.workflow, "the document")
}

// searchQueries are the queries of the research: the recovery agent's (the lines
// under "Search for:" in the instructions), else per item the queries its outline
// section lists (workflow.SearchQueries), or its title and the subject, else one
// for the artifact.
func (t *workflowTask) searchQueries() []string {
	if qs := bulletsUnder(quotedAfter(t.text, "The team's instructions:"), "Search for:"); len(qs) > 0 {
		return qs[:min(len(qs), 3)]
	}
	subject := t.subject()
	if len(t.batch) > 0 {
		var out []string
		for _, it := range t.batch[:min(len(t.batch), maxSearchItems)] {
			if qs := workflow.SearchQueries(it.Brief); len(qs) > 0 {
				out = append(out, qs...)
				continue
			}
			out = append(out, it.Title+" "+subject)
		}
		return out
	}
	if t.item != nil {
		if qs := workflow.SearchQueries(t.item.Brief); len(qs) > 0 {
			return qs
		}
		return []string{t.item.Title + " " + subject}
	}
	return []string{subject + " " + orDefault(t.artifactTitle, "background")}
}

// resultsFor returns the results of the item headed title: those whose query names
// it, or all of them when the request is about that item alone.
func (t *workflowTask) resultsFor(title string) []searchResult {
	if len(t.batch) == 0 {
		return t.results
	}
	var out []searchResult
	for _, r := range t.results {
		if strings.HasPrefix(strings.ToLower(r.Query), strings.ToLower(title)) ||
			strings.HasPrefix(r.Query, keyWords(title)) {
			out = append(out, r)
		}
	}
	return out
}

// resultNotes are the notes of the request's item from its search results: a fact (the
// first sentence of a snippet or passage, else the result's title) and its source, at
// most maxFoundNotes, one per source.
func (t *workflowTask) resultNotes() []researchNote {
	var out []researchNote
	seen := map[string]bool{}
	for _, r := range t.resultsFor(t.itemTitle()) {
		if seen[r.URL] || len(out) == maxFoundNotes {
			continue
		}
		seen[r.URL] = true
		fact := firstSentences(r.Text, 1)
		if wordCount(fact) < 4 {
			fact = r.Title
		}
		fact = strings.NewReplacer("(", "", ")", "").Replace(textcut.Ellipsis(trimEnd(fact), 240, unicode.IsSpace))
		out = append(out, researchNote{Fact: upperFirst(fact), URL: r.URL})
	}
	return out
}

// outline returns the outline in the prompt: the approved plan's title and "## "
// sections when its text is there, else the angle its excerpt names, else the first
// angle.
func (t *workflowTask) outline() blogOutline {
	text := t.approvedOf(blogPlan)
	var angle *blogAngle
	low := strings.ToLower(text)
	angles := t.angles()
	for i := range angles {
		if low != "" && strings.Contains(low, strings.ToLower(angles[i].ArticleTitle)) {
			angle = &angles[i]
			break
		}
	}
	var items []workflow.Item
	for _, it := range workflow.Items(text) {
		if it.Title != "" {
			it.Body = planSection(it.Body)
			items = append(items, it)
		}
	}
	if len(items) < 2 {
		if angle == nil {
			angle = &angles[0]
		}
		return angle.outline()
	}
	o := blogOutline{Sections: items, angle: angle}
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case o.Title == "" && strings.HasPrefix(l, "# "):
			o.Title = strings.TrimSpace(strings.TrimPrefix(l, "# "))
		case strings.HasPrefix(l, "Angle:"):
			o.Angle = strings.TrimSpace(strings.TrimPrefix(l, "Angle:"))
		case strings.HasPrefix(l, "Audience:"):
			o.Audience = strings.TrimSpace(strings.TrimPrefix(l, "Audience:"))
		}
	}
	if angle != nil {
		o.Title = orDefault(o.Title, angle.ArticleTitle)
		o.Angle = orDefault(o.Angle, angle.Angle)
		o.Audience = orDefault(o.Audience, angle.Audience)
	}
	o.Title = orDefault(o.Title, "Async Stand-ups for Small Teams")
	return o
}

// notesFor returns the research notes of the section headed title: the bullets under
// that heading in an approved text of the prompt (the research artifact's items are
// joined under "## " headings), or the whole research text when the prompt gives only
// this item's part (a pipeline item's dependency), else the canned ones.
func (t *workflowTask) notesFor(title string) []researchNote {
	research := t.approvedOf(blogResearch)
	texts := []string{research}
	for _, id := range t.approvedOrder {
		switch blogKindOf(id, t.approvedTitle[id]) {
		case blogPlan, blogSources, blogBrief, blogArticle:
			continue // the outline's bullets are key points and queries, not notes
		}
		texts = append(texts, t.approved[id])
	}
	key := titleKey(title)
	for _, text := range texts {
		for _, it := range workflow.Items(text) {
			if titleKey(it.Title) != key {
				continue
			}
			if notes := bulletNotes(it.Body); len(notes) > 0 {
				return notes
			}
		}
	}
	if t.item != nil && titleKey(t.item.Title) == key && len(headingStarts(research)) == 0 {
		if notes := bulletNotes(research); len(notes) > 0 {
			return notes
		}
	}
	return cannedNotes(title)
}
