package service_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// TestNoStorageTags checks that the domain types know nothing of storage: no struct
// field of this package or its subpackages has a db tag. The stores' row types carry
// the column names and convert to and from the domain types.
func TestNoStorageTags(t *testing.T) {
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && d.Name() == "testdata":
			return filepath.SkipDir
		case d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go"):
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			field, ok := n.(*ast.Field)
			if !ok || field.Tag == nil {
				return true
			}
			tag, err := strconv.Unquote(field.Tag.Value)
			if err != nil {
				t.Errorf("%s: tag %s: %v", fset.Position(field.Pos()), field.Tag.Value, err)
				return true
			}
			if _, ok := reflect.StructTag(tag).Lookup("db"); ok {
				t.Errorf("%s: field has a db tag (%s); storage names belong to the stores' row types", fset.Position(field.Pos()), field.Tag.Value)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
