package workflow_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/threadwright/threadwright/conversation/workflow"
)

func TestPlaceholders(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"For families, [product] is a planner.", []string{"[product]"}},
		{"[Company name] and [product] and [product] again", []string{"[Company name]", "[product]"}},
		{"See [the docs](https://example.com) and [1] and [2][3].", nil},
		{"A [reference link][docs] and an image ![alt](x.png).", nil},
		{"[docs]: https://example.com", nil},
		{"- [ ] todo\n- [x] done", nil},
		{"Code `a[i]` and `[product]` and\n```\nx = [value]\n```", nil},
		{"escaped \\[product] stays", nil},
		{"Nothing to see.", nil},
		{"Для [продукт] тоже.", []string{"[продукт]"}},
	} {
		if got := workflow.Placeholders(tc.text); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Placeholders(%q) = %q; want %q", tc.text, got, tc.want)
		}
	}
}

func TestStripNotes(t *testing.T) {
	in := "First paragraph.\n\n_Revised as asked: make it shorter._\n\nSecond, with _italics_ kept."
	want := "First paragraph.\n\n\nSecond, with _italics_ kept."
	if got := workflow.StripNotes(in); got != want {
		t.Errorf("StripNotes = %q; want %q", got, want)
	}
	tail := "Text.\n\n_Revised as asked: mention the budget._\n"
	if got := workflow.StripNotes(tail); got != "Text." {
		t.Errorf("StripNotes(trailing note) = %q", got)
	}
	if got := workflow.StripNotes("_Emphasis: a whole italic line is kept._"); got != "_Emphasis: a whole italic line is kept._" {
		t.Errorf("StripNotes changed an ordinary italic line: %q", got)
	}
}

// TestReportLeavesOutRevisionNotes: the editor's note stays on the card; the report
// has the text only.
func TestReportLeavesOutRevisionNotes(t *testing.T) {
	d, err := workflow.Parse("t.yaml", []byte("name: t\ntitle: T\nartifacts:\n  - id: a\n    title: A\n"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := d.RenderReport(workflow.ReportData{Artifacts: map[string]string{"a": "Body.\n\n_Revised as asked: make it shorter._"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := "# T\n\n## A\n\nBody.\n"; out != want {
		t.Errorf("report = %q; want %q", out, want)
	}
}

func TestSplitNotes(t *testing.T) {
	for _, tc := range []struct{ in, text, note string }{
		{"First.\n\n_Revised as asked: make it shorter._\n\nSecond, with _italics_ kept.", "First.\n\nSecond, with _italics_ kept.", "Revised as asked: make it shorter."},
		{"# Head\n\n_Written as asked: for CFOs._\n\n## One\nBody", "# Head\n\n## One\nBody", "Written as asked: for CFOs."},
		{"Text.\n*Edited: tone.*\n_Updated: figures._", "Text.", "Edited: tone.\nUpdated: figures."},
		{"_Emphasis: a whole italic line is kept._", "_Emphasis: a whole italic line is kept._", ""},
		{"Plain.", "Plain.", ""},
	} {
		text, note := workflow.SplitNotes(tc.in)
		if text != tc.text || note != tc.note {
			t.Errorf("SplitNotes(%q) = %q, %q; want %q, %q", tc.in, text, note, tc.text, tc.note)
		}
	}
}

// TestOldCheckpointNotesMoved: a checkpoint written while notes were kept in the
// text loads with the note moved to Note, for the artifact and its items.
func TestOldCheckpointNotesMoved(t *testing.T) {
	old := `{"status":"generated","rev":2,"text":"Body.\n\n_Revised as asked: shorter._","items":[{"title":"A","status":"done","text":"Item.\n_Revised as asked: tighter._"}]}`
	var st workflow.ArtifactState
	if err := json.Unmarshal([]byte(old), &st); err != nil {
		t.Fatal(err)
	}
	if st.Text != "Body." || st.Note != "Revised as asked: shorter." || st.Rev != 2 {
		t.Errorf("artifact = text %q, note %q, rev %d", st.Text, st.Note, st.Rev)
	}
	if it := st.Items[0]; it.Text != "Item." || it.Note != "Revised as asked: tighter." {
		t.Errorf("item = text %q, note %q", it.Text, it.Note)
	}
	b, _ := json.Marshal(st)
	var again workflow.ArtifactState
	if err := json.Unmarshal(b, &again); err != nil || again.Text != st.Text || again.Note != st.Note {
		t.Errorf("round trip = %+v, %v", again, err)
	}
}

// TestWrittenKeepsNoteApart: the machine never stores a note in an artifact's text;
// a new text without one clears the old note; a pipeline artifact's note is its
// items' notes.
func TestWrittenKeepsNoteApart(t *testing.T) {
	d, err := workflow.Parse("t.yaml", []byte("name: t\ntitle: T\nartifacts:\n  - id: a\n    title: A\n    mode: draft\n  - id: b\n    title: B\n    mode: auto\n    depends_on: [a]\n"))
	if err != nil {
		t.Fatal(err)
	}
	m := workflow.Machine{Def: d}
	s := m.NewRun("U1", "en")
	if _, err := m.Written(s, "a", "Body.\n\n_Revised as asked: shorter._", nil, "U1", "w"); err != nil {
		t.Fatal(err)
	}
	if st := s.Artifacts["a"]; st.Text != "Body." || st.Note != "Revised as asked: shorter." {
		t.Errorf("a = text %q, note %q", st.Text, st.Note)
	}
	if _, err := m.Written(s, "a", "Body two.", nil, "U1", "w"); err != nil {
		t.Fatal(err)
	}
	if st := s.Artifacts["a"]; st.Text != "Body two." || st.Note != "" {
		t.Errorf("a rewritten = text %q, note %q", st.Text, st.Note)
	}
	if err := m.Pipeline().Started(s, "b", []workflow.ItemState{{Title: "B", Status: workflow.ItemPending}}); err != nil {
		t.Fatal(err)
	}
	m.Pipeline().RecordItem(s, "b", 0, workflow.ItemEnd{Text: "For [product].\n_Edited: tighter._", Attempts: 1})
	m.Pipeline().FixedItem(s, "b", 0, "For MealPlan.")
	if _, err := m.Pipeline().Completed(s, "b", nil); err != nil {
		t.Fatal(err)
	}
	if st := s.Artifacts["b"]; st.Text != "For MealPlan." || st.Note != "Edited: tighter." {
		t.Errorf("b = text %q, note %q", st.Text, st.Note)
	}
}

// TestClaimFound: a claim that the text took something in is judged by its words'
// stems; a request no word check can judge is not judged.
func TestClaimFound(t *testing.T) {
	for _, tc := range []struct {
		name, asked, text string
		judged, found     bool
	}{
		{"Found", "mention commuting parents", "It suits parents who commute by train.", true, true},
		{"FoundCase", "Add the price.", "The PRICES start at $5.", true, true},
		{"Missing", "mention commuting parents", "Students cook late and alone.", true, false},
		{"OneWordMissing", "include busy students and parents", "Busy students cook late.", true, false},
		{"Quoted", `use the phrase "ten minutes"`, "Dinner in ten minutes.", true, true},
		{"QuotedMissing", `say «быстрый ужин»`, "Ужин за час.", true, false},
		{"Russian", "упомяни работающих родителей", "Это удобно работающим родителям.", true, true},
		{"RussianMissing", "упомяните студентов", "Это удобно родителям.", true, false},
		{"NotJudged", "make it shorter", "Short.", false, false},
		{"OnlyStopWords", "add more", "Anything.", false, false},
		{"Removed", `removed "synergy"`, "We work together.", true, true},
		{"RemovedStill", `removed "synergy"`, "Our synergy grows.", true, false},
		{"RemovedRussian", "убери «дешёвый»", "Недорогой ужин.", true, true},
		{"RemovedRussianStill", "убрал «дешёвый»", "Дешёвый ужин.", true, false},
		{"Replaced", `replace "stand-up" with "check-in"`, "The daily check-in is short.", true, true},
		{"ReplacedMissing", `replaced "stand-up" with "check-in"`, "The daily stand-up is short.", true, false},
		{"ReplacedRussian", "замени «митинг» на «встречу»", "Короткая встреча.", true, true},
		{"StructuralWords", "add a section on costs", "What it costs.", true, true},
		{"StructuralRussian", "добавь абзац о стоимости", "Стоимость растёт.", true, true},
		{"OnlyStructural", "add a paragraph", "Anything.", false, false},
		{"RemovedUnquoted", "remove the last sentence", "Anything.", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			judged, found := workflow.ClaimFound(tc.asked, tc.text)
			if judged != tc.judged || found != tc.found {
				t.Errorf("ClaimFound(%q, %q) = %v, %v; want %v, %v", tc.asked, tc.text, judged, found, tc.judged, tc.found)
			}
		})
	}
}
