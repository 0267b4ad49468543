package api

import (
	"encoding/json"
	"net/http"
	"strings"
)

// mux is an http.ServeMux that also routes custom methods, Google API style: a
// pattern such as "POST /v1/runs/{id}/artifacts/{artifact}:approve" (which
// ServeMux cannot hold, a wildcard being a whole segment) is registered as
// "POST /v1/runs/{id}/artifacts/{artifact}", whose handler splits the last
// segment at its last ':' and calls the verb's handler with the wildcard set to
// what precedes it. It implements humago.Mux.
type mux struct {
	*http.ServeMux
	verbs map[string]map[string]http.HandlerFunc // base pattern → verb → handler
}

func newMux() *mux {
	m := &mux{ServeMux: http.NewServeMux(), verbs: map[string]map[string]http.HandlerFunc{}}
	m.ServeMux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeProblem(w, http.StatusNotFound, "no such resource: "+r.URL.Path)
	})
	return m
}

// HandleFunc registers h for pattern (see mux). It is called before serving.
func (m *mux) HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request)) {
	i := strings.LastIndex(pattern, "}:")
	if i < 0 {
		m.ServeMux.HandleFunc(pattern, h)
		return
	}
	base, verb := pattern[:i+1], pattern[i+2:]
	name := base[strings.LastIndex(base, "{")+1 : len(base)-1]
	verbs, ok := m.verbs[base]
	if !ok {
		verbs = map[string]http.HandlerFunc{}
		m.verbs[base] = verbs
		m.ServeMux.HandleFunc(base, func(w http.ResponseWriter, r *http.Request) {
			v := r.PathValue(name)
			j := strings.LastIndex(v, ":")
			if j < 0 {
				writeProblem(w, http.StatusNotFound, "no such resource: "+r.URL.Path+" (the path ends in :<action>)")
				return
			}
			h, ok := verbs[v[j+1:]]
			if !ok {
				writeProblem(w, http.StatusNotFound, "no such action: "+v[j+1:])
				return
			}
			r.SetPathValue(name, v[:j])
			h(w, r)
		})
	}
	verbs[verb] = h
}

// writeProblem writes an RFC 9457 problem document with status and detail.
func writeProblem(w http.ResponseWriter, status int, detail string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]any{"title": http.StatusText(status), "status": status, "detail": detail})
	_, _ = w.Write(b)
}
