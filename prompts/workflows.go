package prompts

import "embed"

// Workflows holds the built-in workflow definitions, one YAML file per workflow under
// workflows/ (proposal.yaml, product-brief.yaml, blog.yaml). The conversation/workflow
// package parses them: workflow.Load(prompts.Workflows, "workflows",
// workflow.BuiltinPrefix).
//
//go:embed workflows/*.yaml
var Workflows embed.FS
