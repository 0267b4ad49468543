package main

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/api"
	"github.com/threadwright/threadwright/store/storetest"
)

// apiRun drives one run through the HTTP API as a token.
type apiRun struct {
	c      apiClient
	secret string
	id     string
}

// get returns the run as GET /v1/runs/{id} answers it.
func (r apiRun) get() *api.Run {
	r.c.t.Helper()
	var got api.Run
	r.c.expect(http.StatusOK, "GET", "/v1/runs/"+r.id, r.secret, nil, &got)
	return &got
}

// act posts the action verb on artifact id of the run as it is now (its current
// revision, and body's other fields), expects 200 with the action applied, and
// returns the run after its turn.
func (r apiRun) act(verb, id string, body map[string]any) *api.Run {
	r.c.t.Helper()
	b := map[string]any{"revision": artifactOf(r.c.t, r.get(), id).Revision}
	for k, v := range body {
		b[k] = v
	}
	var res actionResult
	r.c.expect(http.StatusOK, "POST", "/v1/runs/"+r.id+"/artifacts/"+id+":"+verb, r.secret, b, &res)
	if !res.Done || !res.Applied || res.Run == nil {
		r.c.t.Fatalf("%s %s: done %v, applied %v", verb, id, res.Done, res.Applied)
	}
	return res.Run
}

// refused posts the action verb on artifact id as secret with body and expects
// status want; it returns the problem's text.
func (r apiRun) refused(want int, secret, verb, id string, body map[string]any) string {
	r.c.t.Helper()
	return r.c.expect(want, "POST", "/v1/runs/"+r.id+"/artifacts/"+id+":"+verb, secret, body, nil)
}

// statuses returns each artifact's status in run, by id.
func statuses(run *api.Run) map[string]string {
	out := map[string]string{}
	for _, a := range run.Artifacts {
		out[a.ID] = a.Status
	}
	return out
}

// TestE2EAPIProposal drives a whole proposal through the HTTP API alone (issue 29,
// row 1), on SQLite and on Postgres; Slack only watches. The API starts it, approves
// the research, picks the solution's option, approves it and the partners section,
// then edits the approved research: what was written from it becomes stale (the
// problem statement's options, drawn from it, go back to be drawn again). Once the
// edited research is approved, the API keeps the solution as it is and regenerates
// the partners section with guidance, then picks and approves to the end and exports
// the report. Each new action is refused as a Slack click would be: 409 on another
// revision or a stale one that waits, 422 for an option that does not exist, 403 for
// a token the workflow's rules (edit, cancel: the starter) or its channel list do not
// allow. A second run is cancelled through the API. The thread shows every step
// as the token's, and no person clicked anything.
func TestE2EAPIProposal(t *testing.T) {
	t.Run("SQLite", func(t *testing.T) { testAPIProposal(t, "") })
	t.Run("Postgres", func(t *testing.T) { testAPIProposal(t, storetest.PostgresDSN(t)) })
}

func testAPIProposal(t *testing.T, databaseURL string) {
	h := newWorkflowHarness(t)
	h.env["DATABASE_URL"] = databaseURL
	h.env["OPENAI_API_KEY"] = modelKey // a configured secret: responses scrub it
	h.env["API_ADDR"] = "127.0.0.1:0"
	h.env["API_TOKENS"] = strings.Join([]string{
		"ci-bot:" + ciSecret + ";scope=runs:read runs:write",
		"viewer:" + viewerSecret + ";scope=runs:read runs:write",
		"random:" + randomSecret + ";scope=runs:read runs:write;channels=C0RANDOM",
	}, ",")
	h.start()
	c := apiClient{t: t, base: "http://" + h.main.APIAddr()}

	var started struct{ Run *api.Run }
	c.expect(http.StatusCreated, "POST", "/v1/runs", ciSecret, map[string]any{"workflow": "proposal", "channel": general}, &started)
	if started.Run == nil || started.Run.StartedBy != "api:ci-bot" {
		t.Fatalf("the started run: %+v", started.Run)
	}
	r := apiRun{c: c, secret: ciSecret, id: started.Run.ID}
	thread := started.Run.ThreadTS
	h.latest(thread, "Approve", "") // Slack shows the research for review

	run := r.act("approve", "research", nil)
	sol := artifactOf(t, run, "solution")
	if sol.Status != "options_generated" || len(sol.Options) != 3 {
		t.Fatalf("the solution after the research's approval: %+v", sol)
	}
	// A pick: refused on another revision, for an option that does not exist, and
	// for a token limited to another channel; then made, letter case aside.
	r.refused(http.StatusConflict, ciSecret, "pick", "solution", map[string]any{"revision": sol.Revision + 1, "option": "B"})
	if raw := r.refused(http.StatusUnprocessableEntity, ciSecret, "pick", "solution", map[string]any{"revision": sol.Revision, "option": "Z"}); !strings.Contains(raw, "A, B, C") {
		t.Errorf("the refusal of option Z does not list the options: %s", raw)
	}
	r.refused(http.StatusForbidden, randomSecret, "pick", "solution", map[string]any{"revision": sol.Revision, "option": "B"})
	run = r.act("pick", "solution", map[string]any{"option": "b"})
	if sol = artifactOf(t, run, "solution"); sol.Status != "generated" || sol.Selected != "B" || sol.Text == "" {
		t.Fatalf("the solution after the pick of B: %+v", sol)
	}
	r.act("approve", "solution", nil)
	run = r.act("approve", "connections", nil)
	if st := statuses(run); st["research"] != "approved" || st["solution"] != "approved" || st["connections"] != "approved" || st["problem_statement"] != "options_generated" {
		t.Fatalf("before the edit: %v", st)
	}

	// The edit of the approved research: the editor rewrites it as asked, and what
	// was written from it becomes stale. The workflow lets only its starter edit.
	research := artifactOf(t, run, "research")
	r.refused(http.StatusForbidden, viewerSecret, "edit", "research", map[string]any{"revision": research.Revision, "text": "add the 2025 figures"})
	r.refused(http.StatusUnprocessableEntity, ciSecret, "edit", "research", map[string]any{"revision": research.Revision})
	var res actionResult
	raw := c.expect(http.StatusOK, "POST", "/v1/runs/"+r.id+"/artifacts/research:edit", ciSecret,
		map[string]any{"revision": research.Revision, "text": "add the 2025 figures and quote " + modelKey}, &res)
	if strings.Contains(raw, modelKey) || !strings.Contains(raw, "[REDACTED]") {
		t.Errorf("the edit's answer holds the secret unscrubbed: %s", raw)
	}
	run = res.Run
	research = artifactOf(t, run, "research")
	if !res.Applied || research.Status != "generated" || !strings.Contains(research.Text, "It follows: add the 2025 figures") {
		t.Fatalf("the research after the edit: applied %v, %+v", res.Applied, research)
	}
	for _, id := range []string{"solution", "connections"} {
		if a := artifactOf(t, run, id); a.Status != "stale" || a.StaleBecause != "research" {
			t.Errorf("%s after the research's edit: %s, stale because %q", id, a.Status, a.StaleBecause)
		}
	}
	if ps := artifactOf(t, run, "problem_statement"); ps.Status != "pending" || len(ps.Options) != 0 {
		t.Errorf("the problem statement's options, drawn from the old research: %+v", ps)
	}
	// A stale section waits for the research to be approved again.
	if raw := r.refused(http.StatusConflict, ciSecret, "keep", "solution", map[string]any{"revision": artifactOf(t, run, "solution").Revision}); !strings.Contains(raw, "research") {
		t.Errorf("the keep before the research's approval: %s", raw)
	}
	r.refused(http.StatusConflict, ciSecret, "regenerate", "research", map[string]any{"revision": research.Revision})
	r.act("approve", "research", nil)
	h.latest(thread, "Keep", "") // Slack shows the stale list

	// Keep one stale section, regenerate the other with guidance.
	run = r.act("keep", "solution", nil)
	if sol = artifactOf(t, run, "solution"); sol.Status != "approved" || sol.Selected != "B" {
		t.Errorf("the solution kept: %+v", sol)
	}
	run = r.act("regenerate", "connections", map[string]any{"text": "name the city council"})
	conn := artifactOf(t, run, "connections")
	if conn.Status != "generated" || conn.StaleBecause != "" || !strings.Contains(conn.Text, "It follows: name the city council") {
		t.Fatalf("the connections regenerated: %+v", conn)
	}

	// To the end: every pick and approval through the API.
	for range 20 {
		next := ""
		for _, a := range run.Artifacts {
			if a.Status == "generated" || a.Status == "options_generated" {
				next = a.ID
				break
			}
		}
		if next == "" {
			break
		}
		if artifactOf(t, run, next).Status == "options_generated" {
			run = r.act("pick", next, map[string]any{"option": "A"})
		} else {
			run = r.act("approve", next, nil)
		}
	}
	if run.Status != "completed" {
		t.Fatalf("the run after the API's last approval: %s %v", run.Status, statuses(run))
	}

	// The export: the report has the edited research and the regenerated section;
	// Slack got the same file.
	var report struct {
		Markdown string
		Draft    bool
	}
	c.expect(http.StatusOK, "GET", "/v1/runs/"+r.id+"/report", ciSecret, nil, &report)
	if report.Draft || !strings.Contains(report.Markdown, "It follows: add the 2025 figures") ||
		!strings.Contains(report.Markdown, "It follows: name the city council") || strings.Contains(report.Markdown, "not written yet") {
		t.Errorf("the exported report: %+v", report)
	}
	if file := h.file("proposal.md"); !strings.Contains(file, "It follows: name the city council") {
		t.Errorf("the report uploaded to Slack lacks the regenerated section:\n%s", file)
	}
	c.expect(http.StatusConflict, "POST", "/v1/runs/"+r.id+":cancel", ciSecret, nil, nil)

	// Slack watched: every revision is the token's or the bot's, and the thread says so.
	for _, a := range r.get().Artifacts {
		for _, rev := range a.History {
			if rev.By != "" && rev.By != "api:ci-bot" {
				t.Errorf("%s revision %d by %s", a.ID, rev.Number, rev.By)
			}
		}
	}
	tr := h.transcript(thread)
	for _, want := range []string{"kept by ci-bot (via API)", "regenerated by ci-bot (via API)", "Approved by ci-bot (via API)."} {
		if !strings.Contains(tr, want) {
			t.Errorf("the thread does not say %q", want)
		}
	}
	if strings.Contains(tr, "<@api:") || strings.Contains(tr, modelKey) {
		t.Errorf("the thread names the token as a Slack user, or shows the secret:\n%s", tr)
	}

	// A second run, cancelled by the API: only its starter may.
	c.expect(http.StatusCreated, "POST", "/v1/runs", ciSecret, map[string]any{"workflow": "proposal", "channel": general}, &started)
	second := started.Run
	c.expect(http.StatusForbidden, "POST", "/v1/runs/"+second.ID+":cancel", viewerSecret, nil, nil)
	c.expect(http.StatusForbidden, "POST", "/v1/runs/"+second.ID+":cancel", randomSecret, nil, nil)
	var cancelled actionResult
	c.expect(http.StatusOK, "POST", "/v1/runs/"+second.ID+":cancel", ciSecret, nil, &cancelled)
	if !cancelled.Done || !cancelled.Applied || cancelled.Run.Status != "cancelled" {
		t.Fatalf("the cancel: done %v, applied %v, %+v", cancelled.Done, cancelled.Applied, cancelled.Run)
	}
	if tr := h.transcript(second.ThreadTS); !strings.Contains(tr, "cancelled by ci-bot (via API).") {
		t.Errorf("the thread does not say who cancelled it:\n%s", tr)
	}
	c.expect(http.StatusConflict, "POST", "/v1/runs/"+second.ID+":cancel", ciSecret, nil, nil)
	c.expect(http.StatusConflict, "POST", "/v1/runs/"+second.ID+"/artifacts/research:approve", ciSecret,
		map[string]int{"revision": artifactOf(t, cancelled.Run, "research").Revision}, nil)
	var list struct{ Runs []api.RunSummary }
	c.expect(http.StatusOK, "GET", "/v1/runs?channel="+general+"&status=cancelled", ciSecret, nil, &list)
	if !slices.ContainsFunc(list.Runs, func(s api.RunSummary) bool { return s.ID == second.ID }) {
		t.Errorf("cancelled runs: %+v", list.Runs)
	}
	assertNoSlackErrors(t, h.harness)
}
