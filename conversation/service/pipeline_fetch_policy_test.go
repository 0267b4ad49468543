package service_test

import (
	"strings"
	"testing"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/service"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// TestPipelineFetchFollowsChannelPolicy: in a channel whose tool policy does not
// allow fetch_url (Config.FetchAllowed false), the sources phase fetches nothing:
// every URL is recorded as not fetched, and why.
func TestPipelineFetchFollowsChannelPolicy(t *testing.T) {
	sa := newSourcesAgent()
	sa.notes = func(title string) string { return "See https://pages.test/" + strings.ToLower(title) }
	f := &fakeFetcher{}
	def, err := workflow.Parse("custom.yaml", []byte(sourcesYAML))
	if err != nil {
		t.Fatal(err)
	}
	set, err := workflow.NewSet(def)
	if err != nil {
		t.Fatal(err)
	}
	st := openStore(t, t.TempDir())
	h := &wfHarness{t: t, st: st, msgr: newMessenger(), agent: &sa.scriptedAgent, sum: &foldSummarizer{}}
	h.msgr.updates = true
	var asked []string
	h.svc = newService(t, service.Config{Store: st, Messenger: h.msgr, Executor: &echo{}, Workflows: set, Agent: sa, PipelineConcurrency: 2,
		Fetcher: f, FetchAllowed: func(channelID string) bool { asked = append(asked, channelID); return false }})
	h.say("U1", "start src")
	h.click("U1", conversation.ActionApprove, "outline", "", "")
	h.wait()
	src := h.artifact("sources")
	if src.Status != workflow.StatusApproved {
		t.Fatalf("sources = %s", src.Status)
	}
	if n := f.count("https://"); n != 0 {
		t.Errorf("%d pages fetched in a channel that does not allow fetch_url; want none", n)
	}
	want := "### https://pages.test/alpha\nSource: https://pages.test/alpha\nNot fetched: the channel's tool policy (TOOL_POLICY) does not allow fetch_url"
	if got := src.Items[0].Text; got != want {
		t.Errorf("sources item Alpha = %q; want %q", got, want)
	}
	if len(asked) == 0 || asked[0] != key.ChannelID {
		t.Errorf("FetchAllowed asked about %q; want the thread's channel %q", asked, key.ChannelID)
	}
}
