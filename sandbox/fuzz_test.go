package sandbox

import "testing"

func FuzzParseSnapshot(f *testing.F) {
	for _, s := range []string{`{"version": 2, "firestore": {"a/b": {"x": 1}}, "services": {}}`,
		`{"version": 1, "firestore": {"a/b": {"t": {"__type": "timestamp", "seconds": 1, "nanos": 0}}}}`,
		`{"firestore": {}, "databases": {"projects/p/databases/d": {"x/y": {"r": {"__type": "reference", "path": "x/z"}}}}}`,
		`{"firestore": {"a": {}}}`, `[]`, `{"version": 3}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dbs, err := parseSnapshot(data, "p")
		if err != nil {
			return
		}
		sb, err := openFS(Options{Deterministic: true, Project: "p"})
		if err != nil {
			t.Fatal(err)
		}
		// A snapshot that parses must load (the engine may still reject
		// values it validates more strictly, but must not panic).
		_ = sb.LoadSnapshot(data)
		_ = dbs
	})
}
