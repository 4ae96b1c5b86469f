package ai

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
)

func FuzzDecodeRequest(f *testing.F) {
	for _, s := range []string{
		hello, `{}`, `[]`, ``, `{"contents":[]}`, `{"contents":"x"}`,
		`{"contents":[{"role":"model","parts":[{"functionCall":{"name":"f","args":{}}}]}]}`,
		`{"contents":[{"parts":[{"text":"a"}]}],"generationConfig":{"responseMimeType":"application/json","responseSchema":{"type":"ARRAY","items":{"type":"OBJECT","properties":{"a":{"anyOf":[]}}}}}}`,
		`{"contents":[{"parts":[{"text":"a"}]}],"tools":[{"functionDeclarations":[{"name":"f","parameters":{"type":"OBJECT","properties":{"x":{"type":["string","null"]}}}}]}],"toolConfig":{"functionCallingConfig":{"mode":"ANY"}}}`,
		`{"generateContentRequest":{"contents":[{"parts":[{"inlineData":{"mimeType":"image/png","data":"AA=="}}]}]}}`,
	} {
		f.Add([]byte(s))
	}
	e, _ := New(testEnv(nil, nil), Options{})
	f.Fuzz(func(t *testing.T, body []byte) {
		if _, err := DecodeRequest(body); err != nil {
			var ae *Error
			if !errors.As(err, &ae) || ae.Code != 400 {
				t.Fatalf("decode error is not a 400: %v", err)
			}
		}
		DecodeCountTokens(body)
		for _, model := range []string{"gemini-2.5-flash", "gemini-3-flash"} {
			c := call(model, string(body))
			if _, err := e.GenerateContent(context.Background(), c); err != nil {
				if ae := AsError(err); ae.Code >= 500 {
					t.Fatalf("server error for a client body: %v", err)
				}
			}
			e.StreamGenerateContent(context.Background(), c, func([]byte) error { return nil })
			e.CountTokens(context.Background(), c)
		}
		e.Reset() // bound the call log
	})
}

func FuzzDecodeScript(f *testing.F) {
	for _, s := range []string{
		`[{"text":"a"}]`, `{"entries":[{"match":{"regex":"^a"},"text":"b","repeat":true}]}`,
		`[{"raw":{"candidates":[]}}]`, `[{"rawChunks":[{},{}]}]`, `[{"error":{"code":429}}]`,
		`[{"functionCall":{"name":"f","args":{"x":[1,2]}}}]`, `[{"chunks":["a","b"]}]`, `[{"json":[1]}]`,
		`[{"finishReason":"SAFETY"}]`, `[{"match":{"regex":"("},"text":"x"}]`, `{}`, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := DecodeScript(data)
		if err != nil {
			if !errors.Is(err, ErrInvalidScript) {
				t.Fatalf("error does not wrap ErrInvalidScript: %v", err)
			}
			return
		}
		// A decoded script answers without failing the server.
		e, _ := New(testEnv(nil, nil), Options{})
		if err := e.SetScript("demo-ai", entries); err != nil {
			t.Fatal(err)
		}
		for range entries {
			if _, err := e.GenerateContent(context.Background(), call("gemini-2.5-flash", hello)); err != nil {
				if ae := AsError(err); ae.Status == "INTERNAL" && ae.Message == "Internal error encountered." {
					t.Fatalf("internal error: %v", err)
				}
			}
			e.StreamGenerateContent(context.Background(), call("gemini-3-pro", hello), func([]byte) error { return nil })
		}
		if snap, err := e.Snapshot(); err != nil {
			t.Fatal(err)
		} else if err := e.Restore(snap); err != nil {
			t.Fatalf("snapshot does not restore: %v", err)
		}
	})
}

// bodyTransport answers every request with a fixed body, so the
// OpenAI-compatible decoders can be fuzzed without a network.
type bodyTransport struct{ body []byte }

func (b bodyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(b.body)), Request: r}, nil
}

func FuzzOpenAIResponse(f *testing.F) {
	for _, s := range []string{
		`{"choices":[{"message":{"content":"hi"},"finish_reason":"stop"}]}`,
		`{"choices":[{"message":{"tool_calls":[{"id":"c","function":{"name":"f","arguments":"{\"a\":1}"}}]}}]}`,
		"data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\ndata: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":3,\"function\":{\"name\":\"f\",\"arguments\":\"{\"}}]}}]}\n\ndata: [DONE]\n\n",
		"data: {\"error\":{\"message\":\"x\"}}\n\n", `{"choices":[]}`, `[]`, "data: nope\n\n",
	} {
		f.Add([]byte(s))
	}
	r, _ := DecodeRequest([]byte(hello))
	f.Fuzz(func(t *testing.T, body []byte) {
		o, err := newOpenAI(OpenAIOptions{BaseURL: "http://upstream.invalid/v1", HTTPClient: &http.Client{Transport: bodyTransport{body}}})
		if err != nil {
			t.Fatal(err)
		}
		for _, stream := range []bool{false, true} {
			var a answer
			var err error
			if stream {
				a, err = o.stream(context.Background(), r, "m", func(string) error { return nil })
			} else {
				a, err = o.generate(context.Background(), r, "m")
			}
			if err != nil {
				var ae *Error
				if !errors.As(err, &ae) || ae.Code != 503 {
					t.Fatalf("upstream garbage is not a 503: %v", err)
				}
				continue
			}
			// Whatever decoded renders as an envelope.
			rd := newRenderer("gemini-2.5-flash", r, digest("x"))
			if _, err := wireJSON(rd.unary(a)); err != nil {
				t.Fatal(err)
			}
		}
	})
}
