package planner

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/sashabaranov/go-openai"
	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/agents/function"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/internal/textcut"
	"github.com/threadwright/threadwright/prompts"
)

// The strategies of the assistant pipeline, for RouterConfig.
const (
	// StrategyReAct answers with the ReAct executor.
	StrategyReAct = "react"
	// StrategyPlanner answers with the Planner.
	StrategyPlanner = "planner"
	// StrategyAuto lets the small model choose between the two for each request.
	StrategyAuto = "auto"
)

// CommitRouteTool is the router's commit function, which tool_choice forces:
// {"strategy": "react"|"planner", "reason": "…"}.
const CommitRouteTool = "commit_route"

// ParseStrategy returns the strategy s names ("react", "planner" or "auto", in any
// case, surrounded by spaces or not); "" is StrategyReAct. Errors: any other name.
func ParseStrategy(s string) (string, error) {
	switch v := strings.ToLower(strings.TrimSpace(s)); v {
	case "":
		return StrategyReAct, nil
	case StrategyReAct, StrategyPlanner, StrategyAuto:
		return v, nil
	}
	return "", fmt.Errorf("agents: unknown strategy %q (want react, planner or auto)", s)
}

// ParseChannelStrategies reads per-channel strategies written as
// "C123:planner,C456:react" (the STRATEGY_CHANNELS setting): comma-separated pairs of
// a Slack channel id and a strategy, spaces allowed around each part. An empty s gives
// nil. Errors: a pair without ":", an empty channel id, a channel given twice, or an
// unknown strategy.
func ParseChannelStrategies(s string) (map[string]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	pairs, bad := agents.ChannelPairs(s)
	if bad != "" {
		return nil, fmt.Errorf("agents: channel strategy %q: want CHANNEL_ID:STRATEGY", bad)
	}
	out := map[string]string{}
	for _, p := range pairs {
		ch, st := p[0], p[1]
		strategy, err := ParseStrategy(st)
		if err != nil {
			return nil, fmt.Errorf("agents: channel %s: %w", ch, err)
		}
		if _, dup := out[ch]; dup {
			return nil, fmt.Errorf("agents: channel %s is given two strategies", ch)
		}
		out[ch] = strategy
	}
	return out, nil
}

// RouterConfig configures a Router. ReAct is required; Planner is required when any
// strategy is "planner" or "auto", and Client and SmallModel when any is "auto".
type RouterConfig struct {
	// Client calls the small model that judges requests in "auto".
	Client agents.Completer
	// SmallModel is the small model's name (OPENAI_SMALL_MODEL).
	SmallModel string
	// ReAct and Planner are the executors of the two strategies (an *agents.Executor and a
	// *Planner).
	ReAct   conversation.Executor
	Planner conversation.Executor
	// Default is the deployment's strategy, "react", "planner" or "auto" (see
	// ParseStrategy; default "react").
	Default string
	// Channels maps a Slack channel id to the strategy of its conversations, which
	// overrides Default (see ParseChannelStrategies).
	Channels map[string]string
	// History is how many of the newest history messages the judge sees with a
	// request (default agents.DefaultScopeHistory, 4; negative: none).
	History int
	// Prompts renders the judge's prompts; default prompts.MustParse().
	Prompts *prompts.Set
	// Logger receives the strategy chosen for each request (debug) and unreadable
	// judgements (warning); default slog.Default().
	Logger *slog.Logger
}

// Router picks the strategy of each request (docs/tools.md, "Strategies": per
// deployment or per channel by config, or by the model for a request it judges
// complex) and runs it. It implements conversation.Executor and is safe for concurrent
// use.
type Router struct {
	client   agents.Completer
	model    string
	react    conversation.Executor
	planner  conversation.Executor
	def      string
	channels map[string]string
	history  int
	prompts  *prompts.Set
	logger   *slog.Logger
}

var _ conversation.Executor = (*Router)(nil)

// NewRouter returns a Router for cfg. Errors: an unknown strategy name, no ReAct
// executor, a strategy that needs the Planner without one, or "auto" without a Client
// and SmallModel.
func NewRouter(cfg RouterConfig) (*Router, error) {
	def, err := ParseStrategy(cfg.Default)
	if err != nil {
		return nil, err
	}
	r := &Router{
		client: cfg.Client, model: cfg.SmallModel, react: cfg.ReAct, planner: cfg.Planner,
		def: def, channels: map[string]string{},
		history: cmp.Or(cfg.History, agents.DefaultScopeHistory),
		prompts: cfg.Prompts, logger: cfg.Logger,
	}
	used := []string{def}
	for ch, s := range cfg.Channels {
		st, err := ParseStrategy(s)
		if err != nil || strings.TrimSpace(s) == "" {
			return nil, fmt.Errorf("agents: channel %s: unknown strategy %q (want react, planner or auto)", ch, s)
		}
		r.channels[strings.TrimSpace(ch)] = st
		used = append(used, st)
	}
	switch {
	case cfg.ReAct == nil:
		return nil, errors.New("agents: NewRouter needs RouterConfig.ReAct")
	case cfg.Planner == nil && (slices.Contains(used, StrategyPlanner) || slices.Contains(used, StrategyAuto)):
		return nil, errors.New("agents: the planner strategy is configured but RouterConfig.Planner is nil")
	case (cfg.Client == nil || cfg.SmallModel == "") && slices.Contains(used, StrategyAuto):
		return nil, errors.New("agents: the auto strategy needs RouterConfig.Client and SmallModel")
	}
	if r.prompts == nil {
		r.prompts = prompts.MustParse()
	}
	r.logger = cmp.Or(r.logger, slog.Default())
	return r, nil
}

// Strategy returns the configured strategy of channelID: its own, or the deployment's
// Default ("react", "planner" or "auto").
func (r *Router) Strategy(channelID string) string {
	if s, ok := r.channels[channelID]; ok {
		return s
	}
	return r.def
}

// Execute runs p with the strategy of its channel (Strategy of p.PolicyChannel()), and
// a p.Resume with the ReAct executor, the one strategy that stops for a confirmation. In
// "auto" the small model first judges the request, with the last few messages of
// the history, and calls commit_route, which tool_choice forces, with "react" or
// "planner": anything else — another value, no call, an empty response or a failed
// model call — chooses react (logged as a warning). The judge's model call counts in
// the Findings' Steps and Usage. Errors: the chosen executor's, and ctx's when it ends
// during the judgement.
func (r *Router) Execute(ctx context.Context, p conversation.Prompt, progress conversation.Progress) (conversation.Findings, error) {
	if p.Resume != nil {
		f, err := r.react.Execute(ctx, p, progress) // only the ReAct executor stops for a confirmation
		f.Strategy = StrategyReAct
		return f, err
	}
	strategy := r.Strategy(p.PolicyChannel())
	var judged conversation.Findings
	if strategy == StrategyAuto {
		var reason string
		var err error
		strategy, reason, err = r.judge(ctx, p, &judged)
		if err != nil {
			return judged, err
		}
		r.logger.DebugContext(ctx, "strategy chosen by the model", slog.String("conversation", p.Key.String()),
			slog.String("strategy", strategy), slog.String("reason", reason))
	}
	exec := r.react
	if strategy == StrategyPlanner {
		exec = r.planner
	}
	f, err := exec.Execute(ctx, p, progress)
	f.Strategy = strategy
	f.Steps += judged.Steps
	f.Usage = f.Usage.Add(judged.Usage)
	return f, err
}

// judge asks the small model which strategy fits p, counting its call in f.
func (r *Router) judge(ctx context.Context, p conversation.Prompt, f *conversation.Findings) (strategy, reason string, err error) {
	log := r.logger.With(slog.String("conversation", p.Key.String()))
	system, err := r.prompts.Render(prompts.PlannerRoute, prompts.PlannerRouteData{ToolName: CommitRouteTool})
	if err != nil {
		return "", "", fmt.Errorf("agents: router: %w", err)
	}
	data := prompts.PlannerRouteRequestData{Text: p.Text}
	if r.history > 0 {
		for _, m := range p.History[max(len(p.History)-r.history, 0):] {
			role := "user"
			if m.Role == conversation.RoleAssistant {
				role = "assistant"
			}
			data.Recent = append(data.Recent, prompts.Turn{Role: role, Text: textcut.BytesMark(strings.Join(strings.Fields(m.Text), " "), 500, textcut.Truncated)})
		}
	}
	user, err := r.prompts.Render(prompts.PlannerRouteRequest, data)
	if err != nil {
		return "", "", fmt.Errorf("agents: router: %w", err)
	}
	comp, err := r.client.Complete(ctx, function.Forced(r.model, system, user, routeTool()))
	f.Steps++
	f.Usage = f.Usage.Add(comp.Usage)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return "", "", fmt.Errorf("agents: router: %w", ctxErr)
		}
		log.WarnContext(ctx, "router: the model call failed; using react", slog.Any("err", err))
		return StrategyReAct, "the judgement failed", nil
	}
	for _, tc := range comp.ToolCalls {
		if tc.Function.Name != CommitRouteTool {
			continue
		}
		var in struct {
			Strategy string `json:"strategy"`
			Reason   string `json:"reason"`
		}
		if function.Decode(json.RawMessage(tc.Function.Arguments), &in) != nil {
			continue
		}
		switch s := strings.ToLower(strings.TrimSpace(in.Strategy)); s {
		case StrategyReAct, StrategyPlanner:
			return s, textcut.BytesMark(strings.Join(strings.Fields(in.Reason), " "), 300, textcut.Truncated), nil
		}
	}
	log.WarnContext(ctx, "router: unreadable judgement; using react",
		slog.String("content", textcut.BytesMark(comp.Content, 200, textcut.Truncated)), slog.Int("tool_calls", len(comp.ToolCalls)))
	return StrategyReAct, "unreadable judgement", nil
}

func routeTool() openai.FunctionDefinition {
	strategy := function.String("react for most requests; planner only for a complex request that needs several separate investigations combined")
	strategy["enum"] = []string{StrategyReAct, StrategyPlanner}
	return function.Define(CommitRouteTool,
		"Save how the assistant should work on the message.",
		function.Object(function.Schema{"strategy": strategy, "reason": function.String("one short sentence explaining the choice")}))
}
