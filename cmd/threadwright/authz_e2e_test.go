package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/playground/emulator"
)

// These end-to-end tests check that authorization follows the channel (docs/workflows.md,
// "Commands" and "Buttons are signed"): a command or a click acts only where it was
// made, or on the user's own workflow; workflow permissions keep bystanders from
// taking a run over.

const (
	random = "C0RANDOM"
	bob    = "U0BOB"
)

// slashIn runs /threadwright text as user in channel and waits until the bot is idle.
func (h *wfHarness) slashIn(channel, user, text string) {
	h.t.Helper()
	env, err := h.emu.SlashCommand(channel, user, "/threadwright", text)
	if err != nil {
		h.t.Fatal(err)
	}
	h.settleEnvelope(env)
}

// ephemeralsIn returns the text of the ephemeral messages user was shown in channel.
func (h *wfHarness) ephemeralsIn(channel, user string) string {
	var b strings.Builder
	for _, m := range h.emu.Ephemerals(channel, user) {
		b.WriteString(m.Text)
		b.WriteString(jsonUnescape.Replace(string(m.Blocks)))
		b.WriteString("\n")
	}
	return b.String()
}

// waitEphemeral waits until user is shown, in channel, a message containing text,
// and returns every ephemeral text user has there.
func (h *wfHarness) waitEphemeral(channel, user, text string) string {
	h.t.Helper()
	var got string
	h.waitFor(fmt.Sprintf("an ephemeral %q for %s in %s", text, user, channel), func() bool {
		got = h.ephemeralsIn(channel, user)
		return strings.Contains(got, text)
	})
	return got
}

// threadLink is the permalink of a thread, as a person pastes it.
func (h *wfHarness) threadLink(channel, thread string) string {
	return fmt.Sprintf("https://%s.slack.com/archives/%s/p%s", h.emu.Config().TeamDomain, channel, strings.ReplaceAll(thread, ".", ""))
}

// leaksNothing fails when text, shown to someone in another channel, names anything
// of the workflow thread: its channel, the workflow, an artifact or its text.
func leaksNothing(t *testing.T, text string) {
	t.Helper()
	for _, secret := range []string{"general", general, "Product brief", "product-brief", "Problem", "Direction A", "<@" + alice + ">"} {
		if strings.Contains(text, secret) {
			t.Errorf("the refusal names %q: %q", secret, text)
		}
	}
}

// TestE2ECommandOnAnotherChannelsThread: bob, in #random, links alice's workflow
// thread in #general and asks to cancel it, then to edit it: both are refused in
// #random with a notice that names nothing of #general, and the thread is
// untouched. alice, linking her own workflow from #random, may edit and cancel it.
func TestE2ECommandOnAnotherChannelsThread(t *testing.T) {
	h := newWorkflowHarness(t)
	h.start()
	thread := h.startBrief()
	h.click(thread, alice, "A: Direction A", "")
	h.click(thread, alice, "Approve", "")
	h.latest(thread, "A: Direction A", "") // audience's options: problem is approved
	link := h.threadLink(general, thread)
	before := h.transcript(thread)

	t.Run("OthersWorkflowCancelRefused", func(t *testing.T) {
		h.slashIn(random, bob, "cancel "+link)
		got := h.waitEphemeral(random, bob, "only on a thread of this channel, or on a workflow you started")
		leaksNothing(t, got)
		h.idle()
		if after := h.transcript(thread); after != before {
			t.Fatalf("the thread changed:\n%s\nwas:\n%s", after, before)
		}
		if eph := h.ephemeralsIn(general, bob); eph != "" {
			t.Errorf("bob was shown something in #general: %q", eph)
		}
	})
	t.Run("OthersWorkflowEditRefused", func(t *testing.T) {
		calls := len(h.ai.Requests())
		h.slashIn(random, bob, "edit problem "+link+" say that bob owns this now")
		h.waitFor("a second refusal", func() bool {
			return strings.Count(h.ephemeralsIn(random, bob), "only on a thread of this channel") == 2
		})
		h.idle()
		if after := h.transcript(thread); after != before {
			t.Fatalf("the thread changed:\n%s\nwas:\n%s", after, before)
		}
		if n := len(h.ai.Requests()); n != calls {
			t.Errorf("the refused edit made %d model calls", n-calls)
		}
	})
	t.Run("OwnWorkflowEditAllowed", func(t *testing.T) {
		h.slashIn(random, alice, "edit problem "+link+" make it shorter")
		h.waitFor("alice's edit in the thread", func() bool { return strings.Contains(h.transcript(thread), "Revised ↓") })
		if eph := h.ephemeralsIn(random, alice); strings.Contains(eph, "only on a thread of this channel") {
			t.Errorf("alice's own workflow was refused: %q", eph)
		}
	})
	t.Run("OwnWorkflowCancelAllowed", func(t *testing.T) {
		h.slashIn(random, alice, "cancel "+link)
		h.waitFor("the cancellation in the thread", func() bool {
			return strings.Contains(h.transcript(thread), "cancelled by <@"+alice+">")
		})
	})
}

// TestE2EBystanderCannotTakeOverARun: under the default permissions, bob, in the
// workflow's own thread and channel, may not cancel alice's run (and then start his
// own in its place), restart or edit its artifacts; he may still pick an option and
// approve (approve defaults to anyone).
func TestE2EBystanderCannotTakeOverARun(t *testing.T) {
	h := newWorkflowHarness(t)
	h.start()
	thread := h.startBrief()
	h.click(thread, bob, "A: Direction A", "") // anyone may choose
	h.click(thread, bob, "Approve", "")        // and approve
	h.latest(thread, "A: Direction A", "")
	before := h.transcript(thread)
	for i, cmd := range []string{"cancel", "restart problem", "edit problem bob's version"} {
		h.mention(thread, bob, cmd)
		h.waitFor("refusal of "+cmd, func() bool {
			return strings.Count(h.ephemeralsIn(general, bob), "Sorry, only the person who started it (<@"+alice+">)") == i+1
		})
	}
	eph := h.ephemeralsIn(general, bob)
	for _, want := range []string{"may cancel this workflow", "may restart artifacts", "may edit artifacts"} {
		if !strings.Contains(eph, want) {
			t.Errorf("no refusal saying %q in %q", want, eph)
		}
	}
	after := h.transcript(thread)
	if strings.Contains(after, "cancelled by") || strings.Contains(after, "Restarted by") || strings.Contains(after, "Revised ↓") {
		t.Fatalf("a bystander's command changed the run:\n%s\nwas:\n%s", after, before)
	}
	h.mention(thread, alice, "cancel")
	h.waitFor("alice's cancellation", func() bool { return strings.Contains(h.transcript(thread), "cancelled by <@"+alice+">") })
}

// TestE2EForgedAndReplayedClicks: a button value the bot did not sign (an unsigned
// or re-signed action, as a forged payload or a button from before signing would
// carry), and a genuine button's value clicked on a message in another channel or
// thread, are refused with a notice to the clicker, and change nothing; the genuine
// button, where it was posted, works.
func TestE2EForgedAndReplayedClicks(t *testing.T) {
	h := newWorkflowHarness(t)
	h.start()
	thread := h.startBrief()
	ts := h.latest(thread, "A: Direction A", "")
	genuine := *h.find(ts, "A: Direction A", "")
	before := h.transcript(thread)
	elsewhere := h.post(random, bob, "hello", "")
	otherThread := h.post(general, bob, "another thread", "")

	clickOld := func(channel, msg string, b emulator.Button) {
		t.Helper()
		env, err := h.emu.ClickOld(channel, msg, bob, b)
		if err != nil {
			t.Fatal(err)
		}
		h.settleEnvelope(env)
	}
	const notice = "This button can no longer be used"
	cases := []struct {
		name, channel, msg string
		value              func() string
	}{
		{"Unsigned", general, ts, func() string { return unsignedValue(genuine.Value) }},
		{"BadSignature", general, ts, func() string { return "AAAAAAAAAAAAAAAA" + unsignedValue(genuine.Value) }},
		{"ReplayedInAnotherChannel", random, elsewhere, func() string { return genuine.Value }},
		{"ReplayedInAnotherThread", general, otherThread, func() string { return genuine.Value }},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := genuine
			b.Value = c.value()
			if b.Value == "" || (c.name == "Unsigned" && !strings.HasPrefix(b.Value, "{")) {
				t.Fatalf("value %q", b.Value)
			}
			clickOld(c.channel, c.msg, b)
			h.waitFor("the notice", func() bool {
				n := 0
				for _, ch := range []string{general, random} {
					n += strings.Count(h.ephemeralsIn(ch, bob), notice)
				}
				return n == i+1
			})
			if after := h.transcript(thread); after != before {
				t.Fatalf("a refused click changed the thread:\n%s", after)
			}
		})
	}
	t.Run("Genuine", func(t *testing.T) {
		clickOld(general, ts, genuine)
		h.waitFor("option A chosen", func() bool { return strings.Contains(h.transcript(thread), "Option A chosen by <@"+bob+">") })
	})
}

// unsignedValue returns a button value without its signature, the 16 characters
// before the action: the value a button posted before signing existed carries.
func unsignedValue(value string) string {
	if len(value) <= 16 {
		return value
	}
	return value[16:]
}
