package workflowrun

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// gatedFetcher holds every fetch at gate (or until ctx ends), counting the fetches in
// flight.
type gatedFetcher struct {
	gate chan struct{}

	mu        sync.Mutex
	calls     int
	inFlight  int
	maxFlight int
}

func (f *gatedFetcher) FetchSource(ctx context.Context, url string) (conversation.SourcePage, error) {
	f.mu.Lock()
	f.calls++
	f.inFlight++
	f.maxFlight = max(f.maxFlight, f.inFlight)
	f.mu.Unlock()
	defer func() { f.mu.Lock(); f.inFlight--; f.mu.Unlock() }()
	select {
	case <-f.gate:
		return conversation.SourcePage{URL: url, Title: "T " + url, Text: "text of " + url}, nil
	case <-ctx.Done():
		return conversation.SourcePage{}, ctx.Err()
	}
}

func (f *gatedFetcher) counts() (calls, inFlight, maxFlight int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls, f.inFlight, f.maxFlight
}

// fetchJob is an item of a fetch artifact whose research notes link n pages.
func fetchJob(n int) itemJob {
	var notes strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&notes, "- [page %d](https://pages.test/p%d)\n", i, i)
	}
	a := &workflow.Artifact{ID: "sources", Mode: workflow.ModeAuto, Fetch: "research"}
	return itemJob{artifact: "sources", req: conversation.ArtifactRequest{Artifact: a, Approved: map[string]string{"research": notes.String()}}}
}

func testWorker(f conversation.SourceFetcher) worker {
	return worker{fetcher: f, log: slog.New(slog.DiscardHandler), redact: func(s string) string { return s }}
}

// TestRunFetchBoundsConcurrency: an item's pages are fetched maxSourceFetches at
// once, never more, each once.
func TestRunFetchBoundsConcurrency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &gatedFetcher{gate: make(chan struct{})}
		done := make(chan itemResult)
		go func() { done <- testWorker(f).runFetch(t.Context(), fetchJob(9)) }()
		synctest.Wait() // every fetch that can start has started and waits at the gate
		if _, inFlight, _ := f.counts(); inFlight != maxSourceFetches {
			t.Fatalf("%d fetches in flight; want %d", inFlight, maxSourceFetches)
		}
		close(f.gate)
		r := <-done
		calls, _, maxFlight := f.counts()
		if calls != 9 || maxFlight != maxSourceFetches {
			t.Errorf("%d fetches, at most %d at once; want 9, at most %d", calls, maxFlight, maxSourceFetches)
		}
		if r.cut || r.reason != "" || !strings.Contains(r.text, "### T https://pages.test/p9\nSource: https://pages.test/p9\ntext of https://pages.test/p9") {
			t.Errorf("result = %+v", r)
		}
	})
}

// TestRunFetchHonoursCtx: a turn that ends while pages are being fetched cuts the
// item (it is fetched again in the next part) and leaves no fetch behind.
func TestRunFetchHonoursCtx(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &gatedFetcher{gate: make(chan struct{})}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan itemResult)
		go func() { done <- testWorker(f).runFetch(ctx, fetchJob(3)) }()
		synctest.Wait()
		cancel()
		r := <-done
		if !r.cut || r.text != "" {
			t.Errorf("result after cancel = %+v; want cut", r)
		}
		if _, inFlight, _ := f.counts(); inFlight != 0 {
			t.Errorf("%d fetches still running after runFetch returned", inFlight)
		}
	})
}

func TestClipSource(t *testing.T) {
	long := strings.Repeat("é", workflow.MaxSourceChars+10)
	got := clipSource(long, workflow.MaxSourceChars)
	if !strings.HasPrefix(got, strings.Repeat("é", workflow.MaxSourceChars)+"\n[cut: the page has 6010 characters; the first 6000 are kept]") {
		t.Errorf("clipSource = …%q", got[len(got)-80:])
	}
	if clipSource("short", workflow.MaxSourceChars) != "short" {
		t.Error("a short text was changed")
	}
}

// bigPages answers every fetch at once with a page of n runes.
type bigPages int

func (n bigPages) FetchSource(ctx context.Context, url string) (conversation.SourcePage, error) {
	if err := ctx.Err(); err != nil {
		return conversation.SourcePage{}, err
	}
	return conversation.SourcePage{URL: url, Title: "Big", Text: strings.Repeat("ж", int(n))}, nil
}

// TestRunFetchSharesTheItemBudget: an item's pages share workflow.MaxSourceItemChars:
// with many long pages, each keeps its share, so the item (and the checkpoint that
// holds it) stays bounded; with few, each keeps up to workflow.MaxSourceChars.
func TestRunFetchSharesTheItemBudget(t *testing.T) {
	for _, n := range []int{2, workflow.MaxFetchURLs} {
		r := testWorker(bigPages(10_000)).runFetch(t.Context(), fetchJob(n))
		kept := strings.Count(r.text, "ж")
		if want := n * workflow.SourceChars(n); kept != want || kept > workflow.MaxSourceItemChars {
			t.Errorf("%d pages of 10,000 runes: %d kept; want %d, at most %d", n, kept, want, workflow.MaxSourceItemChars)
		}
		if n == 2 && workflow.SourceChars(n) != workflow.MaxSourceChars {
			t.Errorf("two pages keep %d runes each; want %d", workflow.SourceChars(n), workflow.MaxSourceChars)
		}
	}
}
