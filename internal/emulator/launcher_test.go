package emulator

import (
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/internal/await"
	"github.com/pyric/pyric/internal/needs"
)

func TestManifestWrapsLongLines(t *testing.T) {
	long := "/usr/lib/" + strings.Repeat("d", 100) + "/x.jar"
	got := manifest(map[string]string{"Manifest-Version": "1.0", "Class-Path": long}, "Manifest-Version", "Class-Path")
	var joined strings.Builder
	for i, l := range strings.Split(strings.TrimSuffix(got, "\r\n\r\n"), "\r\n") {
		if len(l) > 72 {
			t.Errorf("line %d is %d bytes: %q", i, len(l), l)
		}
		if i > 1 {
			if !strings.HasPrefix(l, " ") {
				t.Errorf("continuation line %d does not start with a space: %q", i, l)
			}
			l = l[1:]
		} else if i == 1 {
			l = "\n" + l
		}
		joined.WriteString(l)
	}
	if want := "Manifest-Version: 1.0\nClass-Path: " + long; joined.String() != want {
		t.Errorf("unwrapped:\n%s\nwant\n%s", joined.String(), want)
	}
}

// TestLauncherJarRuns starts the emulator with `java -jar` on the
// launcher, as firebase-tools does, and waits for it to serve.
func TestLauncherJarRuns(t *testing.T) {
	if Jar() == "" {
		needs.Missing(t, "official Firestore emulator not installed (Debian package google-cloud-cli-firestore-emulator)")
	}
	java, err := exec.LookPath("java")
	if err != nil {
		needs.Missing(t, "java not found")
	}
	launcher, err := LauncherJar(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(java, "-jar", launcher, "--host", "127.0.0.1", "--port", strconv.Itoa(port))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	await.Until(t, 90*time.Second, func() bool {
		c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err == nil {
			c.Close()
		}
		return err == nil
	}, "the emulator started from %s to listen on %d", launcher, port)
}
