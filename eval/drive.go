package eval

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/playground/emulator"
)

// The people and channels of a run's workspace: the emulator's default one
// (emulator.DefaultConfig).
var (
	userIDs    = map[string]string{"alice": "U0ALICE", "bob": "U0BOB"}
	channelIDs = map[string]string{"general": "C0GENERAL", "random": "C0RANDOM", "dm": "D0ALICE"}
)

// StepResult is what one step of the thread did.
type StepResult struct {
	// Step says what the person did.
	Step string `json:"step"`
	// LatencyMS is the time from the person's action until the bot was done with it.
	LatencyMS int64 `json:"latency_ms"`
	// Reply is the text of the messages the bot posted in the thread during the step.
	Reply string `json:"reply,omitempty"`
	// Error says why the step could not be done.
	Error string `json:"error,omitempty"`
}

// Approval is a person's decision on a tool call that waited for confirmation
// (docs/tools.md, "Tool policy"), as the driver clicked it.
type Approval struct {
	Step     int    `json:"step"`
	Tool     string `json:"tool"`
	Approved bool   `json:"approved"`
	By       string `json:"by"`
}

// driver acts as the people of a case in the run's emulated Slack, one step at a
// time, and waits for the bot to be done with each.
type driver struct {
	emu     *emulator.Server
	bot     Bot
	tap     *tap
	team    string
	botUser string
	channel string // the channel's id
	thread  string // the thread's ts, once it started

	steps     []StepResult
	approvals []Approval
}

// errStep marks the error of a step that could not be done as the case says: the
// run is an error, not a failed expectation.
var errStep = errors.New("eval: step")

// run does the case's steps in order; it stops at the first that cannot be done.
func (d *driver) run(ctx context.Context, steps []Step) error {
	for i, s := range steps {
		d.tap.setStep(i)
		before := d.messageSet()
		start := time.Now()
		err := d.do(ctx, i, s)
		if err == nil {
			err = d.settle(ctx)
		}
		res := StepResult{Step: s.String(), LatencyMS: time.Since(start).Milliseconds(), Reply: d.newText(before)}
		if err != nil {
			res.Error = err.Error()
		}
		d.steps = append(d.steps, res)
		if err != nil {
			return fmt.Errorf("%w %d (line %d, %s): %w", errStep, i+1, s.Line, s, err)
		}
	}
	return nil
}

// do does step i, s, without waiting for the bot to be done.
func (d *driver) do(ctx context.Context, i int, s Step) error {
	user := userIDs[s.User]
	switch s.Kind() {
	case "say":
		text := strings.ReplaceAll(s.Say, "@threadwright", "<@"+d.botUser+">")
		ts, err := d.emu.PostUserMessage(d.channel, user, text, d.thread)
		if err != nil {
			return err
		}
		if d.thread == "" {
			d.thread = ts
		}
		return nil
	case "command":
		return d.command(ctx, user, s.Command)
	case "click", "choose":
		return d.click(ctx, i, s, user)
	case "submit":
		return d.submit(ctx, s, user)
	}
	return fmt.Errorf("nothing to do")
}

// command runs /threadwright text as user. When the thread has not started, the
// thread is the one the command's first message starts.
func (d *driver) command(ctx context.Context, user, text string) error {
	before := len(d.emu.Thread(d.channel, ""))
	if _, err := d.emu.SlashCommand(d.channel, user, "/threadwright", text); err != nil {
		return err
	}
	if d.thread != "" {
		return nil
	}
	if err := d.settle(ctx); err != nil {
		return err
	}
	// A command's turn posts the thread's first message; wait for it rather than
	// take the bot's being idle for its having run.
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	msgs, err := d.emu.WaitForMessages(wctx, d.channel, "", before+1)
	if err != nil {
		return fmt.Errorf("the command started no thread (its answer, if any, is in an ephemeral message: %s): %w", d.ephemeralText(user), err)
	}
	d.thread = msgs[len(msgs)-1].TS
	return nil
}

// click clicks the button, or chooses the menu item, that s names, as user, on the
// newest message of the thread (or ephemeral message shown to user) that has it.
// A click on a tool's confirmation card is recorded as an Approval.
func (d *driver) click(ctx context.Context, i int, s Step, user string) error {
	label, menu := s.Click, false
	if s.Kind() == "choose" {
		label, menu = s.Choose, true
	}
	msg, b, err := d.findButton(label, s.Under, menu, user)
	if err != nil {
		return err
	}
	if err := d.noteApproval(ctx, i, msg, b, user); err != nil {
		return err
	}
	if menu {
		_, err = d.emu.ChooseMenuItem(d.channel, msg.TS, user, b.Label)
	} else {
		_, err = d.emu.ClickButton(d.channel, msg.TS, user, b.ActionID)
	}
	return err
}

// findButton finds what label names (a button, or with menu a menu item, whose label
// starts with it, under a text containing under), newest message first.
func (d *driver) findButton(label, under string, menu bool, user string) (emulator.Message, emulator.Button, error) {
	msgs := d.emu.Thread(d.channel, d.thread)
	for _, e := range d.emu.Ephemerals(d.channel, user) {
		if e.ThreadTS == d.thread || e.TS == d.thread {
			msgs = append(msgs, e)
		}
	}
	slices.SortStableFunc(msgs, func(a, b emulator.Message) int { return strings.Compare(b.TS, a.TS) })
	var seen []string
	for _, m := range msgs {
		buttons, err := d.emu.Buttons(d.channel, m.TS, user)
		if err != nil {
			continue
		}
		for _, b := range buttons {
			if menu == (b.Type == "button") {
				continue
			}
			if strings.HasPrefix(strings.TrimSpace(b.Label), strings.TrimSpace(label)) && strings.Contains(b.Context, under) {
				return m, b, nil
			}
			shown := b.Label
			if under != "" {
				shown += " under “" + clip(oneLine(b.Context), 80) + "”"
			}
			if len(seen) < 20 && !slices.Contains(seen, shown) {
				seen = append(seen, shown)
			}
		}
	}
	what := "button"
	if menu {
		what = "menu item"
	}
	return emulator.Message{}, emulator.Button{}, fmt.Errorf("no %s labelled %q in the thread (there are: %s)", what, label, quoteAll(seen))
}

// noteApproval records the click of b on msg as a decision on a tool call when msg
// is the confirmation card the thread waits on (State.ToolApproval.CardTS): the
// primary button approves, the other denies.
func (d *driver) noteApproval(ctx context.Context, i int, msg emulator.Message, b emulator.Button, user string) error {
	cp, err := d.bot.Store().Load(ctx, d.key(), 0)
	if errors.Is(err, conversation.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read the thread's checkpoint: %w", err)
	}
	ap := cp.Conversation.State.ToolApproval
	if ap == nil || ap.CardTS != msg.TS {
		return nil
	}
	d.approvals = append(d.approvals, Approval{Step: i, Tool: ap.Tool.Name, Approved: b.Style == "primary", By: user})
	return nil
}

// submit submits the modal open for user.
func (d *driver) submit(ctx context.Context, s Step, user string) error {
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := d.emu.WaitForView(wctx, user); err != nil {
		return fmt.Errorf("no modal open (click the button that opens it first): %w", err)
	}
	var err error
	if s.SubmitFields != nil {
		_, err = d.emu.SubmitInputs(user, s.SubmitFields)
	} else {
		_, err = d.emu.SubmitModal(user, s.SubmitText)
	}
	return err
}

// settle waits until the bot is done: every envelope acked and no input queued or
// running, twice in a row with nothing new in between (a turn's last post is an
// event of its own, and a turn may leave inputs that follow it).
func (d *driver) settle(ctx context.Context) error {
	last := -1
	for {
		if err := d.emu.WaitForAcks(ctx); err != nil {
			return fmt.Errorf("wait for the bot's acks: %w", err)
		}
		if err := d.bot.Idle(ctx); err != nil {
			return fmt.Errorf("wait for the bot: %w", err)
		}
		n := len(d.emu.Envelopes()) + len(d.emu.Calls(""))
		if n == last {
			return nil
		}
		last = n
	}
}

// key is the conversation of the thread.
func (d *driver) key() conversation.Key {
	return conversation.Key{TeamID: d.team, ChannelID: d.channel, ThreadTS: d.thread}
}

// messageSet returns the ts of the thread's messages now.
func (d *driver) messageSet() map[string]bool {
	out := map[string]bool{}
	if d.thread == "" {
		return out
	}
	for _, m := range d.emu.Thread(d.channel, d.thread) {
		out[m.TS] = true
	}
	return out
}

// newText returns the text of the bot's messages in the thread that are not in
// before, one a paragraph.
func (d *driver) newText(before map[string]bool) string {
	if d.thread == "" {
		return ""
	}
	var parts []string
	for _, m := range d.emu.Thread(d.channel, d.thread) {
		if !before[m.TS] && m.User == d.botUser {
			parts = append(parts, messageText(m))
		}
	}
	return strings.Join(parts, "\n\n")
}

// threadText returns the text of every message the bot posted in the thread.
func (d *driver) threadText() string {
	return d.newText(nil)
}

// ephemeralText returns the text of the ephemeral messages shown to user in the
// channel, for an error.
func (d *driver) ephemeralText(user string) string {
	var parts []string
	for _, e := range d.emu.Ephemerals(d.channel, user) {
		parts = append(parts, messageText(e))
	}
	if len(parts) == 0 {
		return "none"
	}
	return fmt.Sprintf("%q", strings.Join(parts, " / "))
}
