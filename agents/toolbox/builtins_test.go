package toolbox_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/threadwright/threadwright/agents/toolbox"
)

func TestCurrentTime(t *testing.T) {
	now := func() time.Time { return time.Date(2024, 12, 31, 23, 30, 0, 0, time.UTC) }
	spec, tool := toolbox.CurrentTime(now)
	if spec.Name != "current_time" || !json.Valid(spec.Parameters) {
		t.Errorf("spec = %+v", spec)
	}
	tests := []struct {
		args, want, err string
	}{
		{`{}`, "2024-12-31T23:30:00Z (Tuesday, 31 December 2024, 23:30 UTC, UTC)", ""},
		{`{"timezone":""}`, "2024-12-31T23:30:00Z (Tuesday, 31 December 2024, 23:30 UTC, UTC)", ""},
		{`{"timezone":"Asia/Tokyo"}`, "2025-01-01T08:30:00+09:00 (Wednesday, 1 January 2025, 08:30 JST, Asia/Tokyo)", ""},
		{`{"timezone":"America/New_York"}`, "2024-12-31T18:30:00-05:00 (Tuesday, 31 December 2024, 18:30 EST, America/New_York)", ""},
		{`{"timezone":"Mars/Olympus"}`, "", `unknown time zone "Mars/Olympus"`},
		{`{"timezone":5}`, "", "invalid arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			got, err := tool.Run(context.Background(), json.RawMessage(tt.args))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestEvaluate(t *testing.T) {
	tests := []struct {
		expr, want, err string
	}{
		{"1 + 2 * 3", "7", ""},
		{"(1 + 2) * 3", "9", ""},
		{"7 / 2", "3.5", ""},
		{"1 / 3", "0.3333333333333333", ""},
		{"0.1 + 0.2", "0.3", ""},
		{"2 * 3.5", "7", ""},
		{"-(3 - 5)", "2", ""},
		{"+4", "4", ""},
		{"10 % 3", "1", ""},
		{"10.0 % 3", "1", ""},
		{"1,000,000 * 3", "3000000", ""},
		{"6 × 7 ÷ 2 − 1", "20", ""},
		{"0x10 + 1e3", "1016", ""},
		{"99999999999999999999 * 99999999999999999999", "1e+40", ""},
		{"123456789012345678901234567890", "123456789012345678901234567890", ""},
		{"", "", "empty expression"},
		{strings.Repeat("1+", 600) + "1", "", "longer than"},
		{"1 / 0", "", "division by zero"},
		{"1 % 0", "", "division by zero"},
		{"1.5 % 1", "", "whole numbers"},
		{"2 ^ 3", "", "^ is not supported"},
		{"1 << 2", "", "operator << is not supported"},
		{"x + 1", "", "x is not allowed"},
		{"os.Exit(1)", "", "os.Exit(1) is not allowed"},
		{`"a" + "b"`, "", `"a" is not a number`},
		{"'a'", "", "'a' is not a number"},
		{"1 +", "", "cannot parse"},
		{"1e400 * 1e400", "", "too large"},
		{"!1", "", "operator ! is not supported"},
		{"2i", "", "2i is not a number"},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			got, err := toolbox.Evaluate(tt.expr)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("Evaluate(%q) = %q, %v; want error %q", tt.expr, got, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("Evaluate(%q) = %q, %v; want %q", tt.expr, got, err, tt.want)
			}
		})
	}

	_, calc := toolbox.Calculate()
	if got, err := calc.Run(context.Background(), json.RawMessage(`{"expression":"(1200 * 1.2) / 7"}`)); err != nil || got != "205.7142857142857" {
		t.Errorf("calculate = %q, %v", got, err)
	}
}
