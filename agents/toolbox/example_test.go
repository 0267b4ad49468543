package toolbox_test

import (
	"fmt"

	"github.com/threadwright/threadwright/agents/toolbox"
)

func ExampleEvaluate() {
	for _, expr := range []string{"(1200 * 1.2) / 7", "7 / 2", "2 ^ 8"} {
		v, err := toolbox.Evaluate(expr)
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		fmt.Println(v)
	}
	// Output:
	// 205.7142857142857
	// 3.5
	// error: ^ is not supported: write powers as repeated multiplication
}
