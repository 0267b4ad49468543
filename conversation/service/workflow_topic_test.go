package service_test

import (
	"strings"
	"testing"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// TestWorkflowTopicFromThread: a start without a topic takes it from an earlier
// message of the thread only when that message states a subject ("we need a post
// on …"), and its start card says whose message it came from and holds it, writing
// nothing, until the person who may restart keeps it or changes it (then the first
// options are written for the topic decided);
// a question asked of the bot (the assistant view's earlier question) is never the
// topic: the blog asks for one, and the product brief starts without one.
func TestWorkflowTopicFromThread(t *testing.T) {
	const question = "What can you do, and which tools can you use here?"
	t.Run("QuestionIsNotTheTopic", func(t *testing.T) {
		h := newWF(t, "U1")
		h.say("U1", question)
		h.drain()
		h.say("U1", "start blog")
		ws := h.state()
		if ws.Inputs["topic"] != "" || ws.TopicFrom != "" || ws.InputsTS == "" {
			t.Fatalf("blog after a question: inputs %v, topic from %q, asking message %q; want the topic asked for", ws.Inputs, ws.TopicFrom, ws.InputsTS)
		}
		posted := strings.Join(h.drain(), "\n")
		if !strings.Contains(posted, "Before I start, tell me: *What is the article about?*") || strings.Contains(posted, "What can you do") {
			t.Errorf("the start posted:\n%s", posted)
		}
	})
	t.Run("QuestionIsNotTheBriefsTopic", func(t *testing.T) {
		h := newWF(t, "U1")
		h.say("U1", question)
		h.say("U1", "start product-brief")
		if ws := h.state(); ws.Inputs["topic"] != "" || ws.TopicFrom != "" {
			t.Fatalf("product brief after a question: inputs %v, topic from %q", ws.Inputs, ws.TopicFrom)
		}
	})
	t.Run("StatedSubjectIsTheTopic", func(t *testing.T) {
		h := newWF(t, "U1")
		h.say("U2", "We need a post on schema migrations for the platform team.")
		h.say("U1", question)
		h.drain()
		h.say("U1", "start blog")
		ws := h.state()
		if ws.Inputs["topic"] != "schema migrations for the platform team" || ws.TopicFrom != "U2" {
			t.Fatalf("blog after a stated subject: inputs %v, topic from %q", ws.Inputs, ws.TopicFrom)
		}
		h.msgr.mu.Lock()
		var blocks []string
		for _, c := range h.msgr.cards {
			for _, b := range c.Blocks {
				blocks = append(blocks, b.Text)
			}
		}
		h.msgr.mu.Unlock()
		if posted := strings.Join(blocks, "\n"); !strings.Contains(posted, "The topic comes from <@U2>'s message above. Nothing is written yet: keep it, or change it first.") {
			t.Errorf("the start card does not say where the topic came from:\n%s", posted)
		}
		if st := ws.Artifacts["plan"]; !ws.TopicHeld || (st != nil && st.Status != workflow.StatusPending) {
			t.Fatalf("the run went on before the topic was kept or changed: held %v, outline %+v", ws.TopicHeld, st)
		}
		h.say("U1", "sounds good") // a reply does not decide: the buttons do
		if !h.state().TopicHeld {
			t.Fatal("a reply released the held topic")
		}
		h.clickRev("U2", conversation.ActionTopicChange, "", 0, "", "Go generics")
		if ws := h.state(); !ws.TopicHeld {
			t.Fatal("someone who may not restart changed the topic")
		}
		h.clickRev("U1", conversation.ActionTopicChange, "", 0, "", "Go generics for data engineers")
		ws = h.state()
		if ws.TopicHeld || ws.TopicFrom != "" || ws.Inputs["topic"] != "Go generics for data engineers" || ws.Inputs["wordcount"] != "1500" {
			t.Fatalf("after the change: held %v, from %q, inputs %v", ws.TopicHeld, ws.TopicFrom, ws.Inputs)
		}
		if st := ws.Artifacts["plan"]; st.Status != workflow.StatusOptionsGenerated {
			t.Fatalf("the outline's options were not written after the change: %q", st.Status)
		}
		h.clickRev("U1", conversation.ActionTopicKeep, "", 0, "", "")
		if ws := h.state(); ws.Inputs["topic"] != "Go generics for data engineers" || ws.Artifacts["plan"].Rev != 1 {
			t.Fatalf("a second decision changed the run: %v, outline rev %d", ws.Inputs, ws.Artifacts["plan"].Rev)
		}
	})
	t.Run("InputsGivenByTheAPI", func(t *testing.T) {
		h := newWF(t, "U1")
		h.say("U2", "We need a post on schema migrations for the platform team.")
		h.n++
		h.do(conversation.Input{ID: "api:start", Key: key, Kind: conversation.KindCommand, Command: &conversation.CommandInput{
			Source: conversation.SourceAPI, UserID: "U1", Line: "start blog", Inputs: map[string]string{"topic": "Go generics"}}})
		ws := h.state()
		if ws.TopicHeld || ws.TopicFrom != "" || ws.Inputs["topic"] != "Go generics" || ws.Artifacts["plan"] == nil {
			t.Fatalf("a start whose inputs give the topic: held %v, from %q, inputs %v", ws.TopicHeld, ws.TopicFrom, ws.Inputs)
		}
	})
	t.Run("KeepTheHeldTopic", func(t *testing.T) {
		h := newWF(t, "U1")
		h.say("U2", "We need a post on schema migrations for the platform team.")
		h.drain()
		h.say("U1", "start blog")
		h.clickRev("U1", conversation.ActionTopicKeep, "", 0, "", "")
		ws := h.state()
		if ws.TopicHeld || ws.TopicFrom != "U2" || ws.Inputs["topic"] != "schema migrations for the platform team" || ws.Artifacts["plan"].Status != workflow.StatusOptionsGenerated {
			t.Fatalf("after keeping: held %v, from %q, inputs %v, outline %q", ws.TopicHeld, ws.TopicFrom, ws.Inputs, ws.Artifacts["plan"].Status)
		}
	})
	t.Run("GivenTopicWins", func(t *testing.T) {
		h := newWF(t, "U1")
		h.say("U2", "We need a post on schema migrations")
		h.say("U1", "start blog about Go generics")
		if ws := h.state(); ws.Inputs["topic"] != "Go generics" || ws.TopicFrom != "" {
			t.Fatalf("blog with its topic: inputs %v, topic from %q", ws.Inputs, ws.TopicFrom)
		}
	})
}

// TestWorkflowRestartKeepsHeldTopic: a restart of the first artifact while the run
// holds its topic keeps the topic, as Keep would: the hold is released (the start
// card loses its buttons and says who kept it), the options are written for it, and
// a typed choice then picks one.
func TestWorkflowRestartKeepsHeldTopic(t *testing.T) {
	h := newWF(t, "U1")
	h.say("U2", "We need a post on schema migrations for the platform team.")
	h.drain()
	h.say("U1", "start blog")
	ws := h.state()
	if !ws.TopicHeld || ws.TopicTS == "" {
		t.Fatalf("the run does not hold its topic: held %v, card %q", ws.TopicHeld, ws.TopicTS)
	}
	startCard := ws.TopicTS
	h.say("U1", "restart plan")
	ws = h.state()
	if ws.TopicHeld || ws.Inputs["topic"] != "schema migrations for the platform team" || ws.Artifacts["plan"].Status != workflow.StatusOptionsGenerated {
		t.Fatalf("after the restart: held %v, inputs %v, outline %q", ws.TopicHeld, ws.Inputs, ws.Artifacts["plan"].Status)
	}
	if card := h.msgr.cardText(startCard); !strings.Contains(card, "<@U1> kept this topic.") || len(h.msgr.buttons(startCard)) != 0 {
		t.Errorf("the start card was not closed (buttons %v):\n%s", h.msgr.buttons(startCard), card)
	}
	h.say("U1", "A")
	if st := h.artifact("plan"); st.Selected != "A" {
		t.Errorf("a typed choice after the restart was ignored: outline %q, selected %q", st.Status, st.Selected)
	}
}
