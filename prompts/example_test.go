package prompts_test

import (
	"fmt"

	"github.com/threadwright/threadwright/prompts"
)

func ExampleSet_Render() {
	set, err := prompts.Parse() // once, at start-up
	if err != nil {
		panic(err)
	}
	text, err := set.Render(prompts.ScopeRefusal, prompts.ScopeRefusalData{
		Description: "questions about the on-call rota",
		UserID:      "U024BE7LH",
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(text)
	// Output:
	// Sorry <@U024BE7LH>, that's outside what I can help with here. I'm set up for questions about the on-call rota. If you have a question about that, ask away!
}
