package main

import (
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// readmeTour is what the test takes from README.md, its whitespace collapsed: the
// quick start's command, the first question of the tour, and the knowledge step's
// ingest arguments, question and promised source.
type readmeTour struct {
	devCommand, firstQuestion, question, source string
	ingestArgs                                  []string
}

// readReadme reads ../../README.md and finds the commands and questions of its quick
// start and tour; a part it cannot find fails the test, naming it.
func readReadme(t *testing.T) readmeTour {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(b)), " ")
	find := func(what, re string) []string {
		t.Helper()
		m := regexp.MustCompile(re).FindStringSubmatch(text)
		if m == nil {
			t.Fatalf("README.md: no %s (%s)", what, re)
		}
		return m
	}
	var r readmeTour
	r.devCommand = find("quick start command", "## Quick start .*?```sh (go run ./cmd/threadwright dev) ```")[1]
	r.firstQuestion = find("first question of the tour", "send `(@threadwright [^`]+)`")[1]
	r.ingestArgs = strings.Fields(find("ingest command", "```sh go run ./cmd/threadwright (ingest --dev [^ `]+) go run ./cmd/threadwright dev ```")[1])
	r.question = find("knowledge question", "Ask `(@threadwright [^`]+)`")[1]
	r.source = find("promised source", "the answer ends with its source, `([^`]+)`")[1]
	return r
}

// askPlayground posts text to #general as alice and waits until the playground's
// state holds every string of want; it fails the test with the state otherwise.
func askPlayground(t *testing.T, url, text string, want ...string) {
	t.Helper()
	client := sessionClient(t)
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	post := `{"channel":"C0GENERAL","user":"U0ALICE","text":` + strconv.Quote(text) + `}`
	if status := postStatus(t, client, url+"ui/post", post); status != http.StatusOK {
		t.Fatalf("post %q: status %d", text, status)
	}
	if state, ok := waitPlaygroundState(t, client, url, func(state string) bool {
		for _, w := range want {
			if !strings.Contains(state, w) {
				return false
			}
		}
		return true
	}); !ok {
		t.Fatalf("asked %q; want %q in the playground; state:\n%s", text, want, state)
	}
}

// TestReadmeQuickStart runs README.md's quick start as written, offline: `dev` to the
// answer of the tour's first question, then `ingest --dev` on the path the README
// names (from the repository's root, as a reader runs it), and `dev` again answering
// the README's knowledge question with the source the README promises.
func TestReadmeQuickStart(t *testing.T) {
	r := readReadme(t)
	if r.devCommand != "go run ./cmd/threadwright dev" {
		t.Fatalf("quick start command %q", r.devCommand)
	}
	m := regexp.MustCompile(`(\d+) \* (\d+)`).FindStringSubmatch(r.firstQuestion)
	if m == nil {
		t.Fatalf("the tour's first question %q is no longer a product; teach this test its answer", r.firstQuestion)
	}
	a, _ := strconv.Atoi(m[1])
	b, _ := strconv.Atoi(m[2])
	dataDir := t.TempDir()
	t.Run("Dev", func(t *testing.T) {
		url, _ := startDev(t, map[string]string{"DATA_DIR": dataDir})
		askPlayground(t, url, r.firstQuestion, strconv.Itoa(a*b))
	})

	t.Chdir("../..") // the README's paths are the repository's
	t.Setenv("DATA_DIR", dataDir)
	t.Setenv("DATABASE_URL", "")
	os.Unsetenv("DATABASE_URL")
	out, err := runCLI(t, r.ingestArgs...)
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(r.ingestArgs, " "), err, out)
	}
	if !strings.Contains(out, "added "+strings.SplitN(r.source, " — ", 2)[0]) {
		t.Fatalf("%s did not load the promised source %q:\n%s", strings.Join(r.ingestArgs, " "), r.source, out)
	}
	t.Run("Knowledge", func(t *testing.T) {
		url, _ := startDev(t, map[string]string{"DATA_DIR": dataDir})
		askPlayground(t, url, r.question, "From the knowledge base: ", "[1] "+r.source)
	})
}
