package pubsub_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	engine "github.com/pyric/pyric/pubsub"
	"github.com/pyric/pyric/sandbox/service"
	"github.com/pyric/pyric/server/pubsub/pubsubtest"
)

// TestRESTWhereProductionDiffers covers what Pyric does as production
// does and the emulator does not: updating labels with a camelCase
// update mask, refusing an ack deadline under 10 s, checking a filter's
// syntax, detaching; plus bad JSON and unknown routes.
func TestRESTWhereProductionDiffers(t *testing.T) {
	_, host := pubsubtest.Pyric(t, service.Env{}, engine.Options{})
	do := func(method, path, body string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(method, "http://"+host+path, strings.NewReader(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		return resp.StatusCode, m
	}
	msg := func(m map[string]any) string {
		e, _ := m["error"].(map[string]any)
		s, _ := e["message"].(string)
		return s
	}
	p := "/v1/projects/p"
	if c, _ := do("PUT", p+"/topics/topic1", ""); c != 200 {
		t.Fatalf("create topic %d", c)
	}
	if c, m := do("PUT", p+"/subscriptions/sub1", `{"topic":"projects/p/topics/topic1","ackDeadlineSeconds":5}`); c != 400 || msg(m) != "ack_deadline_secs out of bounds" {
		t.Fatalf("deadline 5: %d %v", c, m)
	}
	if c, m := do("PUT", p+"/subscriptions/sub1", `{"topic":"projects/p/topics/topic1","filter":"attributes.a = "}`); c != 400 || !strings.HasPrefix(msg(m), "Invalid filter") {
		t.Fatalf("bad filter: %d %v", c, m)
	}
	if c, _ := do("PUT", p+"/subscriptions/sub1", `{"topic":"projects/p/topics/topic1","filter":"attributes.a = \"b\""}`); c != 200 {
		t.Fatalf("create sub %d", c)
	}
	c, m := do("PATCH", p+"/subscriptions/sub1", `{"subscription":{"labels":{"team":"x"},"ackDeadlineSeconds":30},"updateMask":"labels,ackDeadlineSeconds"}`)
	if c != 200 || m["ackDeadlineSeconds"] != float64(30) || m["labels"].(map[string]any)["team"] != "x" {
		t.Fatalf("update: %d %v", c, m)
	}
	if c, m := do("PATCH", p+"/subscriptions/sub1", `{"subscription":{},"updateMask":"bogus"}`); c != 400 || !strings.Contains(msg(m), "bogus is not a known Subscription field") {
		t.Fatalf("bad mask: %d %v", c, m)
	}
	if c, m := do("POST", p+"/topics/topic1:publish", `{"messages":[{"data":"not base64!"}]}`); c != 400 || !strings.HasPrefix(msg(m), "Payload isn't valid for request. (") {
		t.Fatalf("bad JSON: %d %v", c, m)
	}
	if c, _ := do("POST", p+"/topics/topic1:publish", `{"messages":[{"data":"aGk=","attributes":{"a":"b"}},{"data":"aGk="}]}`); c != 200 {
		t.Fatalf("publish %d", c)
	}
	c, m = do("POST", p+"/subscriptions/sub1:pull", `{"maxMessages":10,"returnImmediately":true}`)
	if got, _ := m["receivedMessages"].([]any); c != 200 || len(got) != 1 {
		t.Fatalf("filtered pull: %d %v", c, m)
	}
	if c, _ := do("POST", p+"/subscriptions/sub1:detach", ""); c != 200 {
		t.Fatalf("detach %d", c)
	}
	if c, m := do("POST", p+"/subscriptions/sub1:pull", `{"maxMessages":1}`); c != 400 || m["error"].(map[string]any)["status"] != "FAILED_PRECONDITION" {
		t.Fatalf("pull detached: %d %v", c, m)
	}
	if c, _ := do("GET", "/v1/projects/p/nothing/here", ""); c != 404 {
		t.Fatalf("unknown route %d", c)
	}
	if c, _ := do("POST", "/reset", ""); c != 200 {
		t.Fatalf("reset %d", c)
	}
	if c, _ := do("GET", p+"/topics/topic1", ""); c != 404 {
		t.Fatalf("after reset %d", c)
	}
}
