package pubsub_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestDifferentialREST sends the same REST calls to both servers and
// compares statuses and bodies (ids, times and ack ids normalized).
func TestDifferentialREST(t *testing.T) {
	compareTargets(t, func(tg target, suffix string) []string {
		base := tg.host
		p := "/v1/projects/rest-project"
		topic, sub := p+"/topics/rt-"+suffix, p+"/subscriptions/rs-"+suffix
		calls := []struct{ method, path, body string }{
			{"GET", "/", ""},
			{"PUT", topic, ""},
			{"PUT", topic, ""},
			{"PUT", p + "/topics/ab", ""},
			{"GET", topic + "-missing", ""},
			{"PUT", sub, `{"topic":"projects/rest-project/topics/rt-` + suffix + `","ackDeadlineSeconds":20}`},
			{"PUT", sub, `{"topic":"projects/rest-project/topics/rt-` + suffix + `"}`},
			{"PUT", sub + "-2", `{"topic":"projects/rest-project/topics/missing-` + suffix + `"}`},
			{"GET", sub, ""},
			{"GET", sub + "-missing", ""},
			{"POST", topic + ":publish", `{"messages":[{"data":"aGk=","attributes":{"a":"b"},"orderingKey":"k"}]}`},
			{"POST", topic + ":publish", `{"messages":[{}]}`},
			{"POST", topic + ":publish", `{"messages":[]}`},
			{"POST", topic + "-missing:publish", `{"messages":[{"data":"aGk="}]}`},
			{"POST", sub + ":pull", `{}`},
			{"POST", sub + ":pull", `{"maxMessages":5,"returnImmediately":true}`},
			{"POST", sub + ":pull", `{"maxMessages":5,"returnImmediately":true}`},
			{"POST", sub + ":acknowledge", `{"ackIds":["bogus"]}`},
			{"POST", sub + ":acknowledge", `{"ackIds":[]}`},
			{"POST", sub + ":modifyAckDeadline", `{"ackIds":["x"],"ackDeadlineSeconds":-1}`},
			{"GET", p + "/snapshots/sn-" + suffix, ""},
			{"DELETE", topic, ""},
			{"GET", sub, ""},
			{"DELETE", sub, ""},
			{"DELETE", sub, ""},
		}
		var out []string
		for _, c := range calls {
			req, _ := http.NewRequest(c.method, "http://"+base+c.path, strings.NewReader(c.body))
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			out = append(out, fmt.Sprintf("%s %s -> %d %s", c.method, strings.ReplaceAll(c.path, suffix, "X"), resp.StatusCode, normalize(b, suffix)))
		}
		return out
	})
}

// normalize re-encodes a JSON body compactly with ids, times and ack ids
// replaced, and the test's suffix removed.
func normalize(b []byte, suffix string) string {
	var v any
	if json.Unmarshal(b, &v) != nil {
		return strings.TrimSpace(string(b))
	}
	var walk func(any) any
	walk = func(x any) any {
		switch x := x.(type) {
		case map[string]any:
			for k, e := range x {
				switch k {
				case "messageId", "publishTime", "ackId":
					x[k] = "<" + k + ">"
				case "messageIds":
					x[k] = fmt.Sprintf("<%d ids>", len(e.([]any)))
				default:
					x[k] = walk(e)
				}
			}
		case []any:
			for i := range x {
				x[i] = walk(x[i])
			}
		case string:
			return strings.ReplaceAll(x, suffix, "X")
		}
		return x
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(walk(v))
	return strings.TrimSpace(buf.String())
}
