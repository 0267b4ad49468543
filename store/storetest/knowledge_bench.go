package storetest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/threadwright/threadwright/conversation"
)

// The corpus of BenchKnowledgeSearch.
const (
	benchSources         = 200
	benchChunksPerSource = 50 // 10,000 chunks in all
	benchVocabulary      = 2_000
	benchQueries         = 1_000
	benchLimit           = 5 // passages per search, as the search_knowledge tool asks by default
)

// BenchKnowledgeSearch measures Search on a synthetic corpus of 10,000 chunks (200
// sources of 50 chunks; ReplaceSource stores it before the timing starts): each chunk
// is a heading of 2 to 4 words and a text of 60 to 100 words (about 80, 500 to 600
// characters) drawn from a vocabulary of 2,000 made-up words with Zipf-like
// frequencies (the word of rank k about k^-1.1 times as frequent as the first, as in
// natural language: the commonest words are in every chunk, the rarest in a few
// dozen). The corpus and the queries are the same on every run.
//
// It searches for the 5 best passages of 2 to 4 words, in two sub-benchmarks:
// "query=zipf" draws the words as the texts do, so that most queries hold a word that
// nearly every chunk holds, as questions do ("how", "the"): every chunk matches and is
// ranked; "query=content" draws them evenly from the ranks 100 to 2,000, the words a
// question is about. Each reports the median and 99th percentile of a search's time
// ("p50-ms", "p99-ms") besides ns/op. open must return a new, empty store and close it
// in b.Cleanup.
func BenchKnowledgeSearch(b *testing.B, open func(b *testing.B) conversation.Knowledge) {
	kb := open(b)
	ctx := b.Context()
	c := newBenchCorpus()
	start := time.Now()
	for i := range benchSources {
		source := fmt.Sprintf("bench/doc-%03d.md", i)
		if _, err := kb.ReplaceSource(ctx, source, "h", conversation.Origin{}, c.chunks(benchChunksPerSource)); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("ingested %d chunks in %v", benchSources*benchChunksPerSource, time.Since(start).Round(time.Millisecond))

	for _, qs := range []struct {
		name string
		word func() string
	}{
		{"query=zipf", c.word},
		{"query=content", func() string { return c.vocab[100+c.rnd.IntN(benchVocabulary-100)] }},
	} {
		queries := make([]string, benchQueries)
		for i := range queries {
			words := make([]string, 2+c.rnd.IntN(3))
			for j := range words {
				words[j] = qs.word()
			}
			queries[i] = strings.Join(words, " ")
		}
		b.Run(qs.name, func(b *testing.B) {
			var took []time.Duration
			found := 0
			for b.Loop() {
				q := queries[len(took)%len(queries)]
				start := time.Now()
				ps, err := kb.Search(ctx, q, benchLimit)
				took = append(took, time.Since(start))
				if err != nil {
					b.Fatal(err)
				}
				found += len(ps)
			}
			if found == 0 {
				b.Fatal("no search found anything")
			}
			slices.Sort(took)
			b.ReportMetric(percentile(took, 50), "p50-ms")
			b.ReportMetric(percentile(took, 99), "p99-ms")
		})
	}
}

// percentile returns the pth percentile of sorted, in milliseconds.
func percentile(sorted []time.Duration, p int) float64 {
	d := sorted[min(len(sorted)-1, len(sorted)*p/100)]
	return float64(d) / float64(time.Millisecond)
}

// benchCorpus generates the benchmark's chunks and queries, deterministically.
type benchCorpus struct {
	rnd   *rand.Rand
	zipf  *rand.Zipf
	vocab []string // by rank: vocab[0] is the commonest word
}

func newBenchCorpus() *benchCorpus {
	rnd := rand.New(rand.NewPCG(1, 2))
	c := &benchCorpus{rnd: rnd, zipf: rand.NewZipf(rnd, 1.1, 1, benchVocabulary-1)}
	// Made-up words of one to four syllables, shorter ones commoner, as in a language.
	const consonants, vowels = "bcdfghklmnprstvz", "aeiou"
	seen := make(map[string]bool)
	for len(c.vocab) < benchVocabulary {
		var w strings.Builder
		for range 1 + rnd.IntN(4) {
			w.WriteByte(consonants[rnd.IntN(len(consonants))])
			w.WriteByte(vowels[rnd.IntN(len(vowels))])
		}
		if s := w.String(); !seen[s] {
			seen[s] = true
			c.vocab = append(c.vocab, s)
		}
	}
	slices.SortStableFunc(c.vocab, func(a, b string) int { return len(a) - len(b) })
	return c
}

// word returns a word drawn with Zipf-like frequencies.
func (c *benchCorpus) word() string { return c.vocab[c.zipf.Uint64()] }

// chunks returns n chunks: a heading of 2 to 4 words, then 60 to 100 words in
// sentences of 6 to 17.
func (c *benchCorpus) chunks(n int) []conversation.Chunk {
	chunks := make([]conversation.Chunk, n)
	for i := range chunks {
		var h []string
		for range 2 + c.rnd.IntN(3) {
			h = append(h, c.word())
		}
		var t strings.Builder
		for words, sentence := 60+c.rnd.IntN(41), 0; words > 0; words-- {
			w := c.word()
			if sentence == 0 {
				sentence = 6 + c.rnd.IntN(12)
				if t.Len() > 0 {
					t.WriteString(". ")
				}
				w = strings.ToUpper(w[:1]) + w[1:]
			} else {
				t.WriteByte(' ')
			}
			t.WriteString(w)
			sentence--
		}
		t.WriteByte('.')
		chunks[i] = conversation.Chunk{Heading: strings.Join(h, " "), Text: t.String()}
	}
	return chunks
}
