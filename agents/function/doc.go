// Package function holds what threadwright's agents need to make a model call one
// function with arguments they can read: the function's definition (an OpenAI
// FunctionDefinition, its parameters a JSON schema built with Object, String and
// Optional), the request that forces the call (Forced: tool_choice names the
// function), and a lenient reading of the arguments weak models write (Decode, List,
// Bool).
//
// The commit functions of the workflow agent and of the planner (package agents,
// agents/commit.go; package agents/planner), and the classifiers of the scope check, the
// review reply and the router, are built with it. It depends on nothing of
// threadwright.
package function
