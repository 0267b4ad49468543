package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/threadwright/threadwright/agents"
)

// RetrievalScore is how well search_knowledge finds the documents of a case's
// retrieval questions, scored without a model: recall@k, the share of a question's
// expected sources among the first k passages, and the reciprocal rank of the first
// expected source (0 when none is found), each averaged over the questions (MRR).
type RetrievalScore struct {
	K         int              `json:"k"`
	Recall    float64          `json:"recall_at_k"`
	MRR       float64          `json:"mrr"`
	Questions []QuestionResult `json:"questions"`
}

// QuestionResult is the search of one retrieval question.
type QuestionResult struct {
	Question string `json:"question"`
	// Found are the sources of the passages found, best first ("document — heading").
	Found  []string `json:"found"`
	Recall float64  `json:"recall"`
	// Rank is the rank of the first expected source (from 1), 0 when none.
	Rank int `json:"rank"`
}

// passageLine is a passage's numbered line in a search_knowledge result
// ("[1] handbook/leave.md — Parental leave"), after a blank line.
var passageLine = regexp.MustCompile(`\n\n\[(\d+)\] ([^\n]+)`)

// scoreRetrieval asks search for each question of r, {"query": question, "limit": k},
// and scores what it found.
func scoreRetrieval(ctx context.Context, search agents.Tool, r *Retrieval) (*RetrievalScore, error) {
	if search == nil {
		return nil, errors.New("retrieval: the run has no search_knowledge tool (no knowledge base)")
	}
	s := &RetrievalScore{K: r.K}
	for _, q := range r.Questions {
		args, _ := json.Marshal(map[string]any{"query": q.Question, "limit": r.K})
		out, err := search.Run(ctx, args)
		if err != nil {
			return nil, fmt.Errorf("retrieval: search_knowledge %q: %w", q.Question, err)
		}
		res := QuestionResult{Question: q.Question}
		for i, m := range passageLine.FindAllStringSubmatch(out, -1) {
			if m[1] != fmt.Sprint(i+1) || i >= r.K {
				break
			}
			res.Found = append(res.Found, strings.TrimSpace(m[2]))
		}
		hits := 0
		for _, want := range q.Expect {
			at := slices.IndexFunc(res.Found, func(f string) bool { return sameSource(want, f) })
			if at < 0 {
				continue
			}
			hits++
			if res.Rank == 0 || at+1 < res.Rank {
				res.Rank = at + 1
			}
		}
		res.Recall = float64(hits) / float64(len(q.Expect))
		s.Recall += res.Recall
		if res.Rank > 0 {
			s.MRR += 1 / float64(res.Rank)
		}
		s.Questions = append(s.Questions, res)
	}
	n := float64(len(r.Questions))
	s.Recall /= n
	s.MRR /= n
	return s, nil
}

// sameSource reports whether a passage found ("document — heading") is the expected
// source want: the document, or the document and heading.
func sameSource(want, found string) bool {
	if want == found {
		return true
	}
	doc, _, _ := strings.Cut(found, " — ")
	return want == doc
}

// check is the retrieval check of r's thresholds, when it has any.
func (s *RetrievalScore) check(r *Retrieval) (Check, bool) {
	if r.MinRecall == 0 && r.MinMRR == 0 {
		return Check{}, false
	}
	c := Check{Name: "retrieval", Pass: s.Recall >= r.MinRecall && s.MRR >= r.MinMRR,
		Detail: fmt.Sprintf("recall@%d %.2f (at least %.2f), MRR %.2f (at least %.2f)", s.K, s.Recall, r.MinRecall, s.MRR, r.MinMRR)}
	if !c.Pass {
		for _, q := range s.Questions {
			if q.Recall < 1 {
				c.Detail += fmt.Sprintf("; %q found %s", q.Question, quoteAll(q.Found))
				break
			}
		}
	}
	return c, true
}
