package workflow

import (
	"slices"
	"strconv"
	"strings"
	"time"
)

// The pipeline's bookkeeping (docs/architecture.md, "Pipelines"): an auto artifact
// runs as items, one per item of its foreach artifact's text (Items) or one for the
// whole artifact; each item records its tries as they end, so that a run cut short
// goes on where it was; when every item has ended, the results are joined in order
// and the artifact is approved. Running the items (concurrency, agents, checkpoints)
// is the caller's.

// Pipeline keeps the pipeline of the runs of one machine's definition: the auto
// artifacts it writes, their items, and the run under way (State.Pipeline) with its
// Stop and Continue. Its transitions refuse as the machine's do (*Refusal), and ask
// the machine who may (Machine.May). Machine.Pipeline returns it.
type Pipeline struct {
	m Machine
}

// Pipeline returns the pipeline of m's runs.
func (m Machine) Pipeline() Pipeline { return Pipeline{m: m} }

// MaxInterruptions is how many times an item may be cut short by the end of its turn
// (rather than fail) before it fails: a model call that never returns must not run
// again forever.
const MaxInterruptions = 2

// ItemsOf returns the items auto artifact id of s is written as: one per item of its
// foreach artifact's current text, or one for the whole artifact. Errors: a Refusal
// NoItems or TooManyItems (Source: the foreach artifact).
func (p Pipeline) ItemsOf(s *State, id string) ([]ItemState, error) {
	a, _, err := p.m.Artifact(s, id)
	if err != nil {
		return nil, err
	}
	if a.Foreach == "" {
		return []ItemState{{Title: a.Title, Status: ItemPending}}, nil
	}
	found := Items(s.Artifacts[a.Foreach].Text)
	switch {
	case len(found) == 0:
		return nil, &Refusal{Reason: NoItems, Artifact: id, Source: a.Foreach}
	case len(found) > MaxItems:
		return nil, &Refusal{Reason: TooManyItems, Artifact: id, Source: a.Foreach}
	}
	out := make([]ItemState, len(found))
	for i, it := range found {
		out[i] = ItemState{Title: it.Title, Brief: it.Body, Status: ItemPending}
	}
	return out, nil
}

// Started records that the pipeline writes auto artifact id, as items, from now:
// running, its run's progress message listing it. A run is begun when none is under
// way (its ID from now). Errors: NotCurrent unless it is pending.
func (p Pipeline) Started(s *State, id string, items []ItemState) error {
	_, st, err := p.m.in(s, id, StatusPending)
	if err != nil {
		return err
	}
	st.touch()
	st.Status, st.Items, st.Batched = StatusRunning, slices.Clone(items), false
	st.Tainted, st.Refused = false, nil // its items write it anew and mark it (RecordItem)
	p.enlist(s, id)
	return nil
}

// enlist lists artifact id in the run under way, for its progress message, beginning
// a run (its ID from now) when none is under way.
func (p Pipeline) enlist(s *State, id string) {
	if s.Pipeline == nil {
		now := p.m.now()
		s.Pipeline = &PipelineState{ID: strconv.FormatInt(now.UnixNano(), 36), StartedAt: now}
	}
	if !slices.Contains(s.Pipeline.Artifacts, id) {
		s.Pipeline.Artifacts = append(s.Pipeline.Artifacts, id)
	}
}

// ItemEnd is how one try of an item, or the item, ended (RecordItem).
type ItemEnd struct {
	// Step is true for a failed try with more to come, or a recovery: recorded so
	// that a cut run does not repeat it; the item goes on.
	Step bool
	// Cut is true when the turn ended before the item did; Interrupted says whether
	// it ran out of the turn's time (counted), rather than being stopped or shut
	// down (not counted).
	Cut, Interrupted bool
	Text             string // the result of a done item
	Reason           string // set: every try failed, for this reason
	Attempts         int
	Failures         []string
	Recovery         *Recovery
	// TimeoutReason is the reason given to an item interrupted MaxInterruptions
	// times.
	TimeoutReason string
	// Tainted says untrusted content went into Text; Refused are the tool calls the
	// try did not run (ArtifactState.Taint).
	Tainted bool
	Refused []RefusedCall
}

// RecordItem records how item index of running artifact id ended. It does nothing
// for an artifact that no longer runs (a restart sent it back) or an item it no
// longer has.
func (p Pipeline) RecordItem(s *State, id string, index int, e ItemEnd) {
	st := s.Artifacts[id]
	if st == nil || st.Status != StatusRunning || index >= len(st.Items) {
		return
	}
	it := &st.Items[index]
	if !e.Cut {
		st.Taint(e.Tainted && e.Reason == "" && !e.Step, e.Refused)
	}
	switch {
	case e.Cut && e.Interrupted:
		it.Interrupted++
		if it.Interrupted >= MaxInterruptions {
			it.Status, it.Reason = ItemFailed, e.TimeoutReason
		}
	case e.Cut:
	case e.Step:
		it.Attempts, it.Failures, it.Recovery = e.Attempts, slices.Clone(e.Failures), e.Recovery
	case e.Reason != "":
		it.Status, it.Reason, it.Attempts, it.Failures, it.Recovery = ItemFailed, e.Reason, e.Attempts, slices.Clone(e.Failures), e.Recovery
	default:
		it.Text, it.Note = SplitNotes(e.Text)
		it.Status, it.Attempts, it.Recovery = ItemDone, e.Attempts, e.Recovery
	}
}

// FixedItem replaces the text of done item index of running artifact id with text, a
// revision of it written before the artifact completes (an automatic fix of a
// placeholder left in it); a note in text replaces the item's note. It does nothing
// for an item that is not done, or an artifact that no longer runs.
func (p Pipeline) FixedItem(s *State, id string, index int, text string) {
	st := s.Artifacts[id]
	if st == nil || st.Status != StatusRunning || index >= len(st.Items) || st.Items[index].Status != ItemDone {
		return
	}
	it := &st.Items[index]
	var note string
	if it.Text, note = SplitNotes(text); note != "" {
		it.Note = note
	}
}

// BatchEnded records that the batch write of running artifact id ended (its items'
// results are RecordItem's): its items still pending are written one by one from now.
// It does nothing for an artifact that no longer runs.
func (p Pipeline) BatchEnded(s *State, id string) {
	if st := s.Artifacts[id]; st != nil && st.Status == StatusRunning {
		st.Batched = true
	}
}

// Finished returns the first running artifact, in order, whose items have all ended,
// or "".
func (p Pipeline) Finished(s *State) string {
	for _, id := range p.m.Def.Order() {
		if st := s.Artifacts[id]; st != nil && st.Status == StatusRunning && PendingItems(st.Items) == 0 {
			return id
		}
	}
	return ""
}

// Completed approves running artifact id whose items have all ended, with their
// results joined in order as its text, evaluated as eval (nil without criteria, or
// when the evaluation failed). Errors: NotCurrent unless it runs with every item
// ended.
func (p Pipeline) Completed(s *State, id string, eval []CriterionResult) (Revision, error) {
	a, st, err := p.m.in(s, id, StatusRunning)
	if err != nil {
		return Revision{}, err
	}
	if PendingItems(st.Items) > 0 {
		return Revision{}, &Refusal{Reason: NotCurrent, Artifact: id}
	}
	st.touch()
	st.Status, st.Text, st.Eval, st.StaleBecause, st.PriorEval = StatusApproved, JoinItems(a, st.Items), slices.Clone(eval), "", nil
	st.Note = itemNotes(a, st.Items)
	p.m.Staleness().show(s) // a retry of its failed items made what was written from it stale
	why := "written by the pipeline"
	if failed := FailedItems(st.Items); len(failed) > 0 {
		why += " (" + strconv.Itoa(len(failed)) + " of " + strconv.Itoa(len(st.Items)) + " items failed)"
	}
	return p.m.revise(s, id, "", why), nil
}

// itemNotes are the notes of items, one a line; a foreach artifact's each after its
// item's title.
func itemNotes(a *Artifact, items []ItemState) string {
	var notes []string
	for _, it := range items {
		switch {
		case it.Note == "":
		case a.Foreach == "":
			notes = append(notes, it.Note)
		default:
			notes = append(notes, it.Title+": "+strings.ReplaceAll(it.Note, "\n", "; "))
		}
	}
	return strings.Join(notes, "\n")
}

// RetryFailed runs the failed items of auto artifact id again, by by (its card's
// Retry, restart's rule): the artifact, approved with failed items, runs again with
// those items pending and its done items kept; what was written from it goes stale
// (Staleness.Mark), listed once it is approved again. Errors: a Refusal — NotAllowed;
// NotCurrent unless it is approved with failed items.
func (p Pipeline) RetryFailed(s *State, id, by string) (Revision, error) {
	if err := p.m.May(s, PermRestart, by); err != nil {
		return Revision{}, err
	}
	a, st, err := p.m.in(s, id, StatusApproved)
	if err != nil {
		return Revision{}, err
	}
	if a.Mode != ModeAuto || len(FailedItems(st.Items)) == 0 {
		return Revision{}, &Refusal{Reason: NotCurrent, Artifact: id}
	}
	st.touch()
	st.Status, st.Items = StatusRunning, slices.Clone(st.Items)
	for i, it := range st.Items {
		if it.Status == ItemFailed {
			st.Items[i] = ItemState{Title: it.Title, Brief: it.Brief, Status: ItemPending}
		}
	}
	p.m.Staleness().Mark(s, id)
	p.enlist(s, id)
	return p.m.revise(s, id, by, "failed items retried"), nil
}

// AnyRunning reports whether any artifact of s is being written by the pipeline.
func AnyRunning(s *State) bool {
	for _, st := range s.Artifacts {
		if st.Status == StatusRunning {
			return true
		}
	}
	return false
}

// End forgets the run under way (its progress message was closed).
func (p Pipeline) End(s *State) { s.Pipeline = nil }

// Stop stops the pipeline run id, by by: its unfinished items wait for Continue.
// Errors: NotCurrent when it is not the run under way; stopping a stopped run does
// nothing.
func (p Pipeline) Stop(s *State, id, by string) error {
	run := s.Pipeline
	switch {
	case run == nil || run.ID != id:
		return &Refusal{Reason: NotCurrent}
	case run.Stopped():
		return nil
	}
	run.StoppedBy = by
	return nil
}

// Halt stops the pipeline itself, for reason (its turns kept failing).
func (p Pipeline) Halt(s *State, reason string) {
	if s.Pipeline != nil {
		s.Pipeline.Halted = reason
	}
}

// Continue resumes the stopped pipeline run id. Errors: NotCurrent unless it is the
// stopped run.
func (p Pipeline) Continue(s *State, id string) error {
	run := s.Pipeline
	if run == nil || run.ID != id || !run.Stopped() {
		return &Refusal{Reason: NotCurrent}
	}
	run.StoppedBy, run.Halted = "", ""
	return nil
}

// Resume clears a stop or a halt of the run under way: a person's action started
// more of it.
func (p Pipeline) Resume(s *State) {
	if run := s.Pipeline; run != nil {
		run.StoppedBy, run.Halted = "", ""
	}
}

// NextPart numbers the next part of the run under way (a KindPipeline input: only the
// newest part acts) and returns the run.
func (p Pipeline) NextPart(s *State) *PipelineState {
	s.Pipeline.Part++
	return s.Pipeline
}

// JoinItems is the text of auto artifact a from its items: a foreach artifact's items
// each under a "## title" heading, in order; a failed item says so.
func JoinItems(a *Artifact, items []ItemState) string {
	if a.Foreach == "" && len(items) == 1 {
		return ItemText(items[0])
	}
	var b strings.Builder
	for i, it := range items {
		if i > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString("## " + it.Title + "\n\n" + ItemText(it))
	}
	return b.String()
}

// noResult starts the text of a failed item (ItemText); the style checks skip a
// section that starts with it (RunChecks).
const noResult = "_No result: "

// ItemText is an item's result, without a heading the model repeated; for a failed
// item, a note with the reason.
func ItemText(it ItemState) string {
	if it.Status == ItemFailed {
		return noResult + it.Reason + "_"
	}
	text := strings.TrimSpace(it.Text)
	if first, rest, ok := strings.Cut(text, "\n"); ok && strings.HasPrefix(first, "#") && strings.EqualFold(strings.TrimSpace(strings.TrimLeft(first, "#")), it.Title) {
		text = strings.TrimSpace(rest)
	}
	return text
}

// FailedItems returns the items that failed.
func FailedItems(items []ItemState) []ItemState {
	var out []ItemState
	for _, it := range items {
		if it.Status == ItemFailed {
			out = append(out, it)
		}
	}
	return out
}

// PendingItems counts the items that have not ended.
func PendingItems(items []ItemState) int {
	n := 0
	for _, it := range items {
		if it.Status == ItemPending {
			n++
		}
	}
	return n
}

// Elapsed is the pipeline's time so far at now, in whole seconds.
func (p *PipelineState) Elapsed(now time.Time) time.Duration {
	return now.Sub(p.StartedAt).Round(time.Second)
}
