package database

import (
	"errors"
	"testing"
)

func TestCheckBodyKeys(t *testing.T) {
	t.Parallel()
	const tail = ". Key value can't be empty or contain $ # [ ] / or ."
	for name, c := range map[string]struct {
		body     string
		pathKeys bool
		at       string // "" when the body passes
	}{
		"scalar":                         {`"a.b"`, false, ""},
		"values may hold anything":       {`{"k": "$#[]/.", "l": ["a.b", {"m": "."}]}`, false, ""},
		"meaningful keys":                {`{".value": 1, ".priority": 2, "t": {".sv": "timestamp"}}`, false, ""},
		"other dot keys":                 {`{".x": 1}`, false, "1:2"},
		"object in an array":             {`[1, {"ok": 1}, {"a]": 2}]`, false, "1:17"},
		"escaped key":                    {`{"a\u002eb": 1}`, false, "1:2"},
		"escaped quote before a bad key": {`{"x\"y": 1, "z/": 2}`, false, "1:13"},
		"control character":              {`{"a\u0001": 1}`, false, "1:2"},
		"path keys of an update":         {`{"a/b": {"c": 1}}`, true, ""},
		"keys below an update's path":    {`{"a/b": {"c.d": 1}}`, true, "1:10"},
		"later line, wide characters":    {"{\"ü\": 1,\n\t\"日本\": {\"#\": 1}}", false, "2:9"},
	} {
		err := CheckBodyKeys([]byte(c.body), c.pathKeys)
		switch {
		case c.at == "" && err != nil:
			t.Errorf("%s: %v", name, err)
		case c.at != "" && (!errors.Is(err, ErrInvalidData) || err.Error() != "Invalid data; couldn't parse key beginning at "+c.at+tail):
			t.Errorf("%s: %v, want at %s", name, err, c.at)
		}
	}
}
