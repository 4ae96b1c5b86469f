package messagingserver_test

import (
	"context"
	"testing"

	fcm "firebase.google.com/go/v4/messaging"

	"github.com/pyric/pyric/messaging"
	"github.com/pyric/pyric/sandbox/service"
	"github.com/pyric/pyric/server/messaging/messagingtest"
)

// BenchmarkAdminSDKSend is one firebase-admin-go Send through the
// fcmclient transport, the HTTP adapter and the engine (in memory).
func BenchmarkAdminSDKSend(b *testing.B) {
	s := messagingtest.Start(b, service.Env{Project: project}, messaging.Options{MaxMessages: 1 << 30, MaxDeliveries: 1 << 30})
	c := adminClientB(b, s)
	tok, _ := s.Engine.MintToken(admin, project, messaging.MintRequest{})
	msg := &fcm.Message{Token: tok.Token, Notification: &fcm.Notification{Title: "t", Body: "b"}, Data: map[string]string{"k": "v"}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Send(ctx, msg); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAdminSDKSendEach500 is SendEach of 500 messages (500 parallel
// HTTP sends from the SDK's 50 workers).
func BenchmarkAdminSDKSendEach500(b *testing.B) {
	s := messagingtest.Start(b, service.Env{Project: project}, messaging.Options{MaxMessages: 1 << 30, MaxDeliveries: 1 << 30})
	c := adminClientB(b, s)
	tok, _ := s.Engine.MintToken(admin, project, messaging.MintRequest{})
	msgs := make([]*fcm.Message, 500)
	for i := range msgs {
		msgs[i] = &fcm.Message{Token: tok.Token, Data: map[string]string{"k": "v"}}
	}
	ctx := context.Background()
	for b.Loop() {
		br, err := c.SendEach(ctx, msgs)
		if err != nil || br.FailureCount != 0 {
			b.Fatal(err, br.FailureCount)
		}
	}
}
