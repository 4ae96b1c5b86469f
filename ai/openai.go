package ai

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"
)

// OpenAIOptions configure the answerer that forwards unscripted calls to an
// OpenAI-compatible chat-completions endpoint (a local LLM server, a
// proxy), translating Gemini requests to chat messages and the answers
// back to Gemini envelopes.
type OpenAIOptions struct {
	// BaseURL is the API root the path /chat/completions is appended to,
	// e.g. "http://127.0.0.1:11434/v1".
	BaseURL string
	// APIKey, when set, is sent as "Authorization: Bearer <key>".
	APIKey string
	// Model, when set, replaces the Gemini model name in upstream requests.
	Model string
	// HTTPClient defaults to a client with Timeout.
	HTTPClient *http.Client
	// Timeout bounds one upstream call; 0 means 2 minutes.
	Timeout time.Duration
}

type openAI struct {
	opts     OpenAIOptions
	endpoint string
	client   *http.Client
}

// maxUpstreamBytes bounds what is read from the upstream.
const maxUpstreamBytes = 16 << 20

func newOpenAI(o OpenAIOptions) (*openAI, error) {
	u, err := url.Parse(o.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("ai: OpenAI base URL %q must be an http(s) URL", o.BaseURL)
	}
	if o.Timeout <= 0 {
		o.Timeout = 2 * time.Minute
	}
	c := o.HTTPClient
	if c == nil {
		c = &http.Client{Timeout: o.Timeout}
	}
	return &openAI{opts: o, endpoint: strings.TrimRight(o.BaseURL, "/") + "/chat/completions", client: c}, nil
}

type oaMessage struct {
	Role       string       `json:"role"`
	Content    any          `json:"content"`
	ToolCalls  []oaToolCall `json:"tool_calls,omitempty"`
	ToolCallID string       `json:"tool_call_id,omitempty"`
}

type oaToolCall struct {
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type oaRequest struct {
	Model          string         `json:"model"`
	Messages       []oaMessage    `json:"messages"`
	Tools          []any          `json:"tools,omitempty"`
	ToolChoice     any            `json:"tool_choice,omitempty"`
	Temperature    *float64       `json:"temperature,omitempty"`
	TopP           *float64       `json:"top_p,omitempty"`
	MaxTokens      *int           `json:"max_tokens,omitempty"`
	Stop           []string       `json:"stop,omitempty"`
	Seed           *int64         `json:"seed,omitempty"`
	ResponseFormat any            `json:"response_format,omitempty"`
	Stream         bool           `json:"stream,omitempty"`
	StreamOptions  map[string]any `json:"stream_options,omitempty"`
}

type oaResponse struct {
	Choices []struct {
		Message      oaMessage `json:"message"`
		Delta        oaMessage `json:"delta"`
		FinishReason *string   `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// translate turns a Gemini request into chat-completions messages.
// Thought parts are skipped; a model functionCall becomes an assistant
// tool call (its Gemini id, else a minted one); functionResponse parts
// become tool messages answering the pending tool calls in FIFO order
// (or by id when the response names one).
func (o *openAI) translate(r *Request, model string) oaRequest {
	req := oaRequest{Model: model}
	if o.opts.Model != "" {
		req.Model = o.opts.Model
	}
	if r.SystemInstruction != nil {
		if t := r.SystemInstruction.Text(); t != "" {
			req.Messages = append(req.Messages, oaMessage{Role: "system", Content: t})
		}
	}
	var pending []string
	minted := 0
	for _, c := range r.Contents {
		role := strings.ToLower(c.Role)
		switch role {
		case "model", "assistant":
			msg := oaMessage{Role: "assistant"}
			text := c.Text()
			for _, p := range c.Parts {
				if p.Thought || p.FunctionCall == nil {
					continue
				}
				id := p.FunctionCall.ID
				if id == "" {
					id = fmt.Sprintf("call_%d", minted)
					minted++
				}
				args, _ := json.Marshal(p.FunctionCall.Args)
				if p.FunctionCall.Args == nil {
					args = []byte("{}")
				}
				tc := oaToolCall{ID: id, Type: "function"}
				tc.Function.Name, tc.Function.Arguments = p.FunctionCall.Name, string(args)
				msg.ToolCalls = append(msg.ToolCalls, tc)
				pending = append(pending, id)
			}
			if text != "" || len(msg.ToolCalls) == 0 {
				msg.Content = text
			}
			req.Messages = append(req.Messages, msg)
		case "system", "developer":
			req.Messages = append(req.Messages, oaMessage{Role: "system", Content: c.Text()})
		default: // user, function
			var parts []any
			for _, p := range c.Parts {
				switch {
				case p.Thought:
				case p.FunctionResponse != nil:
					id := ""
					if p.FunctionResponse.ID != "" {
						for i, pid := range pending {
							if pid == p.FunctionResponse.ID {
								id = pid
								pending = append(pending[:i:i], pending[i+1:]...)
								break
							}
						}
					}
					if id == "" && len(pending) > 0 {
						id, pending = pending[0], pending[1:]
					}
					if id == "" {
						id = fmt.Sprintf("call_%d", minted)
						minted++
					}
					b, _ := json.Marshal(p.FunctionResponse.Response)
					req.Messages = append(req.Messages, oaMessage{Role: "tool", ToolCallID: id, Content: string(b)})
				case p.Text != nil:
					parts = append(parts, map[string]any{"type": "text", "text": *p.Text})
				case p.InlineData != nil:
					parts = append(parts, map[string]any{"type": "image_url",
						"image_url": map[string]any{"url": "data:" + p.InlineData.MIMEType + ";base64," + p.InlineData.Data}})
				case p.FileData != nil:
					parts = append(parts, map[string]any{"type": "image_url", "image_url": map[string]any{"url": p.FileData.FileURI}})
				}
			}
			if len(parts) == 0 {
				continue
			}
			if allText(parts) {
				var s strings.Builder
				for _, p := range parts {
					s.WriteString(p.(map[string]any)["text"].(string))
				}
				req.Messages = append(req.Messages, oaMessage{Role: "user", Content: s.String()})
			} else {
				req.Messages = append(req.Messages, oaMessage{Role: "user", Content: parts})
			}
		}
	}
	for _, t := range r.Tools {
		for _, f := range t.FunctionDeclarations {
			params := f.ParametersJSONSchema
			if params == nil {
				params = jsonSchemaOf(f.Parameters)
			}
			if params == nil {
				params = map[string]any{"type": "object", "properties": map[string]any{}}
			}
			fn := map[string]any{"name": f.Name, "parameters": params}
			if f.Description != "" {
				fn["description"] = f.Description
			}
			req.Tools = append(req.Tools, map[string]any{"type": "function", "function": fn})
		}
	}
	if r.ToolConfig != nil && r.ToolConfig.FunctionCallingConfig != nil && len(req.Tools) > 0 {
		fc := r.ToolConfig.FunctionCallingConfig
		switch strings.ToUpper(fc.Mode) {
		case "ANY":
			if len(fc.AllowedFunctionNames) == 1 {
				req.ToolChoice = map[string]any{"type": "function", "function": map[string]any{"name": fc.AllowedFunctionNames[0]}}
			} else {
				req.ToolChoice = "required"
			}
		case "NONE":
			req.ToolChoice = "none"
		}
	}
	if g := r.GenerationConfig; g != nil {
		req.Temperature, req.TopP, req.MaxTokens, req.Stop, req.Seed = g.Temperature, g.TopP, g.MaxOutputTokens, g.StopSequences, g.Seed
		if strings.HasPrefix(g.ResponseMIMEType, "application/json") {
			schema := g.ResponseJSONSchema
			if schema == nil {
				schema = jsonSchemaOf(g.ResponseSchema)
			}
			if schema != nil {
				req.ResponseFormat = map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "response", "schema": schema}}
			} else {
				req.ResponseFormat = map[string]any{"type": "json_object"}
			}
		}
	}
	return req
}

func allText(parts []any) bool {
	for _, p := range parts {
		if p.(map[string]any)["type"] != "text" {
			return false
		}
	}
	return true
}

// jsonSchemaOf converts a Gemini Schema (upper-case OpenAPI types,
// propertyOrdering, format "enum") to JSON Schema.
func jsonSchemaOf(s map[string]any) map[string]any {
	if s == nil {
		return nil
	}
	out := make(map[string]any, len(s))
	for k, v := range s {
		switch k {
		case "propertyOrdering":
			continue
		case "type":
			if t, ok := v.(string); ok {
				v = strings.ToLower(t)
			}
		case "format":
			if v == "enum" {
				continue
			}
		case "nullable":
			continue
		case "properties":
			if props, ok := v.(map[string]any); ok {
				np := make(map[string]any, len(props))
				for pk, pv := range props {
					if m, ok := pv.(map[string]any); ok {
						np[pk] = jsonSchemaOf(m)
					}
				}
				v = np
			}
		case "items":
			if m, ok := v.(map[string]any); ok {
				v = jsonSchemaOf(m)
			}
		case "anyOf":
			if alts, ok := v.([]any); ok {
				na := make([]any, 0, len(alts))
				for _, a := range alts {
					if m, ok := a.(map[string]any); ok {
						na = append(na, jsonSchemaOf(m))
					}
				}
				v = na
			}
		}
		out[k] = v
	}
	return out
}

func (o *openAI) post(ctx context.Context, body oaRequest) (*http.Response, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, errUpstream("encode request: %v", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.endpoint, bytes.NewReader(b))
	if err != nil {
		return nil, errUpstream("%v", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if o.opts.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+o.opts.APIKey)
	}
	resp, err := o.client.Do(req)
	if err != nil {
		return nil, errUpstream("%v", err)
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		var env oaResponse
		text := strings.TrimSpace(string(msg))
		if json.Unmarshal(msg, &env) == nil && env.Error != nil && env.Error.Message != "" {
			text = env.Error.Message
		}
		e := errUpstream("HTTP %d: %s", resp.StatusCode, text)
		switch resp.StatusCode {
		case 400, 422:
			e.Code, e.Status = 400, "INVALID_ARGUMENT"
		case 429:
			e.Code, e.Status = 429, "RESOURCE_EXHAUSTED"
		}
		return nil, e
	}
	return resp, nil
}

// generate answers a unary call through the upstream.
func (o *openAI) generate(ctx context.Context, r *Request, model string) (answer, error) {
	resp, err := o.post(ctx, o.translate(r, model))
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	var out oaResponse
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxUpstreamBytes)).Decode(&out); err != nil {
		return answer{}, errUpstream("decode response: %v", err)
	}
	if len(out.Choices) == 0 {
		return answer{}, errUpstream("response has no choices")
	}
	ch := out.Choices[0]
	a := answer{source: "openai"}
	if s, ok := ch.Message.Content.(string); ok {
		a.text = s
	}
	for _, tc := range ch.Message.ToolCalls {
		fc, err := callOf(tc.ID, tc.Function.Name, tc.Function.Arguments)
		if err != nil {
			return answer{}, err
		}
		a.calls = append(a.calls, fc)
	}
	if ch.FinishReason != nil {
		a.finishReason = finishReasonOf(*ch.FinishReason)
	}
	if out.Usage != nil {
		a.upPrompt, a.upCandidates = out.Usage.PromptTokens, out.Usage.CompletionTokens
	}
	return a, nil
}

// stream answers a streaming call: text deltas go to onText as they come;
// tool-call deltas are buffered and returned whole (parsed args) in the
// final answer; "[DONE]" ends the stream and is never forwarded.
func (o *openAI) stream(ctx context.Context, r *Request, model string, onText func(string) error) (answer, error) {
	req := o.translate(r, model)
	req.Stream = true
	req.StreamOptions = map[string]any{"include_usage": true}
	resp, err := o.post(ctx, req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	type building struct {
		id, name string
		args     strings.Builder
	}
	calls := map[int]*building{}
	a := answer{source: "openai"}
	var text strings.Builder
	sc := bufio.NewScanner(io.LimitReader(resp.Body, maxUpstreamBytes))
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		data, ok := strings.CutPrefix(line, "data:")
		if !ok {
			continue
		}
		data = strings.TrimSpace(data)
		if data == "[DONE]" {
			break
		}
		var chunk oaResponse
		if err := json.Unmarshal([]byte(data), &chunk); err != nil {
			return answer{}, errUpstream("stream chunk is not JSON: %v", err)
		}
		if chunk.Error != nil {
			return answer{}, errUpstream("%s", chunk.Error.Message)
		}
		if chunk.Usage != nil {
			a.upPrompt, a.upCandidates = chunk.Usage.PromptTokens, chunk.Usage.CompletionTokens
		}
		for _, ch := range chunk.Choices {
			if s, ok := ch.Delta.Content.(string); ok && s != "" {
				text.WriteString(s)
				if err := onText(s); err != nil {
					return answer{}, err
				}
			}
			for i, tc := range ch.Delta.ToolCalls {
				idx := i
				if tc.Index != nil {
					idx = *tc.Index
				}
				b := calls[idx]
				if b == nil {
					b = &building{}
					calls[idx] = b
				}
				if tc.ID != "" {
					b.id = tc.ID
				}
				if tc.Function.Name != "" {
					b.name = tc.Function.Name
				}
				b.args.WriteString(tc.Function.Arguments)
			}
			if ch.FinishReason != nil {
				a.finishReason = finishReasonOf(*ch.FinishReason)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return answer{}, errUpstream("reading stream: %v", err)
	}
	idxs := make([]int, 0, len(calls))
	for i := range calls {
		idxs = append(idxs, i)
	}
	sort.Ints(idxs)
	for _, i := range idxs {
		b := calls[i]
		fc, err := callOf(b.id, b.name, b.args.String())
		if err != nil {
			return answer{}, err
		}
		a.calls = append(a.calls, fc)
	}
	a.text = text.String()
	return a, nil
}

// callOf parses an OpenAI tool call's JSON-string arguments into the
// object Gemini carries.
func callOf(id, name, args string) (FunctionCall, error) {
	fc := FunctionCall{Name: name, ID: id, Args: map[string]any{}}
	if strings.TrimSpace(args) != "" {
		if err := json.Unmarshal([]byte(args), &fc.Args); err != nil {
			return FunctionCall{}, errUpstream("tool call %s arguments are not a JSON object: %v", name, err)
		}
	}
	return fc, nil
}

func finishReasonOf(r string) string {
	switch r {
	case "length":
		return "MAX_TOKENS"
	case "content_filter":
		return "SAFETY"
	}
	return "STOP" // stop, tool_calls, function_call
}

// Environment variables OpenAIFromEnv reads.
const (
	EnvOpenAIBaseURL = "PYRIC_AI_OPENAI_BASE_URL"
	EnvOpenAIAPIKey  = "PYRIC_AI_OPENAI_API_KEY"
	EnvOpenAIModel   = "PYRIC_AI_OPENAI_MODEL"
)

// OpenAIFromEnv returns the OpenAI-compatible answerer's options from the
// environment (getenv is os.Getenv), or nil — the scripted default — when
// PYRIC_AI_OPENAI_BASE_URL is unset. The key stays out of flags and
// firebase.json.
func OpenAIFromEnv(getenv func(string) string) *OpenAIOptions {
	base := strings.TrimSpace(getenv(EnvOpenAIBaseURL))
	if base == "" {
		return nil
	}
	return &OpenAIOptions{BaseURL: base, APIKey: getenv(EnvOpenAIAPIKey), Model: getenv(EnvOpenAIModel)}
}
