package service_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/service"
)

// streamingMessenger is a fakeMessenger that can stream, recording what it streams.
type streamingMessenger struct {
	*fakeMessenger
	failStart  error
	failAppend error
	// textStop makes its streams conversation.TextStoppers, recording the text each
	// stop carried in stopTexts; failTextStop fails those stops (before the text).
	textStop     bool
	failTextStop error
	stopTexts    []string
	finals       []bool // each Stop's final

	smu     sync.Mutex
	starts  int
	appends []string
	updates []string
	stopped chan string // the streamed text, when stopped
}

func newStreamingMessenger() *streamingMessenger {
	return &streamingMessenger{fakeMessenger: newMessenger(), stopped: make(chan string, 10)}
}

func (m *streamingMessenger) StartStream(ctx context.Context, _ conversation.Key, userID string, _ conversation.Tag) (conversation.Stream, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.smu.Lock()
	defer m.smu.Unlock()
	m.starts++
	if m.failStart != nil {
		return nil, m.failStart
	}
	if userID != "U1" {
		return nil, errors.New("missing_recipient_user_id")
	}
	if m.textStop {
		return textStopStream{&fakeStream{m: m}}, nil
	}
	return &fakeStream{m: m}, nil
}

// textStopStream is a fakeStream whose stop carries the last text.
type textStopStream struct{ *fakeStream }

func (s textStopStream) StopWithText(ctx context.Context, markdown string, final bool) (string, error) {
	s.m.smu.Lock()
	s.m.stopTexts = append(s.m.stopTexts, markdown)
	fail := s.m.failTextStop
	if fail == nil {
		s.text.WriteString(markdown)
	}
	s.m.smu.Unlock()
	ts, err := s.Stop(ctx, final)
	return ts, errors.Join(fail, err)
}

func (m *streamingMessenger) UpdateCard(ctx context.Context, _ conversation.Key, ts string, c conversation.Card) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.smu.Lock()
	defer m.smu.Unlock()
	m.updates = append(m.updates, ts+" "+c.Text)
	return nil
}

type fakeStream struct {
	m    *streamingMessenger
	text strings.Builder
}

func (s *fakeStream) Append(ctx context.Context, markdown string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.m.smu.Lock()
	defer s.m.smu.Unlock()
	if s.m.failAppend != nil {
		return s.m.failAppend
	}
	s.m.appends = append(s.m.appends, markdown)
	s.text.WriteString(markdown)
	return nil
}

func (s *fakeStream) Stop(ctx context.Context, final bool) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	s.m.smu.Lock()
	s.m.finals = append(s.m.finals, final)
	s.m.smu.Unlock()
	s.m.stopped <- s.text.String()
	return "77.1", nil
}

// Messages is the one message the fake streams into.
func (s *fakeStream) Messages() []string { return []string{"77.1"} }

// streamingExecutor writes its answer to the prompt's AnswerSink word by word, after
// some text that a Reset voids (as before a tool call).
func streamingExecutor(answer string, tick func()) conversation.Executor {
	return executorFunc(func(_ context.Context, p conversation.Prompt) (conversation.Findings, error) {
		if p.AnswerSink != nil {
			p.AnswerSink.Write("Let me look that up.")
			p.AnswerSink.Reset()
			for _, w := range strings.SplitAfter(answer, " ") {
				p.AnswerSink.Write(w)
				tick()
			}
		}
		return conversation.Findings{Answer: answer}, nil
	})
}

// clock is a settable Config.Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func waitStopped(t *testing.T, m *streamingMessenger) string {
	t.Helper()
	select {
	case s := <-m.stopped:
		return s
	case <-time.After(10 * time.Second):
		t.Fatal("stream not stopped")
		return ""
	}
}

// lastAssistant waits for the turn's saved assistant message.
func lastAssistant(t *testing.T, st conversation.Store) conversation.Message {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		cp, err := st.Load(context.Background(), key, 10)
		if err == nil {
			for i := len(cp.Messages) - 1; i >= 0; i-- {
				if cp.Messages[i].Role == conversation.RoleAssistant {
					return cp.Messages[i]
				}
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("no assistant message saved")
	return conversation.Message{}
}

func TestStreamedAnswerIsTheReply(t *testing.T) {
	answer := strings.TrimSpace(strings.Repeat("streamed words here ", 30)) // 599 characters
	msgr, clk := newStreamingMessenger(), &clock{t: time.Unix(1e9, 0)}
	st := openStore(t, t.TempDir())
	svc := newService(t, service.Config{Store: st, Messenger: msgr, Now: clk.now,
		Executor: streamingExecutor(answer, func() {})})
	submit(t, svc, mention(key, "100.0", "question"))

	if got := waitStopped(t, msgr); got != answer {
		t.Fatalf("streamed %q, want %q", got, answer)
	}
	m := lastAssistant(t, st)
	if m.Text != answer || m.SlackTS != "77.1" {
		t.Fatalf("saved reply %q at %q, want the answer at the stream's ts", m.Text, m.SlackTS)
	}
	msgr.smu.Lock()
	defer msgr.smu.Unlock()
	// The clock stood still and fewer than 1,000 characters came: one append at the end.
	if msgr.starts != 1 || len(msgr.appends) != 1 || len(msgr.updates) != 0 {
		t.Fatalf("starts %d, appends %q, updates %q", msgr.starts, msgr.appends, msgr.updates)
	}
	msgr.mu.Lock()
	defer msgr.mu.Unlock()
	if r := msgr.replies[key]; len(r) != 0 {
		t.Fatalf("PostReply duplicated the streamed answer: %q", r)
	}
}

// TestStreamLastTextGoesWithTheStop: where the stream's stop can carry text
// (conversation.TextStopper), a short answer is sent with the stop, in no append of its
// own, and is the reply.
func TestStreamLastTextGoesWithTheStop(t *testing.T) {
	answer := strings.TrimSpace(strings.Repeat("streamed words here ", 30))
	msgr, clk := newStreamingMessenger(), &clock{t: time.Unix(1e9, 0)}
	msgr.textStop = true
	st := openStore(t, t.TempDir())
	svc := newService(t, service.Config{Store: st, Messenger: msgr, Now: clk.now,
		Executor: streamingExecutor(answer, func() {})})
	submit(t, svc, mention(key, "100.0", "question"))
	if got := waitStopped(t, msgr); got != answer {
		t.Fatalf("streamed %q, want %q", got, answer)
	}
	if m := lastAssistant(t, st); m.Text != answer || m.SlackTS != "77.1" {
		t.Fatalf("saved reply %q at %q, want the answer at the stream's ts", m.Text, m.SlackTS)
	}
	msgr.smu.Lock()
	defer msgr.smu.Unlock()
	if len(msgr.appends) != 0 || len(msgr.stopTexts) != 1 || msgr.stopTexts[0] != answer || len(msgr.updates) != 0 {
		t.Fatalf("appends %q, stop texts %q, updates %q; want the answer with the stop only", msgr.appends, msgr.stopTexts, msgr.updates)
	}
}

// TestStreamLastTextLostReplacesTheStream: a stop that carried the last text and
// failed leaves the stream maybe without it: the reply replaces the stream's message.
func TestStreamLastTextLostReplacesTheStream(t *testing.T) {
	answer := "a short answer"
	msgr := newStreamingMessenger()
	msgr.textStop, msgr.failTextStop = true, errors.New("internal_error")
	st := openStore(t, t.TempDir())
	svc := newService(t, service.Config{Store: st, Messenger: msgr, Executor: streamingExecutor(answer, func() {})})
	submit(t, svc, mention(key, "100.0", "question"))
	waitStopped(t, msgr)
	posted := msgr.wait(t)
	if m := lastAssistant(t, st); posted != "(replaced) "+answer || m.Text != answer {
		t.Fatalf("posted %q; saved %q", posted, m.Text)
	}
}

// TestStreamLastAppendLostStopsNotFinal: where the stop cannot carry text, the last
// text is appended first; when that append fails, the stream stops without the final
// tag (a re-run must not take the message for the whole answer) and the reply
// replaces it.
func TestStreamLastAppendLostStopsNotFinal(t *testing.T) {
	answer := "a short answer"
	msgr, clk := newStreamingMessenger(), &clock{t: time.Unix(1e9, 0)}
	msgr.failAppend = errors.New("internal_error")
	st := openStore(t, t.TempDir())
	svc := newService(t, service.Config{Store: st, Messenger: msgr, Now: clk.now, Executor: streamingExecutor(answer, func() {})})
	submit(t, svc, mention(key, "100.0", "question"))
	waitStopped(t, msgr)
	if posted := msgr.wait(t); posted != "(replaced) "+answer {
		t.Fatalf("posted %q", posted)
	}
	msgr.smu.Lock()
	defer msgr.smu.Unlock()
	// The stop is tried again after the failure (it may not have been the stop's own):
	// none of them is final.
	if len(msgr.finals) == 0 || slices.Contains(msgr.finals, true) {
		t.Fatalf("stops' finals %v, want none final", msgr.finals)
	}
}

func TestStreamFlushesAboutOncePerSecond(t *testing.T) {
	answer := strings.TrimSpace(strings.Repeat("tick ", 10))
	msgr, clk := newStreamingMessenger(), &clock{t: time.Unix(1e9, 0)}
	svc := newService(t, service.Config{Messenger: msgr, Now: clk.now,
		Executor: streamingExecutor(answer, func() { clk.add(600 * time.Millisecond) })})
	submit(t, svc, mention(key, "100.0", "question"))
	if got := waitStopped(t, msgr); got != answer {
		t.Fatalf("streamed %q, want %q", got, answer)
	}
	msgr.smu.Lock()
	defer msgr.smu.Unlock()
	// Ten words 0.6 s apart: an append every second word, and the last at the end.
	if n := len(msgr.appends); n < 4 || n > 6 {
		t.Fatalf("%d appends %q", n, msgr.appends)
	}
}

func TestStreamRefusedFallsBackToPostReply(t *testing.T) {
	answer := "the answer, posted whole"
	msgr := newStreamingMessenger()
	msgr.failStart = errors.New("not_allowed")
	svc := newService(t, service.Config{Messenger: msgr, Executor: streamingExecutor(answer, func() {})})
	submit(t, svc, mention(key, "100.0", "question"))
	if got := msgr.wait(t); got != answer {
		t.Fatalf("reply %q, want %q", got, answer)
	}
	msgr.smu.Lock()
	defer msgr.smu.Unlock()
	if msgr.starts != 1 || len(msgr.appends) != 0 {
		t.Fatalf("starts %d, appends %q", msgr.starts, msgr.appends)
	}
}

func TestStreamAppendFailureReplacesThePartialMessage(t *testing.T) {
	answer := strings.TrimSpace(strings.Repeat("word ", 400)) // 1,999 characters: an append at 1,000
	msgr := newStreamingMessenger()
	msgr.failAppend = errors.New("rate_limited")
	st := openStore(t, t.TempDir())
	svc := newService(t, service.Config{Store: st, Messenger: msgr, Executor: streamingExecutor(answer, func() {})})
	submit(t, svc, mention(key, "100.0", "question"))
	waitStopped(t, msgr)
	// The reply is posted as the answer in the stream's place (Tag.Replace).
	posted := msgr.wait(t)
	m := lastAssistant(t, st)
	if posted != "(replaced) "+answer || m.SlackTS != "77.1" || m.Text != answer {
		t.Fatalf("posted %q; saved %q at %q", posted, m.Text, m.SlackTS)
	}
}

func TestLongAnswerStreamsItsBeginningAndPostsTheRest(t *testing.T) {
	answer := strings.TrimSpace(strings.Repeat("A sentence of a long answer.\n\n", 300)) // ~9,000 characters
	msgr := newStreamingMessenger()
	svc := newService(t, service.Config{Messenger: msgr, Executor: streamingExecutor(answer, func() {})})
	submit(t, svc, mention(key, "100.0", "question"))
	streamed := waitStopped(t, msgr)
	rest := msgr.wait(t)
	if len([]rune(streamed)) > 3500 || streamed+rest != answer && strings.TrimSpace(streamed)+"\n\n"+strings.TrimSpace(rest) != answer {
		t.Fatalf("streamed %d characters, then %d: not the answer", len(streamed), len(rest))
	}
}
