package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/threadwright/threadwright/internal/profiling"
	"github.com/threadwright/threadwright/playground/emulator"
	"github.com/threadwright/threadwright/store/storetest"
	"github.com/threadwright/threadwright/testkit/openaitest"
	"golang.org/x/time/rate"
)

// BenchmarkTakeover measures how long a thread waits after the replica running its
// turn is killed -9 in the model call: a second replica, running all along, takes it
// over once the dead one's lease expires (default LEASE_TTL) and answers. Postgres
// only (TEST_DATABASE_URL). Each iteration takes about LEASE_TTL; run it with
// -benchtime=3x.
func BenchmarkTakeover(b *testing.B) {
	dsn := storetest.PostgresDSN(b)
	var takeovers []time.Duration
	for i := range b.N {
		b.StopTimer()
		c := newCluster(b, dsn)
		c.logs = io.Discard
		c.env["LEASE_TTL"] = "10s"
		c.env["LOG_LEVEL"] = "warn"
		g := c.gatedModel(func(n int32, _ openaitest.Request) bool { return n == 1 })
		a := c.startProcess("a")
		root := c.post(general, alice, fmt.Sprintf("<@U0BOT> question %d", i), "")
		c.waitFor("a's turn to call the model", func() bool { return g.calls.Load() == 1 })
		c.startMain("b")
		b.StartTimer()
		killed := time.Now()
		a.kill()
		c.waitAnswers(general, root, 1)
		takeovers = append(takeovers, time.Since(killed))
		b.StopTimer()
		c.settle()
	}
	b.ReportMetric(percentile(takeovers, 50).Seconds(), "p50-takeover-s")
	b.ReportMetric(percentile(takeovers, 100).Seconds(), "max-takeover-s")
}

// BenchmarkBurst drives the real program (a process of its own, default settings, over
// Socket Mode against the emulator) with a burst of N mentions from N people, each in a
// thread of its own, posted evenly over the burst's window (issue 24's workloads:
// 1,000 in 0.25 s, 3,000 in 1.2 s; BURST_PACE=off posts them as fast as the emulator
// takes them, as the benchmark did before it was paced), against a model that takes D
// to answer. For each store it reports the envelopes' ack latency (p50, p99,
// max: from the delivery written to the ack read; and p99 from its dispatch, which
// adds the time it waited in the emulator's queue for the socket, as Slack's ack
// deadline counts it; and p99 apart for the envelopes of the people's mentions, which
// come in the burst, and for the others, mostly the events of the bot's own messages,
// which come while the turns post their answers), the deliveries again for a late ack,
// the time from the first mention to the last answer, the replica's CPU time per turn
// (from the first mention to its exit; its CPU before the first mention is reported
// apart, as startup-cpu-ms) and peak RSS (the process's rusage), the CPU time per
// turn of this process, the emulated Slack and model that share the machine's cores
// with the replica (harness-cpu-ms/turn, from the first mention to the last ack),
// Slack Web API calls per turn (all, and assistant.threads.setStatus), and the
// threads answered more than once or with another thread's answer (both must be 0),
// and how long the posting took (posted-in-s); it logs the acks by quarter second.
// BURST_LOG=file keeps the replica's log, BURST_CPUPROFILE=file its CPU profile (go
// tool pprof), start to stop, BURST_MEMPROFILE=file its Go heap's allocations, start to
// stop (pprof's "allocs"; SQLite's memory is not in it), and BURST_WINDOW_PROFILE=file
// its CPU profile of the first second from the first mention, taken through DEBUG_ADDR:
// what the replica does while the burst's acks are due. BURST_BINARY=file runs that
// program as the replica instead of this test binary: another commit's build (go build
// ./cmd/threadwright in its checkout), measured by this harness in the same spell of
// the machine; an older build that opens one Socket Mode connection needs
// SOCKET_CONNECTIONS=1 here, so that the harness waits for one. BURST_CPUPROFILE
// works for this test binary (its TestMain writes the profile) and for the floor,
// BURST_MEMPROFILE only for this test binary, and BURST_WINDOW_PROFILE only for a
// build with DEBUG_ADDR. Cases: N=1000 D=2s on SQLite and on Postgres, N=3000 D=0 on
// Postgres (TEST_DATABASE_URL), N=100 D=2s on SQLite, and Floor, N=1000 D=2s
// (-bench 'BenchmarkBurst/Floor/'): internal/burstfloor as the replica, which makes
// a plain turn's ack, Slack calls and chat completion (the request this test binary's
// build sends for a mention) through the same libraries, and leaves out the rest
// (the store, the admission, the log; its package doc lists it all): a floor that no
// turn of the bot goes below, measured in the same spell (burstFloor). README.md's
// numbers come from
//
//	go test -run XXX -bench BenchmarkBurst -benchtime 1x ./cmd/threadwright
func BenchmarkBurst(b *testing.B) {
	for _, bc := range []struct {
		store   string
		threads int
		delay   time.Duration
		window  time.Duration
	}{
		{"SQLite", 1000, 2 * time.Second, 250 * time.Millisecond}, {"Postgres", 1000, 2 * time.Second, 250 * time.Millisecond},
		{"Postgres", 3000, 0, 1200 * time.Millisecond}, {"SQLite", 100, 2 * time.Second, 25 * time.Millisecond},
		{"Floor", 1000, 2 * time.Second, 250 * time.Millisecond},
	} {
		b.Run(fmt.Sprintf("%s/N=%d/D=%s", bc.store, bc.threads, bc.delay), func(b *testing.B) {
			dsn := ""
			if bc.store == "Postgres" {
				dsn = storetest.PostgresDSN(b)
			}
			if bc.store == "Floor" {
				binary, request := burstFloor(b)
				b.Setenv("BURST_BINARY", binary)
				b.Setenv("FLOOR_REQUEST", request)
			}
			window := bc.window
			if os.Getenv("BURST_PACE") == "off" {
				window = 0
			}
			benchBurst(b, dsn, bc.threads, bc.delay, window)
		})
	}
}

// burstFloor builds internal/burstfloor, the calls of a turn through its libraries
// alone, into a temporary directory, and writes the chat completion request this
// commit's turn sends for a mention there, taken from a replica (this test binary)
// answering one: it returns the program's and the request's paths, for BURST_BINARY
// and FLOOR_REQUEST.
func burstFloor(b *testing.B) (binary, request string) {
	b.Helper()
	dir := b.TempDir()
	binary = filepath.Join(dir, "burstfloor")
	build := exec.Command("go", "build", "-o", binary, "github.com/threadwright/threadwright/internal/burstfloor")
	if v, _, _ := strings.Cut(runtime.Version(), " "); strings.HasPrefix(v, "go") {
		// The Go this test was built with, whichever go is on the PATH: go.mod's may
		// be newer than the machine's (README.md, "Quick start"). A build with a
		// GOEXPERIMENT reports it after a space ("go1.27.3 X:jsonv2").
		build.Env = append(os.Environ(), "GOTOOLCHAIN="+v)
	}
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("build internal/burstfloor: %v\n%s", err, out)
	}
	c := newCluster(b, "")
	c.logs = io.Discard
	c.defaults = true
	c.echoModel(0)
	c.emu.AddUser(emulator.User{ID: "U0FLOOR", Name: "floor"})
	r := c.startProcess("a")
	root := c.post(general, "U0FLOOR", "<@U0BOT> burst question q0q", "")
	c.waitFor("the answer", func() bool { return len(c.emu.BotMessages(general, root)) > 0 })
	r.stop()
	reqs := c.ai.Requests()
	if len(reqs) != 1 {
		b.Fatalf("a mention made %d chat completion requests, want 1 (a STRATEGY or SCOPE_* setting in the "+
			"environment that adds a model call, such as STRATEGY=auto's router, does not fit the floor)", len(reqs))
	}
	request = filepath.Join(dir, "request.json")
	if err := os.WriteFile(request, reqs[0].Body, 0o600); err != nil {
		b.Fatal(err)
	}
	return binary, request
}

// burstPacer returns a limiter that lets a burst of threads mentions through evenly
// over window, five at a time at most (0 window: no limit).
func burstPacer(threads int, window time.Duration) *rate.Limiter {
	if window <= 0 {
		return rate.NewLimiter(rate.Inf, 1)
	}
	return rate.NewLimiter(rate.Limit(float64(threads)/window.Seconds()), 5)
}

func benchBurst(b *testing.B, dsn string, threads int, delay, window time.Duration) {
	for range b.N {
		b.StopTimer()
		c := newCluster(b, dsn)
		c.logs = io.Discard
		if f := os.Getenv("BURST_LOG"); f != "" { // the replica's log, to see what went wrong
			lf, err := os.Create(f)
			if err != nil {
				b.Fatal(err)
			}
			defer lf.Close()
			c.logs = lf
		}
		c.defaults = true
		c.patience = 10 * time.Minute
		c.binary = os.Getenv("BURST_BINARY")
		c.env["LOG_LEVEL"] = "info"
		if f := os.Getenv("BURST_CPUPROFILE"); f != "" { // the replica's CPU profile, start to stop
			c.env[profiling.CPUEnv] = f
		}
		if f := os.Getenv("BURST_MEMPROFILE"); f != "" { // the replica's Go heap allocations, start to stop
			c.env[memProfileEnv] = f
		}
		c.echoModel(delay)
		windowFile := os.Getenv("BURST_WINDOW_PROFILE")
		if windowFile != "" { // the replica's profiling endpoints (DEBUG_ADDR), for windowProfile
			if os.Getenv("BURST_CPUPROFILE") != "" {
				b.Fatal("BURST_WINDOW_PROFILE and BURST_CPUPROFILE: set one (a process takes one CPU profile at a time)")
			}
			c.env["DEBUG_ADDR"] = freeLoopbackAddr(b)
		}
		users := make([]string, threads)
		for i := range users {
			users[i] = fmt.Sprintf("U0LOAD%05d", i)
			c.emu.AddUser(emulator.User{ID: users[i], Name: fmt.Sprintf("load%d", i)})
		}
		r := c.startProcess("a")
		before := c.emu.Calls("")
		startup := processCPU(b, r.cmd.Process.Pid)
		b.StartTimer()
		start := time.Now()
		selfStart := storetest.SelfCPU(b)
		profiled := windowProfile(b, c.env["DEBUG_ADDR"], windowFile)
		roots := make([]string, threads)
		questions := make([]string, threads)
		pace := burstPacer(threads, window)
		for i := range threads {
			if err := pace.Wait(context.Background()); err != nil {
				b.Fatal(err)
			}
			questions[i] = fmt.Sprintf("burst question q%dq", i)
			roots[i] = c.post(general, users[i], "<@U0BOT> "+questions[i], "")
		}
		posted := time.Since(start)
		answered := 0 // roots[:answered] have their answer: each poll looks at one more
		c.waitFor("every thread's answer", func() bool {
			for answered < threads && len(c.emu.BotMessages(general, roots[answered])) > 0 {
				answered++
			}
			return answered == threads
		})
		last := time.Since(start)
		b.StopTimer()
		<-profiled
		c.waitFor("every envelope's ack", func() bool {
			for _, e := range c.emu.Envelopes() {
				if !e.Acked && !e.GaveUp {
					return false
				}
			}
			return true
		})
		harness := storetest.SelfCPU(b) - selfStart
		r.stop()
		reportBurst(b, c, burstRun{start: start, harness: harness, roots: roots, questions: questions, posted: posted, last: last, calls: c.emu.Calls("")[len(before):], replica: r, startup: startup})
	}
}

// burstRun is what one run of benchBurst saw.
type burstRun struct {
	roots, questions []string
	// posted is how long the mentions took to post; last, from the first to the last
	// answer.
	posted, last time.Duration
	start        time.Time // of the first mention
	// calls are the Web API calls made from the first mention on.
	calls   []emulator.Call
	replica *replica
	// startup is the replica's CPU time before the first mention: its start, migrations
	// and connections, which are not a turn's.
	startup time.Duration
	// harness is the CPU time this process (the emulated Slack, the model and the
	// benchmark's own polling) used from the first mention to the last ack.
	harness time.Duration
}

// reportBurst reports run's metrics (see BenchmarkBurst).
func reportBurst(b *testing.B, c *cluster, run burstRun) {
	threads := len(run.roots)
	mention := map[string]bool{} // the envelopes of the people's mentions, by id
	roots := map[string]bool{}
	for _, root := range run.roots {
		roots[root] = true
	}
	redelivered := 0
	for _, e := range c.emu.Envelopes() {
		redelivered += max(e.Deliveries-1, 0)
		mention[e.ID] = roots[e.TS]
	}
	var acks, dispatched, mentions, others []time.Duration
	for _, a := range c.emu.Acks() {
		acks = append(acks, a.Latency)
		dispatched = append(dispatched, a.Waited+a.Latency)
		if mention[a.EnvelopeID] {
			mentions = append(mentions, a.Latency)
		} else {
			others = append(others, a.Latency)
		}
	}
	duplicates, wrong := 0, 0
	for i, root := range run.roots {
		answers := c.answers(general, root)
		if len(answers) > 1 {
			duplicates++
		}
		for _, a := range answers {
			if !strings.Contains(a, run.questions[i]) {
				wrong++
			}
		}
	}
	methods := map[string]int{}
	for _, call := range run.calls {
		methods[call.Method]++
	}
	b.Logf("Slack calls per turn by method: %v", perTurn(methods, threads))
	b.Logf("acks by when the emulator took them, from the first mention: %s", acksOverTime(c.emu.Acks(), run.start, 250*time.Millisecond))
	statuses := methods["assistant.threads.setStatus"]
	b.ReportMetric(ms(percentile(acks, 50)), "ack-p50-ms")
	b.ReportMetric(ms(percentile(acks, 99)), "ack-p99-ms")
	b.ReportMetric(ms(percentile(acks, 100)), "ack-max-ms")
	b.ReportMetric(ms(percentile(dispatched, 99)), "dispatch-ack-p99-ms")
	b.ReportMetric(ms(percentile(mentions, 99)), "mention-ack-p99-ms")
	b.ReportMetric(ms(percentile(others, 99)), "other-ack-p99-ms")
	b.ReportMetric(float64(redelivered), "redeliveries")
	b.ReportMetric(run.last.Seconds(), "last-answer-s")
	b.ReportMetric(run.posted.Seconds(), "posted-in-s")
	b.ReportMetric(float64(len(run.calls))/float64(threads), "slack-calls/turn")
	b.ReportMetric(float64(statuses)/float64(threads), "setStatus/turn")
	b.ReportMetric(float64(duplicates), "duplicates")
	b.ReportMetric(float64(wrong), "wrong-thread")
	if ru, _ := run.replica.cmd.ProcessState.SysUsage().(*syscall.Rusage); ru != nil {
		cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		b.ReportMetric(float64(ru.Maxrss)/1024, "peak-rss-MiB")
		b.ReportMetric(float64((cpu-run.startup).Microseconds())/1000/float64(threads), "cpu-ms/turn")
		b.ReportMetric(float64(run.startup.Milliseconds()), "startup-cpu-ms")
	}
	b.ReportMetric(float64(run.harness.Microseconds())/1000/float64(threads), "harness-cpu-ms/turn")
}

// processCPU returns the user and system CPU time process pid has used so far, read
// from /proc/PID/stat (utime and stime, fields 14 and 15, in USER_HZ ticks of 10 ms;
// proc(5)).
func processCPU(b *testing.B, pid int) time.Duration {
	b.Helper()
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatalf("read the replica's CPU time: %v", err)
	}
	// The command name (field 2) is in parentheses and may hold spaces: fields count
	// from after its closing one, where field 3 is the first.
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	var ticks int64
	for _, f := range fields[14-3 : 15-3+1] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			b.Fatalf("read the replica's CPU time from %q: %v", stat, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}

// acksOverTime describes acks in windows of width from start, by when the emulator
// took each (Ack.Time, a little after the read its Latency ends at; one taken before
// start counts in the first window): for each window with acks, "from-to s: n acks,
// p99 ms".
func acksOverTime(acks []emulator.Ack, start time.Time, width time.Duration) string {
	windows := map[int][]time.Duration{}
	last := 0
	for _, a := range acks {
		w := int(max(a.Time.Sub(start), 0) / width)
		windows[w] = append(windows[w], a.Latency)
		last = max(last, w)
	}
	var out []string
	for w := 0; w <= last; w++ {
		if lat := windows[w]; len(lat) > 0 {
			out = append(out, fmt.Sprintf("%.2f-%.2f s: %d acks, p99 %.0f ms", (time.Duration(w)*width).Seconds(),
				(time.Duration(w+1)*width).Seconds(), len(lat), ms(percentile(lat, 99))))
		}
	}
	return strings.Join(out, "; ")
}

// perTurn returns counts divided by turns, as "method=calls/turn" sorted by method.
func perTurn(counts map[string]int, turns int) string {
	var out []string
	for m, n := range counts {
		out = append(out, fmt.Sprintf("%s=%.2f", m, float64(n)/float64(turns)))
	}
	slices.Sort(out)
	return strings.Join(out, " ")
}

// windowProfile takes, in the background, a CPU profile of one second of the replica
// serving its profiling endpoints at addr (DEBUG_ADDR), into file; the channel
// returned is closed once it is written (at once when file is "").
func windowProfile(b *testing.B, addr, file string) <-chan struct{} {
	done := make(chan struct{})
	if file == "" {
		close(done)
		return done
	}
	b.Cleanup(func() { <-done }) // a benchmark that stops early waits for it
	go func() {
		defer close(done)
		resp, err := http.Get("http://" + addr + "/debug/pprof/profile?seconds=1")
		if err != nil {
			b.Errorf("window profile: %v", err)
			return
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("%s: %s", resp.Status, data)
		}
		if err == nil {
			err = os.WriteFile(file, data, 0o644)
		}
		if err != nil {
			b.Errorf("window profile: %v", err)
		}
	}()
	return done
}

// freeLoopbackAddr returns a loopback address with a port free when it was asked.
func freeLoopbackAddr(b *testing.B) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
