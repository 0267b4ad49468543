package workflow_test

import (
	"slices"
	"testing"

	"github.com/threadwright/threadwright/conversation/workflow"
)

func TestSearchQueries(t *testing.T) {
	tests := []struct {
		name, body string
		want       []string
	}{
		{"None", "What the section covers.\nKey points:\n- one", nil},
		{"Plain", "Covers x.\nKey points:\n- a point\nSearch queries:\n- stand-up length study\n- \"async stand-up\" tools\n\nMore text", []string{"stand-up length study", "\"async stand-up\" tools"}},
		{"Quoted", "Search queries:\n- `stand-up length`\n- “async tools”", []string{"stand-up length", "async tools"}},
		{"Bold", "**Search queries:**\n\n1. one\n2) two\nnot a query", []string{"one", "two"}},
		{"Heading", "### Search queries\n* one\n+ two", []string{"one", "two"}},
		{"Repeats", "search queries:\n- One\n- one\n- \"\"\n- two", []string{"One", "two"}},
		{"Bounded", "Search queries:\n- a\n- b\n- c\n- d\n- e\n- f", []string{"a", "b", "c", "d", "e"}},
		{"EmptyList", "Search queries:\nnone yet", nil},
		{"Russian", "Ключевые тезисы:\n- цены\n**Поисковые запросы:**\n- цены на поддержку 2024", []string{"цены на поддержку 2024"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := workflow.SearchQueries(tt.body); !slices.Equal(got, tt.want) {
				t.Errorf("SearchQueries = %q; want %q", got, tt.want)
			}
		})
	}
}
