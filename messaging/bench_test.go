package messaging

import (
	"fmt"
	"testing"
)

const benchBody = `{"message": {"token": "TOKEN", "notification": {"title": "Hello", "body": "World"}, "data": {"k": "v", "n": "1"},
	"android": {"priority": "high", "ttl": "3600s", "notification": {"channel_id": "c", "color": "#112233"}},
	"webpush": {"headers": {"TTL": "60"}, "fcm_options": {"link": "https://example.com"}},
	"apns": {"headers": {"apns-priority": "10"}, "payload": {"aps": {"badge": 1, "sound": "default"}}}}}`

func BenchmarkDecodeValidate(b *testing.B) {
	body := []byte(benchBody)
	b.ReportAllocs()
	for b.Loop() {
		req, err := DecodeSendRequest(body)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Validate(req.Message, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSendToken(b *testing.B) {
	f := newFixture(b, Options{MaxMessages: 1 << 30})
	tok := f.mint(b, PlatformWeb)
	req, err := DecodeSendRequest([]byte(fmt.Sprintf(`{"message": {"token": %q, "data": {"k": "v"}}}`, tok)))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.eng.Send(admin, project, req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSendTopic1000(b *testing.B) {
	f := newFixture(b, Options{})
	f.env.Bucket = nil // fan-out cost alone
	eng, _ := NewEngine(f.env, Options{})
	var toks []string
	for range 1000 {
		t, _ := eng.MintToken(admin, project, MintRequest{})
		toks = append(toks, t.Token)
	}
	if _, err := eng.Subscribe(admin, "news", toks); err != nil {
		b.Fatal(err)
	}
	req, _ := DecodeSendRequest([]byte(`{"message": {"condition": "'news' in topics && !('x' in topics)"}}`))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := eng.Send(admin, project, req); err != nil {
			b.Fatal(err)
		}
	}
}
