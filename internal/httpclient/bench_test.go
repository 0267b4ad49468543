package httpclient_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/threadwright/threadwright/internal/httpclient"
	"github.com/threadwright/threadwright/internal/tracing"
	"github.com/threadwright/threadwright/metrics"
)

// slackServer starts a plain HTTP/1.1 server that answers every Web API call with
// answer (JSON) and counts the connections it accepts.
func slackServer(tb testing.TB, answer string) (srv *httptest.Server, conns *atomic.Int64) {
	tb.Helper()
	conns = new(atomic.Int64)
	srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		io.WriteString(w, answer)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	tb.Cleanup(srv.Close)
	return srv, conns
}

// burstCalls is how many Web API calls BenchmarkSlackBurst makes at once: a burst of
// 1,000 threads' turns, as cmd/threadwright's BenchmarkBurst.
const burstCalls = 1000

// BenchmarkSlackBurst measures rounds of burstCalls concurrent
// assistant.threads.setStatus calls through slack-go on the client
// cmd/threadwright gives it (NewSlack, counted by metrics and traced, tracing off)
// against a local HTTP/1.1 server, as a burst of turns makes them against the
// emulator; dials/op is the connections opened per round and cpu-ms/op the
// process's CPU time (user and system) per round. The server runs in the same
// process, so both include its side.
func BenchmarkSlackBurst(b *testing.B) {
	srv, conns := slackServer(b, `{"ok":true}`)
	hc := tracing.SlackClient(metrics.New(metrics.Options{}).SlackClient(httpclient.NewSlack()))
	api := slack.New("xoxb-bench", slack.OptionHTTPClient(hc), slack.OptionAPIURL(srv.URL+"/api/"))
	params := slack.AssistantThreadsSetStatusParameters{ChannelID: "C1", ThreadTS: "1.000001", Status: "is thinking…"}
	b.ReportAllocs()
	cpu := cpuTime(b)
	for b.Loop() {
		var wg sync.WaitGroup
		for range burstCalls {
			wg.Go(func() {
				if err := api.SetAssistantThreadsStatusContext(context.Background(), params); err != nil {
					b.Error(err)
				}
			})
		}
		wg.Wait()
	}
	b.ReportMetric(float64(conns.Load())/float64(b.N), "dials/op")
	b.ReportMetric(float64((cpuTime(b)-cpu).Microseconds())/1000/float64(b.N), "cpu-ms/op")
}

// cpuTime returns the CPU time (user and system) the process has used.
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSlackCall measures one assistant.threads.setStatus call at a time through
// slack-go on each layer of the client cmd/threadwright gives it, against a local
// HTTP/1.1 server (whose side ns/op includes): the bare transport (the token in the
// form), BearerToken on it (NewSlack), metrics.SlackClient on that, and
// tracing.SlackClient outside (tracing off: the global no-op provider).
func BenchmarkSlackCall(b *testing.B) {
	srv, _ := slackServer(b, `{"ok":true}`)
	m := metrics.New(metrics.Options{})
	for _, tc := range []struct {
		name string
		hc   *http.Client
	}{
		{"Transport", &http.Client{Transport: httpclient.NewTransport()}},
		{"Bearer", httpclient.NewSlack()},
		{"Metrics", m.SlackClient(httpclient.NewSlack())},
		{"Traced", tracing.SlackClient(m.SlackClient(httpclient.NewSlack()))},
	} {
		b.Run(tc.name, func(b *testing.B) {
			api := slack.New("xoxb-bench", slack.OptionHTTPClient(tc.hc), slack.OptionAPIURL(srv.URL+"/api/"))
			params := slack.AssistantThreadsSetStatusParameters{ChannelID: "C1", ThreadTS: "1.000001", Status: "is thinking…"}
			b.ReportAllocs()
			for b.Loop() {
				if err := api.SetAssistantThreadsStatusContext(context.Background(), params); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
