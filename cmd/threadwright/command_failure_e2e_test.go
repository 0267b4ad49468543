package main

import (
	"strings"
	"testing"

	"github.com/threadwright/threadwright/bot/emulator"
)

// TestE2EChannelCommandFailsForGood: Slack refuses the first message of a workflow
// that /threadwright start posts on every attempt of the command, so the command
// fails for good. The person is told, in their language, that Slack failed and which
// command to type again; typed again once Slack is back, it starts one workflow.
func TestE2EChannelCommandFailsForGood(t *testing.T) {
	for _, tc := range []struct {
		name, user, cause, again string
	}{
		{"English", alice, "Slack refused the message or file (channel_not_found).", "To try again, type `/threadwright start product-brief`."},
		{"Russian", "U0IVAN", "Slack не принял сообщение или файл (channel_not_found).", "Чтобы попробовать снова, введите `/threadwright start product-brief`."},
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
			thread := h.startWorkflow(tc.user, "product-brief")
			h.idle()
			if n := len(h.emu.BotMessages(general, "")); n != 1 {
				t.Errorf("%d top-level messages after the command typed again, want 1", n)
			}
			if tr := h.transcript(thread); !strings.Contains(tr, "Product brief") {
				t.Errorf("the workflow's first message lacks its title:\n%s", tr)
			}
		})
	}
}
