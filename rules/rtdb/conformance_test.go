package rtdb

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/internal/conformance"
	"github.com/pyric/pyric/rules/source"
)

type conformanceScenario struct {
	ID    string `json:"id"`
	Rules string `json:"rules"`
	Cases []struct {
		Description string         `json:"description"`
		Operation   string         `json:"operation"`
		OpPath      string         `json:"opPath"`
		AuthPresent bool           `json:"authPresent"`
		NewData     any            `json:"newData"`
		MockData    any            `json:"mockData"`
		Seed        map[string]any `json:"seed"`
		Production  string         `json:"production"`
	} `json:"cases"`
}

const conformanceUID = "pyric-conformance-uid"

// substUID replaces the <UID> token in strings and keys of v.
func substUID(v any) any {
	switch v := v.(type) {
	case string:
		return strings.ReplaceAll(v, "<UID>", conformanceUID)
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, c := range v {
			out[strings.ReplaceAll(k, "<UID>", conformanceUID)] = substUID(c)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, c := range v {
			out[i] = substUID(c)
		}
		return out
	}
	return v
}

// setAt stores value at path inside tree (a map), creating objects.
func setAt(tree map[string]any, path string, value any) {
	keys := strings.FieldsFunc(path, func(r rune) bool { return r == '/' })
	m := tree
	for i, k := range keys {
		if i == len(keys)-1 {
			m[k] = value
			return
		}
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
}

// TestConformance replays every RTDB case recorded from production and
// requires production's verdict for each. Each scenario's rules are mounted
// under its id, as production mounted them.
// conformance: database-rules.verdicts
func TestConformance(t *testing.T) {
	raw, err := conformance.Load("rtdb")
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(raw)
	if err != nil {
		t.Fatal(err)
	}
	var scenarios []conformanceScenario
	if err := json.Unmarshal(b, &scenarios); err != nil {
		t.Fatalf("decode rtdb.json: %v", err)
	}
	total, agreed := 0, 0
	now := time.Date(2026, 7, 12, 3, 35, 3, 0, time.UTC)
	for _, sc := range scenarios {
		src := `{"rules": {` + mustJSON(t, sc.ID) + `: ` + sc.Rules + `}}`
		rs, diags := Compile(source.NewFile(sc.ID+".json", src))
		if rs == nil {
			t.Errorf("%s: rules don't compile: %v", sc.ID, diags)
			continue
		}
		for _, c := range sc.Cases {
			total++
			opPath := strings.ReplaceAll(c.OpPath, "<UID>", conformanceUID)
			mount := map[string]any{}
			for p, v := range c.Seed {
				setAt(mount, strings.ReplaceAll(p, "<UID>", conformanceUID), substUID(v))
			}
			if c.MockData != nil {
				setAt(mount, opPath, substUID(c.MockData))
			}
			data := map[string]any{sc.ID: mount}
			var auth *Auth
			if c.AuthPresent {
				auth = &Auth{UID: conformanceUID, Provider: "anonymous", Token: map[string]any{
					"sub": conformanceUID, "firebase": map[string]any{"sign_in_provider": "anonymous"},
				}}
			}
			d, err := rs.Evaluate(Request{
				Operation: Operation(c.Operation), Path: "/" + sc.ID + opPath, Auth: auth,
				Data: data, NewData: substUID(c.NewData), Now: now,
			})
			if err != nil {
				t.Errorf("%s / %s: %v", sc.ID, c.Description, err)
				continue
			}
			got := "DENY"
			if d.Allowed {
				got = "ALLOW"
			}
			if got != c.Production {
				t.Errorf("%s / %s: got %s, production %s\nrules: %+v\nnotes: %v", sc.ID, c.Description, got, c.Production, d.Rules, d.Notes)
				continue
			}
			agreed++
		}
	}
	t.Logf("RTDB conformance: %d/%d cases agree with production", agreed, total)
	if total == 0 {
		t.Fatal("no conformance cases found")
	}
}

func mustJSON(t testing.TB, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
