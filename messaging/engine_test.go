package messaging

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pyric/pyric/event"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/sandbox/service"
	"github.com/pyric/pyric/sandbox/service/servicetest"
)

const project = "demo-project"

var admin = identity.AdminIdentity()

type recorder struct {
	mu     sync.Mutex
	events []event.Event
}

func (r *recorder) Emit(e event.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) ops() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.events {
		s := e.Method
		if e.Request != nil {
			s += ":" + string(e.Request.Verdict)
		}
		out = append(out, s)
	}
	return out
}

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

type fixture struct {
	eng    *Engine
	bucket *servicetest.Bucket
	events *recorder
	clock  *fakeClock
	env    service.Env
}

func newFixture(t testing.TB, opts Options) *fixture {
	t.Helper()
	f := &fixture{bucket: servicetest.NewBucket(), events: &recorder{}, clock: &fakeClock{t: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}}
	var n int
	var mu sync.Mutex
	f.env = service.Env{Project: project, Now: f.clock.Now, Events: f.events, Bucket: f.bucket,
		NewID: func() string { mu.Lock(); defer mu.Unlock(); n++; return fmt.Sprintf("%020d", n) }}
	eng, err := NewEngine(f.env, opts)
	if err != nil {
		t.Fatal(err)
	}
	f.eng = eng
	return f
}

func (f *fixture) mint(t testing.TB, p Platform) string {
	t.Helper()
	tok, err := f.eng.MintToken(admin, project, MintRequest{Platform: p})
	if err != nil {
		t.Fatal(err)
	}
	return tok.Token
}

// send decodes body as the wire would and sends it.
func (f *fixture) send(body string) (string, error) {
	req, err := DecodeSendRequest([]byte(body))
	if err != nil {
		return "", err
	}
	return f.eng.Send(admin, project, req)
}

func TestTokenShape(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	seen := map[string]bool{}
	for range 50 {
		tok := f.mint(t, PlatformWeb)
		id, rest, ok := strings.Cut(tok, ":")
		if len(tok) != 142 || !ok || len(id) != 22 || !strings.HasPrefix(rest, "APA91b") || !wellFormedToken(tok) {
			t.Fatalf("token %q does not have production's shape", tok)
		}
		if seen[tok] {
			t.Fatalf("token %q minted twice", tok)
		}
		seen[tok] = true
	}
	// Stable per app instance, as getToken on one service-worker
	// registration is.
	a, _ := f.eng.MintToken(admin, project, MintRequest{Instance: "sw-1"})
	b, _ := f.eng.MintToken(admin, project, MintRequest{Instance: "sw-1"})
	c, _ := f.eng.MintToken(admin, project, MintRequest{Instance: "sw-2"})
	if a.Token != b.Token || a.Token == c.Token {
		t.Fatalf("instance tokens: %s %s %s", a.Token, b.Token, c.Token)
	}
	// After deleteToken the instance gets a new token.
	if err := f.eng.DeleteToken(admin, project, a.Token); err != nil {
		t.Fatal(err)
	}
	d, _ := f.eng.MintToken(admin, project, MintRequest{Instance: "sw-1"})
	if d.Token == a.Token {
		t.Fatal("a deleted token was handed out again")
	}
	// A deterministic sandbox mints the same tokens.
	g := newFixture(t, Options{})
	if f2, g2 := newFixture(t, Options{}).mint(t, PlatformWeb), g.mint(t, PlatformWeb); f2 != g2 {
		t.Fatalf("minting is not deterministic: %s vs %s", f2, g2)
	}
}

func TestMintErrors(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{MaxTokens: 2})
	if _, err := f.eng.MintToken(admin, project, MintRequest{Platform: "blackberry"}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("bad platform: %v", err)
	}
	if _, err := f.eng.MintToken(admin, project, MintRequest{Token: "has space"}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("bad token: %v", err)
	}
	fixed, err := f.eng.MintToken(admin, project, MintRequest{Token: "fixed-token:1"})
	if err != nil || fixed.Token != "fixed-token:1" {
		t.Fatalf("fixed token: %v %v", fixed, err)
	}
	if _, err := f.eng.MintToken(admin, "other", MintRequest{Token: "fixed-token:1"}); !errors.Is(err, ErrPermissionDenied) {
		t.Fatalf("fixed token of another project: %v", err)
	}
	f.mint(t, PlatformWeb)
	if _, err := f.eng.MintToken(admin, project, MintRequest{}); !errors.Is(err, ErrResourceExhausted) {
		t.Fatalf("over the token cap: %v", err)
	}
	if err := f.eng.DeleteToken(admin, project, "nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("delete unknown: %v", err)
	}
}

// wantErr describes the envelope a send must fail with.
type wantErr struct {
	http    int
	status  string
	fcm     string
	field   string // first field violation ("-" for no BadRequest detail)
	message string // substring of the message or the violation
}

func checkErr(t *testing.T, name string, err error, w wantErr) {
	t.Helper()
	var me *Error
	if !errors.As(err, &me) {
		t.Errorf("%s: error %v (%T), want *Error", name, err, err)
		return
	}
	if me.HTTP() != w.http || me.Status() != w.status || me.FcmCode != w.fcm {
		t.Errorf("%s: got %d %s fcm=%q (%s), want %d %s fcm=%q", name, me.HTTP(), me.Status(), me.FcmCode, me.Msg, w.http, w.status, w.fcm)
	}
	text := me.Msg
	for _, v := range me.Violations {
		text += " | " + v.Description
	}
	if !strings.Contains(text, w.message) {
		t.Errorf("%s: message %q does not contain %q", name, text, w.message)
	}
	switch {
	case w.field == "-":
		if me.BadRequest {
			t.Errorf("%s: unexpected BadRequest %v", name, me.Violations)
		}
	case w.field == "root":
		if len(me.Violations) != 1 || me.Violations[0].Field != "" {
			t.Errorf("%s: violations %v, want one without a field", name, me.Violations)
		}
	case w.field == "":
		if !me.BadRequest || len(me.Violations) != 0 {
			t.Errorf("%s: want an empty BadRequest, got %v %v", name, me.BadRequest, me.Violations)
		}
	default:
		if len(me.Violations) == 0 || me.Violations[0].Field != w.field {
			t.Errorf("%s: violations %v, want field %q", name, me.Violations, w.field)
		}
	}
}

func invalid(field, msg string) wantErr {
	return wantErr{400, "INVALID_ARGUMENT", FcmInvalidArgument, field, msg}
}

func badJSON(field, msg string) wantErr { return wantErr{400, "INVALID_ARGUMENT", "", field, msg} }

func TestSendValidation(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	web := f.mint(t, PlatformWeb)
	android := f.mint(t, PlatformAndroid)
	ios := f.mint(t, PlatformIOS)
	tok := func(s string) string { return strings.ReplaceAll(s, "TOKEN", web) }
	big := strings.Repeat("x", 4100)
	tests := []struct {
		name string
		body string
		want wantErr
	}{
		{"syntax", `{"message": {`, badJSON("root", "Invalid JSON payload received.")},
		{"root not object", `[1]`, badJSON("root", "Root element must be a message")},
		{"trailing data", `{} {}`, badJSON("root", "unexpected data after")},
		{"unknown top-level", `{"mesage": {}}`, badJSON("root", `Unknown name "mesage": Cannot find field.`)},
		{"unknown field", `{"message": {"topic": "a", "priority": "high"}}`, badJSON("message", `Unknown name "priority" at 'message': Cannot find field.`)},
		{"unknown nested", `{"message": {"topic": "a", "android": {"foo": 1}}}`, badJSON("message.android", `Unknown name "foo" at 'message.android'`)},
		{"two targets", `{"message": {"token": "x", "topic": "a"}}`, badJSON("message", "oneof field 'target' is already set. Cannot set 'topic'")},
		{"three targets", `{"message": {"condition": "'a' in topics", "topic": "a", "token": "x"}}`, badJSON("message", "Cannot set 'topic'")},
		{"token not string", `{"message": {"token": 5}}`, badJSON("message.token", "Invalid value at 'message.token' (TYPE_STRING), 5")},
		{"data value not string", `{"message": {"topic": "a", "data": {"k": "v", "n": 1}}}`, badJSON("message.data[1].value", "Invalid value at 'message.data[1].value' (TYPE_STRING), 1")},
		{"data not object", `{"message": {"topic": "a", "data": "x"}}`, badJSON("message.data", "Message.DataEntry")},
		{"validate_only not bool", `{"validate_only": "yes", "message": {"topic": "a"}}`, badJSON("validate_only", "(TYPE_BOOL)")},
		{"priority enum", `{"message": {"topic": "a", "android": {"priority": "urgent"}}}`, badJSON("message.android.priority", "google.firebase.fcm.v1.AndroidMessagePriority), \"urgent\"")},
		{"android not object", `{"message": {"topic": "a", "android": "x"}}`, badJSON("message.android", "(type.googleapis.com/google.firebase.fcm.v1.AndroidConfig)")},
		{"ttl without s", `{"message": {"topic": "a", "android": {"ttl": "3.5"}}}`, badJSON("message.android.ttl", "Illegal duration format; duration must end with 's'")},
		{"ttl garbage", `{"message": {"topic": "a", "android": {"ttl": "abcs"}}}`, badJSON("message.android.ttl", "failed to parse seconds")},
		{"ttl nanos", `{"message": {"topic": "a", "android": {"ttl": "1.0000000001s"}}}`, badJSON("message.android.ttl", "failed to parse nano seconds")},
		{"ttl number", `{"message": {"topic": "a", "android": {"ttl": 30}}}`, badJSON("message.android.ttl", "google.protobuf.Duration), 30")},
		{"ttl negative", `{"message": {"topic": "a", "android": {"ttl": "-1s"}}}`, invalid("message.android.ttl", "must not be negative")},
		{"ttl over four weeks", `{"message": {"topic": "a", "android": {"ttl": "2419201s"}}}`, invalid("message.android.ttl", "exceeds the maximum of 2419200s")},
		{"event_time", `{"message": {"topic": "a", "android": {"notification": {"event_time": "yesterday"}}}}`, badJSON("message.android.notification.event_time", "Invalid time format")},
		{"notification_count", `{"message": {"topic": "a", "android": {"notification": {"notification_count": 1.5}}}}`, badJSON("message.android.notification.notification_count", "(TYPE_INT32)")},
		{"loc args not array", `{"message": {"topic": "a", "android": {"notification": {"body_loc_args": "x"}}}}`, badJSON("message.android.notification.body_loc_args", "(TYPE_STRING)")},
		{"vibrate timing", `{"message": {"topic": "a", "android": {"notification": {"vibrate_timings": ["1s", "x"]}}}}`, badJSON("message.android.notification.vibrate_timings[1]", "duration must end with 's'")},
		{"webpush notification not object", `{"message": {"topic": "a", "webpush": {"notification": []}}}`, badJSON("message.webpush.notification", "google.protobuf.Struct")},

		{"no target", `{"message": {"notification": {"title": "t"}}}`, invalid("message", "Recipient of the message is not set.")},
		{"empty body", `{}`, invalid("message", "Recipient of the message is not set.")},
		{"empty token", `{"message": {"token": ""}}`, invalid("message", "Recipient of the message is not set.")},
		{"invalid token", `{"message": {"token": "not-a-token"}}`, invalid("message.token", "The registration token is not a valid FCM registration token")},
		{"token from another sender", `{"message": {"token": "OTHER"}}`, wantErr{403, "PERMISSION_DENIED", FcmSenderIDMismatch, "-", "SenderId mismatch"}},
		{"topic syntax", `{"message": {"topic": "bad topic"}}`, invalid("message.topic", `Invalid topic name "bad topic"`)},
		{"topic prefix", `{"message": {"topic": "/topics/news"}}`, invalid("message.topic", "without the /topics/ prefix")},
		{"topic too long", `{"message": {"topic": "` + strings.Repeat("a", 901) + `"}}`, invalid("message.topic", "Invalid topic name")},
		{"condition dangling", `{"message": {"condition": "'a' in topics &&"}}`, invalid("message.condition", "Invalid condition expression provided.")},
		{"condition six topics", `{"message": {"condition": "'a' in topics || 'b' in topics || 'c' in topics || 'd' in topics || 'e' in topics || 'f' in topics"}}`, invalid("message.condition", "Invalid condition expression provided.")},
		{"reserved data key from", `{"message": {"topic": "a", "data": {"from": "x"}}}`, invalid("message.data", "Invalid data payload key: from")},
		{"reserved data key google", `{"message": {"topic": "a", "data": {"google.x": "x"}}}`, invalid("message.data", "Invalid data payload key: google.x")},
		{"reserved android data key", `{"message": {"topic": "a", "android": {"data": {"message_type": "x"}}}}`, invalid("message.android.data", "Invalid data payload key: message_type")},
		{"reserved webpush data key", `{"message": {"topic": "a", "webpush": {"data": {"gcm.notification.x": "x"}}}}`, invalid("message.webpush.data", "Invalid data payload key: gcm.notification.x")},
		{"notification image", `{"message": {"topic": "a", "notification": {"image": "not a url"}}}`, invalid("message.notification.image", "Invalid URL")},
		{"android color", `{"message": {"topic": "a", "android": {"notification": {"color": "red"}}}}`, invalid("message.android.notification.color", "#rrggbb")},
		{"title loc args", `{"message": {"topic": "a", "android": {"notification": {"title_loc_args": ["x"]}}}}`, invalid("message.android.notification.title_loc_key", "required")},
		{"body loc args", `{"message": {"topic": "a", "android": {"notification": {"bodyLocArgs": ["x"]}}}}`, invalid("message.android.notification.body_loc_key", "required")},
		{"android image", `{"message": {"topic": "a", "android": {"notification": {"image": "ftp://x/y"}}}}`, invalid("message.android.notification.image", "Invalid URL")},
		{"negative vibrate", `{"message": {"topic": "a", "android": {"notification": {"vibrate_timings": ["-1s"]}}}}`, invalid("message.android.notification.vibrate_timings[0]", "negative")},
		{"negative count", `{"message": {"topic": "a", "android": {"notification": {"notification_count": -1}}}}`, invalid("message.android.notification.notification_count", "negative")},
		{"light settings color", `{"message": {"topic": "a", "android": {"notification": {"light_settings": {"light_on_duration": "1s", "light_off_duration": "1s"}}}}}`, invalid("message.android.notification.light_settings.color", "required")},
		{"light settings duration", `{"message": {"topic": "a", "android": {"notification": {"light_settings": {"color": {"red": 1}, "light_on_duration": "1s"}}}}}`, invalid("message.android.notification.light_settings.light_off_duration", "required")},
		{"light settings channel", `{"message": {"topic": "a", "android": {"notification": {"light_settings": {"color": {"red": 2}, "light_on_duration": "1s", "light_off_duration": "1s"}}}}}`, invalid("message.android.notification.light_settings.color.red", "[0, 1]")},
		{"webpush ttl", `{"message": {"topic": "a", "webpush": {"headers": {"TTL": "soon"}}}}`, invalid("message.webpush.headers", `Invalid TTL header "soon"`)},
		{"webpush urgency", `{"message": {"topic": "a", "webpush": {"headers": {"Urgency": "now"}}}}`, invalid("message.webpush.headers", "Urgency")},
		{"webpush link http", `{"message": {"topic": "a", "webpush": {"fcm_options": {"link": "http://example.com"}}}}`, invalid("message.webpush.fcm_options.link", "HTTPS is required")},
		{"webpush link garbage", `{"message": {"topic": "a", "webpush": {"fcmOptions": {"link": "nope"}}}}`, invalid("message.webpush.fcm_options.link", "Invalid URL")},
		{"webpush dir", `{"message": {"topic": "a", "webpush": {"notification": {"dir": "up"}}}}`, invalid("message.webpush.notification", "Invalid dir")},
		{"webpush title type", `{"message": {"topic": "a", "webpush": {"notification": {"title": 1}}}}`, invalid("message.webpush.notification", "Invalid title")},
		{"apns priority", `{"message": {"topic": "a", "apns": {"headers": {"apns-priority": "7"}}}}`, invalid("message.apns.headers", "apns-priority")},
		{"apns expiration", `{"message": {"topic": "a", "apns": {"headers": {"apns-expiration": "later"}}}}`, invalid("message.apns.headers", "apns-expiration")},
		{"apns push type", `{"message": {"topic": "a", "apns": {"headers": {"apns-push-type": "fax"}}}}`, invalid("message.apns.headers", "apns-push-type")},
		{"aps not dict", `{"message": {"topic": "a", "apns": {"payload": {"aps": 1}}}}`, invalid("message.apns.payload", "aps must be a dictionary")},
		{"aps alert", `{"message": {"topic": "a", "apns": {"payload": {"aps": {"alert": 1}}}}}`, invalid("message.apns.payload", "aps.alert")},
		{"aps badge", `{"message": {"topic": "a", "apns": {"payload": {"aps": {"badge": -1}}}}}`, invalid("message.apns.payload", "aps.badge")},
		{"aps content-available", `{"message": {"topic": "a", "apns": {"payload": {"aps": {"content-available": true}}}}}`, invalid("message.apns.payload", "content-available")},
		{"critical sound name", `{"message": {"topic": "a", "apns": {"payload": {"aps": {"sound": {"critical": 1}}}}}}`, invalid("message.apns.payload", "aps.sound.name is required")},
		{"critical sound volume", `{"message": {"topic": "a", "apns": {"payload": {"aps": {"sound": {"name": "s", "volume": 1.5}}}}}}`, invalid("message.apns.payload", "volume")},
		{"apns image", `{"message": {"topic": "a", "apns": {"fcm_options": {"image": "x"}}}}`, invalid("message.apns.fcm_options.image", "Invalid URL")},
		{"too big android token", `{"message": {"token": "ANDROID", "data": {"k": "` + big + `"}}}`, invalid("", "Android message is too big")},
		{"too big web token", `{"message": {"token": "TOKEN", "data": {"k": "` + big + `"}}}`, invalid("", "Web push message is too big")},
		{"too big ios token", `{"message": {"token": "IOS", "apns": {"payload": {"x": "` + big + `"}}}}`, invalid("", "APNs message is too big")},
		{"too big topic", `{"message": {"topic": "a", "notification": {"body": "` + big + `"}}}`, invalid("", "Android message is too big")},
	}
	other, err := f.eng.MintToken(admin, "other-project", MintRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		body := tok(strings.NewReplacer("OTHER", other.Token, "ANDROID", android, "IOS", ios).Replace(tc.body))
		_, err := f.send(body)
		checkErr(t, tc.name, err, tc.want)
	}
	if n := len(f.eng.Messages(project)); n != 0 {
		t.Fatalf("%d messages stored by failed sends", n)
	}
}

func TestSendAccepted(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	web := f.mint(t, PlatformWeb)
	android := f.mint(t, PlatformAndroid)
	almost := strings.Repeat("x", 4096-1)
	for _, body := range []string{
		`{"message": {"token": "WEB", "notification": {"title": "t", "body": "b"}}}`,
		`{"message": {"token": "WEB", "data": {"k": "v"}}}`,
		`{"message": {"topic": "news"}}`,
		`{"message": {"condition": "'a' in topics && 'b' in topics"}}`,
		`{"message": {"condition": "\"a\" in topics || !('b' in topics)"}}`,
		`{"validateOnly": true, "message": {"topic": "news"}}`,
		`{"message": {"token": "WEB", "webpush": {"headers": {"TTL": "15", "Urgency": "high"}, "notification": {"title": "w", "dir": "rtl", "timestamp": 5, "requireInteraction": true}, "fcm_options": {"link": "https://example.com/x"}}}}`,
		`{"message": {"token": "ANDROID", "android": {"priority": "high", "ttl": "3.5s", "collapse_key": "c", "notification": {"color": "#a0b0C0", "notification_priority": "priority_max", "visibility": "PUBLIC", "vibrate_timings": ["0.5s", "1s"], "event_time": "2026-01-02T03:04:05Z", "light_settings": {"color": {"red": 1, "green": 0.5, "blue": 0, "alpha": 1}, "light_on_duration": "0.1s", "light_off_duration": "1s"}, "title_loc_key": "k", "title_loc_args": ["a"], "notification_count": 3}}}}`,
		`{"message": {"topic": "a", "apns": {"headers": {"apns-priority": "5", "apns-expiration": "0"}, "payload": {"aps": {"alert": {"title": "t"}, "badge": 2, "sound": {"critical": 1, "name": "s", "volume": 0.5}, "content-available": 1}, "custom": {"x": 1}}, "fcm_options": {"image": "https://example.com/i.png"}}}}`,
		`{"message": {"token": "ANDROID", "data": {"k": "` + almost + `"}}}`,
		`{"message": {"token": null, "topic": "a", "data": null}}`,
		`{"message": {"topic": "a", "android": {"ttl": "0s"}}}`,
		`{"message": {"topic": "a", "android": {"ttl": "2419200s"}}}`,
	} {
		body = strings.NewReplacer("WEB", web, "ANDROID", android).Replace(body)
		name, err := f.send(body)
		if err != nil {
			t.Errorf("send %s: %v", body[:min(len(body), 120)], err)
			continue
		}
		if !strings.HasPrefix(name, "projects/"+project+"/messages/") || strings.Trim(name[len("projects/"+project+"/messages/"):], "0123456789") != "" {
			t.Errorf("name %q is not projects/<p>/messages/<numeric id>", name)
		}
	}
	// validateOnly stored nothing; every other send is in the log.
	if n := len(f.eng.Messages(project)); n != 12 {
		t.Fatalf("stored %d messages, want 12", n)
	}
	// Canonical forms: enums upper-case, durations canonical.
	in, _ := f.eng.Inbox(project, android)
	var found bool
	for _, d := range in {
		if a := d.Message.Android; a != nil && a.Notification != nil {
			found = true
			if a.Priority != "HIGH" || a.TTL != "3.500s" || a.Notification.NotificationPriority != "PRIORITY_MAX" || a.Notification.VibrateTimings[0] != "0.500s" {
				t.Errorf("canonical android config: %+v %+v", a, a.Notification)
			}
		}
	}
	if !found {
		t.Fatal("android message missing from the inbox")
	}
}

func TestUnregisteredAfterDelete(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	tok := f.mint(t, PlatformWeb)
	if _, err := f.eng.Subscribe(admin, "/topics/news", []string{tok}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.send(`{"message": {"token": "` + tok + `"}}`); err != nil {
		t.Fatal(err)
	}
	if err := f.eng.DeleteToken(admin, project, tok); err != nil {
		t.Fatal(err)
	}
	_, err := f.send(`{"message": {"token": "` + tok + `"}}`)
	checkErr(t, "deleted", err, wantErr{404, "NOT_FOUND", FcmUnregistered, "-", "Requested entity was not found."})
	_, err = f.send(`{"validate_only": true, "message": {"token": "` + tok + `"}}`)
	checkErr(t, "deleted dry run", err, wantErr{404, "NOT_FOUND", FcmUnregistered, "-", "Requested entity was not found."})
	// A deleted token left its topics: a topic send reaches nobody.
	if _, err := f.send(`{"message": {"topic": "news"}}`); err != nil {
		t.Fatal(err)
	}
	msgs := f.eng.Messages(project)
	if len(msgs[len(msgs)-1].Tokens) != 0 {
		t.Fatalf("topic send reached %v", msgs[len(msgs)-1].Tokens)
	}
	res, err := f.eng.Subscribe(admin, "news", []string{tok})
	if err != nil || res[0].Error != "NOT_FOUND" {
		t.Fatalf("subscribe a deleted token: %v %v", res, err)
	}
	// The inbox keeps what arrived before deletion.
	in, err := f.eng.Inbox(project, tok)
	if err != nil || len(in) != 1 {
		t.Fatalf("inbox of a deleted token: %v %v", in, err)
	}
}

// conformance: messaging.send.topic-condition
func TestTopicsAndConditionsFanOut(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	a, b, c := f.mint(t, PlatformWeb), f.mint(t, PlatformAndroid), f.mint(t, PlatformIOS)
	sub := func(topic string, toks ...string) {
		t.Helper()
		res, err := f.eng.Subscribe(admin, topic, toks)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range res {
			if r.Error != "" {
				t.Fatalf("subscribe %s[%d]: %s", topic, i, r.Error)
			}
		}
	}
	sub("/topics/x", a, b)
	sub("y", b, c)
	sub("z", a, b, c, a) // duplicates are fine
	res, err := f.eng.Subscribe(admin, "x", []string{"garbage", a})
	if err != nil || res[0].Error != "INVALID_ARGUMENT" || res[1].Error != "" {
		t.Fatalf("mixed batch: %v %v", res, err)
	}
	if _, err := f.eng.Unsubscribe(admin, "/topics/z", []string{c}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		body string
		want []string
	}{
		{`{"message": {"topic": "x"}}`, []string{a, b}},
		{`{"message": {"topic": "nobody"}}`, nil},
		{`{"message": {"condition": "'x' in topics && 'y' in topics"}}`, []string{b}},
		{`{"message": {"condition": "'x' in topics || 'y' in topics"}}`, []string{a, b, c}},
		{`{"message": {"condition": "'z' in topics && !('y' in topics)"}}`, []string{a}},
		{`{"message": {"condition": "'y' in topics && ('x' in topics || 'z' in topics)"}}`, []string{b}},
	}
	for _, tc := range cases {
		if _, err := f.send(tc.body); err != nil {
			t.Fatal(err)
		}
		msgs := f.eng.Messages(project)
		got := msgs[len(msgs)-1].Tokens
		if !sameSet(got, tc.want) {
			t.Errorf("%s delivered to %d tokens %v, want %v", tc.body, len(got), got, tc.want)
		}
	}
	tokA, _ := f.eng.Token(project, a)
	if strings.Join(tokA.Topics, ",") != "x,z" {
		t.Fatalf("topics of a: %v", tokA.Topics)
	}
	if _, err := f.eng.Subscribe(admin, "bad topic", []string{a}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("bad topic: %v", err)
	}
	if _, err := f.eng.Subscribe(admin, "x", nil); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("no tokens: %v", err)
	}
	if _, err := f.eng.Subscribe(admin, "x", make([]string, 1001)); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("1001 tokens: %v", err)
	}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	m := map[string]int{}
	for _, x := range a {
		m[x]++
	}
	for _, x := range b {
		m[x]--
	}
	for _, n := range m {
		if n != 0 {
			return false
		}
	}
	return true
}

func TestTooManyTopics(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	// In memory: re-encoding a token with 2000 topics 2000 times is slow
	// under -race and persistence is tested elsewhere.
	f.env.Bucket = nil
	f.eng, _ = NewEngine(f.env, Options{})
	tok := f.mint(t, PlatformWeb)
	for i := range MaxTopicsPerToken {
		if res, err := f.eng.Subscribe(admin, fmt.Sprintf("t%d", i), []string{tok}); err != nil || res[0].Error != "" {
			t.Fatalf("topic %d: %v %v", i, res, err)
		}
	}
	res, err := f.eng.Subscribe(admin, "one-more", []string{tok})
	if err != nil || res[0].Error != "TOO_MANY_TOPICS" {
		t.Fatalf("2001st topic: %v %v", res, err)
	}
	// Resubscribing to a topic it has is not a new topic.
	if res, _ := f.eng.Subscribe(admin, "t0", []string{tok}); res[0].Error != "" {
		t.Fatalf("resubscribe: %v", res)
	}
}

func TestClientPayload(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	web := f.mint(t, PlatformWeb)
	android := f.mint(t, PlatformAndroid)
	f.eng.Subscribe(admin, "n", []string{web, android})
	name, err := f.send(`{"message": {"topic": "n", "data": {"k": "v"}, "notification": {"title": "T", "body": "B"},
		"webpush": {"data": {"w": "1"}, "notification": {"title": "WT"}, "fcm_options": {"link": "https://x.test/"}},
		"android": {"collapse_key": "ck", "notification": {"body": "AB"}}}}`)
	if err != nil {
		t.Fatal(err)
	}
	id := name[strings.LastIndexByte(name, '/')+1:]
	w, _ := f.eng.Inbox(project, web)
	a, _ := f.eng.Inbox(project, android)
	if len(w) != 1 || len(a) != 1 {
		t.Fatalf("inboxes: %d %d", len(w), len(a))
	}
	wp, ap := w[0].Payload, a[0].Payload
	if wp.From != SenderID(project) || wp.MessageID != id || wp.Data["w"] != "1" || wp.Data["k"] != "" ||
		wp.Notification["title"] != "WT" || wp.Notification["body"] != "B" || wp.FcmOptions["link"] != "https://x.test/" {
		t.Errorf("web payload: %+v", wp)
	}
	if ap.Data["k"] != "v" || ap.Notification["title"] != "T" || ap.Notification["body"] != "AB" || ap.CollapseKey != "ck" {
		t.Errorf("android payload: %+v", ap)
	}
	if w[0].Via["topic"] != "n" {
		t.Errorf("via: %v", w[0].Via)
	}
	// Data-only messages carry no notification key.
	f.send(`{"message": {"token": "` + web + `", "data": {"only": "data"}}}`)
	w, _ = f.eng.Inbox(project, web)
	if w[1].Payload.Notification != nil {
		t.Errorf("data-only payload has a notification: %+v", w[1].Payload)
	}
	if len(SenderID("p")) != 12 || SenderID("p") != SenderID("p") || SenderID("p") == SenderID("q") {
		t.Error("sender ids are not stable 12-digit numbers")
	}
}

func TestDeviceRateLimit(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	tok := f.mint(t, PlatformAndroid)
	body := `{"message": {"token": "` + tok + `"}}`
	for i := range deviceRatePerMinute {
		if _, err := f.send(body); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	_, err := f.send(body)
	checkErr(t, "241st in a minute", err, wantErr{429, "RESOURCE_EXHAUSTED", FcmQuotaExceeded, "-", "Quota exceeded"})
	f.clock.Advance(time.Minute)
	if _, err := f.send(body); err != nil {
		t.Fatalf("next minute: %v", err)
	}
	// Web tokens have no per-device limit; NoDeviceRateLimit lifts it.
	g := newFixture(t, Options{NoDeviceRateLimit: true})
	tok = g.mint(t, PlatformAndroid)
	for i := range deviceRatePerMinute + 5 {
		if _, err := g.send(`{"message": {"token": "` + tok + `"}}`); err != nil {
			t.Fatalf("unlimited send %d: %v", i, err)
		}
	}
}

func TestHourlyRateLimit(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	tok := f.mint(t, PlatformAndroid)
	now := f.clock.Now()
	sent := 0
	for m := 0; sent < deviceRatePerHour; m++ {
		for i := 0; i < deviceRatePerMinute && sent < deviceRatePerHour; i++ {
			if !f.eng.allow(tok, now.Add(time.Duration(m)*time.Minute)) {
				t.Fatalf("refused message %d in minute %d", sent, m)
			}
			sent++
		}
	}
	if f.eng.allow(tok, now.Add(21*time.Minute)) {
		t.Fatal("5001st message within the hour allowed")
	}
	if !f.eng.allow(tok, now.Add(61*time.Minute)) {
		t.Fatal("a message an hour later refused")
	}
}

func TestInboxBoundAndClear(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{MaxMessages: 3})
	tok := f.mint(t, PlatformWeb)
	var names []string
	for i := range 5 {
		n, err := f.send(fmt.Sprintf(`{"message": {"token": %q, "data": {"i": "%d"}}}`, tok, i))
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	msgs := f.eng.Messages(project)
	if len(msgs) != 3 || msgs[0].Name != names[2] || msgs[2].Name != names[4] {
		t.Fatalf("kept %d messages", len(msgs))
	}
	// Ids grow even when the clock stands still.
	if names[0] >= names[1] {
		t.Fatalf("ids not increasing: %v", names)
	}
	// The bucket holds exactly what memory holds.
	g, err := NewEngine(f.env, Options{MaxMessages: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Messages(project)) != 3 {
		t.Fatalf("restored %d messages", len(g.Messages(project)))
	}
	if err := f.eng.ClearMessages(admin, project); err != nil {
		t.Fatal(err)
	}
	if in, _ := f.eng.Inbox(project, tok); len(in) != 0 {
		t.Fatalf("inbox after clear: %d", len(in))
	}
	g, _ = NewEngine(f.env, Options{})
	if len(g.Messages(project)) != 0 || len(g.Tokens(project)) != 1 {
		t.Fatal("clear did not persist, or dropped tokens")
	}
	if _, err := f.eng.Inbox(project, "nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("inbox of unknown token: %v", err)
	}
}

func TestTotalMessageBound(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{MaxTotalMessages: 4})
	send := func(p string) {
		t.Helper()
		req, _ := DecodeSendRequest([]byte(`{"message": {"topic": "t"}}`))
		if _, err := f.eng.Send(admin, p, req); err != nil {
			t.Fatal(err)
		}
	}
	send("a")
	send("b")
	send("a")
	send("c")
	send("d") // evicts a's first
	send("e") // evicts b's only
	count := func(e *Engine) string {
		return fmt.Sprint(len(e.Messages("a")), len(e.Messages("b")), len(e.Messages("c")), len(e.Messages("d")), len(e.Messages("e")))
	}
	if got := count(f.eng); got != "1 0 1 1 1" {
		t.Fatalf("messages per project a..e = %s", got)
	}
	g, _ := NewEngine(f.env, Options{MaxTotalMessages: 4})
	if got := count(g); got != "1 0 1 1 1" {
		t.Fatalf("the bucket kept a..e = %s", got)
	}
	// The token registry is bounded across projects too.
	h := newFixture(t, Options{MaxTokens: 2})
	h.eng.MintToken(admin, "p1", MintRequest{})
	h.eng.MintToken(admin, "p2", MintRequest{})
	if _, err := h.eng.MintToken(admin, "p3", MintRequest{}); !errors.Is(err, ErrResourceExhausted) {
		t.Fatalf("third token: %v", err)
	}
}

func TestDeliveryBound(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{MaxDeliveries: 5})
	var toks []string
	for range 3 {
		toks = append(toks, f.mint(t, PlatformWeb))
	}
	f.eng.Subscribe(admin, "all", toks)
	for range 3 {
		if _, err := f.send(`{"message": {"topic": "all"}}`); err != nil {
			t.Fatal(err)
		}
	}
	// 3 deliveries per message, at most 5 kept: only the newest message.
	if n := len(f.eng.Messages(project)); n != 1 {
		t.Fatalf("kept %d messages", n)
	}
	f.send(`{"message": {"token": "` + toks[0] + `"}}`)
	if n := len(f.eng.Messages(project)); n != 2 {
		t.Fatalf("kept %d messages, want 2 (4 deliveries)", n)
	}
	g, _ := NewEngine(f.env, Options{MaxDeliveries: 5})
	if n := len(g.Messages(project)); n != 2 {
		t.Fatalf("the bucket kept %d messages", n)
	}
}

// TestPersistence reopens the engine on its bucket after every kind of
// mutation, as a restart after kill -9 would.
func TestPersistence(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	a := f.mint(t, PlatformWeb)
	b := f.mint(t, PlatformAndroid)
	inst, _ := f.eng.MintToken(admin, project, MintRequest{Instance: "sw"})
	f.eng.Subscribe(admin, "news", []string{a, b})
	f.eng.Unsubscribe(admin, "news", []string{b})
	name, err := f.send(`{"message": {"topic": "news", "data": {"k": "v"}}}`)
	if err != nil {
		t.Fatal(err)
	}
	f.eng.DeleteToken(admin, project, b)

	g, err := NewEngine(f.env, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ta, err := g.Token(project, a)
	if err != nil || strings.Join(ta.Topics, ",") != "news" {
		t.Fatalf("token a after restart: %+v %v", ta, err)
	}
	if tb, _ := g.Token(project, b); !tb.Deleted {
		t.Fatal("deleted token revived")
	}
	if again, _ := g.MintToken(admin, project, MintRequest{Instance: "sw"}); again.Token != inst.Token {
		t.Fatal("instance token not restored")
	}
	in, _ := g.Inbox(project, a)
	if len(in) != 1 || in[0].Name != name || in[0].Payload.Data["k"] != "v" {
		t.Fatalf("inbox after restart: %+v", in)
	}
	// New ids stay above the restored ones.
	n2, err := (&fixture{eng: g}).send(`{"message": {"topic": "news"}}`)
	if err != nil || n2 <= name {
		t.Fatalf("id after restart %q <= %q (%v)", n2, name, err)
	}
	if _, err := (&fixture{eng: g}).send(`{"message": {"token": "` + b + `"}}`); !errors.Is(err, ErrNotFound) {
		t.Fatalf("deleted token after restart: %v", err)
	}
}

// TestPersistFailureChangesNothing: a mutation whose write fails is not
// acknowledged and leaves memory as it was.
func TestPersistFailureChangesNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	a := f.mint(t, PlatformWeb)
	steps := []struct {
		name string
		do   func() error
	}{
		{"mint", func() error { _, err := f.eng.MintToken(admin, project, MintRequest{}); return err }},
		{"subscribe", func() error { _, err := f.eng.Subscribe(admin, "n", []string{a}); return err }},
		{"send", func() error { _, err := f.send(`{"message": {"token": "` + a + `"}}`); return err }},
		{"delete", func() error { return f.eng.DeleteToken(admin, project, a) }},
		{"clear", func() error { return f.eng.ClearMessages(admin, project) }},
		{"restore", func() error { return f.eng.Restore(json.RawMessage(`{"tokens": [], "messages": []}`)) }},
	}
	for _, s := range steps {
		before, _ := f.eng.Snapshot()
		f.bucket.FailNextUpdate()
		if err := s.do(); !errors.Is(err, servicetest.ErrInjected) {
			t.Errorf("%s: error %v, want the bucket's", s.name, err)
		}
		after, _ := f.eng.Snapshot()
		if string(before) != string(after) {
			t.Errorf("%s changed memory although it was not persisted:\n%s\n%s", s.name, before, after)
		}
	}
}

func TestSnapshotRestoreReset(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	a := f.mint(t, PlatformWeb)
	f.eng.Subscribe(admin, "n", []string{a})
	f.send(`{"message": {"topic": "n"}}`)
	snap, err := f.eng.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if err := f.eng.Reset(); err != nil {
		t.Fatal(err)
	}
	if len(f.eng.Tokens(project)) != 0 || len(f.eng.Messages(project)) != 0 {
		t.Fatal("reset kept state")
	}
	if err := f.eng.Restore(snap); err != nil {
		t.Fatal(err)
	}
	again, _ := f.eng.Snapshot()
	if string(again) != string(snap) {
		t.Fatalf("restore is not the snapshot:\n%s\n%s", snap, again)
	}
	// Restore persisted: a reopened engine has the same state.
	g, _ := NewEngine(f.env, Options{})
	if s, _ := g.Snapshot(); string(s) != string(snap) {
		t.Fatalf("restored state not persisted:\n%s\n%s", snap, s)
	}
	for _, bad := range []string{`nope`, `{"tokens": [{"token": ""}]}`, `{"messages": [{"project": "p"}]}`} {
		if err := f.eng.Restore(json.RawMessage(bad)); err == nil {
			t.Errorf("Restore(%s) accepted", bad)
		}
	}
	if s, _ := f.eng.Snapshot(); string(s) != string(snap) {
		t.Fatal("failed restore changed state")
	}
	var svc service.Service = f.eng
	if svc.Name() != "messaging" {
		t.Fatal(svc.Name())
	}
	if _, err := New(service.Env{}); err != nil {
		t.Fatal(err)
	}
}

func TestEvents(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	a := f.mint(t, PlatformWeb)
	f.eng.Subscribe(admin, "n", []string{a})
	f.send(`{"message": {"topic": "n"}}`)
	f.send(`{"message": {"topic": "bad topic"}}`)
	f.eng.Unsubscribe(admin, "n", []string{a})
	f.eng.ClearMessages(admin, project)
	f.eng.DeleteToken(admin, project, a)
	got := strings.Join(f.events.ops(), " ")
	want := "token_mint topic_subscribe messages.send:bypassed message_send messages.send:error topic_unsubscribe messages_clear token_delete"
	if got != want {
		t.Fatalf("events %q, want %q", got, want)
	}
	f.events.mu.Lock()
	defer f.events.mu.Unlock()
	for _, ev := range f.events.events {
		if _, err := json.Marshal(ev); err != nil {
			t.Fatalf("event %s does not encode: %v", ev.Method, err)
		}
	}
	send, delivered := f.events.events[2], f.events.events[3]
	if send.Service != "messaging" || send.Identity.Lens != event.LensAdmin || !strings.HasPrefix(send.Path, "projects/demo-project/messages/") {
		t.Fatalf("send event: %+v", send)
	}
	if cur := delivered.Mutation.Current.(map[string]any); cur["deliveredCount"] != 1 || delivered.Path != send.Path {
		t.Fatalf("delivery event: %+v", delivered.Mutation)
	}
	bad := f.events.events[4]
	if bad.Err == nil || bad.Err.Code != FcmInvalidArgument || !strings.Contains(bad.Err.Message, "message.topic") {
		t.Fatalf("failed send event: %+v", bad.Err)
	}
}

func TestDurations(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"3.5s": "3.500s", "0s": "0s", "1.000000001s": "1.000000001s", "-2.25s": "-2.250s", "10.000120s": "10.000120s", "07s": "7s",
	} {
		d, err := ParseDuration(in)
		if err != nil || FormatDuration(d) != want {
			t.Errorf("ParseDuration(%q) = %v %v, want %s", in, FormatDuration(d), err, want)
		}
	}
	for _, bad := range []string{"", "s", "3", "3.s", ".5s", "1e3s", "+1s", "1.2.3s", "1 s", "315576000001s"} {
		if _, err := ParseDuration(bad); err == nil {
			t.Errorf("ParseDuration(%q) accepted", bad)
		}
	}
}

func TestWatch(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	a, b := f.mint(t, PlatformWeb), f.mint(t, PlatformAndroid)
	f.eng.Subscribe(admin, "n", []string{a, b})
	wa, err := f.eng.Watch(project, a)
	if err != nil {
		t.Fatal(err)
	}
	wb, _ := f.eng.Watch(project, b)
	wa2, _ := f.eng.Watch(project, a)
	name, err := f.send(`{"message": {"topic": "n", "notification": {"title": "T"}, "webpush": {"notification": {"title": "W"}}}}`)
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range []*Watcher{wa, wb, wa2} {
		select {
		case d := <-w.C:
			if d.Name != name {
				t.Fatalf("watcher %d got %s", i, d.Name)
			}
			want := map[int]string{0: "W", 1: "T", 2: "W"}[i]
			if d.Payload.Notification["title"] != want {
				t.Fatalf("watcher %d payload %+v", i, d.Payload)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("watcher %d got nothing", i)
		}
	}
	// A dry run and a failed send deliver nothing.
	f.send(`{"validate_only": true, "message": {"token": "` + a + `"}}`)
	f.send(`{"message": {"token": "` + a + `", "data": {"from": "x"}}}`)
	select {
	case d := <-wa.C:
		t.Fatalf("unexpected delivery %+v", d)
	default:
	}
	// A watcher that falls behind misses messages instead of blocking.
	for range watchBuffer + 3 {
		if _, err := f.send(`{"message": {"token": "` + b + `"}}`); err != nil {
			t.Fatal(err)
		}
	}
	if wb.Dropped() != 3 {
		t.Fatalf("dropped %d, want 3", wb.Dropped())
	}
	// deleteToken ends the token's watchers; Reset ends the rest.
	f.eng.DeleteToken(admin, project, a)
	for range wa.C {
	}
	for range wa2.C {
	}
	if _, err := f.eng.Watch(project, a); !errors.Is(err, ErrNotFound) {
		t.Fatalf("watch a deleted token: %v", err)
	}
	f.eng.Reset()
	for range wb.C {
	}
	wb.Close() // closing twice is harmless
	if _, err := f.eng.Watch(project, "nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("watch unknown: %v", err)
	}
}
