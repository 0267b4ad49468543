package htmltext_test

import (
	"fmt"
	"strings"
)

// realisticPage builds a documentation page of about 70 KB: head with styles and
// scripts, a site header with navigation, an article of sections with paragraphs,
// links, inline code, nested lists, tables and code blocks, and a footer.
func realisticPage() string {
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Threadwright handbook — Operations guide</title>
<link rel="stylesheet" href="/static/site.css"><style>body{font:16px/1.5 sans-serif}.nav a{color:#333}</style>
<script>window.dataLayer=window.dataLayer||[];function gtag(){dataLayer.push(arguments)}gtag('js',new Date());</script>
</head><body>
<header class="site"><a href="/"><img src="/logo.svg" alt="Threadwright"></a>
<nav class="nav"><ul><li><a href="/docs">Docs</a></li><li><a href="/blog">Blog</a></li><li><a href="/about">About</a></li></ul></nav></header>
<main><article>
<h1>Operations guide</h1>
`)
	for s := 1; s <= 40; s++ {
		fmt.Fprintf(&b, "<h2 id=\"s%d\">Section %d: running the bot</h2>\n", s, s)
		for p := 1; p <= 3; p++ {
			fmt.Fprintf(&b, `<p>Paragraph %d of section %d explains how the <strong>bot</strong> handles a thread when
  the model calls <code>fetch_url</code> or <code>search_knowledge</code>; see <a href="/docs/tools#t%d">the tools page</a>
  and <a href="https://example.org/ref/%d">the reference</a> for details, &amp; the <em>limits</em> that apply.</p>
`, p, s, s, p)
		}
		b.WriteString("<ul>\n")
		for i := 1; i <= 4; i++ {
			fmt.Fprintf(&b, "  <li>Step %d: check the <a href=\"/status\">status</a> page", i)
			if i == 2 {
				b.WriteString("\n    <ol><li>open the dashboard</li><li>read the <em>queue</em> graph</li></ol>\n  ")
			}
			b.WriteString("</li>\n")
		}
		b.WriteString("</ul>\n")
		if s%3 == 0 {
			b.WriteString("<table><thead><tr><th>Setting</th><th>Default</th><th>Meaning</th></tr></thead><tbody>\n")
			for r := 1; r <= 5; r++ {
				fmt.Fprintf(&b, "<tr><td><code>SETTING_%d</code></td><td>%d</td><td>what setting %d does</td></tr>\n", r, r*10, r)
			}
			b.WriteString("</tbody></table>\n")
		}
		if s%4 == 0 {
			b.WriteString("<pre><code class=\"language-go\">func main() {\n\tctx := context.Background()\n\tif err := run(ctx); err != nil {\n\t\tlog.Fatal(err)\n\t}\n}\n</code></pre>\n")
		}
		b.WriteString("<figure><img src=\"/img/diagram.png\" alt=\"diagram\"><figcaption>How a turn flows</figcaption></figure>\n")
	}
	b.WriteString(`<footer class="byline">Written by the operations team</footer>
</article></main>
<aside><h2>Related</h2><ul><li><a href="/docs/install">Install</a></li></ul></aside>
<footer class="site"><p>© Threadwright · <a href="/privacy">Privacy</a></p></footer>
<script src="/static/app.js"></script>
</body></html>
`)
	return b.String()
}
