package demo

import (
	"regexp"
	"strings"
	"unicode"

	"github.com/threadwright/threadwright/internal/textcut"
)

// The topic the team gave when it started a workflow (the input `topic`, listed by
// the workflow system prompt under "## What the team asked for"). A built-in
// workflow's canned content is about one subject; given another topic, the demo
// writes about that topic instead: the blog's outline options, outline and drafts
// from the topical angles below, the other workflows from the generic content with
// the topic in it.

// topicRe reads the topic input's line of the workflow system prompt.
var topicRe = regexp.MustCompile("(?m)^- .+ \\(`topic`\\): (.+)$")

// readTopic returns the topic input in the system prompt, one line, or "".
func readTopic(system string) string {
	if m := topicRe.FindStringSubmatch(system); m != nil {
		return textcut.Ellipsis(trimEnd(oneLine(m[1])), 120, unicode.IsSpace)
	}
	return ""
}

// cannedTopics are words of each built-in workflow's canned subject: a topic with one
// of them keeps the canned content.
var cannedTopics = map[string][]string{
	blogWorkflow:     {"stand-up", "standup", "stand up", "async"},
	"Product brief":  {"meal", "dinner", "recipe", "cook"},
	"Grant proposal": {"solar", "millbrook", "energy"},
}

// ownTopic reports whether topic is the canned subject of the workflow, or none was
// given.
func ownTopic(workflow, topic string) bool {
	if topic == "" {
		return true
	}
	low := strings.ToLower(topic)
	for _, w := range cannedTopics[workflow] {
		if strings.Contains(low, w) {
			return true
		}
	}
	return false
}

// topicSection is a section of the topical outline, its title and brief with
// "{topic}" (and "{Topic}", capitalised) for the topic.
type topicSection struct{ title, brief string }

var topicSections = map[string]topicSection{
	"why":      {"Why {topic} matters now", "What changed that makes {topic} worth the reader's time, and who feels the problem first."},
	"basics":   {"The core ideas of {topic}", "The few ideas a newcomer to {topic} needs, each with a plain example."},
	"start":    {"Getting started with {topic}", "A first, small project that shows {topic} working, step by step."},
	"patterns": {"Patterns that work for {topic}", "The practices experienced people rely on for {topic}, and when each one fits."},
	"pitfalls": {"Common pitfalls with {topic}", "The mistakes newcomers make with {topic}, and how to spot them early."},
	"compare":  {"{Topic} compared with the usual approach", "Where {topic} beats what people do today, and where it does not."},
	"tools":    {"Tools for {topic}", "The tools and settings that make {topic} easier, with a minimal setup."},
	"story":    {"A team's first month with {topic}", "A fictional team's first month with {topic}: what they changed and what they learned."},
	"measure":  {"How to tell {topic} is working", "Two or three signals to watch, and when to look at them again."},
}

// topicAngleFrames are the blog's six angles on any topic: the option's title, the
// working title, the angle and the sections, in order.
var topicAngleFrames = []struct {
	option, title, angle string
	sections             []string
}{
	{"A step-by-step playbook", "{Topic}: A Step-by-Step Playbook", "A reader can put {topic} to work in five concrete steps, and know within a month whether it pays off.", []string{"why", "basics", "start", "pitfalls", "measure"}},
	{"Lessons from one team", "{Topic} in Practice: One Team's First Month", "One team's first month with {topic} shows what works, what does not, and what to try first.", []string{"story", "why", "start", "pitfalls", "measure"}},
	{"An honest comparison", "{Topic} or the Usual Approach? An Honest Comparison", "{Topic} is worth it in some cases and not in others; this is how to tell which is yours.", []string{"why", "compare", "patterns", "pitfalls", "measure"}},
	{"A practical guide", "A Practical Guide to {Topic}", "The ideas and habits that make {topic} work, from the first project to everyday use.", []string{"basics", "start", "patterns", "tools", "measure"}},
	{"Tools and first steps", "Setting Up for {Topic}: Tools and First Steps", "The right tools and a small first project make {topic} easy to start.", []string{"tools", "start", "patterns", "pitfalls", "measure"}},
	{"Why it goes wrong", "Why {Topic} Goes Wrong, and How to Fix It", "Most trouble with {topic} comes from a few avoidable mistakes.", []string{"pitfalls", "why", "compare", "patterns", "measure"}},
}

// topicAngles are the blog's angles on topic, built from topicAngleFrames: each with
// its own sections (blogAngle.Custom), a meta description, an intro and a conclusion
// about the topic; the TL;DR comes from the research, as for an outline the team
// wrote.
func topicAngles(topic string) []blogAngle {
	r := strings.NewReplacer("{topic}", topic, "{Topic}", upperFirst(topic))
	out := make([]blogAngle, len(topicAngleFrames))
	for i, f := range topicAngleFrames {
		a := blogAngle{
			Option:       f.option,
			ArticleTitle: r.Replace(f.title),
			Angle:        r.Replace(f.angle),
			Audience:     r.Replace("Readers who know their field and want to put {topic} to work without a long study first."),
			Meta:         textcut.Ellipsis(r.Replace("{Topic}: what it is, how to start, the pitfalls and how to tell it works, in short sourced sections."), 160, unicode.IsSpace),
			Intro:        r.Replace("This article is about {topic}. ") + r.Replace(f.angle) + " It covers the subject in five short sections, each built on sourced notes, and ends with what to do next.",
			Conclusion:   r.Replace("{Topic} is worth trying on a small scale first: pick one project, agree on what success looks like, and look at the result together after a month. Keep what works, drop what does not."),
		}
		for _, k := range f.sections {
			s := topicSections[k]
			a.Sections = append(a.Sections, k)
			a.Custom = append(a.Custom, blogSection{Title: upperFirst(r.Replace(s.title)), Brief: r.Replace(s.brief)})
		}
		out[i] = a
	}
	return out
}
