package firestorejs

import (
	"testing"
	"time"

	"github.com/pyric/pyric/server/firestore/fstest"
)

// TestRulesUnitTesting runs @firebase/rules-unit-testing@5.0.2: it loads
// rules over the emulator endpoint, asserts allowed and denied requests
// through the Node SDK (gRPC), disables rules with the owner token and
// clears data over DELETE /emulator/v1/.../documents.
func TestRulesUnitTesting(t *testing.T) {
	needNode(t, "@firebase/rules-unit-testing")
	srv := fstest.Start(t, fstest.Options{Project: "demo-rut"})
	steps := runScript(t, 2*time.Minute, "rut.cjs", "FS="+srv.Addr, "PROJECT=demo-rut")
	check(t, steps, rutWant)
}

// rutWant is what every step must return, on Pyric and on the official emulator.
var rutWant = map[string]string{
	"clearFirestore on an empty database":  `null`,
	"create with an extra field is denied": `"permission-denied"`,
	"read own profile":                     `{"name":"Alice","age":30}`,
	"read someone else is denied":          `"permission-denied"`,
	"unauthenticated read is denied":       `"permission-denied"`,
	"update must grow age":                 `"ok"`,
	"delete needs the admin claim":         `"ok"`,
	"compat API":                           `"ok"`,
	"withSecurityRulesDisabled seeds data": `"Carol"`,
	"published post is public":             `"bob"`,
	"draft is the author's":                `false`,
	"rules are not filters":                `1`,
	"request.time and serverTimestamp":     `"ok"`,
	"clearFirestore":                       `0`,
	"bad rules are rejected":               `{"status":400,"message":"Error compiling rules: L1"}`,
	"the last good rules stay live":        `"permission-denied"`,
}
