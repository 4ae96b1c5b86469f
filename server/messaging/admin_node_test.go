package messagingserver_test

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/internal/e2etest"
	"github.com/pyric/pyric/messaging"
	"github.com/pyric/pyric/sandbox/service"
	"github.com/pyric/pyric/server/messaging/messagingtest"
)

// nodeOutcome is what testdata/admin_node.cjs prints for one call.
type nodeOutcome struct {
	OK      bool   `json:"ok"`
	Value   any    `json:"value"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

type nodeBatch struct {
	SuccessCount, FailureCount int
	Responses                  []struct{ ID, Code, Message string }
}

type nodeTopics struct {
	SuccessCount, FailureCount int
	Errors                     []struct {
		Index int
		Code  string
	}
}

// TestNodeAdminSDK drives the port with firebase-admin (Node) through the
// served helper module: the same calls and error codes as the Go SDK's
// tests, each delivery checked through the inbox API.
func TestNodeAdminSDK(t *testing.T) {
	e2etest.NeedNode(t)
	if _, err := os.Stat(filepath.Join(e2etest.JSDir(), "node_modules", "firebase-admin")); err != nil {
		e2etest.Missing(t, "firebase-admin is not in e2e/js/node_modules (cd e2e/js && npm ci)")
	}
	s := messagingtest.Start(t, service.Env{Project: project}, messaging.Options{})
	helper := filepath.Join(t.TempDir(), "pyric-firebase-admin.cjs")
	resp, err := http.Get(s.URL + "/emulator/v1/firebase-admin.cjs")
	if err != nil {
		t.Fatal(err)
	}
	src, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/javascript") {
		t.Fatalf("helper: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if err := os.WriteFile(helper, src, 0o644); err != nil {
		t.Fatal(err)
	}
	toks := map[string]string{
		"web":     mintIn(t, s, project, messaging.PlatformWeb),
		"android": mintIn(t, s, project, messaging.PlatformAndroid),
		"ios":     mintIn(t, s, project, messaging.PlatformIOS),
		"dead":    mintIn(t, s, project, messaging.PlatformWeb),
		"limited": mintIn(t, s, project, messaging.PlatformAndroid),
		"foreign": mintIn(t, s, "other-project", messaging.PlatformWeb),
	}
	if err := s.Engine.DeleteToken(admin, project, toks["dead"]); err != nil {
		t.Fatal(err)
	}
	tj, _ := json.Marshal(toks)
	// A TLS server of another host, trusted by Node, for the agent's
	// pass-through of https requests.
	other := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "tls %s", r.URL.Path)
	}))
	defer other.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: other.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	script, _ := filepath.Abs("testdata/admin_node.cjs")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	out := e2etest.RunNode(t, ctx, script, "PYRIC_MESSAGING_URL="+s.URL, "PYRIC_HELPER_FILE="+helper, "PYRIC_TOKENS="+string(tj),
		"PYRIC_TLS_URL="+other.URL, "NODE_EXTRA_CA_CERTS="+ca)

	var got struct {
		Send, DryRun, TopicSend, ConditionSend, AfterUnsubscribe nodeOutcome
		Errors                                                   map[string]nodeOutcome
		SendEach, Multicast, MulticastDryRun                     nodeBatch
		Subscribe, SubscribePrefixed, Unsubscribe                nodeTopics
		Passthrough                                              int
		PassthroughTLS                                           string
	}
	e2etest.LastJSONLine(t, out, &got)

	name, _ := got.Send.Value.(string)
	if !got.Send.OK || !strings.HasPrefix(name, "projects/demo-project/messages/") {
		t.Fatalf("send: %+v", got.Send)
	}
	in := inbox(t, s, toks["android"])
	if len(in) != 1 || in[0].Name != name || in[0].Payload.Notification["title"] != "Hello" || in[0].Message.Android.TTL != "3.500s" {
		t.Fatalf("android inbox: %+v", in)
	}
	if got.Passthrough != 200 || got.PassthroughTLS != "200 tls /tls-check" {
		t.Fatalf("requests for other hosts through the helper's agent: http %d, https %q", got.Passthrough, got.PassthroughTLS)
	}
	if !got.DryRun.OK || got.DryRun.Value == "" {
		t.Fatalf("dry run: %+v", got.DryRun)
	}

	// Production's error codes as the Node SDK names them.
	want := map[string]string{
		"invalidToken":   "messaging/invalid-argument",
		"tooBig":         "messaging/invalid-argument",
		"badCondition":   "messaging/invalid-argument",
		"reservedKey":    "messaging/invalid-argument",
		"webpushTTL":     "messaging/invalid-argument",
		"unregistered":   "messaging/registration-token-not-registered",
		"senderMismatch": "messaging/mismatched-credential",
		"quota":          "messaging/message-rate-exceeded",
	}
	for k, code := range want {
		if o := got.Errors[k]; o.OK || o.Code != code {
			t.Errorf("%s: got %+v, want %s", k, o, code)
		}
	}
	for k, msg := range map[string]string{
		"invalidToken": "The registration token is not a valid FCM registration token",
		"reservedKey":  "Invalid data payload key: from",
		"tooBig":       "Web push message is too big",
		"badCondition": "Request contains an invalid argument.",
		"unregistered": "Requested entity was not found.",
	} {
		if m := got.Errors[k].Message; m != msg {
			t.Errorf("%s: message %q, want %q", k, m, msg)
		}
	}

	checkBatch(t, "sendEach", got.SendEach, []string{"", "messaging/invalid-argument", "", "messaging/registration-token-not-registered", ""})
	checkBatch(t, "sendEachForMulticast", got.Multicast, []string{"", "", "messaging/registration-token-not-registered", "messaging/invalid-argument"})
	checkBatch(t, "dry-run multicast", got.MulticastDryRun, []string{"", ""})
	web := inbox(t, s, toks["web"])
	if len(web) < 2 || web[0].Payload.Data["n"] != "1" || web[1].Payload.Notification["title"] != "all" {
		t.Fatalf("web inbox after sendEach/multicast: %+v", web)
	}

	// Topic management through the instance-id endpoints.
	if r := got.Subscribe; r.SuccessCount != 2 || r.FailureCount != 2 || len(r.Errors) != 2 ||
		r.Errors[0].Index != 2 || r.Errors[0].Code != "messaging/registration-token-not-registered" ||
		r.Errors[1].Index != 3 || r.Errors[1].Code != "messaging/invalid-registration-token" {
		t.Fatalf("subscribeToTopic: %+v", r)
	}
	if got.SubscribePrefixed.SuccessCount != 1 || got.Unsubscribe.SuccessCount != 1 {
		t.Fatalf("subscribe /topics/sports %+v, unsubscribe %+v", got.SubscribePrefixed, got.Unsubscribe)
	}
	if !got.TopicSend.OK || !got.ConditionSend.OK || !got.AfterUnsubscribe.OK {
		t.Fatalf("topic sends: %+v %+v %+v", got.TopicSend, got.ConditionSend, got.AfterUnsubscribe)
	}
	var topicData []string
	for _, d := range inbox(t, s, toks["web"]) {
		if n := d.Payload.Data["n"]; n == "topic" || n == "cond" || n == "after" {
			topicData = append(topicData, n)
		}
	}
	var iosData []string
	for _, d := range inbox(t, s, toks["ios"]) {
		if n := d.Payload.Data["n"]; n != "" {
			iosData = append(iosData, n)
		}
	}
	if strings.Join(topicData, ",") != "topic,cond,after" || strings.Join(iosData, ",") != "topic" {
		t.Fatalf("topic deliveries: web %v, ios %v", topicData, iosData)
	}
}

// inbox reads a token's deliveries through the emulator API.
func inbox(t *testing.T, s *messagingtest.Server, token string) []messaging.Delivery {
	t.Helper()
	resp, err := http.Get(s.URL + "/emulator/v1/projects/" + project + "/tokens/" + token + "/messages")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct{ Messages []messaging.Delivery }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 {
		t.Fatalf("inbox %s: %d %v", token, resp.StatusCode, err)
	}
	return out.Messages
}

// checkBatch compares a batch's responses with the wanted codes ("" is a
// success with a message id).
func checkBatch(t *testing.T, what string, b nodeBatch, codes []string) {
	t.Helper()
	failures := 0
	for _, c := range codes {
		if c != "" {
			failures++
		}
	}
	if len(b.Responses) != len(codes) || b.FailureCount != failures || b.SuccessCount != len(codes)-failures {
		t.Fatalf("%s: %+v", what, b)
	}
	for i, c := range codes {
		r := b.Responses[i]
		if (c == "" && !strings.HasPrefix(r.ID, "projects/demo-project/messages/")) || r.Code != c {
			t.Errorf("%s[%d]: %+v, want %q", what, i, r, c)
		}
	}
}
