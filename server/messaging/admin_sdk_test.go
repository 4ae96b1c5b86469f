package messagingserver_test

import (
	"context"
	"strings"
	"testing"
	"time"

	firebase "firebase.google.com/go/v4"
	fcm "firebase.google.com/go/v4/messaging"

	"github.com/pyric/pyric/messaging"
	"github.com/pyric/pyric/sandbox/service"
	"github.com/pyric/pyric/server/messaging/messagingtest"
)

// adminClient is firebase-admin-go's messaging client pointed at s.
func adminClient(t *testing.T, s *messagingtest.Server, projectID string) *fcm.Client {
	return newAdminClient(t, s, projectID)
}

func adminClientB(b *testing.B, s *messagingtest.Server) *fcm.Client {
	return newAdminClient(b, s, project)
}

func newAdminClient(t testing.TB, s *messagingtest.Server, projectID string) *fcm.Client {
	t.Helper()
	ctx := context.Background()
	app, err := firebase.NewApp(ctx, &firebase.Config{ProjectID: projectID}, s.ClientOption(t))
	if err != nil {
		t.Fatal(err)
	}
	c, err := app.Messaging(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mintIn(t *testing.T, s *messagingtest.Server, projectID string, p messaging.Platform) string {
	t.Helper()
	tok, err := s.Engine.MintToken(admin, projectID, messaging.MintRequest{Platform: p})
	if err != nil {
		t.Fatal(err)
	}
	return tok.Token
}

func TestAdminSDKSend(t *testing.T) {
	t.Parallel()
	s := messagingtest.Start(t, service.Env{Project: project}, messaging.Options{})
	c := adminClient(t, s, project)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	web := mintIn(t, s, project, messaging.PlatformWeb)
	android := mintIn(t, s, project, messaging.PlatformAndroid)

	ttl := 3500 * time.Millisecond
	name, err := c.Send(ctx, &fcm.Message{
		Token:        android,
		Data:         map[string]string{"k": "v"},
		Notification: &fcm.Notification{Title: "Hello", Body: "World", ImageURL: "https://example.com/i.png"},
		Android: &fcm.AndroidConfig{Priority: "high", TTL: &ttl, CollapseKey: "ck", Notification: &fcm.AndroidNotification{
			Color: "#ff0000", ChannelID: "ch", Priority: fcm.PriorityHigh, Visibility: fcm.VisibilityPublic,
			VibrateTimingMillis: []int64{100, 200}, EventTimestamp: &time.Time{},
			LightSettings: &fcm.LightSettings{Color: "#00ff00", LightOnDurationMillis: 100, LightOffDurationMillis: 200},
		}},
		APNS: &fcm.APNSConfig{Headers: map[string]string{"apns-priority": "10"}, Payload: &fcm.APNSPayload{Aps: &fcm.Aps{
			AlertString: "hi", Badge: intPtr(1), CriticalSound: &fcm.CriticalSound{Critical: true, Name: "s", Volume: 0.5},
		}}},
		Webpush: &fcm.WebpushConfig{Headers: map[string]string{"TTL": "60"}, Notification: &fcm.WebpushNotification{Title: "W", Direction: "ltr"},
			FCMOptions: &fcm.WebpushFCMOptions{Link: "https://example.com/open"}},
		FCMOptions: &fcm.FCMOptions{AnalyticsLabel: "label"},
	})
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	if !strings.HasPrefix(name, "projects/demo-project/messages/") {
		t.Fatalf("name %q", name)
	}
	in, err := s.Engine.Inbox(project, android)
	if err != nil || len(in) != 1 || in[0].Name != name {
		t.Fatalf("inbox: %v %v", in, err)
	}
	got := in[0].Message.Android
	if got.TTL != "3.500s" || got.Priority != "HIGH" || got.Notification.NotificationPriority != "PRIORITY_HIGH" ||
		got.Notification.LightSettings.LightOnDuration != "0.100s" || in[0].Payload.Notification["title"] != "Hello" {
		t.Fatalf("delivered android config: %+v %+v", got, got.Notification)
	}

	// Dry run: a name, no delivery.
	if name, err := c.SendDryRun(ctx, &fcm.Message{Token: web, Data: map[string]string{"a": "b"}}); err != nil || name == "" {
		t.Fatalf("SendDryRun: %q %v", name, err)
	}
	if in, _ := s.Engine.Inbox(project, web); len(in) != 0 {
		t.Fatal("dry run delivered")
	}

	// Every production error code the engine produces, through the SDK's
	// own predicates.
	tooBig := strings.Repeat("x", 5000)
	if _, err := c.Send(ctx, &fcm.Message{Token: "not-a-registered-token"}); !fcm.IsInvalidArgument(err) {
		t.Errorf("invalid token: %v", err)
	}
	if _, err := c.Send(ctx, &fcm.Message{Token: web, Data: map[string]string{"k": tooBig}}); !fcm.IsInvalidArgument(err) || !strings.Contains(err.Error(), "too big") {
		t.Errorf("too big: %v", err)
	}
	if _, err := c.Send(ctx, &fcm.Message{Condition: "'a' in topics &&"}); !fcm.IsInvalidArgument(err) {
		t.Errorf("dangling condition: %v", err)
	}
	if _, err := c.Send(ctx, &fcm.Message{Topic: "a", Data: map[string]string{"from": "x"}}); !fcm.IsInvalidArgument(err) {
		t.Errorf("reserved key: %v", err)
	}
	if _, err := c.Send(ctx, &fcm.Message{Topic: "a", Webpush: &fcm.WebpushConfig{Headers: map[string]string{"TTL": "soon"}}}); !fcm.IsInvalidArgument(err) {
		t.Errorf("webpush TTL: %v", err)
	}
	foreign := mintIn(t, s, "other-project", messaging.PlatformWeb)
	if _, err := c.Send(ctx, &fcm.Message{Token: foreign}); !fcm.IsSenderIDMismatch(err) {
		t.Errorf("foreign token: %v", err)
	}
	if err := s.Engine.DeleteToken(admin, project, web); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Send(ctx, &fcm.Message{Token: web}); !fcm.IsUnregistered(err) {
		t.Errorf("deleted token: %v", err)
	}
	limited := mintIn(t, s, project, messaging.PlatformAndroid)
	// The rate counts in fixed clock minutes: sends that straddle a
	// minute's turn start the count again, and the next minute must
	// still refuse its 241st, so up to two windows' worth are sent.
	var quotaErr error
	for range 2 * 241 {
		if _, quotaErr = c.Send(ctx, &fcm.Message{Token: limited}); quotaErr != nil {
			break
		}
	}
	if !fcm.IsQuotaExceeded(quotaErr) {
		t.Errorf("241 messages a minute to one Android device: %v", quotaErr)
	}
}

func intPtr(i int) *int { return &i }

func TestAdminSDKSendEachAndMulticast(t *testing.T) {
	t.Parallel()
	s := messagingtest.Start(t, service.Env{Project: project}, messaging.Options{})
	c := adminClient(t, s, project)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, b := mintIn(t, s, project, messaging.PlatformWeb), mintIn(t, s, project, messaging.PlatformIOS)
	dead := mintIn(t, s, project, messaging.PlatformWeb)
	s.Engine.DeleteToken(admin, project, dead)

	br, err := c.SendEach(ctx, []*fcm.Message{
		{Token: a, Data: map[string]string{"n": "1"}},
		{Token: "garbage"},
		{Topic: "news"},
		{Token: dead},
		{Condition: "'x' in topics || 'y' in topics"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if br.SuccessCount != 3 || br.FailureCount != 2 || !br.Responses[0].Success || !fcm.IsInvalidArgument(br.Responses[1].Error) ||
		!br.Responses[2].Success || !fcm.IsUnregistered(br.Responses[3].Error) || !br.Responses[4].Success {
		t.Fatalf("SendEach: %+v", br)
	}
	for _, r := range br.Responses {
		if r.Success && !strings.HasPrefix(r.MessageID, "projects/demo-project/messages/") {
			t.Fatalf("message id %q", r.MessageID)
		}
	}

	mr, err := c.SendEachForMulticast(ctx, &fcm.MulticastMessage{Tokens: []string{a, b, dead, "bad"}, Notification: &fcm.Notification{Title: "all"}})
	if err != nil {
		t.Fatal(err)
	}
	if mr.SuccessCount != 2 || !mr.Responses[0].Success || !mr.Responses[1].Success || !fcm.IsUnregistered(mr.Responses[2].Error) || !fcm.IsInvalidArgument(mr.Responses[3].Error) {
		t.Fatalf("SendEachForMulticast: %+v", mr)
	}
	for _, tok := range []string{a, b} {
		in, _ := s.Engine.Inbox(project, tok)
		if len(in) == 0 || in[len(in)-1].Payload.Notification["title"] != "all" {
			t.Fatalf("multicast not in %s's inbox: %+v", tok, in)
		}
	}
	dr, err := c.SendEachForMulticastDryRun(ctx, &fcm.MulticastMessage{Tokens: []string{a, b}})
	if err != nil || dr.SuccessCount != 2 {
		t.Fatalf("dry-run multicast: %+v %v", dr, err)
	}

	// The deprecated SendAll uses the legacy multipart batch endpoint.
	all, err := c.SendAll(ctx, []*fcm.Message{{Token: a}, {Token: "bad"}}) //nolint:staticcheck // the legacy path is part of the surface
	if err != nil {
		t.Fatal(err)
	}
	if all.SuccessCount != 1 || !fcm.IsInvalidArgument(all.Responses[1].Error) {
		t.Fatalf("SendAll: %+v", all)
	}
}

func TestAdminSDKTopics(t *testing.T) {
	t.Parallel()
	s := messagingtest.Start(t, service.Env{Project: project}, messaging.Options{})
	c := adminClient(t, s, project)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, b := mintIn(t, s, project, messaging.PlatformWeb), mintIn(t, s, project, messaging.PlatformAndroid)
	dead := mintIn(t, s, project, messaging.PlatformWeb)
	s.Engine.DeleteToken(admin, project, dead)

	r, err := c.SubscribeToTopic(ctx, []string{a, b, dead, "garbage"}, "news")
	if err != nil {
		t.Fatal(err)
	}
	if r.SuccessCount != 2 || r.FailureCount != 2 || r.Errors[0].Index != 2 || r.Errors[0].Reason != "NOT_FOUND" || r.Errors[1].Reason != "INVALID_ARGUMENT" {
		t.Fatalf("SubscribeToTopic: %+v %+v", r, r.Errors)
	}
	if _, err := c.SubscribeToTopic(ctx, []string{a}, "/topics/sports"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Send(ctx, &fcm.Message{Topic: "news", Data: map[string]string{"n": "1"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Send(ctx, &fcm.Message{Condition: "'news' in topics && 'sports' in topics"}); err != nil {
		t.Fatal(err)
	}
	r, err = c.UnsubscribeFromTopic(ctx, []string{b}, "news")
	if err != nil || r.SuccessCount != 1 {
		t.Fatalf("UnsubscribeFromTopic: %+v %v", r, err)
	}
	if _, err := c.Send(ctx, &fcm.Message{Topic: "/topics/news"}); err != nil { // the SDK strips the prefix
		t.Fatal(err)
	}
	inA, _ := s.Engine.Inbox(project, a)
	inB, _ := s.Engine.Inbox(project, b)
	if len(inA) != 3 || len(inB) != 1 || inA[1].Via["condition"] == nil {
		t.Fatalf("inboxes: a=%d b=%d", len(inA), len(inB))
	}
	// The instance-id service's own error for a request it rejects.
	if _, err := c.SubscribeToTopic(ctx, make([]string, 0), "news"); err == nil {
		t.Fatal("no tokens accepted")
	}
}
