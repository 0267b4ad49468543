package doclinks

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
)

// Problem is one pointer that leads nowhere.
type Problem struct {
	File    string // the pointing file, slash-separated from the repository's root
	Line    int    // its line
	Pointer string // the pointer as written, white space collapsed
	Reason  string // what is missing
}

// String is the problem as a compiler would print it: file:line: pointer: reason.
func (p Problem) String() string {
	return fmt.Sprintf("%s:%d: %s: %s", p.File, p.Line, p.Pointer, p.Reason)
}

// Check reads every .go and .md file of the repository rooted at fsys and returns the
// pointers that lead nowhere, by file and line. The error is one of reading a file or
// parsing a Go file.
func Check(fsys fs.FS) ([]Problem, error) {
	c := &checker{fsys: fsys, docs: map[string]*document{}, topDirs: map[string]bool{}}
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if e.IsDir() && !skipDir(e.Name()) {
			c.topDirs[e.Name()] = true
		}
	}
	var problems []Problem
	err = fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name != "." && skipDir(d.Name()) {
				return fs.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, ".md") {
			return nil
		}
		found, err := c.file(name)
		problems = append(problems, found...)
		return err
	})
	slices.SortStableFunc(problems, func(a, b Problem) int {
		if a.File != b.File {
			return strings.Compare(a.File, b.File)
		}
		return a.Line - b.Line
	})
	return problems, err
}

// skipDir reports whether a directory holds no prose of the repository: test
// fixtures (testdata) and hidden directories (.git).
func skipDir(name string) bool { return name == "testdata" || strings.HasPrefix(name, ".") }

type checker struct {
	fsys    fs.FS
	topDirs map[string]bool
	docs    map[string]*document // parsed Markdown files by path; nil: not a readable file
}

// file checks the pointers of one file.
func (c *checker) file(name string) ([]Problem, error) {
	src, err := fs.ReadFile(c.fsys, name)
	if err != nil {
		return nil, err
	}
	var texts []text
	markdown := strings.HasSuffix(name, ".md")
	if markdown {
		texts, _ = parseMarkdown(string(src))
	} else if texts, err = goTexts(name, src); err != nil {
		return nil, err
	}
	var problems []Problem
	for _, t := range texts {
		for _, p := range findPointers(t, markdown, c.topDirs) {
			if reason := c.resolve(name, p); reason != "" {
				problems = append(problems, Problem{File: name, Line: p.line, Pointer: p.written, Reason: reason})
			}
		}
	}
	return problems, nil
}

// resolve says what pointer p of file from lacks, or "" when it leads somewhere.
func (c *checker) resolve(from string, p pointer) string {
	switch p.kind {
	case unquotedSection:
		return `name the section in double quotes, as in docs/workflows.md, "Permissions"`
	case sectionPointer:
		doc, docPath := c.pointedDoc(from, p.target)
		if doc == nil {
			return "no document " + docPath
		}
		var missing []string
		for _, s := range p.sections {
			if !doc.has(s) {
				missing = append(missing, strconv.Quote(s))
			}
		}
		if len(missing) > 0 {
			return "no section " + strings.Join(missing, ", ") + " in " + docPath
		}
	case linkPointer:
		target := from
		if p.target != "" {
			target = path.Join(path.Dir(from), p.target)
		}
		if !c.exists(target) {
			return "no file or directory " + target
		}
		if p.anchor != "" && strings.HasSuffix(target, ".md") {
			if doc := c.doc(target); doc == nil || !doc.anchors[p.anchor] {
				return "no heading with the anchor #" + p.anchor + " in " + target
			}
		}
	case pathPointer:
		if !c.exists(p.target) {
			return "no file or directory " + p.target
		}
	case localGoFile:
		if target := path.Join(path.Dir(from), p.target); !c.exists(target) {
			return "no file " + target
		}
	}
	return ""
}

// pointedDoc is the Markdown document a section pointer of file from names: README is
// README.md, architecture docs/architecture.md, and a path is read from the root, or
// else from from's directory. It returns nil, and the path tried, when there is none.
func (c *checker) pointedDoc(from, target string) (*document, string) {
	switch target {
	case "README":
		target = "README.md"
	case "architecture":
		target = "docs/architecture.md"
	}
	if doc := c.doc(target); doc != nil {
		return doc, target
	}
	if local := path.Join(path.Dir(from), target); c.doc(local) != nil {
		return c.doc(local), local
	}
	return nil, target
}

// doc parses the Markdown file at name once; nil when it cannot be read.
func (c *checker) doc(name string) *document {
	if d, ok := c.docs[name]; ok {
		return d
	}
	var d *document
	if src, err := fs.ReadFile(c.fsys, name); err == nil {
		_, parsed := parseMarkdown(string(src))
		d = &parsed
	}
	c.docs[name] = d
	return d
}

func (c *checker) exists(name string) bool {
	if !fs.ValidPath(name) {
		return false
	}
	_, err := fs.Stat(c.fsys, name)
	return err == nil
}

// goTexts are the comment groups of a Go file, and, unless it is a test, its string
// literals (only their section pointers count: see text.paths).
func goTexts(name string, src []byte) ([]text, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var texts []text
	for _, g := range f.Comments {
		texts = append(texts, commentText(fset, g))
	}
	if strings.HasSuffix(name, "_test.go") {
		return texts, nil
	}
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		if s, err := strconv.Unquote(lit.Value); err == nil {
			// A struct tag's values are quoted inside it: desc:"… (README \"X\")".
			s = strings.ReplaceAll(s, `\"`, `"`)
			texts = append(texts, text{s: s, line: fset.Position(lit.Pos()).Line})
		}
		return true
	})
	return texts, nil
}

// commentText joins the lines of comment group g, without their // or /* */ and
// without directives (//go:generate), keeping their line numbers.
func commentText(fset *token.FileSet, g *ast.CommentGroup) text {
	t := text{line: fset.Position(g.Pos()).Line, paths: true, goFile: true}
	var b strings.Builder
	last := t.line
	for _, c := range g.List {
		line := fset.Position(c.Pos()).Line
		b.WriteString(strings.Repeat("\n", line-last))
		last = fset.Position(c.End()).Line
		s := c.Text
		switch {
		case strings.HasPrefix(s, "//go:") || strings.HasPrefix(s, "//line "):
			continue
		case strings.HasPrefix(s, "//"):
			s = strings.TrimPrefix(s[2:], " ")
		default:
			s = strings.TrimSuffix(strings.TrimPrefix(s, "/*"), "*/")
		}
		b.WriteString(s)
	}
	t.s = b.String()
	return t
}
