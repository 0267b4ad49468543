package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/api"
	"github.com/threadwright/threadwright/store/storetest"
	"github.com/threadwright/threadwright/testkit/logtest"
)

const (
	ciSecret     = "ci-bot-secret-0123456789"
	viewerSecret = "viewer-secret-0123456789"
)

// apiClient sends plain net/http requests to the HTTP API of a harness.
type apiClient struct {
	t    *testing.T
	base string
	// header holds headers sent with every request besides the defaults.
	header http.Header
}

// with returns c sending header name: value with its requests besides.
func (c apiClient) with(name, value string) apiClient {
	c.header = c.header.Clone()
	if c.header == nil {
		c.header = http.Header{}
	}
	c.header.Set(name, value)
	return c
}

// do sends method path with body (JSON, when not nil) and the bearer secret (none
// when ""), decodes the answer into out (when not nil) and returns its status and
// raw body.
func (c apiClient) do(method, path, secret string, body, out any) (int, string) {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			c.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if secret != "" {
		req.Header.Set("Authorization", "Bearer "+secret)
	}
	for k, vs := range c.header {
		req.Header[k] = vs
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode < 300 && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			c.t.Fatalf("%s %s: decode %s: %v", method, path, raw, err)
		}
	}
	if resp.StatusCode >= 400 && !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/problem+json") {
		c.t.Errorf("%s %s: %d answered as %q, not a problem document", method, path, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	return resp.StatusCode, string(raw)
}

// expect is do, failing the test unless the status is want.
func (c apiClient) expect(want int, method, path, secret string, body, out any) string {
	c.t.Helper()
	got, raw := c.do(method, path, secret, body, out)
	if got != want {
		c.t.Fatalf("%s %s: status %d, want %d: %s", method, path, got, want, raw)
	}
	return raw
}

type actionResult struct {
	InputID string   `json:"input_id"`
	Done    bool     `json:"done"`
	Applied bool     `json:"applied"`
	Run     *api.Run `json:"run"`
}

func artifactOf(t *testing.T, r *api.Run, id string) api.Artifact {
	t.Helper()
	for _, a := range r.Artifacts {
		if a.ID == id {
			return a
		}
	}
	t.Fatalf("run %s has no artifact %s", r.ID, id)
	return api.Artifact{}
}

// TestE2EAPI drives a workflow through the HTTP API and Slack together, on SQLite
// and on Postgres: a run started by the API, its first artifact's option picked by
// the API and approved by a click in Slack, every other pick and approval by the API
// (as a token that the approvers list), then the report; every other endpoint, the
// 401, 403, 404, 409 and 422 answers, and the served document.
func TestE2EAPI(t *testing.T) {
	t.Run("SQLite", func(t *testing.T) { testE2EAPI(t, "") })
	t.Run("Postgres", func(t *testing.T) { testE2EAPI(t, storetest.PostgresDSN(t)) })
}

func testE2EAPI(t *testing.T, databaseURL string) {
	h := newWorkflowHarness(t)
	h.env["DATABASE_URL"] = databaseURL
	h.env["API_ADDR"] = "127.0.0.1:0"
	h.env["API_TOKENS"] = "ci-bot:" + ciSecret + ";scope=admin,viewer:" + viewerSecret + ";scope=runs:read runs:write"
	h.env["APPROVER_USER_IDS"] = alice + ",api:ci-bot"
	logs := &logtest.Buffer{}
	h.logs = logs
	h.start()
	c := apiClient{t: t, base: "http://" + h.main.APIAddr()}

	// The document served is the one generated (and committed: api's spec test).
	want, err := api.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	var served, generated any
	if err := json.Unmarshal([]byte(c.expect(http.StatusOK, "GET", "/openapi.json", "", nil, nil)), &served); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(want, &generated); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(served, generated) {
		t.Errorf("/openapi.json is not api.OpenAPI()")
	}

	// 401 without a token, with a wrong one, with another scheme.
	c.expect(http.StatusUnauthorized, "GET", "/v1/workflows", "", nil, nil)
	c.expect(http.StatusUnauthorized, "GET", "/v1/workflows", "ci-bot-secret-wrong-0000", nil, nil)
	c.expect(http.StatusUnauthorized, "POST", "/v1/runs", "", map[string]any{"workflow": "product-brief", "channel": general}, nil)

	var wfs struct{ Workflows []api.Workflow }
	c.expect(http.StatusOK, "GET", "/v1/workflows", ciSecret, nil, &wfs)
	var brief *api.Workflow
	for i := range wfs.Workflows {
		if wfs.Workflows[i].Name == "product-brief" {
			brief = &wfs.Workflows[i]
		}
	}
	if brief == nil || len(brief.Artifacts) != 5 || brief.Artifacts[0].ID != "problem" || brief.Artifacts[0].Mode != "choice" || len(brief.Inputs) == 0 {
		t.Fatalf("product-brief as listed: %+v", brief)
	}

	// 422: an unknown workflow, an unknown input.
	c.expect(http.StatusUnprocessableEntity, "POST", "/v1/runs", ciSecret, map[string]any{"workflow": "nope", "channel": general}, nil)
	c.expect(http.StatusUnprocessableEntity, "POST", "/v1/runs", ciSecret,
		map[string]any{"workflow": "product-brief", "channel": general, "inputs": map[string]string{"colour": "red"}}, nil)
	c.expect(http.StatusUnprocessableEntity, "POST", "/v1/runs", ciSecret, map[string]any{"channel": general}, nil)

	// Start by API: the bot posts the thread, as /threadwright start does.
	var started struct {
		InputID string   `json:"input_id"`
		Run     *api.Run `json:"run"`
	}
	c.expect(http.StatusCreated, "POST", "/v1/runs", ciSecret,
		map[string]any{"workflow": "product-brief", "channel": general, "inputs": map[string]string{"topic": "meal kits for students"}}, &started)
	run := started.Run
	if run == nil || run.Permalink == "" || run.StartedBy != "api:ci-bot" || run.Status != "running" || run.Inputs["topic"] != "meal kits for students" {
		t.Fatalf("the started run: %+v", run)
	}
	thread := run.ThreadTS
	if roots := h.emu.BotMessages(general, ""); len(roots) == 0 || roots[len(roots)-1].TS != thread {
		t.Fatalf("the run's thread %s is not the bot's newest message in the channel", thread)
	}
	h.idle()

	// The first artifact: picked by the API, approved by a click in Slack.
	r := apiRun{c: c, secret: ciSecret, id: run.ID}
	if p := r.act("pick", "problem", map[string]any{"option": "B"}); artifactOf(t, p, "problem").Selected != "B" {
		t.Fatalf("problem after the API's pick: %+v", artifactOf(t, p, "problem"))
	}
	h.click(thread, alice, "Approve", "")
	// The second: picked and approved by the API.
	got := *r.act("pick", "audience", map[string]any{"option": "A"})
	if p := artifactOf(t, &got, "problem"); p.Status != "approved" || len(p.History) == 0 || p.History[len(p.History)-1].By != alice {
		t.Fatalf("problem, approved in Slack: %+v", p)
	}
	aud := artifactOf(t, &got, "audience")
	if aud.Status != "generated" || aud.Text == "" || len(aud.Evaluations) == 0 || aud.Selected != "A" {
		t.Fatalf("audience under review: %+v", aud)
	}
	path := "/v1/runs/" + run.ID + "/artifacts/audience"
	// 409 for a stale revision; 403 for a token the approvers do not list; 404s.
	c.expect(http.StatusConflict, "POST", path+":approve", ciSecret, map[string]int{"revision": aud.Revision - 1}, nil)
	c.expect(http.StatusForbidden, "POST", path+":approve", viewerSecret, map[string]int{"revision": aud.Revision}, nil)
	c.expect(http.StatusNotFound, "POST", "/v1/runs/"+run.ID+"/artifacts/budget:approve", ciSecret, map[string]int{"revision": 1}, nil)
	c.expect(http.StatusNotFound, "POST", path+":frobnicate", ciSecret, map[string]int{"revision": aud.Revision}, nil)
	c.expect(http.StatusNotFound, "GET", "/v1/runs/T0-C0-1.2", ciSecret, nil, nil)
	c.expect(http.StatusNotFound, "GET", "/v1/runs/nonsense", ciSecret, nil, nil)
	c.expect(http.StatusUnprocessableEntity, "POST", path+":request-changes", ciSecret, map[string]any{"revision": aud.Revision}, nil)
	c.expect(http.StatusConflict, "POST", path+":keep", ciSecret, map[string]int{"revision": aud.Revision}, nil)

	var res actionResult
	c.expect(http.StatusOK, "POST", path+":approve", ciSecret, map[string]int{"revision": aud.Revision}, &res)
	a := artifactOf(t, res.Run, "audience")
	if !res.Done || !res.Applied || a.Status != "approved" {
		t.Fatalf("audience after the API's approval: done %v, %+v", res.Done, a)
	}
	if last := a.History[len(a.History)-1]; last.By != "api:ci-bot" || last.Status != "approved" || last.At.IsZero() {
		t.Errorf("the approval's revision: %+v", last)
	}
	// A double approval (the same revision again) is out of date.
	c.expect(http.StatusConflict, "POST", path+":approve", ciSecret, map[string]int{"revision": aud.Revision}, nil)
	if tr := h.transcript(thread); !strings.Contains(tr, "Approved by ci-bot (via API).") || strings.Contains(tr, "<@api:") {
		t.Errorf("the thread does not say the API approved it:\n%s", tr)
	}

	// Value proposition: picked, a change requested and approved by the API.
	vp := artifactOf(t, r.act("pick", "value_proposition", map[string]any{"option": "A"}), "value_proposition")
	c.expect(http.StatusOK, "POST", "/v1/runs/"+run.ID+"/artifacts/value_proposition:request-changes", ciSecret,
		map[string]any{"revision": vp.Revision, "text": "lead with the price"}, &res)
	vp = artifactOf(t, res.Run, "value_proposition")
	if vp.Status != "generated" || !strings.Contains(vp.Text, "It follows: lead with the price") {
		t.Fatalf("value_proposition after the change request: %+v", vp)
	}
	var report struct {
		Markdown string
		Draft    bool
	}
	c.expect(http.StatusOK, "GET", "/v1/runs/"+run.ID+"/report", ciSecret, nil, &report)
	if !report.Draft || !strings.Contains(report.Markdown, "_(not written yet)_") {
		t.Errorf("the report of an unfinished run: %+v", report)
	}
	c.expect(http.StatusOK, "POST", "/v1/runs/"+run.ID+"/artifacts/value_proposition:approve", ciSecret, map[string]int{"revision": vp.Revision}, &res)
	for _, id := range []string{"positioning", "name"} {
		r.act("pick", id, map[string]any{"option": "A"})
		got = *r.act("approve", id, nil)
	}
	if got.Status != "completed" {
		t.Fatalf("the run after its last approval: %s", got.Status)
	}
	h.file("product-brief.md")
	c.expect(http.StatusOK, "GET", "/v1/runs/"+run.ID+"/report", ciSecret, nil, &report)
	if report.Draft || !strings.Contains(report.Markdown, "It follows: lead with the price") || strings.Contains(report.Markdown, "not written yet") {
		t.Errorf("the final report: %+v", report)
	}
	// Acting on a completed run is a conflict.
	c.expect(http.StatusConflict, "POST", "/v1/runs/"+run.ID+"/artifacts/name:approve", ciSecret, map[string]int{"revision": 1}, nil)

	// Lists by channel and status.
	var list struct{ Runs []api.RunSummary }
	c.expect(http.StatusOK, "GET", "/v1/runs?channel="+general+"&status=completed", ciSecret, nil, &list)
	if len(list.Runs) != 1 || list.Runs[0].ID != run.ID {
		t.Errorf("completed runs of %s: %+v", general, list.Runs)
	}
	c.expect(http.StatusOK, "GET", "/v1/runs?channel="+general+"&status=running", ciSecret, nil, &list)
	if len(list.Runs) != 0 {
		t.Errorf("running runs of %s: %+v", general, list.Runs)
	}
	c.expect(http.StatusUnprocessableEntity, "GET", "/v1/runs?status=sleeping", ciSecret, nil, nil)

	// The thread's stored messages, two by two, newest page first.
	msgsPath := fmt.Sprintf("/v1/conversations/%s/%s/%s/messages", run.TeamID, general, thread)
	var page struct {
		Messages   []api.Message
		NextBefore int64 `json:"next_before"`
	}
	c.expect(http.StatusOK, "GET", msgsPath+"?limit=2", ciSecret, nil, &page)
	if len(page.Messages) != 2 || page.NextBefore == 0 || page.Messages[0].Seq >= page.Messages[1].Seq {
		t.Fatalf("the newest page: %+v", page)
	}
	newest := page.Messages[1].Seq
	seen := 2
	for page.NextBefore != 0 {
		before := page.NextBefore
		page.Messages, page.NextBefore = nil, 0 // absent on the oldest page
		c.expect(http.StatusOK, "GET", fmt.Sprintf("%s?limit=2&before=%d", msgsPath, before), ciSecret, nil, &page)
		seen += len(page.Messages)
	}
	if int64(seen) != newest {
		t.Errorf("paging back saw %d messages, want %d", seen, newest)
	}
	c.expect(http.StatusNotFound, "GET", fmt.Sprintf("/v1/conversations/%s/%s/1.000/messages", run.TeamID, general), ciSecret, nil, nil)
	c.expect(http.StatusUnprocessableEntity, "GET", msgsPath+"?limit=0", ciSecret, nil, nil)

	// The knowledge base: upload, list, delete.
	var up struct {
		api.Source
		Changed bool
	}
	doc := map[string]string{"source": "handbook/leave.md", "content": "# Leave\n\nEveryone has twenty days of paid leave a year."}
	c.expect(http.StatusCreated, "POST", "/v1/knowledge/sources", ciSecret, doc, &up)
	if !up.Changed || up.Chunks == 0 {
		t.Errorf("upload: %+v", up)
	}
	c.expect(http.StatusCreated, "POST", "/v1/knowledge/sources", ciSecret, doc, &up)
	if up.Changed {
		t.Errorf("the same content uploaded again changed the source")
	}
	c.expect(http.StatusUnprocessableEntity, "POST", "/v1/knowledge/sources", ciSecret, map[string]string{"source": "slides.pdf", "content": "x"}, nil)
	c.expect(http.StatusUnprocessableEntity, "POST", "/v1/knowledge/sources", ciSecret, map[string]string{"source": "../etc/passwd.txt", "content": "x"}, nil)
	var sources struct{ Sources []api.Source }
	c.expect(http.StatusOK, "GET", "/v1/knowledge/sources", ciSecret, nil, &sources)
	if len(sources.Sources) != 1 || sources.Sources[0].Source != "handbook/leave.md" {
		t.Errorf("sources: %+v", sources.Sources)
	}
	c.expect(http.StatusNoContent, "DELETE", "/v1/knowledge/sources/"+url.PathEscape("handbook/leave.md"), ciSecret, nil, nil)
	c.expect(http.StatusNotFound, "DELETE", "/v1/knowledge/sources/"+url.PathEscape("handbook/leave.md"), ciSecret, nil, nil)

	// The token's name is logged, its secret never.
	h.stop()
	out := logs.String()
	if !strings.Contains(out, "token=ci-bot") {
		t.Errorf("the log does not name the token")
	}
	for _, s := range []string{ciSecret, viewerSecret} {
		if strings.Contains(out, s) {
			t.Errorf("the log holds a token's secret")
		}
	}
}
