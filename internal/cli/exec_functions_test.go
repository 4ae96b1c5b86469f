package cli

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/internal/e2etest"
)

// TestExecFunctions runs `pyric exec -- node exec.mjs` in e2e/functions,
// whose firebase.json lists two codebases: the script starts while the
// functions load and its call waits for them; it gets the variables
// emulators:exec sets
// (firebase-tools sets none for functions: a script finds the functions
// port through the hub's /emulators, as here) and its callable answers.
func TestExecFunctions(t *testing.T) {
	t.Setenv("PATH", e2etest.NeedFunctions(t))
	t.Chdir(e2etest.FunctionsDir())
	var out, errs syncBuffer
	args := append([]string{"exec", "--in-memory", "--project", "demo-exec-fn"}, e2etest.FreePortFlags()...)
	args = append(args, "--", "node", "exec.mjs")
	start := time.Now()
	code := Run(context.Background(), args, Stdio{Out: &out, Err: &errs})
	elapsed := time.Since(start)
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out.String(), errs.String())
	}
	t.Logf("pyric exec of a script making one callable call: %v", elapsed)
	var got struct {
		HubFunctions struct {
			Host string `json:"host"`
			Port int    `json:"port"`
		} `json:"hubFunctions"`
		Vars   map[string]*string `json:"vars"`
		Result map[string]any     `json:"result"`
	}
	line := strings.TrimSpace(out.String())
	if i := strings.LastIndex(line, "\n"); i >= 0 {
		line = line[i+1:]
	}
	if err := json.Unmarshal([]byte(line), &got); err != nil {
		t.Fatalf("script output %q: %v\nstderr: %s", out.String(), err, errs.String())
	}
	if got.Result["sum"] != float64(42) {
		t.Errorf("callable result %v", got.Result)
	}
	v := func(k string) string {
		if p := got.Vars[k]; p != nil {
			return *p
		}
		return ""
	}
	if v("GCLOUD_PROJECT") != "demo-exec-fn" || v("FIREBASE_CONFIG") != `{"databaseURL":"https://demo-exec-fn.firebaseio.com","projectId":"demo-exec-fn","storageBucket":"demo-exec-fn.appspot.com"}` {
		t.Errorf("project variables: %v %v", v("GCLOUD_PROJECT"), v("FIREBASE_CONFIG"))
	}
	for _, k := range []string{"FIREBASE_EMULATOR_HUB", "FIRESTORE_EMULATOR_HOST", "FIREBASE_AUTH_EMULATOR_HOST"} {
		if !strings.HasPrefix(v(k), "127.0.0.1:") {
			t.Errorf("%s = %q", k, v(k))
		}
	}
	if got.HubFunctions.Port == 0 || v("PYRIC_FUNCTIONS_URL") == "" || !strings.HasSuffix(v("PYRIC_FUNCTIONS_URL"), ":"+strconv.Itoa(got.HubFunctions.Port)) {
		t.Errorf("hub functions %+v, PYRIC_FUNCTIONS_URL %q", got.HubFunctions, v("PYRIC_FUNCTIONS_URL"))
	}
	// The function's own log line reached the terminal, prefixed.
	if !strings.Contains(errs.String()+out.String(), "functions[add]: ") {
		t.Errorf("no function output on the terminal:\n%s", errs.String())
	}
}
