package service_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/service"
	"github.com/threadwright/threadwright/conversation/workflow"
	"github.com/threadwright/threadwright/store/sqlite"
)

// boundedSummarizer keeps the newest 4,000 characters of what it folds, like the real
// summarizer's MaxChars cap.
type boundedSummarizer struct{}

func (boundedSummarizer) Summarize(ctx context.Context, r conversation.SummaryRequest) (string, conversation.Usage, error) {
	if err := ctx.Err(); err != nil {
		return "", conversation.Usage{}, err
	}
	var b strings.Builder
	b.WriteString(r.Previous)
	for _, m := range r.Messages {
		b.WriteString(" " + m.Text[:min(len(m.Text), 120)])
	}
	s := b.String()
	return s[max(0, len(s)-4000):], conversation.Usage{}, nil
}

// promptMeter is an executor that records the size of each prompt it is given, in
// estimated tokens (four characters a token), and answers with 800 characters.
type promptMeter struct {
	mu     sync.Mutex
	tokens []int
	reply  string
}

func (m *promptMeter) Execute(ctx context.Context, p conversation.Prompt, _ conversation.Progress) (conversation.Findings, error) {
	if err := ctx.Err(); err != nil {
		return conversation.Findings{}, err
	}
	n := len(p.Summary) + len(p.Text)
	for _, h := range p.History {
		n += len(h.Text)
	}
	m.mu.Lock()
	m.tokens = append(m.tokens, n/4)
	m.mu.Unlock()
	return conversation.Findings{Answer: m.reply}, nil
}

// BenchmarkPromptTokens500Turns runs one thread for 500 turns (200-character questions,
// 800-character answers) with the default history settings and reports the prompt's
// estimated tokens at turns 10, 100, 250 and 500: it grows until summarization begins,
// then stays flat.
func BenchmarkPromptTokens500Turns(b *testing.B) {
	for range b.N {
		b.StopTimer()
		st, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "tw.db"))
		if err != nil {
			b.Fatal(err)
		}
		meter := &promptMeter{reply: strings.Repeat("An answer of some length. ", 31)[:800]}
		msgr := newMessenger()
		msgr.posted = make(chan string, 1000)
		svc, err := service.NewService(service.Config{Store: st, Messenger: msgr, Executor: meter, Synthesizer: plainSynth{}, Summarizer: boundedSummarizer{}})
		if err != nil {
			b.Fatal(err)
		}
		if err := svc.Start(context.Background()); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		for i := range 500 {
			in := mention(key, fmt.Sprintf("100.%04d", i), fmt.Sprintf("Question %d: ", i)+strings.Repeat("words about the roadmap ", 9)[:180])
			if i > 0 {
				in.Message.Mentioned = false
			}
			if _, err := svc.Submit(context.Background(), in); err != nil {
				b.Fatal(err)
			}
			if err := svc.Wait(context.Background()); err != nil {
				b.Fatal(err)
			}
			<-msgr.posted
		}
		b.StopTimer()
		for _, at := range []int{10, 100, 250, 500} {
			b.ReportMetric(float64(meter.tokens[at-1]), fmt.Sprintf("tokens@%d", at))
		}
		b.ReportMetric(float64(maxInts(meter.tokens)), "max-tokens")
		svc.Shutdown(context.Background())
		st.Close()
		b.StartTimer()
	}
}

func maxInts(xs []int) int {
	m := 0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// BenchmarkPipelineItems measures the pipeline's own cost per item, with an agent that
// answers at once: starting the workflow, approving the outline, then research and
// sections for every item (two items per outline section), each item checkpointed as it
// finishes, on the SQLite store. It reports the run's time divided by the items
// ("ms/item"); a run also holds a fixed part (the start, the approval, and Wait's 5 ms
// polling), so the cost of one more item is the difference between the two sizes.
func BenchmarkPipelineItems(b *testing.B) {
	for _, sections := range []int{4, 30} {
		b.Run(fmt.Sprintf("sections=%d", sections), func(b *testing.B) {
			var outline strings.Builder
			outline.WriteString("# Outline\n")
			for i := range sections {
				fmt.Fprintf(&outline, "\n## Section %d\nWhat it covers.\n", i+1)
			}
			var total time.Duration
			for b.Loop() {
				b.StopTimer()
				pa := newPipelineAgent()
				pa.outline = outline.String()
				h := newPipeline(b, nil, pa, 4)
				b.StartTimer()
				start := time.Now()
				h.toPipeline()
				total += time.Since(start)
				if ws := h.state(); ws.Artifacts["sections"].Status != workflow.StatusApproved {
					b.Fatalf("sections %s", ws.Artifacts["sections"].Status)
				}
			}
			b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N)/float64(2*sections), "ms/item")
		})
	}
}
