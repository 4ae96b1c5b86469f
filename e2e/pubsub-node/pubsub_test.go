// Package pubsubnode drives Pyric's Pub/Sub port and the official
// emulator with the Node client (@google-cloud/pubsub) and compares
// every step.
package pubsubnode

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pyric/pyric/internal/e2etest"
	engine "github.com/pyric/pyric/pubsub"
	"github.com/pyric/pyric/sandbox/service"
	"github.com/pyric/pyric/server/pubsub/pubsubtest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pubsubtest.StopAll()
	os.Exit(code)
}

func TestNodeClientDifferential(t *testing.T) {
	e2etest.NeedNode(t)
	if _, err := os.Stat(filepath.Join(e2etest.JSDir(), "node_modules", "@google-cloud", "pubsub")); err != nil {
		e2etest.Missing(t, "@google-cloud/pubsub is not in e2e/js/node_modules (cd e2e/js && npm ci)")
	}
	_, host := pubsubtest.Pyric(t, service.Env{}, engine.Options{})
	em := pubsubtest.Official(t)
	dir, _ := filepath.Abs(".")
	run := func(h string) []e2etest.Step {
		sfx := fmt.Sprintf("s%d", time.Now().UnixNano())
		return e2etest.RunSteps(t, 2*time.Minute, dir, "pubsub.cjs", "PUBSUB_EMULATOR_HOST="+h, "SUFFIX="+sfx)
	}
	a, b := run(host), run(em.Host)
	if len(a) != len(b) || len(a) < 10 {
		t.Fatalf("pyric ran %d steps, the emulator %d", len(a), len(b))
	}
	for i := range a {
		if a[i].Step != b[i].Step || a[i].OK != b[i].OK || string(a[i].Got) != string(b[i].Got) || a[i].Error != b[i].Error {
			t.Errorf("step %q differs:\n  pyric:    ok=%v got=%s error=%q\n  emulator: ok=%v got=%s error=%q", a[i].Step,
				a[i].OK, a[i].Got, a[i].Error, b[i].OK, b[i].Got, b[i].Error)
		}
	}
	for _, s := range a {
		t.Logf("%s: ok=%v %s %s", s.Step, s.OK, s.Got, s.Error)
	}
}
