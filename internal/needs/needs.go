// Package needs is how a test reacts to an absent dependency (the
// official emulator, Java, the go command, Node, Chromium): it skips with
// the reason, or fails under PYRIC_E2E_REQUIRED=1 (set by CI), where
// nothing may be skipped for want of a dependency. It imports nothing of
// pyric, so any test helper can use it.
package needs

import (
	"fmt"
	"os"
	"testing"
)

// Required reports whether end-to-end dependencies must be present
// (PYRIC_E2E_REQUIRED=1, as in CI).
func Required() bool { return os.Getenv("PYRIC_E2E_REQUIRED") == "1" }

// Missing skips the test with the reason, or fails it when Required.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if Required() {
		t.Fatalf("end-to-end dependency missing (PYRIC_E2E_REQUIRED=1): %s", msg)
	}
	t.Skipf("skipping: %s", msg)
}
