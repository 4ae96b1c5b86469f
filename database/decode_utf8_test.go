package database

import (
	"errors"
	"testing"
)

func TestDecodeJSONRefusesBrokenText(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		in string
		ok bool
	}{
		"plain":                 {`{"a": "héllo"}`, true},
		"pair":                  {`"\ud83d\ude00"`, true},
		"escaped backslash":     {`"\\ud800"`, true},
		"bmp escape":            {`"\u00e9\u4e2d"`, true},
		"invalid utf-8":         {"\"\xff\xfe\"", false},
		"truncated utf-8":       {"{\"a\": \"\xe4\xb8\"}", false},
		"lone high surrogate":   {`"\ud800"`, false},
		"high then other":       {`"\ud800\u0041"`, false},
		"lone low surrogate":    {`{"k": "x\udc00"}`, false},
		"lone surrogate in key": {`{"\uDBFF": 1}`, false},
	} {
		v, err := DecodeJSON([]byte(c.in))
		if c.ok != (err == nil) {
			t.Errorf("%s: %v %v", name, v, err)
		}
		if !c.ok && (!errors.Is(err, ErrInvalidData) || err.Error() != "Invalid data; couldn't parse JSON object, array, or value.") {
			t.Errorf("%s: error %v", name, err)
		}
	}
}
