package messaging

import (
	"strings"
	"testing"
)

func TestParseCondition(t *testing.T) {
	t.Parallel()
	tests := []struct {
		src    string
		canon  string
		topics []string
	}{
		{"'a' in topics", "'a' in topics", []string{"a"}},
		{`"a" in topics`, "'a' in topics", []string{"a"}},
		{"'a' in topics && 'b' in topics", "('a' in topics && 'b' in topics)", []string{"a", "b"}},
		{"'a' in topics && ('b' in topics || 'c' in topics)", "('a' in topics && ('b' in topics || 'c' in topics))", []string{"a", "b", "c"}},
		// && binds tighter than ||; both associate to the left.
		{"'a' in topics || 'b' in topics && 'c' in topics", "('a' in topics || ('b' in topics && 'c' in topics))", []string{"a", "b", "c"}},
		{"'a' in topics || 'b' in topics || 'c' in topics", "(('a' in topics || 'b' in topics) || 'c' in topics)", []string{"a", "b", "c"}},
		{"!('a' in topics)", "!'a' in topics", []string{"a"}},
		{"!('a' in topics && !'b' in topics)", "!('a' in topics && !'b' in topics)", []string{"a", "b"}},
		{"  ( ( 'x-y_z.~%41' in topics ) )  ", "'x-y_z.~%41' in topics", []string{"x-y_z.~%41"}},
		{"'a' in topics&&'b' in topics||'c' in topics&&'d' in topics||'e' in topics", "((('a' in topics && 'b' in topics) || ('c' in topics && 'd' in topics)) || 'e' in topics)", []string{"a", "b", "c", "d", "e"}},
	}
	for _, tc := range tests {
		c, err := ParseCondition(tc.src)
		if err != nil {
			t.Errorf("ParseCondition(%q): %v", tc.src, err)
			continue
		}
		if got := c.String(); got != tc.canon {
			t.Errorf("ParseCondition(%q) = %s, want %s", tc.src, got, tc.canon)
		}
		if strings.Join(c.Topics, ",") != strings.Join(tc.topics, ",") {
			t.Errorf("ParseCondition(%q).Topics = %v, want %v", tc.src, c.Topics, tc.topics)
		}
	}
}

func TestParseConditionErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ src, want string }{
		{"", "condition is empty"},
		{"   ", "condition is empty"},
		{"'a' in topics &&", "expected a quoted topic, '(' or '!' but found end of condition"},
		{"'a' in topics && || 'b' in topics", "expected a quoted topic"},
		{"'a' in topics & 'b' in topics", "expected '&&'"},
		{"'a' in topics | 'b' in topics", "expected '||'"},
		{"'a' topics", "expected 'in topics' after topic 'a'"},
		{"'a' in", "expected 'topics' after 'in'"},
		{"'a' in subjects", "expected 'topics' after 'in' but found 'subjects'"},
		{"'a in topics", "unterminated topic name"},
		{"'' in topics", "empty topic name"},
		{"'a b' in topics", "has a character outside"},
		{"'a' in topics 'b' in topics", "unexpected topic 'b'"},
		{"('a' in topics", "expected ')' but found end of condition"},
		{"'a' in topics)", "unexpected ')'"},
		{"a in topics", "expected a quoted topic, '(' or '!' but found 'a'"},
		{"'a' in topics && 'b' in topics && 'c' in topics && 'd' in topics && 'e' in topics && 'f' in topics", "more than 5 topics"},
		{strings.Repeat("(", 40) + "'a' in topics" + strings.Repeat(")", 40), "nested too deeply"},
		{strings.Repeat("!", 40) + "'a' in topics", "nested too deeply"},
		{"'a' in topics # x", "unexpected character '#'"},
		{strings.Repeat(" ", maxConditionBytes+1), "longer than"},
	}
	for _, tc := range tests {
		_, err := ParseCondition(tc.src)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseCondition(%q) error = %v, want %q", tc.src, err, tc.want)
		}
	}
}

func TestConditionEval(t *testing.T) {
	t.Parallel()
	c, err := ParseCondition("'a' in topics && ('b' in topics || 'c' in topics) && !('d' in topics)")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		subs []string
		want bool
	}{
		{[]string{"a", "b"}, true},
		{[]string{"a", "c"}, true},
		{[]string{"a"}, false},
		{[]string{"b", "c"}, false},
		{[]string{"a", "b", "d"}, false},
		{nil, false},
	}
	for _, tc := range tests {
		in := func(s string) bool {
			for _, x := range tc.subs {
				if x == s {
					return true
				}
			}
			return false
		}
		if got := c.Eval(in); got != tc.want {
			t.Errorf("Eval(%v) = %v, want %v", tc.subs, got, tc.want)
		}
	}
}

func FuzzParseCondition(f *testing.F) {
	for _, s := range []string{
		"'a' in topics", "'a' in topics && ('b' in topics || 'c' in topics)", "!('a' in topics)",
		"'a' in topics &&", "((('a' in topics)))", `"x" in topics || 'y' in topics`, "'", "&|!()",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		c, err := ParseCondition(src)
		if err != nil {
			if _, ok := err.(*ConditionError); !ok {
				t.Fatalf("error of type %T", err)
			}
			return
		}
		if len(c.Topics) == 0 || len(c.Topics) > MaxConditionTopics {
			t.Fatalf("accepted %q with %d topics", src, len(c.Topics))
		}
		// The canonical form parses to itself.
		again, err := ParseCondition(c.String())
		if err != nil && strings.Contains(err.Error(), "nested too deeply") {
			return // canonical parentheses can add a few levels
		}
		if err != nil {
			t.Fatalf("canonical form %q of %q does not parse: %v", c.String(), src, err)
		}
		if again.String() != c.String() {
			t.Fatalf("canonical form not stable: %q -> %q", c.String(), again.String())
		}
		c.Eval(func(string) bool { return true })
	})
}
