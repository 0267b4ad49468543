package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/threadwright/threadwright/playground/emulator"
)

// TestE2EChannelCommandFailsForGood: Slack refuses the first message of a workflow
// that /threadwright start posts on every attempt of the command, so the command
// fails for good. The person is told, in their language, that Slack failed, with a
// Retry button; clicked once Slack is back, it starts one workflow, and a second
// click on it starts nothing more.
func TestE2EChannelCommandFailsForGood(t *testing.T) {
	for _, tc := range []struct {
		name, user, cause, again, retry string
	}{
		{"English", alice, "Slack refused the message or file (channel_not_found).", "Retry runs this command again.", "Retry"},
		{"Russian", "U0IVAN", "Slack не принял сообщение или файл (channel_not_found).", "«Повторить» выполнит эту команду снова.", "Повторить"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := emulator.DefaultConfig()
			cfg.Users = append(cfg.Users, emulator.User{ID: "U0IVAN", Name: "ivan", RealName: "Иван", Locale: "ru-RU"})
			h := &wfHarness{harness: newHarness(t, emulator.Config{Users: cfg.Users}), model: &cannedModel{}}
			h.ai.Handle(h.model.respond)
			h.start()
			for range 3 { // the command's 3 attempts (MaxAttempts)
				h.emu.FailNext("chat.postMessage", "channel_not_found")
			}
			h.slash(tc.user, "start product-brief")
			got := h.waitEphemeral(general, tc.user, tc.again)
			if !strings.Contains(got, tc.cause) || strings.Contains(got, "Please try again in a moment") {
				t.Fatalf("the failure does not name Slack in the person's language:\n%s", got)
			}
			if n := len(h.emu.BotMessages(general, "")); n != 0 {
				t.Fatalf("%d top-level messages after the failure, want 0", n)
			}
			var failed string
			for _, m := range h.emu.Ephemerals(general, tc.user) {
				if strings.Contains(m.Text, tc.again) {
					failed = m.TS
				}
			}
			for click := 1; click <= 2; click++ {
				env, err := h.emu.ClickButtonByLabel(general, failed, tc.user, tc.retry)
				if err != nil {
					t.Fatal(err)
				}
				h.settleEnvelope(env)
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				_, err = h.emu.WaitForMessages(ctx, general, "", 1)
				cancel()
				if err != nil {
					t.Fatalf("click %d: the workflow's first message: %v", click, err)
				}
				h.idle()
				if n := len(h.emu.BotMessages(general, "")); n != 1 {
					t.Fatalf("%d top-level messages after click %d on Retry, want 1", n, click)
				}
			}
			thread := h.emu.BotMessages(general, "")[0].TS
			if tr := h.transcript(thread); !strings.Contains(tr, "Product brief") {
				t.Errorf("the workflow's first message lacks its title:\n%s", tr)
			}
		})
	}
}

// TestE2EChannelCommandRetryOpensTheInputsModal: the Retry of a failed
// `/threadwright start blog` opens the workflow's inputs modal with the click's
// trigger_id, as the slash command would have.
func TestE2EChannelCommandRetryOpensTheInputsModal(t *testing.T) {
	h := newWorkflowHarness(t)
	h.start()
	for range 3 { // the command's 3 attempts (MaxAttempts)
		h.emu.FailNext("chat.postMessage", "channel_not_found")
	}
	h.slash(alice, "start blog")
	h.waitEphemeral(general, alice, "Retry runs this command again.")
	if n := len(h.emu.Calls("views.open")); n != 0 {
		t.Fatalf("%d views.open before Retry, want 0 (the command failed before)", n)
	}
	var failed string
	for _, m := range h.emu.Ephemerals(general, alice) {
		if strings.Contains(m.Text, "Retry runs this command again.") {
			failed = m.TS
		}
	}
	env, err := h.emu.ClickButtonByLabel(general, failed, alice, "Retry")
	if err != nil {
		t.Fatal(err)
	}
	h.settleEnvelope(env)
	h.waitFor("the inputs modal", func() bool { return len(h.emu.Calls("views.open")) == 1 })
	if n := len(h.emu.BotMessages(general, "")); n != 1 {
		t.Errorf("%d top-level messages after Retry, want 1", n)
	}
}
