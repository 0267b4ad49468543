package knowledge

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/threadwright/threadwright/conversation"
)

// Chunks returns the chunks of a document, content, in the format its file name's
// extension names (case-insensitively; see Extensions), numbered from 0 and with no
// Source. Errors: ErrUnsupported, ErrNotText, ErrTooMuchText.
func Chunks(name string, content []byte) ([]conversation.Chunk, error) {
	format, ok := Extensions[strings.ToLower(filepath.Ext(name))]
	if !ok {
		return nil, ErrUnsupported
	}
	if i := bytes.IndexByte(content, 0); i >= 0 {
		return nil, fmt.Errorf("%w: a NUL byte at byte %d, as binary files and UTF-16 text have", ErrNotText, i)
	}
	if !utf8.Valid(content) {
		return nil, fmt.Errorf("%w: a byte that is not UTF-8 at byte %d; save the file as UTF-8", ErrNotText, invalidUTF8(content))
	}
	switch format {
	case Text:
		return SplitText(string(content)), nil
	case HTML:
		md, err := htmlToMarkdown(string(content))
		if err != nil {
			return nil, err
		}
		return SplitMarkdown(md), nil
	default:
		return SplitMarkdown(string(content)), nil
	}
}

// Report is what Ingest did.
type Report struct {
	// Added, Replaced and Unchanged count the documents stored for the first time,
	// stored again because their content changed, and found stored as they are.
	Added, Replaced, Unchanged int
	// Chunks counts the chunks stored, of the added and replaced documents.
	Chunks int
	// Skipped lists the files not ingested, and why, in the order met.
	Skipped []Skipped
}

// Skipped is a file Ingest did not ingest: its path, as Ingest names sources, and the
// reason ("not text: a NUL byte at byte 12, …", "permission denied", …).
type Skipped struct {
	Path, Reason string
}

// String summarizes r on one line: "2 added, 1 replaced, 5 unchanged, 14 chunks
// stored, 1 skipped".
func (r Report) String() string {
	return fmt.Sprintf("%d added, %d replaced, %d unchanged, %s stored, %d skipped",
		r.Added, r.Replaced, r.Unchanged, count(r.Chunks, "chunk"), len(r.Skipped))
}

// count returns "1 chunk", "2 chunks".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// Ingest loads the documents that paths name into kb: each path is a file, or a
// directory whose files are loaded recursively (in lexical order, leaving out files
// and directories whose names start with "." and, silently, files whose extension is
// not one of Extensions). A document's source is its path as given, cleaned and
// slash-separated ("handbook/leave.md", however it was reached), its hash the
// SHA-256 of its content, in hex; a document stored with that hash already is left as
// it is, without being read further. A path that does not exist, and a file that
// cannot be read, is larger than MaxFileSize or is not UTF-8 text, is skipped with a
// reason in the report; a path named twice is loaded once.
//
// logf, when not nil, is told of each document ("added handbook/a.md (3 chunks)",
// "unchanged handbook/b.md", "skipped handbook/c.txt: not text: …"). The error is kb's or
// ctx's, and ends the ingest; the report counts what was done before it.
func Ingest(ctx context.Context, kb conversation.Knowledge, paths []string, logf func(format string, args ...any)) (Report, error) {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	var r Report
	infos, err := kb.Sources(ctx)
	if err != nil {
		return r, err
	}
	stored := make(map[string]string, len(infos)) // source → hash
	for _, info := range infos {
		stored[info.Source] = info.Hash
	}
	skip := func(path string, reason error) {
		r.Skipped = append(r.Skipped, Skipped{Path: path, Reason: describe(reason)})
		logf("skipped %s: %s", path, describe(reason))
	}
	seen := make(map[string]bool)
	for _, root := range paths {
		for file := range walk(root, skip) {
			if err := ctx.Err(); err != nil {
				return r, err
			}
			if seen[file] {
				continue
			}
			seen[file] = true
			if err := r.ingest(ctx, kb, file, stored, skip, logf); err != nil {
				return r, err
			}
		}
	}
	return r, nil
}

// ingest loads the document source (a path, slash-separated) into kb and counts it
// in r; stored holds the hash of each stored source. The error is kb's.
func (r *Report) ingest(ctx context.Context, kb conversation.Knowledge, source string, stored map[string]string,
	skip func(string, error), logf func(string, ...any)) error {
	if _, ok := Extensions[strings.ToLower(filepath.Ext(source))]; !ok {
		skip(source, ErrUnsupported)
		return nil
	}
	content, err := readFile(filepath.FromSlash(source))
	if err != nil {
		skip(source, err)
		return nil
	}
	sum := sha256.Sum256(content)
	hash := hex.EncodeToString(sum[:])
	old, existed := stored[source]
	if existed && old == hash {
		r.Unchanged++
		logf("unchanged %s", source)
		return nil
	}
	chunks, err := Chunks(source, content)
	if err != nil {
		skip(source, err)
		return nil
	}
	changed, err := kb.ReplaceSource(ctx, source, hash, conversation.Origin{By: conversation.OriginIngest}, chunks)
	switch {
	case err != nil:
		return err
	case !changed: // stored meanwhile, by another ingest
		r.Unchanged++
		logf("unchanged %s", source)
	case existed:
		r.Replaced++
		r.Chunks += len(chunks)
		logf("replaced %s (%s)", source, count(len(chunks), "chunk"))
	default:
		r.Added++
		r.Chunks += len(chunks)
		logf("added %s (%s)", source, count(len(chunks), "chunk"))
	}
	stored[source] = hash
	return nil
}

// walk yields the documents that root names, as slash-separated paths that start with
// root cleaned: root itself when it is a file, whatever its extension (Chunks tells an
// unsupported one), or the files under it with a supported extension, recursively,
// in lexical order, leaving out names that start with ".". It tells skip of root when
// it does not exist and of the directories it cannot read.
func walk(root string, skip func(string, error)) func(yield func(string) bool) {
	root = filepath.Clean(root)
	return func(yield func(string) bool) {
		fi, err := os.Stat(root)
		if err != nil {
			skip(filepath.ToSlash(root), err)
			return
		}
		if !fi.IsDir() {
			yield(filepath.ToSlash(root))
			return
		}
		stop := errors.New("stop")
		err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				skip(filepath.ToSlash(path), err)
				if d != nil && d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if path != root && strings.HasPrefix(d.Name(), ".") {
				if d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if d.IsDir() {
				return nil
			}
			if _, ok := Extensions[strings.ToLower(filepath.Ext(path))]; !ok {
				return nil
			}
			if !yield(filepath.ToSlash(path)) {
				return stop
			}
			return nil
		})
		_ = err // stop, or nothing: WalkDir's own errors went to skip
	}
}

// readFile reads a regular file of at most MaxFileSize bytes.
func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	switch {
	case err != nil:
		return nil, err
	case !fi.Mode().IsRegular():
		return nil, errors.New("not a regular file")
	case fi.Size() > MaxFileSize:
		return nil, errTooLarge
	}
	content, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err == nil && len(content) > MaxFileSize { // it grew
		err = errTooLarge
	}
	return content, err
}

// invalidUTF8 returns the offset of b's first byte that is not UTF-8, or len(b).
func invalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return len(b)
}

var errTooLarge = fmt.Errorf("larger than %d MiB", MaxFileSize>>20)

// describe returns the reason err gives for skipping a file, without the path that
// fs errors repeat and the package prefix of ErrUnsupported and ErrNotText.
func describe(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "no such file or directory"
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	}
	return strings.TrimPrefix(err.Error(), "knowledge: ")
}
