package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"log/slog"
	"syscall"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"github.com/threadwright/threadwright/playground/emulator"
)

// BenchmarkSocketModeDebug measures what learning the causes of a drop costs per
// envelope: the same Socket Mode client, against the emulator, as slack-go sets it up
// ("plain"), with its debug mode on as New had it before (every frame re-encoded,
// redacted and formatted, here for a logger that drops the lines: "debug"), and with
// New's watching dialer ("watched", drops.go). Each iteration is one envelope: a reply
// posted in a thread, delivered, acked, and its ack read by the emulator. The emulator
// runs in the same process, so its work counts in each; so does the process's CPU time
// (cpu-µs/envelope, from getrusage).
func BenchmarkSocketModeDebug(b *testing.B) {
	variants := map[string][]socketmode.Option{
		"plain": nil,
		"debug": {socketmode.OptionDebug(true), socketmode.OptionLog(log.New(io.Discard, "", 0))},
		"watched": {socketmode.OptionDialer((&socketDialer{drops: &dropReasons{}}).websocketDialer()),
			socketmode.OptionLog(log.New(io.Discard, "", 0))},
	}
	for _, name := range []string{"plain", "debug", "watched"} {
		b.Run(name, func(b *testing.B) {
			emu, err := emulator.NewServer(emulator.Config{Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				b.Fatal(err)
			}
			defer emu.Close()
			cfg := emu.Config()
			api := slack.New(cfg.BotToken, slack.OptionAPIURL(emu.URL()), slack.OptionAppLevelToken(cfg.AppToken))
			sm := socketmode.New(api, variants[name]...)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() { _ = sm.RunContext(ctx) }()
			go func() {
				for evt := range sm.Events {
					if evt.Request != nil && evt.Request.EnvelopeID != "" {
						_ = sm.AckCtx(ctx, evt.Request.EnvelopeID, nil)
					}
				}
			}()
			parent, err := emu.PostUserMessage("C0GENERAL", "U0ALICE", "<@U0BOT> a thread", "")
			if err != nil {
				b.Fatal(err)
			}
			if err := emu.WaitForAcks(ctx); err != nil {
				b.Fatal(err)
			}
			updates, unsubscribe := emu.Subscribe()
			defer unsubscribe()
			b.ReportAllocs()
			b.ResetTimer()
			before := cpuTime(b)
			n := 0
			for i := 0; b.Loop(); i++ {
				n++
				if _, err := emu.PostUserMessage("C0GENERAL", "U0BOB", fmt.Sprintf("reply %d", i), parent); err != nil {
					b.Fatal(err)
				}
				for u := range updates {
					if u.Kind == emulator.UpdateAck {
						break
					}
				}
			}
			b.ReportMetric(float64((cpuTime(b)-before).Microseconds())/float64(n), "cpu-µs/envelope")
		})
	}
}

// BenchmarkSlackGoDecode measures what slack-go's Socket Mode client does with each
// frame before the bot sees it, for the two frames of one mention (its app_mention
// and its message twin, as the emulator writes them): the frame read into a
// json.RawMessage (websocket.Conn.ReadJSON), decoded into a socketmode.Request, and its
// payload parsed by slackevents.ParseEvent (socketmode.Client.parseEvent). It is the
// floor of the intake's CPU per envelope that this project does not control
// (docs/operations.md, "Deploy": Socket Mode connections).
func BenchmarkSlackGoDecode(b *testing.B) {
	emu, err := emulator.NewServer(emulator.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	defer emu.Close()
	if _, err := emu.PostUserMessage("C0GENERAL", "U0ALICE", "<@U0BOT> what changed in the release notes of last week?", ""); err != nil {
		b.Fatal(err)
	}
	var frames [][]byte
	for _, e := range emu.Envelopes() {
		frame, err := json.Marshal(socketmode.Request{Type: e.Type, EnvelopeID: e.ID, Payload: e.Payload})
		if err != nil {
			b.Fatal(err)
		}
		frames = append(frames, frame)
	}
	if len(frames) != 2 {
		b.Fatalf("a mention gave %d envelopes, want its app_mention and its message", len(frames))
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, frame := range frames {
			var raw json.RawMessage
			if err := json.Unmarshal(frame, &raw); err != nil {
				b.Fatal(err)
			}
			var req socketmode.Request
			if err := json.Unmarshal(raw, &req); err != nil {
				b.Fatal(err)
			}
			if _, err := slackevents.ParseEvent(req.Payload, slackevents.OptionNoVerifyToken()); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*len(frames)), "µs/frame")
}

// cpuTime returns the CPU time (user and system) the process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
