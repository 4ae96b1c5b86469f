package emulator

import (
	"strings"
	"testing"
)

// TestManifestFolds checks that a long Class-Path is folded into lines of
// at most 72 bytes that unfold to the value, as java -jar reads them.
func TestManifestFolds(t *testing.T) {
	long := "file:/usr/lib/google-cloud-sdk/platform/cloud-firestore-emulator/cloud-firestore-emulator.jar"
	m := manifest(map[string]string{"Main-Class": mainClass, "Class-Path": long}, "Main-Class", "Class-Path")
	if !strings.HasSuffix(m, "\r\n\r\n") {
		t.Fatalf("manifest does not end with an empty line: %q", m)
	}
	lines := strings.Split(strings.TrimSuffix(m, "\r\n\r\n"), "\r\n")
	attrs := map[string]string{}
	last := ""
	for _, l := range lines {
		if len(l) > 72 {
			t.Errorf("line of %d bytes: %q", len(l), l)
		}
		if strings.HasPrefix(l, " ") {
			attrs[last] += l[1:]
			continue
		}
		k, v, ok := strings.Cut(l, ": ")
		if !ok {
			t.Fatalf("not an attribute line: %q", l)
		}
		attrs[k], last = v, k
	}
	if attrs["Class-Path"] != long || attrs["Main-Class"] != mainClass {
		t.Errorf("unfolded to %v", attrs)
	}
}
