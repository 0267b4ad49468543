package prose

import (
	"slices"
	"testing"
)

func TestSentences(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"", 0},
		{"One sentence without a period", 1},
		{"Stand-ups cost time. Written ones save it!", 2},
		{"Teams cut the bill by 2.5% in a quarter. It held.", 2},
		{"Use a tool, e.g. a bot, and Dr. Smith agrees. The U.S. team did too.", 2},
		{"It worked [1]. It kept working. [2]", 2},
		{"“Write it down.” Then share it… Does it help? Yes.", 4},
		{"**Bold start.** Plain end.", 2},
		{"[3]", 0},
		{"Generics landed in Go 1.18. Data engineers noticed.", 2},
		{"Costs fell by 12.5%. Nobody complained.", 2},
		{"Read the [Go blog](https://go.dev/blog/intro-generics). It explains why.", 2},
		{"The docs live at go.dev. They are short.", 2},
		{"Ph.D. students and U.S.A. teams, т.е. everyone, agreed. Then they left.", 2},
	}
	for _, tt := range tests {
		if got := Sentences(tt.in); len(got) != tt.want {
			t.Errorf("Sentences(%q) = %q; want %d", tt.in, got, tt.want)
		}
	}
}

func TestOpener(t *testing.T) {
	phrases := []string{"In conclusion", "To sum up", "In summary"}
	for in, want := range map[string]string{
		"In conclusion, write it down.":   "In conclusion",
		"**In summary:** keep it short.":  "In summary",
		"“to sum up”, he said.":           "To sum up",
		"in conclusion":                   "In conclusion",
		"In conclusions we trust.":        "",
		"The conclusion: in conclusion.":  "",
		"In the end, it is about habits.": "",
	} {
		got, ok := Opener(in, phrases)
		if got != want || ok != (want != "") {
			t.Errorf("Opener(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

func TestList(t *testing.T) {
	got := List("- **async stand-ups**, remote team updates;\n2. \"small team communication\".\n, , Async stand-ups")
	want := []string{"async stand-ups", "remote team updates", "small team communication"}
	if !slices.Equal(got, want) {
		t.Errorf("List = %q; want %q", got, want)
	}
}

func TestContains(t *testing.T) {
	text := Words("Our **Async Stand-ups** replaced the daily meeting; remote teams post updates, and remote teams’ updates land early.")
	for kw, want := range map[string]bool{
		"async stand-up":      true,  // plural in the text
		"daily meetings":      true,  // plural in the keyword
		"remote team updates": true,  // team/teams, updates
		"post early":          false, // not one after the other
		"stand":               true,
		"meet":                false, // a word, not a prefix
		"":                    false,
		"post update":         true,
		"ups":                 true,
	} {
		if got := Contains(text, kw); got != want {
			t.Errorf("Contains(%q) = %v; want %v", kw, got, want)
		}
	}
}

// Russian keywords match their other forms, and an English possessive is the word.
func TestContainsForms(t *testing.T) {
	text := Words("Инженеров данных стало больше, и Go’s generics помогли; код стал проще.")
	for kw, want := range map[string]bool{
		"инженеры данных":   true,
		"инженерами данных": true,
		"Go generics":       true,
		"Go's generics":     true,
		"кодировка":         false, // "код" is its stem, but "ировка" is no ending
		"данные инженеров":  false, // not in this order
		"go s":              false,
	} {
		if got := Contains(text, kw); got != want {
			t.Errorf("Contains(%q) = %v; want %v", kw, got, want)
		}
	}
}
