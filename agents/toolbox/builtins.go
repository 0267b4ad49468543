package toolbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"math"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // IANA zones for current_time, even in a scratch container

	"github.com/threadwright/threadwright/agents"
)

// Register registers threadwright's built-in tools in r: current_time (on the
// system clock) and calculate.
func Register(r *agents.Registry) error {
	if err := r.Register(CurrentTime(time.Now)); err != nil {
		return err
	}
	return r.Register(Calculate())
}

// CurrentTime returns the current_time tool: the date and time now (from now; pass
// time.Now outside tests) in an optional IANA time zone argument
// {"timezone": "Europe/Paris"}, UTC by default. Result, e.g.
// "2024-05-14T11:30:00+02:00 (Tuesday, 14 May 2024, 11:30 CEST, Europe/Paris)".
func CurrentTime(now func() time.Time) (agents.ToolSpec, agents.Tool) {
	spec := agents.ToolSpec{
		Name:        "current_time",
		Description: "Get the current date, time and weekday, in UTC or in a given IANA time zone.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"timezone":{"type":"string",` +
			`"description":"IANA time zone name, e.g. Europe/Paris or America/New_York; default UTC"}}}`),
		ReadOnly: true,
	}
	run := func(_ context.Context, raw json.RawMessage) (string, error) {
		var args struct {
			Timezone string `json:"timezone"`
		}
		if err := json.Unmarshal(raw, &args); err != nil {
			return "", fmt.Errorf("invalid arguments: %w", err)
		}
		name := strings.TrimSpace(args.Timezone)
		if name == "" {
			name = "UTC"
		}
		loc, err := time.LoadLocation(name)
		if err != nil {
			return "", fmt.Errorf("unknown time zone %q: use an IANA name such as Europe/London", name)
		}
		t := now().In(loc)
		return fmt.Sprintf("%s (%s, %s)", t.Format(time.RFC3339), t.Format("Monday, 2 January 2006, 15:04 MST"), loc), nil
	}
	return spec, agents.ToolFunc(run)
}

// Calculate returns the calculate tool: it evaluates an arithmetic expression
// {"expression": "(1200 * 1.2) / 7"} exactly (arbitrary-precision rationals, go/constant)
// and returns the result, an integer or a decimal with up to 16 significant digits.
// Allowed: decimal, hex and float literals, + - * / %, unary + and -, parentheses.
// Anything else (names, calls, strings, shifts, ^) is rejected, so the expression cannot
// do anything but compute.
func Calculate() (agents.ToolSpec, agents.Tool) {
	spec := agents.ToolSpec{
		Name:        "calculate",
		Description: "Evaluate an arithmetic expression exactly. Supports numbers, + - * / %, unary minus and parentheses; no functions or variables.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"expression":{"type":"string",` +
			`"description":"the expression, e.g. (1200 * 1.2) / 7"}},"required":["expression"]}`),
		ReadOnly: true,
	}
	run := func(_ context.Context, raw json.RawMessage) (string, error) {
		var args struct {
			Expression string `json:"expression"`
		}
		if err := json.Unmarshal(raw, &args); err != nil {
			return "", fmt.Errorf("invalid arguments: %w", err)
		}
		return Evaluate(args.Expression)
	}
	return spec, agents.ToolFunc(run)
}

// mathSpellings maps what models and people write that Go's syntax lacks: ×, ÷, the
// minus sign, and thousands separators.
var mathSpellings = strings.NewReplacer("×", "*", "÷", "/", "−", "-", ",", "")

// maxExpression bounds the length of a calculate expression, in bytes.
const maxExpression = 1000

// Evaluate computes an arithmetic expression as the calculate tool does (see
// Calculate) and formats the result. Division is exact: "7/2" is 3.5. Errors: an
// empty, too long or malformed expression, a disallowed construct, division by zero,
// % of non-integers, a result too large to print.
func Evaluate(expr string) (string, error) {
	expr = strings.TrimSpace(expr)
	switch {
	case expr == "":
		return "", errors.New("empty expression")
	case len(expr) > maxExpression:
		return "", fmt.Errorf("expression longer than %d characters", maxExpression)
	}
	expr = mathSpellings.Replace(expr)
	node, err := parser.ParseExpr(expr)
	if err != nil {
		return "", fmt.Errorf("cannot parse %q: %w", expr, err)
	}
	v, err := calc{src: expr}.eval(node)
	if err != nil {
		return "", err
	}
	return formatNumber(v)
}

// calc evaluates one parsed expression; src is its text, for error messages.
type calc struct{ src string }

// eval walks an expression tree that go/parser built, allowing only numeric literals,
// the four operations and %, unary signs and parentheses. The arithmetic is go/constant's
// (exact); the parsing is Go's.
func (c calc) eval(n ast.Expr) (constant.Value, error) {
	switch n := n.(type) {
	case *ast.BasicLit:
		if n.Kind != token.INT && n.Kind != token.FLOAT {
			return nil, fmt.Errorf("%s is not a number", n.Value)
		}
		v := constant.MakeFromLiteral(n.Value, n.Kind, 0)
		if v.Kind() == constant.Unknown {
			return nil, fmt.Errorf("bad number %s", n.Value)
		}
		return v, nil
	case *ast.ParenExpr:
		return c.eval(n.X)
	case *ast.UnaryExpr:
		if n.Op != token.ADD && n.Op != token.SUB {
			return nil, fmt.Errorf("operator %s is not supported", n.Op)
		}
		x, err := c.eval(n.X)
		if err != nil {
			return nil, err
		}
		return constant.UnaryOp(n.Op, x, 0), nil
	case *ast.BinaryExpr:
		switch n.Op {
		case token.ADD, token.SUB, token.MUL, token.QUO, token.REM:
		case token.XOR:
			return nil, errors.New("^ is not supported: write powers as repeated multiplication")
		default:
			return nil, fmt.Errorf("operator %s is not supported", n.Op)
		}
		x, err := c.eval(n.X)
		if err != nil {
			return nil, err
		}
		y, err := c.eval(n.Y)
		if err != nil {
			return nil, err
		}
		if (n.Op == token.QUO || n.Op == token.REM) && constant.Sign(y) == 0 {
			return nil, errors.New("division by zero")
		}
		if n.Op == token.REM {
			// 7.0 % 2 is fine; 7.5 % 2 is not.
			x, y = constant.ToInt(x), constant.ToInt(y)
			if x.Kind() != constant.Int || y.Kind() != constant.Int {
				return nil, errors.New("% needs whole numbers")
			}
		}
		return constant.BinaryOp(x, n.Op, y), nil
	default:
		return nil, fmt.Errorf("%s is not allowed: only numbers, + - * / %%, and parentheses are", c.text(n))
	}
}

// text returns the source of n (go/parser positions of ParseExpr start at 1).
func (c calc) text(n ast.Node) string {
	from, to := int(n.Pos())-1, int(n.End())-1
	if from < 0 || to > len(c.src) || from >= to {
		return fmt.Sprintf("%T", n)
	}
	return c.src[from:to]
}

func formatNumber(v constant.Value) (string, error) {
	// A whole result, such as 3.5*2, prints as an integer when it is short enough to
	// read; others as a decimal or in e notation.
	if i := constant.ToInt(v); i.Kind() == constant.Int {
		if s := i.ExactString(); len(s) <= 30 {
			return s, nil
		}
	}
	f, _ := constant.Float64Val(v)
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return "", errors.New("result too large")
	}
	return strconv.FormatFloat(f, 'g', 16, 64), nil
}
