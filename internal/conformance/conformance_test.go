package conformance

import "testing"

func TestLoad(t *testing.T) {
	for service, want := range map[string]int{"firestore": 155, "storage": 69, "rtdb": 50} {
		scenarios, err := Load(service)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, s := range scenarios {
			for _, raw := range s.Cases {
				var c Case
				if err := Decode(raw, &c); err != nil {
					t.Fatal(err)
				}
				if c.Production != "ALLOW" && c.Production != "DENY" {
					t.Errorf("%s/%s: production = %q", s.ID, c.Description, c.Production)
				}
				n++
			}
		}
		if n != want {
			t.Errorf("%s: %d cases, want %d", service, n, want)
		}
	}
	lang, err := Language()
	if err != nil {
		t.Fatal(err)
	}
	if len(lang["firestore"]) != 140 || len(lang["storage"]) != 69 || len(lang["rtdb"]) != 56 {
		t.Errorf("constructs: %d/%d/%d", len(lang["firestore"]), len(lang["storage"]), len(lang["rtdb"]))
	}
	if _, err := Load("nope"); err == nil {
		t.Error("Load(nope) succeeded")
	}
}
