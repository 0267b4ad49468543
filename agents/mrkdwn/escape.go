package mrkdwn

import "strings"

// Escape escapes the three characters Slack's mrkdwn gives a meaning to: & as
// &amp;, < as &lt; and > as &gt; (Slack, "Formatting text for app surfaces",
// "Escaping text"). Slack shows the original characters.
func Escape(s string) string { return mrkdwnEscaper.Replace(s) }

var mrkdwnEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
