package api_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/threadwright/threadwright/api"
)

var update = flag.Bool("update", false, "write the generated OpenAPI document to docs/openapi.json")

// TestOpenAPISpec fails when the API's generated OpenAPI document and the one
// committed at docs/openapi.json differ; go generate ./api (or -update) rewrites it.
func TestOpenAPISpec(t *testing.T) {
	got, err := api.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("..", "docs", "openapi.json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go generate ./api)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("docs/openapi.json is not the API's document: run go generate ./api and commit it")
	}
	again, err := api.OpenAPI()
	if err != nil || !bytes.Equal(got, again) {
		t.Errorf("the document is not deterministic (err %v)", err)
	}
}
