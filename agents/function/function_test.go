package function_test

import (
	"encoding/json"
	"testing"

	"github.com/threadwright/threadwright/agents/function"
)

func TestDecode(t *testing.T) {
	type args struct {
		Label string `json:"label"`
	}
	for _, tc := range []struct {
		name, in string
		want     string
		err      bool
	}{
		{"Object", `{"label": "B"}`, "B", false},
		{"EncodedTwice", `"{\"label\": \"C\"}"`, "C", false},
		{"NotAnObject", `[1]`, "", true},
		{"Broken", `{"label": `, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got args
			err := function.Decode(json.RawMessage(tc.in), &got)
			if (err != nil) != tc.err || got.Label != tc.want {
				t.Errorf("Decode(%s) = %+v, %v; want label %q, error %v", tc.in, got, err, tc.want, tc.err)
			}
		})
	}
}

func TestList(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     int
	}{
		{"Array", `[{"id": "a"}, {"id": "b"}]`, 2},
		{"StringHoldingArray", `"[{\"id\": \"a\"}]"`, 1},
		{"SingleObject", `{"id": "a"}`, 1},
		{"Null", `null`, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l function.List[struct{ ID string }]
			if err := json.Unmarshal([]byte(tc.in), &l); err != nil || len(l) != tc.want {
				t.Errorf("List from %s = %v, %v; want %d elements", tc.in, l, err, tc.want)
			}
		})
	}
}

func TestBool(t *testing.T) {
	for in, want := range map[string]bool{
		`true`: true, `"yes"`: true, `"pass"`: true, `1`: true,
		`false`: false, `"no"`: false, `0`: false, `null`: false, `""`: false,
	} {
		var b function.Bool
		if err := json.Unmarshal([]byte(in), &b); err != nil || bool(b) != want {
			t.Errorf("Bool from %s = %v, %v; want %v", in, b, err, want)
		}
	}
	var b function.Bool
	if err := json.Unmarshal([]byte(`"maybe"`), &b); err == nil {
		t.Error(`Bool from "maybe": no error`)
	}
}

func TestDefine(t *testing.T) {
	def := function.Define("commit_note", "Save the note.", function.Optional(function.Object(function.Schema{
		"text":   function.String("the note"),
		"reason": function.String("why"),
	}), "reason"))
	const want = `{"additionalProperties":false,"properties":{"reason":{"description":"why","type":"string"},` +
		`"text":{"description":"the note","type":"string"}},"required":["text"],"type":"object"}`
	if def.Name != "commit_note" || string(def.Parameters.(json.RawMessage)) != want {
		t.Errorf("Define = %s %s, want parameters %s", def.Name, def.Parameters, want)
	}
	req := function.Forced("small", "system", "user", def)
	if len(req.Messages) != 2 || len(req.Tools) != 1 || req.Tools[0].Function.Name != "commit_note" {
		t.Fatalf("Forced = %+v", req)
	}
	choice, err := json.Marshal(req.ToolChoice)
	if err != nil || string(choice) != `{"type":"function","function":{"name":"commit_note"}}` {
		t.Errorf("Forced tool_choice = %s, %v", choice, err)
	}
}
