package mrkdwn_test

import (
	"fmt"

	"github.com/threadwright/threadwright/agents/mrkdwn"
)

func ExampleFromMarkdown() {
	fmt.Println(mrkdwn.FromMarkdown("## Summary\n**Total:** 3 < 5 items, see [the report](https://example.com/r?a=1&b=2).\n- `x && y`\n- ~~old~~ *new*"))
	// Output:
	// *Summary*
	// *Total:* 3 &lt; 5 items, see <https://example.com/r?a=1&amp;b=2|the report>.
	// • `x &amp;&amp; y`
	// • ~old~ _new_
}
