package api

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/internal/textcut"
	"github.com/threadwright/threadwright/knowledge"
)

// Source is a document of the knowledge base.
type Source struct {
	Source     string    `json:"source" doc:"The document's name, e.g. handbook/leave.md."`
	Hash       string    `json:"hash" doc:"SHA-256 of the content, hex."`
	Chunks     int       `json:"chunks"`
	IngestedAt time.Time `json:"ingested_at"`
	Origin     string    `json:"origin" doc:"Who stored it: ingest (an operator's threadwright ingest) or api:<token name>."`
	Untrusted  bool      `json:"untrusted" doc:"Uploaded by a token not marked trusted: search_knowledge labels its passages untrusted content (docs/api.md, \"Tokens\")."`
}

type sourcesOutput struct {
	Body struct {
		Sources []Source `json:"sources" doc:"Sorted by name."`
	}
}

// opUpload is the upload's operation id, which the upload bounds apply to
// (bounds.go).
const opUpload = "upload-source"

// maxDocument bounds an uploaded document in bytes, as threadwright ingest bounds a
// file.
const maxDocument = knowledge.MaxFileSize

// uploadReadTimeout bounds the reading of an upload's body: 10 MB on a slow link
// takes longer than huma's default 5 s.
const uploadReadTimeout = 2 * time.Minute

type uploadInput struct {
	Body struct {
		Source  string `json:"source" minLength:"1" maxLength:"1000" doc:"The document's name; its extension says its format: .md, .markdown, .txt, .html or .htm. Uploading a name again replaces it."`
		Content string `json:"content" minLength:"1" maxLength:"10485760" doc:"The document, UTF-8 text."`
	}
}

type uploadOutput struct {
	Body struct {
		Source
		Changed bool `json:"changed" doc:"False when the same content was stored already."`
	}
}

type deleteSourceInput struct {
	Source string `path:"source" doc:"The source's name, URL-encoded (a / is %2F)."`
}

func (s *Server) registerKnowledge() {
	huma.Register(s.api, secured(huma.Operation{
		OperationID: "list-sources", Method: http.MethodGet, Path: "/v1/knowledge/sources", Tags: []string{"knowledge"},
		Summary: "List the knowledge base's documents", Errors: []int{http.StatusUnauthorized, http.StatusNotFound},
	}, ScopeKnowledgeRead), func(ctx context.Context, _ *struct{}) (*sourcesOutput, error) {
		kb, err := s.knowledge()
		if err != nil {
			return nil, err
		}
		infos, err := kb.Sources(ctx)
		if err != nil {
			return nil, s.storeError(err, "sources")
		}
		out := &sourcesOutput{}
		out.Body.Sources = []Source{}
		for _, i := range infos {
			out.Body.Sources = append(out.Body.Sources, Source{Source: i.Source, Hash: i.Hash, Chunks: i.Chunks, IngestedAt: i.IngestedAt,
				Origin: i.Origin.By, Untrusted: i.Origin.Untrusted})
		}
		return out, nil
	})
	huma.Register(s.api, secured(huma.Operation{
		OperationID: opUpload, Method: http.MethodPost, Path: "/v1/knowledge/sources", Tags: []string{"knowledge"},
		Summary: "Upload one document to the knowledge base", DefaultStatus: http.StatusCreated, MaxBodyBytes: 2*maxDocument + 4096,
		BodyReadTimeout: uploadReadTimeout,
		Description:     "Split into chunks as threadwright ingest splits a file, and searched by the search_knowledge tool. At most 2 uploads run at once (503 with Retry-After past it), and a token uploads at most 10 a minute after a burst of 10 (429 with Retry-After).",
		Errors:          []int{http.StatusUnauthorized, http.StatusNotFound, http.StatusUnprocessableEntity, http.StatusTooManyRequests, http.StatusServiceUnavailable},
	}, ScopeKnowledgeWrite), s.upload)
	huma.Register(s.api, secured(huma.Operation{
		OperationID: "delete-source", Method: http.MethodDelete, Path: "/v1/knowledge/sources/{source}", Tags: []string{"knowledge"},
		Summary: "Delete a document from the knowledge base", DefaultStatus: http.StatusNoContent,
		Errors: []int{http.StatusUnauthorized, http.StatusNotFound},
	}, ScopeKnowledgeWrite), func(ctx context.Context, in *deleteSourceInput) (*struct{}, error) {
		kb, err := s.knowledge()
		if err != nil {
			return nil, err
		}
		ctx, cancel := context.WithTimeout(ctx, s.cfg.StoreTimeout)
		defer cancel()
		if err := kb.DeleteSource(ctx, in.Source); err != nil {
			if errors.Is(err, conversation.ErrNotFound) {
				return nil, huma.Error404NotFound("no source " + in.Source)
			}
			return nil, s.storeError(err, "source "+in.Source)
		}
		s.log.Info("api: knowledge source deleted", "token", actor(ctx).Name, "source", in.Source)
		return nil, nil
	})
}

// checkSourceName returns why name cannot name an uploaded document, "" when it
// can: a clean relative path (no leading /, no .., no backslash) of printable
// characters only, since names reach terminals (threadwright ingest --list), logs
// and prompts, where ESC, BEL, a newline or a bidirectional override would act
// (textcut.Printable).
func checkSourceName(name string) string {
	switch {
	case textcut.Unprintable(name):
		return "control and invisible format characters (ESC, BEL, newlines, U+202E…) are not allowed in a name"
	case strings.HasPrefix(name, "/") || path.Clean(name) != name || name == ".." || strings.HasPrefix(name, "../") || strings.Contains(name, "\\"):
		return "a clean relative name such as handbook/leave.md"
	}
	return ""
}

// upload splits an uploaded document into chunks and replaces its source in the
// knowledge base, its write within uploadStoreTimes × Config.StoreTimeout.
func (s *Server) upload(ctx context.Context, in *uploadInput) (*uploadOutput, error) {
	kb, err := s.knowledge()
	if err != nil {
		return nil, err
	}
	name := in.Body.Source
	if msg := checkSourceName(name); msg != "" {
		return nil, huma.Error422UnprocessableEntity("invalid source", &huma.ErrorDetail{Location: "body.source", Value: textcut.Printable(name),
			Message: msg})
	}
	content := []byte(in.Body.Content)
	if len(content) > maxDocument { // maxLength counts characters, not bytes
		return nil, huma.Error422UnprocessableEntity("document too large", &huma.ErrorDetail{Location: "body.content",
			Message: fmt.Sprintf("%d bytes of UTF-8; at most %d", len(content), maxDocument)})
	}
	chunks, err := knowledge.Chunks(name, content)
	if err != nil {
		return nil, huma.Error422UnprocessableEntity(err.Error())
	}
	sum := sha256.Sum256(content)
	hash := hex.EncodeToString(sum[:])
	tok := actor(ctx)
	origin := conversation.Origin{By: tok.Actor(), Untrusted: !tok.Trusted}
	wctx, cancel := context.WithTimeout(ctx, uploadStoreTimes*s.cfg.StoreTimeout)
	defer cancel()
	changed, err := kb.ReplaceSource(wctx, name, hash, origin, chunks)
	if err != nil {
		return nil, s.storeError(err, "source "+name)
	}
	s.log.Info("api: knowledge source uploaded", "token", actor(ctx).Name, "source", name, "chunks", len(chunks), "changed", changed)
	out := &uploadOutput{}
	out.Body.Source = Source{Source: name, Hash: hash, Chunks: len(chunks), IngestedAt: time.Now().UTC(), Origin: origin.By, Untrusted: origin.Untrusted}
	out.Body.Changed = changed
	return out, nil
}

// uploadStoreTimes is how many times Config.StoreTimeout an upload's write to the
// knowledge base is given (a minute by default), since a 10 MB document is
// thousands of chunks; past it, 503.
const uploadStoreTimes = 6

func (s *Server) knowledge() (conversation.Knowledge, error) {
	if s.cfg.Knowledge == nil {
		return nil, huma.Error404NotFound("this store has no knowledge base")
	}
	return s.cfg.Knowledge, nil
}
