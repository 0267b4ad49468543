package workflowrun

import (
	"context"
	"errors"
	"log/slog"
	"strings"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/history"
	"github.com/threadwright/threadwright/conversation/render"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// enhance runs the enhancement pass of job's artifact over text, one try of an item
// written (and edited) with usage u and error err: a try that failed is returned as
// it is. A failed pass keeps text and is counted for the artifact's card.
func (w worker) enhance(ctx context.Context, job itemJob, text string, u conversation.Usage, err error) (string, conversation.Usage, error) {
	if err != nil || w.enh == nil || job.req.Artifact.Enhance == nil {
		return text, u, err
	}
	out, outcome, eu, err := enhanceText(ctx, w.agent, w.log, w.enh.defined, job.req, text)
	if outcome == workflow.EnhanceFailed {
		w.enh.mu.Lock()
		w.enh.failed[job.artifact]++
		w.enh.mu.Unlock()
	}
	return out, u.Add(eu), err
}

// maxReason bounds a failure reason kept in the checkpoint and shown in the thread.
const maxReason = 300

// itemJob is one item to run: everything the worker needs, copied from the state.
type itemJob struct {
	artifact string
	index    int
	req      conversation.ArtifactRequest
	retries  int
	editor   *workflow.Editor
	// The item's earlier failed tries (checkpointed), which this run continues.
	tried    int
	failures []string
	recovery *workflow.Recovery
}

// itemResult is what a worker reports for one item: its end, or (step) a failed try
// or a recovery on the way, checkpointed so that a cut run does not try again what
// it already tried.
type itemResult struct {
	job      itemJob
	step     bool
	text     string
	reason   string // non-empty: every try failed
	attempts int
	failures []string
	recovery *workflow.Recovery
	usage    conversation.Usage
	// cut is true when the turn ended (stop, shutdown, timeout) before the item did:
	// nothing more is recorded for it.
	cut bool
	// batch holds the item a batch job's step wrote, item index → text
	// (pipeline_batch.go); nil for any other job.
	batch map[int]string
	// tainted says untrusted content went into text (or batch); refused are the
	// tool calls the job did not run (workflow.ItemEnd).
	tainted bool
	refused []conversation.RefusedCall
}

// itemKey names an item of an artifact.
type itemKey struct {
	artifact string
	index    int
}

// flight holds the items being written.
type flight map[itemKey]bool

// of counts the items of artifact id being written.
func (f flight) of(id string) int {
	n := 0
	for k := range f {
		if k.artifact == id {
			n++
		}
	}
	return n
}

// isStop reports whether a person stopped ctx.
func isStop(ctx context.Context) bool {
	_, ok := conversation.StoppedBy(ctx)
	return ok
}

// itemRequest is the agent request for item i of running artifact a. For a foreach
// artifact, a dependency that fans out over the same artifact is given as its own
// item i only (the research notes of this section, not of every section).
func (t pipelineRun) itemRequest(a *workflow.Artifact, st *workflow.ArtifactState, i int) conversation.ArtifactRequest {
	r := t.request(a.ID, st.Instructions)
	if a.Foreach == "" {
		return r
	}
	it := st.Items[i]
	r.Item = &conversation.Item{Index: i, Total: len(st.Items), Title: it.Title, Brief: it.Brief}
	for _, dep := range t.def().Dependencies(a.ID) {
		d, _ := t.def().Artifact(dep)
		ds := t.ws().Artifacts[dep]
		if d.Foreach == a.Foreach && len(ds.Items) == len(st.Items) && ds.Text == workflow.JoinItems(d, ds.Items) {
			r.Approved[dep] = workflow.ItemText(ds.Items[i])
		}
	}
	return r
}

// worker writes items on goroutines of their own. It holds only what a worker needs
// (the agent, the log, the thread's language), so it cannot touch the turn's state:
// everything an item needs is copied into its itemJob, and what it did comes back as
// itemResults that the turn records.
type worker struct {
	agent  conversation.WorkflowAgent
	log    *slog.Logger
	lang   string
	redact func(string) string // Config.Redact, never nil
	// explain says what a failed try's error came from (Service.explain).
	explain func(error) conversation.Failure
	// enh runs the enhancement passes (enhance.go; nil: none).
	enh *enhancer
	// fetcher reads the pages of a fetch artifact (Config.Fetcher; nil: none is read,
	// for the reason noFetch).
	fetcher conversation.SourceFetcher
	noFetch string
}

// write writes one try of an item, then its editor and enhancement passes (finish).
func (w worker) write(ctx context.Context, job itemJob, instructions string) (string, conversation.Usage, error) {
	text, usage, err := w.agent.Write(ctx, job.withInstructions(instructions))
	if err != nil {
		return text, usage, err
	}
	out, u, err := w.finish(ctx, job, text)
	return out, usage.Add(u), err
}

// finish passes text, written for job, through the artifact's editor pass, when it
// has one, then its enhancement pass (enhance.go): what every written item
// goes through before it is recorded, alone or in a batch (editItem).
func (w worker) finish(ctx context.Context, job itemJob, text string) (string, conversation.Usage, error) {
	if job.editor == nil {
		return w.enhance(ctx, job, text, conversation.Usage{}, nil)
	}
	r := job.req
	r.Current, r.Instructions = text, r.Workflow.ExpandPrompt(job.editor.Prompt, r.Inputs)
	if job.editor.Model != "" {
		r.Profile = job.editor.Model
	}
	edited, u, err := w.agent.Revise(ctx, r)
	return w.enhance(ctx, job, edited, u, err)
}

func (j itemJob) withInstructions(s string) conversation.ArtifactRequest {
	r := j.req
	r.Instructions = s
	return r
}

// recoveredInstructions are the recovery agent's instructions with its queries.
func recoveredInstructions(r workflow.Recovery) string {
	s := r.Instructions
	if len(r.Queries) > 0 {
		s += "\n\nSearch for:\n- " + strings.Join(r.Queries, "\n- ")
	}
	return s
}

// failureReason is the text kept for a failed try, scrubbed by redact before it is
// clipped (a clipped secret would no longer be recognized): the model's own reason
// when it gave up, after the tool that failed on its way; an error's words for
// people; otherwise what failed (explain), or the error's text.
func (w worker) failureReason(err error) string {
	var tf *conversation.TaskFailure
	var um interface{ UserMessage() string }
	s := err.Error()
	switch {
	case errors.As(err, &tf):
		s = tf.Reason
		if len(tf.Tools) > 0 {
			s = render.Tr(w.lang, "failed.tool", tf.Tools[0]) + " " + s
		}
	case errors.As(err, &um):
		s = um.UserMessage()
	default:
		if f := w.explain(err); f.Cause != conversation.CauseUnknown {
			s = strings.TrimSuffix(render.Tr(w.lang, "failed."+string(f.Cause)), ".")
			if f.Tool != "" {
				s = strings.TrimSuffix(render.Tr(w.lang, "failed.tool", f.Tool), ".")
			}
			if f.Detail != "" {
				s += " (" + f.Detail + ")"
			}
			if f.Message != "" {
				s += ": " + f.Message
			}
		}
	}
	return history.Clip(strings.Join(strings.Fields(w.redact(s)), " "), maxReason)
}
