package ai

import (
	"context"
	"testing"
)

func BenchmarkGenerateContent(b *testing.B) {
	e, _ := New(testEnv(nil, nil), Options{})
	c := call("gemini-2.5-flash", hello)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.GenerateContent(context.Background(), c); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGenerateContentScripted(b *testing.B) {
	e, _ := New(testEnv(nil, nil), Options{})
	entries, _ := DecodeScript([]byte(`[{"match":{"regex":"hello"},"text":"hi","repeat":true}]`))
	e.SetScript("demo-ai", entries)
	c := call("gemini-2.5-flash", hello)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.GenerateContent(context.Background(), c); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStreamGenerateContent(b *testing.B) {
	e, _ := New(testEnv(nil, nil), Options{})
	c := call("gemini-flash-lite-latest", prompt("one two three four five six seven eight nine ten"))
	b.ReportAllocs()
	for b.Loop() {
		if err := e.StreamGenerateContent(context.Background(), c, func([]byte) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}
