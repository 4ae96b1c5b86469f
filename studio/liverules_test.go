package studio_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/pyric/pyric/internal/testfs"
	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/sandbox/service"
	"github.com/pyric/pyric/studio"
)

// toyRules is a service the Studio knows nothing of, with live rules
// (service.LiveRules): its rules file compiles when it is not empty.
type toyRules struct {
	text     string
	counting bool
}

func (*toyRules) Name() string                       { return "toy" }
func (*toyRules) Reset() error                       { return nil }
func (*toyRules) Snapshot() (json.RawMessage, error) { return json.RawMessage(`{}`), nil }
func (*toyRules) Restore(json.RawMessage) error      { return nil }
func (*toyRules) RulesFileName() string              { return "toy.rules" }
func (t *toyRules) RulesFile() (string, string, bool) {
	return "toy.rules", t.text, t.text != ""
}
func (t *toyRules) SetRulesFile(_, text string) (source.Diagnostics, error) {
	if text == "" {
		return nil, errors.New("empty")
	}
	t.text = text
	return nil, nil
}
func (t *toyRules) CheckRules(_, text string) (bool, source.Diagnostics, source.Diagnostics) {
	return text != "", nil, nil
}
func (t *toyRules) CollectCoverage() { t.counting = true }
func (t *toyRules) RulesView(string) service.RulesView {
	return service.RulesView{Name: "toy.rules", Text: t.text, Loaded: t.text != "", Coverage: []any{}}
}

var _ service.LiveRules = (*toyRules)(nil)

// TestToyLiveRulesOnHome: a service implementing service.LiveRules gets a
// rules status on Home and counts coverage, with no edit in the Studio;
// the sandbox's own services with rules implement it too.
func TestToyLiveRulesOnHome(t *testing.T) {
	toy := &toyRules{text: "allow"}
	sb, err := sandbox.Open(testfs.With(sandbox.Options{Services: []service.Registration{{Name: "toy", New: func(service.Env) (service.Service, error) { return toy, nil }}}}))
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	if _, ok := sb.Service("firestore").(service.LiveRules); !ok {
		t.Error("the sandbox's Firestore service does not offer service.LiveRules")
	}
	srv := httptest.NewServer(studio.New(studio.Options{Sandbox: sb}))
	defer srv.Close()
	if !toy.counting {
		t.Error("the Studio did not ask the toy service to count coverage")
	}
	r, err := http.Get(srv.URL + "/api/services")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	var got struct{ Rules []map[string]any }
	if err := json.NewDecoder(r.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	var st map[string]any
	for _, x := range got.Rules {
		if x["service"] == "toy" {
			st = x
		}
	}
	if st == nil || st["state"] != "live" || st["file"] != "toy.rules" || st["loaded"] != true {
		t.Fatalf("toy's rules status %v (all: %v)", st, got.Rules)
	}
}
