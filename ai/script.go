package ai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/pyric/pyric/errcode"
)

// Script limits: a script is test data, not a corpus.
const (
	MaxScriptBytes   = 8 << 20
	MaxScriptEntries = 10000
)

// Entry is one canned answer of a script. Without Match it waits in the
// FIFO queue; with Match it answers the first request it matches, ahead of
// the queue. An entry is consumed when it answers unless Repeat is set.
//
// The answer is one of: Text and/or FunctionCall(s) (shorthands expanded
// to wire-true envelopes), Chunks (text with stream chunk boundaries),
// JSON (a value answered as JSON-mode text), Raw (an envelope returned
// verbatim, as pasted from a capture), RawChunks (stream chunks returned
// verbatim), or Error (an error envelope).
type Entry struct {
	Name          string            `json:"name,omitempty"`
	Match         *Match            `json:"match,omitempty"`
	Repeat        bool              `json:"repeat,omitempty"`
	Text          *string           `json:"text,omitempty"`
	Chunks        []string          `json:"chunks,omitempty"`
	JSON          json.RawMessage   `json:"json,omitempty"`
	FunctionCall  *FunctionCall     `json:"functionCall,omitempty"`
	FunctionCalls []FunctionCall    `json:"functionCalls,omitempty"`
	FinishReason  string            `json:"finishReason,omitempty"`
	Raw           json.RawMessage   `json:"raw,omitempty"`
	RawChunks     []json.RawMessage `json:"rawChunks,omitempty"`
	Error         *Error            `json:"error,omitempty"`
}

// Match selects requests by their prompt (the text of the last user
// content), their model, or the function result they carry back; every
// condition given must hold. Regex is RE2 (no lookaround).
type Match struct {
	Contains string `json:"contains,omitempty"`
	Regex    string `json:"regex,omitempty"`
	Model    string `json:"model,omitempty"`
	// FunctionResponse matches requests whose last content returns the
	// result of the named function (the second leg of a tool round trip).
	FunctionResponse string `json:"functionResponse,omitempty"`

	re *regexp.Regexp
}

func (m *Match) matches(r *Request, prompt, model string) bool {
	if m.FunctionResponse != "" && !returns(r, m.FunctionResponse) {
		return false
	}
	if m.Contains != "" && !strings.Contains(prompt, m.Contains) {
		return false
	}
	if m.re != nil && !m.re.MatchString(prompt) {
		return false
	}
	if m.Model != "" && strings.TrimPrefix(m.Model, "models/") != model {
		return false
	}
	return true
}

// DecodeScript decodes a script: a JSON array of entries or an object
// {"entries": [...]}. Unknown fields, entries with no answer or with two
// kinds of answer, bad regular expressions and malformed envelopes are
// errors naming the entry (wrapping ErrInvalidScript).
func DecodeScript(data []byte) ([]Entry, error) {
	if len(data) > MaxScriptBytes {
		return nil, fmt.Errorf("%w: %d bytes exceeds the %d-byte limit", ErrInvalidScript, len(data), MaxScriptBytes)
	}
	data = bytes.TrimSpace(data)
	var raws []json.RawMessage
	switch {
	case len(data) > 0 && data[0] == '[':
		if err := json.Unmarshal(data, &raws); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalidScript, err)
		}
	case len(data) > 0 && data[0] == '{':
		var w struct {
			Entries []json.RawMessage `json:"entries"`
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&w); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalidScript, err)
		}
		raws = w.Entries
	default:
		return nil, fmt.Errorf("%w: a script is a JSON array of entries or {\"entries\": [...]}", ErrInvalidScript)
	}
	if len(raws) > MaxScriptEntries {
		return nil, fmt.Errorf("%w: %d entries exceeds the limit of %d", ErrInvalidScript, len(raws), MaxScriptEntries)
	}
	entries := make([]Entry, 0, len(raws))
	for i, raw := range raws {
		var e Entry
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil {
			return nil, fmt.Errorf("%w: entry %d: %v", ErrInvalidScript, i, err)
		}
		if err := e.check(); err != nil {
			return nil, fmt.Errorf("%w: entry %d: %v", ErrInvalidScript, i, err)
		}
		entries = append(entries, e)
	}
	return entries, nil
}

// check validates an entry and compiles its matcher.
func (e *Entry) check() error {
	kinds := []string{}
	if e.Text != nil || e.FunctionCall != nil || len(e.FunctionCalls) > 0 {
		kinds = append(kinds, "text/functionCall")
	}
	if len(e.Chunks) > 0 {
		kinds = append(kinds, "chunks")
	}
	if len(e.JSON) > 0 {
		kinds = append(kinds, "json")
	}
	if len(e.Raw) > 0 {
		kinds = append(kinds, "raw")
	}
	if len(e.RawChunks) > 0 {
		kinds = append(kinds, "rawChunks")
	}
	if e.Error != nil {
		kinds = append(kinds, "error")
	}
	if len(kinds) == 0 && e.FinishReason == "" {
		return fmt.Errorf("no answer: give text, chunks, json, functionCall(s), raw, rawChunks, error or finishReason")
	}
	if len(kinds) > 1 {
		return fmt.Errorf("more than one answer (%s)", strings.Join(kinds, ", "))
	}
	if e.FunctionCall != nil && len(e.FunctionCalls) > 0 {
		return fmt.Errorf("functionCall and functionCalls are exclusive")
	}
	for _, fc := range e.calls() {
		if fc.Name == "" {
			return fmt.Errorf("a functionCall needs a name")
		}
	}
	if len(e.JSON) > 0 && !json.Valid(e.JSON) {
		return fmt.Errorf("json is not valid JSON")
	}
	if len(e.Raw) > 0 && !isObject(e.Raw) {
		return fmt.Errorf("raw must be a JSON object (a GenerateContentResponse)")
	}
	for j, c := range e.RawChunks {
		if !isObject(c) {
			return fmt.Errorf("rawChunks[%d] must be a JSON object (a GenerateContentResponse)", j)
		}
	}
	if e.Error != nil {
		if e.Error.Code < 400 || e.Error.Code > 599 {
			return fmt.Errorf("error.code %d is not an HTTP error status (400-599)", e.Error.Code)
		}
		if e.Error.Status == "" {
			e.Error.Status = errcode.FromHTTP(e.Error.Code).String()
		}
	}
	if e.Match != nil {
		if e.Match.Regex != "" {
			re, err := regexp.Compile(e.Match.Regex)
			if err != nil {
				return fmt.Errorf("match.regex: %v (regular expressions are RE2: no lookaround or backreferences)", err)
			}
			e.Match.re = re
		}
		if e.Match.Contains == "" && e.Match.Regex == "" && e.Match.Model == "" && e.Match.FunctionResponse == "" {
			return fmt.Errorf("match needs contains, regex, model or functionResponse")
		}
	}
	return nil
}

func (e *Entry) calls() []FunctionCall {
	if e.FunctionCall != nil {
		return []FunctionCall{*e.FunctionCall}
	}
	return e.FunctionCalls
}

func isObject(b json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(b, &m) == nil && m != nil
}

// pick removes and returns the entry answering a request: the first
// matching entry with a matcher, else the head of the queue. ok is false
// when the script has no answer. The returned slice is the script after.
func pick(script []Entry, r *Request, model string) (Entry, []Entry, bool) {
	prompt := lastUserText(r)
	idx := -1
	for i := range script {
		if script[i].Match != nil && script[i].Match.matches(r, prompt, model) {
			idx = i
			break
		}
	}
	if idx < 0 {
		for i := range script {
			if script[i].Match == nil {
				idx = i
				break
			}
		}
	}
	if idx < 0 {
		return Entry{}, script, false
	}
	e := script[idx]
	if e.Repeat {
		return e, script, true
	}
	out := make([]Entry, 0, len(script)-1)
	out = append(append(out, script[:idx]...), script[idx+1:]...)
	return e, out, true
}

// returns reports whether the request's last content carries the result
// of the named function.
func returns(r *Request, name string) bool {
	if len(r.Contents) == 0 {
		return false
	}
	for _, p := range r.Contents[len(r.Contents)-1].Parts {
		if p.FunctionResponse != nil && p.FunctionResponse.Name == name {
			return true
		}
	}
	return false
}

// answerOf expands an entry's shorthand.
func answerOf(e Entry) answer {
	a := answer{source: "script", name: e.Name, finishReason: e.FinishReason}
	switch {
	case e.Error != nil:
		err := *e.Error
		a.err = &err
	case len(e.Raw) > 0:
		a.raw = e.Raw
	case len(e.RawChunks) > 0:
		a.rawChunks = e.RawChunks
	case len(e.Chunks) > 0:
		a.chunks = e.Chunks
		a.text = strings.Join(e.Chunks, "")
	case len(e.JSON) > 0:
		var buf bytes.Buffer
		json.Compact(&buf, e.JSON)
		a.text = buf.String()
	default:
		if e.Text != nil {
			a.text = *e.Text
		}
		a.calls = e.calls()
	}
	return a
}

// reload recompiles matchers of entries restored from JSON.
func reload(entries []Entry) []Entry {
	for i := range entries {
		if entries[i].Match != nil && entries[i].Match.Regex != "" {
			entries[i].Match.re, _ = regexp.Compile(entries[i].Match.Regex)
		}
	}
	return entries
}
