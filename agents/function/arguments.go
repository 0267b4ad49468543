package function

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Decode decodes a function call's arguments into v. Arguments that are a JSON string
// holding the object (encoded twice, as weak models do) are accepted. The error says,
// for the model, what is wrong.
func Decode(args json.RawMessage, v any) error {
	if s, ok := Unquote(args); ok {
		args = json.RawMessage(s)
	}
	if err := json.Unmarshal(args, v); err != nil {
		return fmt.Errorf("the arguments are not a JSON object of the function's schema (%s)", strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

// Unquote returns the value of data when it is a JSON string.
func Unquote(data []byte) (string, bool) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '"' {
		return "", false
	}
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return "", false
	}
	return s, true
}

// List is a JSON array that may also arrive as a string holding the array, or as a
// single element (an object).
type List[T any] []T

// UnmarshalJSON reads an array, a string holding one, a single object or null.
func (l *List[T]) UnmarshalJSON(data []byte) error {
	if s, ok := Unquote(data); ok {
		data = []byte(s)
	}
	data = bytes.TrimSpace(data)
	switch {
	case bytes.Equal(data, []byte("null")):
		*l = nil
		return nil
	case len(data) > 0 && data[0] == '{':
		var one T
		if err := json.Unmarshal(data, &one); err != nil {
			return err
		}
		*l = List[T]{one}
		return nil
	}
	var many []T
	if err := json.Unmarshal(data, &many); err != nil {
		return err
	}
	*l = many
	return nil
}

// Bool is a JSON boolean that may also arrive as a string ("true", "yes", "pass", …)
// or as 0 or 1.
type Bool bool

// UnmarshalJSON reads true, false, a string that says one of them, 0, 1 or null
// (false).
func (b *Bool) UnmarshalJSON(data []byte) error {
	s := strings.ToLower(strings.Trim(strings.TrimSpace(string(data)), `"`))
	switch s {
	case "true", "yes", "pass", "passed", "1":
		*b = true
	case "false", "no", "fail", "failed", "0", "null", "":
		*b = false
	default:
		return fmt.Errorf("cannot read %s as true or false", data)
	}
	return nil
}
