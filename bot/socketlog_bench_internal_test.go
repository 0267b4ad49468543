package bot

import (
	"context"
	"fmt"
	"log/slog"
	"syscall"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/threadwright/threadwright/playground/emulator"
)

// BenchmarkSocketModeDebug measures what slack-go's debug mode costs per envelope, the
// mode New turns on so that dropReasons can read why the connection dropped: the same
// Socket Mode client, against the emulator, with debug off and on (every frame then
// re-encoded, redacted, formatted and handed to dropReasons). Each iteration is one
// envelope: a reply posted in a thread, delivered, acked, and its ack read by the
// emulator. The emulator runs in the same process, so its work counts in both; so
// does the process's CPU time (cpu-µs/envelope, from getrusage).
func BenchmarkSocketModeDebug(b *testing.B) {
	for _, debug := range []bool{false, true} {
		b.Run(fmt.Sprintf("debug=%t", debug), func(b *testing.B) {
			emu, err := emulator.NewServer(emulator.Config{Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				b.Fatal(err)
			}
			defer emu.Close()
			cfg := emu.Config()
			api := slack.New(cfg.BotToken, slack.OptionAPIURL(emu.URL()), slack.OptionAppLevelToken(cfg.AppToken))
			var opts []socketmode.Option
			if debug {
				opts = append(opts, socketmode.OptionDebug(true), socketmode.OptionLog(&dropReasons{}))
			}
			sm := socketmode.New(api, opts...)
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

// cpuTime returns the CPU time (user and system) the process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
