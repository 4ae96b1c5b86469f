package identity

import (
	"encoding/json"
	"testing"
)

func TestJSONRoundTrip(t *testing.T) {
	for _, id := range []Identity{Anonymous(), AdminIdentity(), NewUser("alice", map[string]any{"admin": true})} {
		b, err := json.Marshal(id)
		if err != nil {
			t.Fatal(err)
		}
		var got Identity
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if got.Kind != id.Kind || got.UID != id.UID || len(got.Token) != len(id.Token) {
			t.Errorf("round trip of %s = %+v, want %+v", b, got, id)
		}
	}
	var id Identity
	if err := json.Unmarshal([]byte(`{}`), &id); err == nil {
		t.Error("empty object decoded without error")
	}
}
