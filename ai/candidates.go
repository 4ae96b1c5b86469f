package ai

import (
	"context"
	"encoding/json"
)

// MaxCandidates is the most candidates one request may ask for
// (generationConfig.candidateCount 1 to 8 on the Gemini 2.x models).
const MaxCandidates = 8

// candidateCount is the number of candidates a request asks for: 1 when
// candidateCount is absent or 0 (proto3's default).
func candidateCount(r *Request) int {
	if g := r.GenerationConfig; g != nil && g.CandidateCount != nil && *g.CandidateCount != 0 {
		return *g.CandidateCount
	}
	return 1
}

// checkCandidates rejects a candidateCount production rejects:
//
//   - outside [1, 8]: Vertex AI's text, from googleapis/python-aiplatform#3603
//     ("Unable to submit request because it has a candidateCount value of 2
//     but the supported range is from 1 (inclusive) to 2 (exclusive)..." for
//     a one-candidate model); the Google AI backend's own text for this case
//     was not found, so it answers the same.
//   - more than one on a Gemini 3 model through the Google AI backend:
//     "Multiple candidates is not enabled for this model"
//     (googleapis/python-genai#1723; Vertex AI serves several, as reported
//     in the same thread).
func checkCandidates(r *Request, model, backend string) error {
	n := candidateCount(r)
	if n < 1 || n > MaxCandidates {
		return invalidArgument("Unable to submit request because it has a candidateCount value of %d but the supported range is from 1 (inclusive) to %d (exclusive). Update the value and try again.", n, MaxCandidates+1)
	}
	if n > 1 && backend != BackendVertexAI && thinks(model) {
		return invalidArgument("Multiple candidates is not enabled for this model")
	}
	return nil
}

// fill completes the answers of a request asking for n candidates: the
// scripted ones first (each candidate consumed the script's next answer),
// then the upstream's or synthesized ones.
func (e *Engine) fill(ctx context.Context, r *Request, model string, as []answer, n int) ([]answer, error) {
	for i := len(as); i < n; i++ {
		if e.openai != nil {
			got, err := e.openai.generate(ctx, r, model)
			if err != nil {
				return nil, err
			}
			as = append(as, got)
			continue
		}
		got := synthesize(r, i)
		got.source = "synthesized"
		as = append(as, got)
	}
	return as, nil
}

// flatten turns a raw scripted envelope answering a candidate past the
// first into the text and calls of its first candidate, so it renders
// beside the others.
func flatten(a answer) answer {
	if len(a.raw) == 0 && len(a.rawChunks) == 0 {
		return a
	}
	src := a.raw
	if len(src) == 0 {
		src = mergeChunks(a.rawChunks)
	}
	out := answer{source: a.source, name: a.name}
	var resp Response
	if json.Unmarshal(src, &resp) != nil || len(resp.Candidates) == 0 {
		return out
	}
	c := resp.Candidates[0]
	out.finishReason = c.FinishReason
	if c.Content != nil {
		out.text = c.Content.Text()
		for _, p := range c.Content.Parts {
			if p.FunctionCall != nil {
				out.calls = append(out.calls, *p.FunctionCall)
			}
		}
	}
	return out
}

// combined is the answer a multi-candidate call is logged as: the first
// candidate's, with every candidate's tokens.
func combined(as []answer) answer {
	a := as[0]
	total := 0
	for _, x := range as {
		total += x.candidateTokens()
	}
	a.upCandidates = total
	return a
}

// unaryN renders the generateContent envelope of several candidates.
func (rd *renderer) unaryN(as []answer) *Response {
	resp := rd.unary(as[0])
	for i, a := range as[1:] {
		c := rd.candidate(a)
		c.Index = i + 1
		resp.Candidates = append(resp.Candidates, c)
	}
	resp.UsageMetadata = rd.usage(combined(as).candidateTokens(), as[0].upPrompt)
	return resp
}

// multi streams several candidates: chunk k carries piece k of every
// candidate that has one (by index), the last chunk every candidate's
// final piece, calls and finishReason, so finishReason is still only on
// the last chunk and usageMetadata on every one.
func (s *streamer) multi(as []answer) error {
	type plan struct {
		pieces []string
		last   string
	}
	plans := make([]plan, len(as))
	rounds := 0
	for i, a := range as {
		ps := pieces(a)
		if len(ps) > 0 && !s.rd.thinks {
			plans[i].last, ps = ps[len(ps)-1], ps[:len(ps)-1]
		}
		plans[i].pieces = ps
		rounds = max(rounds, len(ps))
	}
	for k := 0; k < rounds; k++ {
		var cands []Candidate
		for i, p := range plans {
			if k < len(p.pieces) {
				s.cand += textTokens(p.pieces[k])
				cands = append(cands, Candidate{Index: i, Content: &Content{Role: "model", Parts: []Part{{Text: strp(p.pieces[k])}}}})
			}
		}
		if err := s.emit(cands, 0, 0); err != nil {
			return err
		}
	}
	cands := make([]Candidate, len(as))
	for i, a := range as {
		cands[i] = s.final(a, plans[i].last)
		cands[i].Index = i
	}
	return s.emit(cands, 0, 0)
}
