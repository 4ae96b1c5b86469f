package rtdb

import "testing"

func TestMayWrite(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, rules string
		yes, no     []string
	}{
		{"deny all", `{"rules": {".read": true, ".write": false}}`, nil, []string{"/", "/a", "/a/b/c"}},
		{"no write rule", `{"rules": {".read": true}}`, nil, []string{"/", "/x"}},
		{"false as a string", `{"rules": {".write": "false"}}`, nil, []string{"/a"}},
		{"open", `{"rules": {".write": true}}`, []string{"/", "/a/b"}, nil},
		{"owner only", `{"rules": {"users": {"$uid": {".write": "auth != null && auth.uid == $uid"}}, "logs": {".write": false}}}`,
			[]string{"/", "/users", "/users/alice", "/users/alice/deep/er"}, []string{"/logs", "/logs/1", "/other", "/other/x"}},
		{"literal beside wildcard", `{"rules": {"rooms": {"$r": {".write": false}, "lobby": {"msgs": {".write": "auth != null"}}}}}`,
			[]string{"/rooms", "/rooms/lobby", "/rooms/lobby/msgs/1"}, []string{"/rooms/other", "/rooms/other/msgs"}},
	}
	for _, c := range cases {
		rs := mustCompile(t, c.rules)
		for _, p := range c.yes {
			if !rs.MayWrite(p) {
				t.Errorf("%s: MayWrite(%q) = false, but a rule may allow it", c.name, p)
			}
		}
		for _, p := range c.no {
			if rs.MayWrite(p) {
				t.Errorf("%s: MayWrite(%q) = true, but no rule can allow it", c.name, p)
			}
		}
	}
	if (*Ruleset)(nil).MayWrite("/a") {
		t.Error("no rules: only admin writes")
	}
}
