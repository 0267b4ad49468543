package service_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/service"
)

// TestServiceDeletionDropsTheSummary: a deleted message that was folded into the
// thread's summary takes the summary with it; its stored text is replaced; the next
// prompt carries neither (SECURITY.md, "Deleted in Slack means deleted from what the
// model sees").
func TestServiceDeletionDropsTheSummary(t *testing.T) {
	msgr, exec, sum := newMessenger(), &echo{}, &foldSummarizer{}
	st := openStore(t, t.TempDir())
	svc := newService(t, service.Config{Store: st, Messenger: msgr, Executor: exec, Summarizer: sum, HistoryMessages: 8})
	submit(t, svc, mention(key, "100.000", "my password is hunter2"))
	msgr.wait(t)
	for i := 1; i < 8; i++ {
		submit(t, svc, reply(key, fmt.Sprintf("100.%03d", i), fmt.Sprintf("q%d", i)))
		msgr.wait(t)
	}
	waitIdle(t, svc)
	cp, err := st.Load(context.Background(), key, 100)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cp.Conversation.State.Summary, "hunter2") {
		t.Fatalf("summary %q; the test needs the message folded into it", cp.Conversation.State.Summary)
	}
	del := conversation.Input{ID: conversation.DeleteInputID(key.TeamID, key.ChannelID, "100.000"), Key: key, Kind: conversation.KindDelete,
		Message: &conversation.UserMessage{UserID: "U1", TS: "100.000", ThreadTS: key.ThreadTS}}
	submit(t, svc, del)
	waitIdle(t, svc)
	if cp, err = st.Load(context.Background(), key, 100); err != nil {
		t.Fatal(err)
	}
	if cp.Conversation.State.Summary != "" || cp.Messages[0].Text != "(message deleted)" {
		t.Fatalf("after the deletion: summary %q, first message %q", cp.Conversation.State.Summary, cp.Messages[0].Text)
	}
	submit(t, svc, reply(key, "100.100", "next"))
	msgr.wait(t)
	last := exec.prompts[len(exec.prompts)-1]
	if strings.Contains(fmt.Sprint(last.Summary, last.History), "hunter2") {
		t.Fatalf("the next prompt still carries the deleted text: %q %v", last.Summary, last.History)
	}
}

// waitIdle waits until svc has no queued or running input, and goes on running.
func waitIdle(t *testing.T, svc *service.Service) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := svc.Wait(ctx); err != nil {
		t.Fatal(err)
	}
}
