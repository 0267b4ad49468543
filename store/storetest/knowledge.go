package storetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/threadwright/threadwright/conversation"
)

// RunKnowledge runs the conformance suite of conversation.Knowledge against the stores
// open returns, one subtest per case (t.Run("Replace", …)). The subtests run in
// parallel; each calls open once and must get a new, empty store that open closes in
// t.Cleanup.
func RunKnowledge(t *testing.T, open func(t *testing.T) conversation.Knowledge) {
	suite[conversation.Knowledge]{
		{"Ingest", testIngest},
		{"Unchanged", testUnchanged},
		{"Origin", testOrigin},
		{"Replace", testReplace},
		{"NoChunks", testNoChunks},
		{"InvalidChunks", testInvalidChunks},
		{"ConcurrentReplace", testConcurrentReplace},
		{"DeleteSource", testDeleteSource},
		{"SourcesOrder", testSourcesOrder},
		{"RankMoreWords", testRankMoreWords},
		{"RankRarerWords", testRankRarerWords},
		{"RankHeading", testRankHeading},
		{"Questions", testQuestions},
		{"SearchUnicode", testSearchUnicode},
		{"SearchSyntax", testSearchSyntax},
		{"SearchLimit", testSearchLimit},
	}.run(t, open)
}

// chunk returns a chunk of no source with heading and text.
func chunk(heading, text string) conversation.Chunk {
	return conversation.Chunk{Heading: heading, Text: text}
}

// mustReplace stores chunks as source with hash and fails the test unless
// ReplaceSource reports wantChanged.
func mustReplace(t testing.TB, kb conversation.Knowledge, source, hash string, wantChanged bool, chunks ...conversation.Chunk) {
	t.Helper()
	changed, err := kb.ReplaceSource(context.Background(), source, hash, conversation.Origin{}, chunks)
	if err != nil || changed != wantChanged {
		t.Fatalf("ReplaceSource(%s, %s) = %v, %v; want %v, nil", source, hash, changed, err, wantChanged)
	}
}

func mustSources(t testing.TB, kb conversation.Knowledge) []conversation.SourceInfo {
	t.Helper()
	infos, err := kb.Sources(context.Background())
	if err != nil {
		t.Fatalf("Sources: %v", err)
	}
	return infos
}

func mustSearch(t testing.TB, kb conversation.Knowledge, query string, limit int) []conversation.Passage {
	t.Helper()
	ps, err := kb.Search(context.Background(), query, limit)
	if err != nil {
		t.Fatalf("Search(%q, %d): %v", query, limit, err)
	}
	for i, p := range ps {
		if p.Score <= 0 || (i > 0 && p.Score > ps[i-1].Score) {
			t.Errorf("Search(%q): passage %d (%s) has score %v after %v; want positive scores, best first",
				query, i, ref(p), p.Score, scoreBefore(ps, i))
		}
	}
	return ps
}

func scoreBefore(ps []conversation.Passage, i int) any {
	if i == 0 {
		return "none"
	}
	return ps[i-1].Score
}

// ref names a passage: source#ordinal heading.
func ref(p conversation.Passage) string {
	return fmt.Sprintf("%s#%d %s", p.Source, p.Ordinal, p.Heading)
}

// refs returns the refs of ps.
func refs(ps []conversation.Passage) []string {
	out := []string{}
	for _, p := range ps {
		out = append(out, ref(p))
	}
	return out
}

func testIngest(t *testing.T, kb conversation.Knowledge) {
	if infos := mustSources(t, kb); len(infos) != 0 {
		t.Fatalf("new store: Sources = %+v; want none", infos)
	}
	before := time.Now().Add(-time.Second)
	// The chunks' Source and Ordinal are the store's to set.
	mustReplace(t, kb, "docs/handbook/leave.md", "h1", true,
		conversation.Chunk{Heading: "", Text: "The leave policy of Example Corp.", Ordinal: 7},
		conversation.Chunk{Source: "docs/handbook/leave.md", Heading: "Parental leave", Text: "Sixteen weeks of paid parental leave.", Ordinal: 7},
	)
	infos := mustSources(t, kb)
	if len(infos) != 1 {
		t.Fatalf("Sources = %+v; want 1", infos)
	}
	got := infos[0]
	checkUTC(t, "IngestedAt", got.IngestedAt)
	if got.IngestedAt.Before(before) {
		t.Errorf("IngestedAt = %v; want after %v", got.IngestedAt, before)
	}
	got.IngestedAt = time.Time{}
	if want := (conversation.SourceInfo{Source: "docs/handbook/leave.md", Hash: "h1", Chunks: 2,
		Origin: conversation.Origin{By: conversation.OriginIngest}}); got != want {
		t.Errorf("Sources()[0] = %+v; want %+v", got, want)
	}
	ps := mustSearch(t, kb, "parental", 10)
	if len(ps) != 1 {
		t.Fatalf("Search(parental) = %q; want 1 passage", refs(ps))
	}
	want := conversation.Chunk{Source: "docs/handbook/leave.md", Heading: "Parental leave", Ordinal: 1, Text: "Sixteen weeks of paid parental leave."}
	if ps[0].Chunk != want {
		t.Errorf("passage = %+v; want %+v", ps[0].Chunk, want)
	}
	ps = mustSearch(t, kb, "policy", 10)
	if len(ps) != 1 || ps[0].Ordinal != 0 || ps[0].Heading != "" {
		t.Errorf("Search(policy) = %q; want the chunk without heading, ordinal 0", refs(ps))
	}
}

// testOrigin: a document keeps who stored it, and its passages say whether it is
// untrusted; the same content stored by another origin is a change (an operator's
// ingest of an uploaded document makes it trusted), the same origin again is not.
func testOrigin(t *testing.T, kb conversation.Knowledge) {
	ctx := context.Background()
	up := conversation.Origin{By: "api:portal", Untrusted: true}
	for _, c := range []struct {
		source string
		origin conversation.Origin
	}{{"ops.md", conversation.Origin{}}, {"upload.md", up}, {"trusted.md", conversation.Origin{By: "api:docs"}}} {
		if ok, err := kb.ReplaceSource(ctx, c.source, "h1", c.origin, []conversation.Chunk{chunk("Leave", "parental leave "+c.source)}); !ok || err != nil {
			t.Fatalf("ReplaceSource(%s) = %v, %v", c.source, ok, err)
		}
	}
	byName := map[string]conversation.Origin{}
	for _, i := range mustSources(t, kb) {
		byName[i.Source] = i.Origin
	}
	if want := map[string]conversation.Origin{"ops.md": {By: conversation.OriginIngest}, "upload.md": up, "trusted.md": {By: "api:docs"}}; !reflect.DeepEqual(byName, want) {
		t.Errorf("origins = %+v; want %+v", byName, want)
	}
	untrusted := map[string]bool{}
	for _, p := range mustSearch(t, kb, "parental leave", 10) {
		untrusted[p.Source] = p.Untrusted
	}
	if want := map[string]bool{"ops.md": false, "upload.md": true, "trusted.md": false}; !reflect.DeepEqual(untrusted, want) {
		t.Errorf("passages' Untrusted = %v; want %v", untrusted, want)
	}
	if ok, err := kb.ReplaceSource(ctx, "upload.md", "h1", up, []conversation.Chunk{chunk("Leave", "x")}); ok || err != nil {
		t.Errorf("the same content and origin again = %v, %v; want no change", ok, err)
	}
	if ok, err := kb.ReplaceSource(ctx, "upload.md", "h1", conversation.Origin{}, []conversation.Chunk{chunk("Leave", "parental leave upload.md")}); !ok || err != nil {
		t.Errorf("the same content by ingest = %v, %v; want a change", ok, err)
	}
	for _, p := range mustSearch(t, kb, "parental leave", 10) {
		if p.Untrusted {
			t.Errorf("after the operator's ingest, %s is untrusted", p.Source)
		}
	}
}

func testUnchanged(t *testing.T, kb conversation.Knowledge) {
	mustReplace(t, kb, "a.md", "h1", true, chunk("A", "alpha"))
	first := mustSources(t, kb)
	tick()
	// The same hash changes nothing, whatever the chunks.
	mustReplace(t, kb, "a.md", "h1", false, chunk("B", "beta"), chunk("C", "gamma"))
	if got := mustSources(t, kb); !reflect.DeepEqual(got, first) {
		t.Errorf("after an unchanged ReplaceSource: Sources = %+v; want %+v", got, first)
	}
	if ps := mustSearch(t, kb, "alpha beta gamma", 10); !reflect.DeepEqual(refs(ps), []string{"a.md#0 A"}) {
		t.Errorf("after an unchanged ReplaceSource: Search = %q; want the first version's chunk", refs(ps))
	}
}

func testReplace(t *testing.T, kb conversation.Knowledge) {
	mustReplace(t, kb, "a.md", "h1", true, chunk("One", "alpha"), chunk("Two", "beta"), chunk("Three", "gamma"))
	mustReplace(t, kb, "b.md", "h1", true, chunk("Other", "alpha beta"))
	first := mustSources(t, kb)[0]
	tick()
	mustReplace(t, kb, "a.md", "h2", true, chunk("Uno", "delta"), chunk("Dos", "alpha"))

	infos := mustSources(t, kb)
	if len(infos) != 2 || infos[0].Hash != "h2" || infos[0].Chunks != 2 || !infos[0].IngestedAt.After(first.IngestedAt) {
		t.Errorf("after replace: Sources = %+v; want a.md at h2 with 2 chunks, ingested after %v", infos, first.IngestedAt)
	}
	if ps := mustSearch(t, kb, "beta gamma", 10); !reflect.DeepEqual(refs(ps), []string{"b.md#0 Other"}) {
		t.Errorf("Search for the replaced chunks = %q; want only b.md's", refs(ps))
	}
	if ps := mustSearch(t, kb, "delta", 10); !reflect.DeepEqual(refs(ps), []string{"a.md#0 Uno"}) {
		t.Errorf("Search(delta) = %q; want the new chunk 0", refs(ps))
	}
	got := refs(mustSearch(t, kb, "alpha", 10))
	if want := []string{"a.md#1 Dos", "b.md#0 Other"}; !sameElements(got, want) {
		t.Errorf("Search(alpha) = %q; want %q in some order", got, want)
	}
}

func sameElements(a, b []string) bool {
	count := map[string]int{}
	for _, s := range a {
		count[s]++
	}
	for _, s := range b {
		count[s]--
	}
	for _, n := range count {
		if n != 0 {
			return false
		}
	}
	return true
}

func testNoChunks(t *testing.T, kb conversation.Knowledge) {
	mustReplace(t, kb, "empty.md", "h1", true)
	mustReplace(t, kb, "empty.md", "h1", false)
	if infos := mustSources(t, kb); len(infos) != 1 || infos[0].Chunks != 0 {
		t.Errorf("Sources = %+v; want empty.md with 0 chunks", infos)
	}
	mustReplace(t, kb, "empty.md", "h2", true, chunk("", "now with text"))
	mustReplace(t, kb, "empty.md", "h3", true)
	if ps := mustSearch(t, kb, "text", 10); len(ps) != 0 {
		t.Errorf("Search after emptying the source = %q; want none", refs(ps))
	}
}

func testInvalidChunks(t *testing.T, kb conversation.Knowledge) {
	ctx := context.Background()
	mustReplace(t, kb, "a.md", "h1", true, chunk("A", "alpha"))
	for _, tc := range []struct {
		name, source, hash string
		chunks             []conversation.Chunk
	}{
		{"EmptySource", "", "h2", []conversation.Chunk{chunk("", "x")}},
		{"BlankSource", "  ", "h2", []conversation.Chunk{chunk("", "x")}},
		{"EmptyHash", "a.md", "", []conversation.Chunk{chunk("", "x")}},
		{"OtherSource", "a.md", "h2", []conversation.Chunk{{Source: "b.md", Text: "x"}}},
		{"EmptyText", "a.md", "h2", []conversation.Chunk{chunk("A", "x"), chunk("B", " \n")}},
		{"NotUTF8", "a.md", "h2", []conversation.Chunk{chunk("A", "x\xff")}},
		{"NUL", "a.md", "h2", []conversation.Chunk{chunk("A\x00", "x")}},
		{"SourceNotUTF8", "a\xff.md", "h2", []conversation.Chunk{chunk("A", "x")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			changed, err := kb.ReplaceSource(ctx, tc.source, tc.hash, conversation.Origin{}, tc.chunks)
			if err == nil || changed {
				t.Errorf("ReplaceSource = %v, %v; want false and an error", changed, err)
			}
		})
	}
	// Nothing was written.
	infos := mustSources(t, kb)
	if len(infos) != 1 || infos[0].Hash != "h1" {
		t.Errorf("after invalid replaces: Sources = %+v; want a.md at h1 only", infos)
	}
	if ps := mustSearch(t, kb, "alpha x", 10); !reflect.DeepEqual(refs(ps), []string{"a.md#0 A"}) {
		t.Errorf("after invalid replaces: Search = %q; want a.md's chunk only", refs(ps))
	}
}

// testConcurrentReplace replaces one new source from many goroutines at once: exactly
// one writes it, the others find it stored with their hash.
func testConcurrentReplace(t *testing.T, kb conversation.Knowledge) {
	const writers = 8
	var (
		mu      sync.Mutex
		changed int
		errs    []error
		wg      sync.WaitGroup
	)
	for range writers {
		wg.Go(func() {
			ok, err := kb.ReplaceSource(context.Background(), "race.md", "h1", conversation.Origin{},
				[]conversation.Chunk{chunk("Race", "one"), chunk("Race", "two")})
			mu.Lock()
			defer mu.Unlock()
			if ok {
				changed++
			}
			if err != nil {
				errs = append(errs, err)
			}
		})
	}
	wg.Wait()
	if changed != 1 || len(errs) > 0 {
		t.Errorf("%d of %d concurrent ReplaceSource changed the source (errors: %v); want exactly 1, no errors", changed, writers, errs)
	}
	if infos := mustSources(t, kb); len(infos) != 1 || infos[0].Chunks != 2 {
		t.Errorf("Sources = %+v; want race.md with 2 chunks", infos)
	}
	if ps := mustSearch(t, kb, "one two", 10); len(ps) != 2 {
		t.Errorf("Search = %q; want the 2 chunks, once each", refs(ps))
	}
}

func testDeleteSource(t *testing.T, kb conversation.Knowledge) {
	ctx := context.Background()
	mustReplace(t, kb, "a.md", "h1", true, chunk("A", "alpha shared"), chunk("A2", "alpha again"))
	mustReplace(t, kb, "b.md", "h1", true, chunk("B", "beta shared"))
	if err := kb.DeleteSource(ctx, "a.md"); err != nil {
		t.Fatalf("DeleteSource(a.md): %v", err)
	}
	if infos := mustSources(t, kb); len(infos) != 1 || infos[0].Source != "b.md" {
		t.Errorf("after delete: Sources = %+v; want b.md only", infos)
	}
	// The chunks went with their source, from the full-text index too.
	if ps := mustSearch(t, kb, "alpha shared", 10); !reflect.DeepEqual(refs(ps), []string{"b.md#0 B"}) {
		t.Errorf("after delete: Search = %q; want b.md's chunk only", refs(ps))
	}
	for _, source := range []string{"a.md", "missing.md", ""} {
		if err := kb.DeleteSource(ctx, source); !errors.Is(err, conversation.ErrNotFound) {
			t.Errorf("DeleteSource(%q): %v; want ErrNotFound", source, err)
		}
	}
	// A deleted source can be ingested again, with the hash it had.
	mustReplace(t, kb, "a.md", "h1", true, chunk("A", "alpha"))
}

// testSourcesOrder checks that sources sort byte-wise, whatever the database's locale.
func testSourcesOrder(t *testing.T, kb conversation.Knowledge) {
	for _, s := range []string{"a/b.md", "a.md", "B.md", "a-z.md", "docs/Ж.md", "docs/z.md"} {
		mustReplace(t, kb, s, "h", true, chunk("", "text"))
	}
	var got []string
	for _, info := range mustSources(t, kb) {
		got = append(got, info.Source)
	}
	if want := []string{"B.md", "a-z.md", "a.md", "a/b.md", "docs/z.md", "docs/Ж.md"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Sources = %q; want %q", got, want)
	}
}

// testRankMoreWords: of chunks that hold some words of a query, the one that holds
// the most ranks first.
func testRankMoreWords(t *testing.T, kb conversation.Knowledge) {
	mustReplace(t, kb, "handbook.md", "h", true,
		chunk("Benefits", "Employees get a yearly budget for training courses and books."),
		chunk("Benefits", "Parents get sixteen weeks of paid leave after a birth or an adoption."),
		chunk("Benefits", "Paid time off is booked in the HR portal."),
		chunk("Benefits", "Weeks are counted from Monday to Sunday in the rota."),
	)
	ps := mustSearch(t, kb, "how many weeks of paid leave after an adoption", 10)
	if len(ps) < 3 || ps[0].Ordinal != 1 {
		t.Errorf("Search = %q; want handbook.md#1 first of at least 3", refs(ps))
	}
}

// testRankRarerWords: a word that few chunks hold counts for more than one that most
// chunks hold, however often a chunk repeats the common one.
func testRankRarerWords(t *testing.T, kb conversation.Knowledge) {
	mustReplace(t, kb, "notes.md", "h", true,
		chunk("", "The notes of the meeting of the team and the plan for the week of the launch."),
		chunk("", "The the the the office is on the the the second floor of the building."),
		chunk("", "Vacation requests go to your manager."),
		chunk("", "The kitchen is on the first floor."),
	)
	ps := mustSearch(t, kb, "the vacation", 10)
	if len(ps) == 0 || ps[0].Ordinal != 2 {
		t.Errorf("Search(the vacation) = %q; want notes.md#2 first", refs(ps))
	}
}

// testRankHeading: a word in a chunk's heading counts for more than the same word in
// the text of a chunk of the same length.
func testRankHeading(t *testing.T, kb conversation.Knowledge) {
	mustReplace(t, kb, "a.md", "h", true,
		chunk("Office", "Opening hours are eight to six, Monday to Friday. Onboarding starts here."),
		chunk("Onboarding", "Opening hours are eight to six, Monday to Friday. Office keys are here."),
		chunk("Unrelated", "Nothing to see."),
	)
	ps := mustSearch(t, kb, "onboarding", 10)
	if got := refs(ps); !reflect.DeepEqual(got, []string{"a.md#1 Onboarding", "a.md#0 Office"}) {
		t.Errorf("Search(onboarding) = %q; want the chunk with the word in its heading first", got)
	}
}

// handbook is a small corpus of the kind `threadwright ingest` loads, for testQuestions.
var handbook = []struct {
	source string
	chunks []conversation.Chunk
}{
	{"docs/handbook/leave.md", []conversation.Chunk{
		chunk("Parental leave", "Employees who become parents through birth, adoption or foster care get sixteen weeks of paid parental leave. Leave can start up to four weeks before the expected date and can be split into two blocks within the first year."),
		chunk("Sick leave", "If you are ill, tell your manager before ten in the morning and record the absence in the HR portal. From the fourth day of illness a doctor's note is required."),
		chunk("Vacation", "Full-time employees have twenty-five days of paid vacation per calendar year. Unused days carry over until the end of March of the following year."),
	}},
	{"docs/it/vpn.md", []conversation.Chunk{
		chunk("Connecting to the VPN", "Install the WireGuard client, download your configuration from the IT portal and import it. The VPN is required to reach the staging environment and the internal wiki."),
		chunk("Troubleshooting", "If the connection drops every few minutes, switch from Wi-Fi to a wired network or renew your configuration in the portal."),
	}},
	{"docs/engineering/deploy.md", []conversation.Chunk{
		chunk("Deploying to production", "Production deploys run from the main branch through the release pipeline. Every deploy needs a green build and an approval from the on-call engineer."),
		chunk("Rollback", "To roll back, rerun the pipeline with the previous release tag. The on-call engineer decides whether a rollback is needed."),
	}},
	{"docs/office/expenses.md", []conversation.Chunk{
		chunk("Travel expenses", "Book flights and hotels through the travel desk. Submit receipts in the expense tool within thirty days of returning; meals are reimbursed up to forty euros a day."),
		chunk("Equipment", "Laptops are replaced every three years. Order monitors, keyboards and headsets from the equipment catalogue in the IT portal."),
	}},
	{"docs/ru/отпуск.md", []conversation.Chunk{
		chunk("Ежегодный отпуск", "Ежегодный оплачиваемый отпуск составляет двадцать восемь календарных дней. Заявление на отпуск подаётся через портал не позднее чем за две недели."),
	}},
}

// testQuestions asks questions as people type them, none of which has all its words
// in one chunk, of the handbook corpus: each must find the chunk that answers it
// first.
func testQuestions(t *testing.T, kb conversation.Knowledge) {
	for _, doc := range handbook {
		mustReplace(t, kb, doc.source, "h", true, doc.chunks...)
	}
	for _, tc := range []struct{ question, want string }{
		{"How many weeks of parental leave do I get?", "docs/handbook/leave.md#0 Parental leave"},
		{"What do I do when I'm sick?", "docs/handbook/leave.md#1 Sick leave"},
		{"how many vacation days do we have per year", "docs/handbook/leave.md#2 Vacation"},
		{"how do I connect to the VPN?", "docs/it/vpn.md#0 Connecting to the VPN"},
		{"my connection keeps dropping on wifi", "docs/it/vpn.md#1 Troubleshooting"},
		{"Who has to approve a production deploy?", "docs/engineering/deploy.md#0 Deploying to production"},
		{"how do we roll back a bad release", "docs/engineering/deploy.md#1 Rollback"},
		{"what's the daily limit for meals when travelling", "docs/office/expenses.md#0 Travel expenses"},
		{"When will my laptop be replaced?", "docs/office/expenses.md#1 Equipment"},
		{"Сколько дней отпуска в году?", "docs/ru/отпуск.md#0 Ежегодный отпуск"},
	} {
		ps := mustSearch(t, kb, tc.question, 3)
		if len(ps) == 0 || ref(ps[0]) != tc.want {
			t.Errorf("Search(%q) = %q; want %q first", tc.question, refs(ps), tc.want)
		}
	}
}

func testSearchUnicode(t *testing.T, kb conversation.Knowledge) {
	mustReplace(t, kb, "docs/ru/Справка.md", "h", true,
		chunk("Отпуск по уходу за ребёнком", "Сотрудник может взять ОТПУСК до трёх лет. 🎉"),
		chunk("Ελληνικά", "Η άδεια μητρότητας διαρκεί δεκαεπτά εβδομάδες."),
		chunk("Café", "Le café est au rez-de-chaussée."),
	)
	for _, tc := range []struct{ query, want string }{
		{"отпуск", "docs/ru/Справка.md#0 Отпуск по уходу за ребёнком"},
		{"ОТПУСК ребёнком", "docs/ru/Справка.md#0 Отпуск по уходу за ребёнком"},
		{"Ребёнком?!", "docs/ru/Справка.md#0 Отпуск по уходу за ребёнком"},
		{"ΆΔΕΙΑ", "docs/ru/Справка.md#1 Ελληνικά"},
		{"où est le café", "docs/ru/Справка.md#2 Café"},
	} {
		ps := mustSearch(t, kb, tc.query, 10)
		if len(ps) == 0 || ref(ps[0]) != tc.want {
			t.Errorf("Search(%q) = %q; want %q first", tc.query, refs(ps), tc.want)
		}
	}
	ps := mustSearch(t, kb, "отпуск", 1)
	if len(ps) == 1 && !strings.HasSuffix(ps[0].Text, "🎉") {
		t.Errorf("text = %q; want it intact", ps[0].Text)
	}
}

// testSearchSyntax searches for what the databases' query languages would read as
// operators: it must not fail, and finds nothing when the query has no word.
func testSearchSyntax(t *testing.T, kb conversation.Knowledge) {
	mustReplace(t, kb, "a.md", "h", true,
		chunk("Operators", `Use AND, OR and NOT to combine terms; "quotes" and * are special.`),
		chunk("Other", "Nothing special here."),
		chunk("Third", "Something else."),
		chunk("Fourth", "And yet another."),
	)
	for _, q := range []string{
		`"AND OR NOT *"`, `AND`, `NOT special`, `*`, `"`, `'`, `\`, `''`, `(`, `)`, `-`, `^x`,
		`NEAR(a b)`, `heading:operators`, `text : nothing`, `a & b | !c`, `special:*`, `'special' & !`,
		`<->`, `{col}: x`, `"unterminated`, `special"`, "\x00", "\xff\xfe", "!!! ??? ...", "   ", "",
		strings.Repeat("word ", 2000), strings.Repeat("*", 5000),
	} {
		ps, err := kb.Search(context.Background(), q, 5)
		if err != nil {
			t.Errorf("Search(%.40q): %v; want no error", q, err)
		}
		if strings.TrimFunc(q, notAWord) == "" && len(ps) > 0 {
			t.Errorf("Search(%.40q) = %q; want nothing for a query without words", q, refs(ps))
		}
	}
	// Operators are words like any other: NOT does not exclude, * is no wildcard.
	if ps := mustSearch(t, kb, "NOT special", 5); len(ps) != 2 || ps[0].Heading != "Operators" {
		t.Errorf("Search(NOT special) = %q; want both chunks, Operators first", refs(ps))
	}
	if ps := mustSearch(t, kb, "spec*", 5); len(ps) != 0 {
		t.Errorf("Search(spec*) = %q; want none (no prefix search)", refs(ps))
	}
}

func testSearchLimit(t *testing.T, kb conversation.Knowledge) {
	var chunks []conversation.Chunk
	for i := range 12 {
		chunks = append(chunks, chunk(fmt.Sprintf("Part %d", i), "common "+strings.Repeat("word ", i+1)))
	}
	mustReplace(t, kb, "a.md", "h", true, chunks...)
	for _, tc := range []struct{ limit, want int }{{5, 5}, {1, 1}, {12, 12}, {1000, 12}, {0, 0}, {-1, 0}} {
		if ps := mustSearch(t, kb, "common", tc.limit); len(ps) != tc.want {
			t.Errorf("Search(limit %d) = %d passages; want %d", tc.limit, len(ps), tc.want)
		}
	}
	if ps := mustSearch(t, kb, "nowhere to be found", 10); len(ps) != 0 {
		t.Errorf("Search without a match = %q; want none", refs(ps))
	}
}

// notAWord reports whether r is punctuation, space or an invalid byte that the
// stores' tokenizers never take for a word.
func notAWord(r rune) bool {
	return r == utf8.RuneError || r == 0 || strings.ContainsRune("\"'\\()-^*!?. &|<>", r)
}
