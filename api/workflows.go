package api

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/threadwright/threadwright/conversation/workflow"
)

// Workflow is a workflow definition (docs/workflows.md, "The YAML schema").
type Workflow struct {
	Name        string            `json:"name" doc:"The name that starts it: /threadwright start <name>."`
	Title       string            `json:"title"`
	Description string            `json:"description"`
	Inputs      []WorkflowInput   `json:"inputs" doc:"What the starter gives; POST /v1/runs takes them by id."`
	Artifacts   []ArtifactDef     `json:"artifacts" doc:"The artifacts, in declared order."`
	Permissions map[string]string `json:"permissions" doc:"Who may approve, keep, restart, edit and cancel: anyone, starter or approvers."`
}

// WorkflowInput is one input of a workflow.
type WorkflowInput struct {
	ID       string `json:"id"`
	Label    string `json:"label,omitempty"`
	Required bool   `json:"required"`
	Type     string `json:"type" enum:"text,number"`
	Default  string `json:"default,omitempty"`
}

// ArtifactDef is one artifact of a workflow definition.
type ArtifactDef struct {
	ID        string      `json:"id"`
	Title     string      `json:"title"`
	Mode      string      `json:"mode" enum:"choice,draft,auto" doc:"choice: options, pick, write, review; draft: write, review; auto: written without review."`
	DependsOn []string    `json:"depends_on,omitempty"`
	Criteria  []Criterion `json:"criteria,omitempty"`
}

// Criterion is what an artifact's text is evaluated against.
type Criterion struct {
	ID          string `json:"id"`
	Description string `json:"description"`
}

type workflowsOutput struct {
	Body struct {
		Workflows []Workflow `json:"workflows"`
	}
}

func workflowOf(d *workflow.Definition) Workflow {
	w := Workflow{Name: d.Name, Title: d.Title, Description: d.Description, Inputs: []WorkflowInput{}, Artifacts: []ArtifactDef{},
		Permissions: map[string]string{}}
	for _, in := range d.Inputs {
		typ := string(in.Type)
		if typ == "" {
			typ = string(workflow.InputText)
		}
		w.Inputs = append(w.Inputs, WorkflowInput{ID: in.ID, Label: in.Label, Required: in.Required, Type: typ, Default: in.Default})
	}
	for _, a := range d.Artifacts {
		mode := string(a.Mode)
		if mode == "" {
			mode = string(workflow.ModeDraft)
		}
		ad := ArtifactDef{ID: a.ID, Title: a.Title, Mode: mode, DependsOn: a.DependsOn}
		for _, c := range a.Criteria {
			ad.Criteria = append(ad.Criteria, Criterion{ID: c.ID, Description: c.Description})
		}
		w.Artifacts = append(w.Artifacts, ad)
	}
	for _, p := range []workflow.Permission{workflow.PermApprove, workflow.PermKeep, workflow.PermRestart, workflow.PermEdit, workflow.PermCancel} {
		w.Permissions[string(p)] = d.Rule(p)
	}
	return w
}

func (s *Server) registerWorkflows() {
	huma.Register(s.api, secured(huma.Operation{
		OperationID: "list-workflows", Method: http.MethodGet, Path: "/v1/workflows", Tags: []string{"workflows"},
		Summary: "List the workflow definitions", Errors: []int{http.StatusUnauthorized},
	}, ScopeRunsRead), func(ctx context.Context, _ *struct{}) (*workflowsOutput, error) {
		out := &workflowsOutput{}
		out.Body.Workflows = []Workflow{}
		for _, d := range s.cfg.Workflows.All() {
			out.Body.Workflows = append(out.Body.Workflows, workflowOf(d))
		}
		return out, nil
	})
}
