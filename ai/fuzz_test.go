package ai

import (
	"context"
	"errors"
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
