package web_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/agents/web"
)

// servePage serves the bytes of testdata/file with the Content-Type header
// contentType, or none when it is "".
func servePage(tb testing.TB, mux *http.ServeMux, path, file, contentType string) {
	tb.Helper()
	body, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		tb.Fatal(err)
	}
	mux.HandleFunc(path, func(w http.ResponseWriter, _ *http.Request) {
		if contentType == "" {
			w.Header()["Content-Type"] = nil // no header: fetch_url sniffs
		} else {
			w.Header().Set("Content-Type", contentType)
		}
		w.Write(body)
	})
}

// fetch_url reads pages in the legacy encodings of Russian and Japanese sites, and in
// UTF-16, from the header's charset, the page's <meta> or its byte order mark. The
// testdata files hold the bytes as those encodings write them.
func TestFetchURLCharsets(t *testing.T) {
	mux := http.NewServeMux()
	servePage(t, mux, "/cp1251/header", "windows-1251.html", "text/html; charset=windows-1251")
	servePage(t, mux, "/cp1251/meta", "windows-1251-meta.html", "text/html")
	servePage(t, mux, "/cp1251/meta-sniffed", "windows-1251-meta.html", "")
	servePage(t, mux, "/cp1251/http-equiv", "windows-1251-http-equiv.html", "text/html")
	servePage(t, mux, "/cp1251/header-over-meta", "windows-1251-meta.html", "text/html; charset=CP1251")
	servePage(t, mux, "/koi8r/html", "koi8-r.html", "text/html; charset=KOI8-R")
	servePage(t, mux, "/koi8r/text", "koi8-r.txt", "text/plain; charset=koi8-r")
	servePage(t, mux, "/sjis", "shift_jis.html", "text/html")
	servePage(t, mux, "/utf16", "utf-16le.html", "text/html")
	srv := MustWebServer(t, mux)
	cfg := web.FetchConfig{AllowPrivate: true}

	const leave = "Title: Новости компании\n\n# Отпуск\n\n" +
		"Сотрудники получают 28 дней оплачиваемого отпуска в году. Заявление подаётся за две недели."
	for _, tc := range []struct {
		name, path string
		want       string
	}{
		{"Windows1251Header", "/cp1251/header", leave},
		{"Windows1251Meta", "/cp1251/meta", leave},
		{"Windows1251MetaNoContentType", "/cp1251/meta-sniffed", leave},
		{"Windows1251HTTPEquiv", "/cp1251/http-equiv", leave},
		{"Windows1251HeaderAndMeta", "/cp1251/header-over-meta", leave},
		{"KOI8RHeader", "/koi8r/html", "Title: Погода в Москве\n\n" +
			"Завтра солнечно, до двадцати градусов тепла; ветер северный, слабый."},
		{"KOI8RPlainText", "/koi8r/text", "Content-Type: text/plain\n\nПогода в Москве\n" +
			"Завтра солнечно, до двадцати градусов тепла; ветер северный, слабый."},
		{"ShiftJISMeta", "/sjis", "Title: お知らせ\n\n本日は晴天なり。東京の天気は晴れ、最高気温は二十度です。"},
		{"UTF16ByteOrderMark", "/utf16", "Title: Ελληνικά νέα\n\nΚαλημέρα κόσμε."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := runFetch(t, cfg, srv.URL+tc.path)
			if err != nil {
				t.Fatal(err)
			}
			if want := "URL: " + srv.URL + tc.path + "\n" + tc.want; got != want {
				t.Errorf("got:\n%q\nwant:\n%q", got, want)
			}
		})
	}

	// A cut at the byte bound that splits a two-byte Shift_JIS character drops it,
	// with no U+FFFD in its place.
	t.Run("ShiftJISCut", func(t *testing.T) {
		body, err := os.ReadFile(filepath.Join("testdata", "shift_jis.html"))
		if err != nil {
			t.Fatal(err)
		}
		at := strings.Index(string(body), "\x93\x8c") + 1 // inside 東 (0x93 0x8C)
		got, err := runFetch(t, web.FetchConfig{AllowPrivate: true, MaxBytes: int64(at)}, srv.URL+"/sjis")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(got, "本日は晴天なり。\n\n[cut: the response is longer than") || strings.ContainsRune(got, '\uFFFD') {
			t.Errorf("got:\n%q", got)
		}
	})
}
