package ai

import (
	"bytes"
	"encoding/json"
	"strings"
)

// answer is what an answerer decided, before it is rendered as an
// envelope or as stream chunks.
type answer struct {
	source       string // "synthesized", "script", "openai"
	name         string // the script entry's name
	text         string
	chunks       []string // stream chunk boundaries of text
	calls        []FunctionCall
	finishReason string
	raw          json.RawMessage
	rawChunks    []json.RawMessage
	err          *Error
	// usage from an upstream, when it reported one
	upPrompt, upCandidates int
}

// renderer mints what an answer's envelopes carry for one request.
type renderer struct {
	model   string
	seed    [32]byte
	prompt  int
	thinks  bool
	sigs    int
	callIdx int
}

func newRenderer(model string, r *Request, seed [32]byte) *renderer {
	return &renderer{model: model, seed: seed, prompt: promptTokens(r), thinks: thinks(model)}
}

func (rd *renderer) signature() string {
	s := thoughtSignature(rd.seed, rd.sigs)
	rd.sigs++
	return s
}

// callParts turns calls into functionCall parts: ids minted where absent,
// and every part signed, so scripted tool round trips replay cleanly.
func (rd *renderer) callParts(calls []FunctionCall) []Part {
	parts := make([]Part, 0, len(calls))
	for _, fc := range calls {
		fc := fc
		if fc.ID == "" {
			fc.ID = callID(rd.seed, rd.callIdx)
		}
		rd.callIdx++
		if fc.Args == nil {
			fc.Args = map[string]any{}
		}
		parts = append(parts, Part{FunctionCall: &fc, ThoughtSignature: rd.signature()})
	}
	return parts
}

func (rd *renderer) usage(candidates, promptOverride int) *Usage {
	p := rd.prompt
	if promptOverride > 0 {
		p = promptOverride
	}
	return &Usage{
		PromptTokenCount:     p,
		CandidatesTokenCount: candidates,
		TotalTokenCount:      p + candidates,
		PromptTokensDetails:  []ModalityCount{{Modality: "TEXT", TokenCount: p}},
		ServiceTier:          "standard",
	}
}

func finishOf(a answer) (reason, message string) {
	reason = a.finishReason
	if reason == "" {
		reason = "STOP"
	}
	if len(a.calls) > 0 {
		message = "Model generated function call(s)."
	}
	return
}

// normalFinish reports an answer that finished normally; a scripted
// SAFETY (or other) finish without text has no content, as a blocked
// candidate has none.
func normalFinish(a answer) bool {
	return a.finishReason == "" || a.finishReason == "STOP" || a.finishReason == "MAX_TOKENS"
}

func (a answer) candidateTokens() int {
	if a.upCandidates > 0 {
		return a.upCandidates
	}
	n := textTokens(a.text)
	for _, c := range a.calls {
		n += partTokens(Part{FunctionCall: &c})
	}
	return n
}

// unary renders the generateContent envelope of an answer (raw answers
// are returned verbatim by the caller).
func (rd *renderer) unary(a answer) *Response {
	return &Response{
		Candidates:    []Candidate{rd.candidate(a)},
		UsageMetadata: rd.usage(a.candidateTokens(), a.upPrompt),
		ModelVersion:  modelVersion(rd.model),
		ResponseID:    responseID(rd.seed),
	}
}

// candidate renders one answer as a candidate (index 0).
func (rd *renderer) candidate(a answer) Candidate {
	var parts []Part
	if a.text != "" || (len(a.calls) == 0 && normalFinish(a)) {
		p := Part{Text: strp(a.text)}
		if rd.thinks {
			p.ThoughtSignature = rd.signature()
		}
		parts = append(parts, p)
	}
	parts = append(parts, rd.callParts(a.calls)...)
	reason, msg := finishOf(a)
	c := Candidate{FinishReason: reason, Index: 0, FinishMessage: msg}
	if len(parts) > 0 {
		c.Content = &Content{Role: "model", Parts: parts}
	}
	return c
}

// streamer writes an answer as stream chunks with production's framing
// (ai-generate-stream-framing): every chunk a complete response with
// usageMetadata, finishReason only on the last; a thinking model ends with
// an empty text part carrying the signature.
type streamer struct {
	rd    *renderer
	yield func([]byte) error
	cand  int
}

func (s *streamer) chunk(parts []Part, reason, msg string, promptOverride, candOverride int) error {
	c := Candidate{FinishReason: reason, Index: 0, FinishMessage: msg}
	if len(parts) > 0 {
		c.Content = &Content{Role: "model", Parts: parts}
	}
	return s.emit([]Candidate{c}, promptOverride, candOverride)
}

// emit writes one chunk of candidates with the usage so far.
func (s *streamer) emit(cands []Candidate, promptOverride, candOverride int) error {
	cand := s.cand
	if candOverride > 0 {
		cand = candOverride
	}
	b, err := wireJSON(&Response{
		Candidates:    cands,
		UsageMetadata: s.rd.usage(cand, promptOverride),
		ModelVersion:  modelVersion(s.rd.model),
		ResponseID:    responseID(s.rd.seed),
	})
	if err != nil {
		return err
	}
	return s.yield(b)
}

// text writes a non-final text chunk.
func (s *streamer) text(piece string) error {
	s.cand += textTokens(piece)
	return s.chunk([]Part{{Text: strp(piece)}}, "", "", 0, 0)
}

// finish writes the final chunk: the last text piece (for a model that
// does not think), the function calls, the finish reason.
func (s *streamer) finish(a answer, last string) error {
	return s.emit([]Candidate{s.final(a, last)}, a.upPrompt, a.upCandidates)
}

// final is an answer's last candidate chunk (index 0), its tokens counted.
func (s *streamer) final(a answer, last string) Candidate {
	var parts []Part
	if last != "" || (len(a.calls) == 0 && normalFinish(a)) {
		p := Part{Text: strp(last)}
		if s.rd.thinks {
			p.ThoughtSignature = s.rd.signature()
		}
		parts = append(parts, p)
	}
	s.cand += textTokens(last)
	parts = append(parts, s.rd.callParts(a.calls)...)
	for _, c := range a.calls {
		s.cand += partTokens(Part{FunctionCall: &c})
	}
	reason, msg := finishOf(a)
	c := Candidate{FinishReason: reason, Index: 0, FinishMessage: msg}
	if len(parts) > 0 {
		c.Content = &Content{Role: "model", Parts: parts}
	}
	return c
}

// pieces splits a synthesized or shorthand text into stream chunks: the
// script's boundaries, else about three pieces at word boundaries.
func pieces(a answer) []string {
	if len(a.chunks) > 0 {
		return a.chunks
	}
	if a.text == "" {
		return nil
	}
	words := strings.SplitAfter(a.text, " ")
	if len(words) < 3 {
		return []string{a.text}
	}
	n := (len(words) + 2) / 3
	var out []string
	for i := 0; i < len(words); i += n {
		j := min(i+n, len(words))
		out = append(out, strings.Join(words[i:j], ""))
	}
	return out
}

// mergeChunks folds raw stream chunks into one envelope for a unary call:
// the last chunk, with the first candidate's text parts of every chunk
// concatenated in front of its own.
func mergeChunks(chunks []json.RawMessage) json.RawMessage {
	var text strings.Builder
	var last map[string]any
	for _, c := range chunks {
		var m map[string]any
		if json.Unmarshal(c, &m) != nil {
			continue
		}
		last = m
		text.WriteString(firstCandidateText(m))
	}
	if last == nil {
		return json.RawMessage("{}")
	}
	if cands, ok := last["candidates"].([]any); ok && len(cands) > 0 {
		if c0, ok := cands[0].(map[string]any); ok {
			content, _ := c0["content"].(map[string]any)
			if content == nil {
				content = map[string]any{"role": "model"}
				c0["content"] = content
			}
			var kept []any
			if parts, ok := content["parts"].([]any); ok {
				for _, p := range parts {
					if pm, ok := p.(map[string]any); ok {
						if _, isText := pm["text"]; isText {
							continue
						}
					}
					kept = append(kept, p)
				}
			}
			content["parts"] = append([]any{map[string]any{"text": text.String()}}, kept...)
		}
	}
	b, _ := wireJSONIndent(last)
	return b
}

func firstCandidateText(m map[string]any) string {
	cands, _ := m["candidates"].([]any)
	if len(cands) == 0 {
		return ""
	}
	c0, _ := cands[0].(map[string]any)
	content, _ := c0["content"].(map[string]any)
	parts, _ := content["parts"].([]any)
	s := ""
	for _, p := range parts {
		if pm, ok := p.(map[string]any); ok {
			if t, ok := pm["text"].(string); ok {
				s += t
			}
		}
	}
	return s
}

// SpacedJSON re-renders compact JSON with a space after every colon, the
// way production writes stream chunks (`{"candidates": [...],"index": 0}`).
func SpacedJSON(compact []byte) []byte {
	out := make([]byte, 0, len(compact)+len(compact)/8)
	inStr, esc := false, false
	for _, c := range compact {
		out = append(out, c)
		switch {
		case esc:
			esc = false
		case inStr && c == '\\':
			esc = true
		case c == '"':
			inStr = !inStr
		case !inStr && c == ':':
			out = append(out, ' ')
		}
	}
	return out
}

// compactJSON is raw JSON on one line (stream frames cannot hold
// newlines).
func compactJSON(raw []byte) []byte {
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return raw
	}
	return buf.Bytes()
}

// wireJSON encodes v on one line as production does: no HTML escaping of
// <, > and & in generated text.
func wireJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// wireJSONIndent encodes v as production's unary responses are: indented
// by two spaces.
func wireJSONIndent(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}
