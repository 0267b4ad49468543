package main

import (
	"bufio"
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/threadwright/threadwright/internal/profiling"
	"github.com/threadwright/threadwright/playground/emulator"
	"github.com/threadwright/threadwright/store"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

// A cluster is a test deployment of threadwright as an operator runs it: one emulated
// Slack, one fake model, one database (Postgres, optionally behind a proxy that can cut
// it, or the SQLite file of a data directory), and any number of replicas of the
// program attached to them. A replica is either Main run in this process, or the test
// binary run again as the real program (TestMain), which a test can kill -9.

// mainEnv, set to "1", makes the test binary run the real program (main) instead of
// the tests: a replica the cluster can kill.
const mainEnv = "THREADWRIGHT_TEST_RUN_MAIN"

// memProfileEnv, set to a file name in a replica's environment, makes the replica
// write its allocation profile there (pprof's "allocs", sampled at the runtime's
// default rate) at its graceful stop (BURST_MEMPROFILE in BenchmarkBurst). It holds
// the Go heap's allocations only: SQLite's memory, which modernc.org/sqlite allocates
// outside the Go heap, is not in it.
const memProfileEnv = "THREADWRIGHT_TEST_MEMPROFILE"

func TestMain(m *testing.M) {
	if os.Getenv(mainEnv) == "1" {
		if f := os.Getenv(profiling.CPUEnv); f != "" {
			stop, err := profiling.StartCPU(f) // a benchmark's misuse when it fails
			if err != nil {
				panic(err)
			}
			main()
			if err := stop(); err != nil {
				panic(err)
			}
		} else {
			main()
		}
		if f := os.Getenv(memProfileEnv); f != "" {
			writeAllocsProfile(f)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// writeAllocsProfile writes this process's allocation profile to file; it panics when
// it cannot (a benchmark's misuse).
func writeAllocsProfile(file string) {
	runtime.GC() // the profile holds what the last completed collection saw
	f, err := os.Create(file)
	if err != nil {
		panic(err)
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		panic(err)
	}
	if err := f.Close(); err != nil {
		panic(err)
	}
}

type cluster struct {
	t   testing.TB
	emu *emulator.Server
	ai  *openaitest.Server
	// dsn is the replicas' DATABASE_URL ("" for the SQLite file in dataDir); direct
	// is the database's own address, which the proxy forwards to.
	dsn, direct string
	dataDir     string
	proxy       *toxiproxy.Proxy
	// env is added to every replica's environment.
	env map[string]string
	// logs, when set, receives the output of process replicas instead of the test
	// log (benchmarks).
	logs io.Writer
	// now, when set, is the clock of the replicas run in this process (Hooks.Now).
	now func() time.Time
	// defaults, when set, runs replicas with the flood limits at their defaults
	// instead of off (benchmarks of default settings).
	defaults bool
	// patience, when set, is how long waitFor waits instead of a minute (benchmarks
	// of bursts on a loaded machine).
	patience time.Duration
	// binary, when set, is the program startProcess runs instead of this test binary
	// (BURST_BINARY: another commit's build, measured by the same harness).
	binary string

	mu       sync.Mutex
	replicas []*replica
}

// newCluster starts the emulator and the fake model. dsn names the Postgres database
// ("" for SQLite).
func newCluster(t testing.TB, dsn string) *cluster {
	t.Helper()
	emu, err := emulator.NewServer(emulator.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	c := &cluster{t: t, emu: emu, ai: openaitest.NewServer(), dsn: dsn, direct: dsn, dataDir: t.TempDir(), env: map[string]string{}}
	t.Cleanup(func() {
		c.mu.Lock()
		rs := c.replicas
		c.mu.Unlock()
		for _, r := range rs {
			r.stop()
		}
		c.ai.Close()
		emu.Close()
		if c.proxy != nil {
			c.proxy.Stop()
		}
	})
	return c
}

// cuttable puts a proxy between the replicas and Postgres (toxiproxy, used as a
// library), so that a test can cut the database off (cut) and bring it back (restore)
// without touching the machine's server. Call it before starting replicas.
func (c *cluster) cuttable() {
	c.t.Helper()
	if c.dsn == "" {
		c.t.Fatal("cuttable needs Postgres")
	}
	host := dsnHost(c.t, c.dsn)
	server := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	p := toxiproxy.NewProxy(server, "postgres", "127.0.0.1:0", host)
	if err := p.Start(); err != nil {
		c.t.Fatal(err)
	}
	c.proxy = p
	c.dsn = strings.Replace(c.dsn, host, p.Listen, 1)
}

// cut drops every connection through the proxy and refuses new ones.
func (c *cluster) cut() { c.proxy.Stop() }

// restore lets connections through the proxy again.
func (c *cluster) restore() {
	c.t.Helper()
	if err := c.proxy.Start(); err != nil {
		c.t.Fatal(err)
	}
}

// slowDatabase delays everything sent to the database through the proxy by d: a
// statement sent after it does not reach the database before d has passed.
func (c *cluster) slowDatabase(d time.Duration) {
	c.t.Helper()
	_, err := c.proxy.Toxics.AddToxicJson(strings.NewReader(fmt.Sprintf(
		`{"name":"slow","type":"latency","stream":"upstream","attributes":{"latency":%d}}`, d.Milliseconds())))
	if err != nil {
		c.t.Fatal(err)
	}
}

// hangDatabase drops everything the database sends through the proxy, and keeps the
// connections open: the bot's statements get no answer, and no error, until
// unhangDatabase (a network that loses packets with no reset).
func (c *cluster) hangDatabase() {
	c.t.Helper()
	if _, err := c.proxy.Toxics.AddToxicJson(strings.NewReader(
		`{"name":"hang","type":"timeout","stream":"downstream","attributes":{"timeout":0}}`)); err != nil {
		c.t.Fatal(err)
	}
}

// unhangDatabase removes hangDatabase's toxic and resets every connection through
// the proxy, whose protocol lost its answers (as a network's timeout would).
func (c *cluster) unhangDatabase() {
	c.t.Helper()
	if err := c.proxy.Toxics.RemoveToxic(context.Background(), "hang"); err != nil {
		c.t.Fatal(err)
	}
	c.cut()
	c.restore()
}

// dsnHost returns the host:port of a postgres:// DSN.
func dsnHost(t testing.TB, dsn string) string {
	t.Helper()
	rest, ok := strings.CutPrefix(dsn, "postgres://")
	if !ok {
		t.Fatalf("not a postgres:// DSN")
	}
	if i := strings.Index(rest, "@"); i >= 0 {
		rest = rest[i+1:]
	}
	host, _, _ := strings.Cut(rest, "/")
	if _, _, err := net.SplitHostPort(host); err != nil {
		host += ":5432"
	}
	return host
}

// replicaEnv is the environment of a replica named name.
func (c *cluster) replicaEnv(name string) map[string]string {
	env := map[string]string{
		"SLACK_BOT_TOKEN": "xoxb-emulator", "SLACK_APP_TOKEN": "xapp-emulator", "SLACK_API_URL": c.emu.URL(),
		"OPENAI_API_KEY": "sk-test-secret", "OPENAI_BASE_URL": c.ai.URL(), "OPENAI_MODEL": "gpt-test",
		"DATA_DIR": c.dataDir + "/" + name, "DATABASE_URL": c.dsn, "HTTP_ADDR": "", "LOG_LEVEL": "debug",
		"TOOL_TIMEOUT": "2s", "MODEL_TIMEOUT": "20s", "SHUTDOWN_TIMEOUT": "5s",
		"SCOPE_DESCRIPTION": "", "SCOPE_ALLOW": "", "SCOPE_DENY": "", "WORKFLOWS_DIR": "", "APPROVER_USER_IDS": "",
		"STREAM_ANSWERS": "false", "LEASE_TTL": "4s",
		"DOUBLE_TEXTING":        "interrupt", // the tests of the policies set theirs (double_texting_e2e_test.go)
		"MAX_QUEUED_PER_THREAD": "0", "MAX_QUEUED_PER_USER": "0", "USER_RATE": "0",
		// One Socket Mode connection a replica, so that a replica's start and end are
		// one connection more or fewer; benchmarks take the default.
		"SOCKET_CONNECTIONS": "1",
	}
	if c.dsn == "" {
		env["DATA_DIR"] = c.dataDir // one SQLite file for every start
	}
	if c.defaults {
		for _, k := range []string{"MAX_QUEUED_PER_THREAD", "MAX_QUEUED_PER_USER", "USER_RATE", "STREAM_ANSWERS", "LEASE_TTL", "MODEL_TIMEOUT", "SOCKET_CONNECTIONS"} {
			delete(env, k)
		}
	}
	for k, v := range c.env {
		env[k] = v
	}
	return env
}

// replica is one running threadwright.
type replica struct {
	name string
	c    *cluster
	// In this process:
	main   *Main
	cancel context.CancelFunc
	done   chan error
	// As a process of its own:
	cmd    *exec.Cmd
	exited chan struct{}
}

// startMain runs a replica as Main in this process and waits until it is connected.
func (c *cluster) startMain(name string) *replica {
	c.t.Helper()
	before := c.emu.NumConnections()
	for k, v := range c.replicaEnv(name) {
		c.t.Setenv(k, v)
	}
	m := NewMain()
	if err := LoadConfig(&m.Config); err != nil {
		c.t.Fatal(err)
	}
	m.Logger = slog.New(slog.NewTextHandler(testWriter{c.t}, &slog.HandlerOptions{Level: slog.LevelDebug})).With("replica", name)
	m.Hooks.Now = c.now
	ctx, cancel := context.WithCancel(context.Background())
	r := &replica{name: name, c: c, main: m, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- m.Run(ctx) }()
	c.add(r)
	conns := c.socketConnections(name)
	c.waitFor(name+" to connect", func() bool { return c.emu.NumConnections() >= before+conns })
	return r
}

// startProcess runs a replica as a process of its own (the test binary running main)
// and waits until it is connected.
func (c *cluster) startProcess(name string) *replica {
	c.t.Helper()
	before := c.emu.NumConnections()
	// This test binary's TestMain runs main, which runs "run"; another build (binary)
	// runs "run" when given no arguments.
	cmd := exec.Command(cmp.Or(c.binary, os.Args[0]))
	cmd.Env = append(os.Environ(), mainEnv+"=1")
	for k, v := range c.replicaEnv(name) {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.StderrPipe()
	if err != nil {
		c.t.Fatal(err)
	}
	cmd.Stdout = cmd.Stderr
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	r := &replica{name: name, c: c, cmd: cmd, exited: make(chan struct{})}
	conns := c.socketConnections(name)
	go func() {
		if c.logs != nil {
			_, _ = io.Copy(c.logs, out)
		} else {
			sc := bufio.NewScanner(out)
			sc.Buffer(make([]byte, 64<<10), 1<<20)
			for sc.Scan() {
				c.t.Log(name + ": " + sc.Text())
			}
		}
		_ = cmd.Wait()
		close(r.exited)
	}()
	c.add(r)
	c.waitFor(name+" to connect", func() bool {
		select {
		case <-r.exited:
			c.t.Fatalf("replica %s exited: %v", name, cmd.ProcessState)
		default:
		}
		return c.emu.NumConnections() >= before+conns
	})
	return r
}

// socketConnections is how many Socket Mode connections replica name opens (a
// process replica inherits this process's environment).
func (c *cluster) socketConnections(name string) int {
	n, err := strconv.Atoi(cmp.Or(c.replicaEnv(name)["SOCKET_CONNECTIONS"], os.Getenv("SOCKET_CONNECTIONS")))
	if err != nil {
		return 2 // the default
	}
	return n
}

func (c *cluster) add(r *replica) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.replicas = append(c.replicas, r)
}

// kill ends a process replica with SIGKILL, as a crash or an OOM kill would, and
// waits for it to be gone.
func (r *replica) kill() {
	r.c.t.Helper()
	if r.cmd == nil {
		r.c.t.Fatal("kill needs a process replica (startProcess)")
	}
	before := r.c.emu.NumConnections()
	_ = r.cmd.Process.Signal(syscall.SIGKILL)
	<-r.exited
	r.c.waitFor("the emulator to see the killed replica's connection drop", func() bool { return r.c.emu.NumConnections() < before })
}

// stop ends a replica gracefully (SIGTERM for a process) and waits for it.
func (r *replica) stop() {
	switch {
	case r.cmd != nil:
		select {
		case <-r.exited:
			return
		default:
		}
		_ = r.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-r.exited:
		case <-time.After(20 * time.Second):
			_ = r.cmd.Process.Kill()
			<-r.exited
		}
	case r.cancel != nil:
		r.cancel()
		select {
		case <-r.done:
		case <-time.After(20 * time.Second):
			r.c.t.Errorf("replica %s did not stop", r.name)
		}
		r.cancel = nil
	}
}

// waitFor polls cond until it holds, failing the test after a minute (or patience).
func (c *cluster) waitFor(what string, cond func() bool) {
	c.t.Helper()
	deadline := time.Now().Add(cmp.Or(c.patience, time.Minute))
	for !cond() {
		if time.Now().After(deadline) {
			c.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// post posts a person's message and returns its ts.
func (c *cluster) post(channel, user, text, threadTS string) string {
	c.t.Helper()
	ts, err := c.emu.PostUserMessage(channel, user, text, threadTS)
	if err != nil {
		c.t.Fatal(err)
	}
	return ts
}

// answers returns the texts of the bot's messages in a thread, oldest first.
func (c *cluster) answers(channel, threadTS string) []string {
	var out []string
	for _, m := range c.emu.BotMessages(channel, threadTS) {
		out = append(out, m.Text)
	}
	return out
}

// waitAnswers waits until the thread shows n answers of the bot and returns them.
func (c *cluster) waitAnswers(channel, threadTS string, n int) []string {
	c.t.Helper()
	c.waitFor(fmt.Sprintf("%d answers in thread %s", n, threadTS), func() bool { return len(c.answers(channel, threadTS)) >= n })
	return c.answers(channel, threadTS)
}

// settle waits until no input is pending in the store and every replica of this
// process is idle: every input has been answered (or dropped) and saved, so the
// threads show all they will show.
func (c *cluster) settle() {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c.waitFor("no pending input", func() bool { return c.pendingInputs() == 0 })
	c.mu.Lock()
	rs := c.replicas
	c.mu.Unlock()
	for _, r := range rs {
		if r.main != nil && r.cancel != nil {
			if err := r.main.Wait(ctx); err != nil {
				c.t.Fatal(err)
			}
		}
	}
}

// pendingInputs counts the inputs the store holds as pending, read directly from the
// database.
// atModel reports whether the model has been asked about message format (with a %d
// for the thread) of each of threads threads.
func (c *cluster) atModel(format string, threads int) bool {
	seen := map[int]bool{}
	for _, r := range c.ai.Requests() {
		var i int
		if _, err := fmt.Sscanf(r.LastUserMessage(), format, &i); err == nil && fmt.Sprintf(format, i) == r.LastUserMessage() {
			seen[i] = true
		}
	}
	return len(seen) == threads
}

// liveLeases counts the Postgres leases held and not expired by the database's clock,
// read over the direct connection (not through the proxy a test may cut); -1 when it
// cannot tell.
func (c *cluster) liveLeases() int {
	c.t.Helper()
	db, err := sql.Open("postgres", c.direct)
	if err != nil {
		c.t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM leases WHERE owner IS NOT NULL AND expires_at > now()`).Scan(&n); err != nil {
		return -1
	}
	return n
}

func (c *cluster) pendingInputs() int {
	c.t.Helper()
	driver, dsn := "postgres", c.direct
	if dsn == "" {
		driver, dsn = "sqlite", "file:"+filepath.Join(c.dataDir, store.FileName)+"?mode=ro"
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		c.t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM inputs WHERE status = 'pending'`).Scan(&n); err != nil {
		return -1 // not migrated yet, or busy: not settled
	}
	return n
}
