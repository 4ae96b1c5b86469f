package emulator

import (
	"archive/zip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/pyric/pyric/internal/needs"
)

// mainClass is the Debian jar's entry point (it has no Main-Class of its
// own; the jar firebase-tools downloads names this class).
const mainClass = "com.google.cloud.datastore.emulator.firestore.CloudFirestore"

// FirebaseToolsEnv returns the environment under which firebase-tools'
// Firestore emulator runs here without downloading anything: a Java of
// version 21 or later first on PATH, FIRESTORE_EMULATOR_BINARY_PATH
// naming a launcher jar (written to dir) whose manifest runs the Debian
// jar's main class with the Debian jar on its class path — firebase-tools
// starts that path with `java -jar` — and CI=1, NO_UPDATE_NOTIFIER=1 and
// METADATA_SERVER_DETECTION=none so that it asks no question and looks
// for no cloud credentials. A missing Java 21 or emulator jar skips the
// test (fails it under PYRIC_E2E_REQUIRED=1).
func FirebaseToolsEnv(t testing.TB, dir string) []string {
	t.Helper()
	jar := Jar()
	if jar == "" {
		needs.Missing(t, "official Firestore emulator not installed (Debian package google-cloud-cli-firestore-emulator)")
	}
	javaBin := java21()
	if javaBin == "" {
		needs.Missing(t, "no Java 21 or later found (firebase-tools' Firestore emulator needs it; set PYRIC_JAVA_HOME or install temurin-25-jdk)")
	}
	launcher := filepath.Join(dir, "firestore-emulator-launcher.jar")
	if err := writeLauncher(launcher, jar); err != nil {
		t.Fatal(err)
	}
	return []string{
		"PATH=" + javaBin + string(os.PathListSeparator) + os.Getenv("PATH"),
		"FIRESTORE_EMULATOR_BINARY_PATH=" + launcher,
		"CI=1", "NO_UPDATE_NOTIFIER=1", "METADATA_SERVER_DETECTION=none",
	}
}

// java21 returns the bin directory of a Java 21 or later: $PYRIC_JAVA_HOME,
// $JAVA_HOME, then the JDKs under /usr/lib/jvm, newest name first; "" when
// none is.
func java21() string {
	homes := []string{os.Getenv("PYRIC_JAVA_HOME"), os.Getenv("JAVA_HOME")}
	jvms, _ := filepath.Glob("/usr/lib/jvm/*")
	for i := len(jvms) - 1; i >= 0; i-- {
		homes = append(homes, jvms[i])
	}
	for _, h := range homes {
		if h == "" {
			continue
		}
		bin := filepath.Join(h, "bin")
		if v := javaMajor(filepath.Join(bin, "java")); v >= 21 {
			return bin
		}
	}
	return ""
}

var javaVersion = regexp.MustCompile(`version "(\d+)`)

// javaMajor runs `java -version` and returns its major version, 0 when
// it does not run.
func javaMajor(java string) int {
	out, err := exec.Command(java, "-version").CombinedOutput()
	if err != nil {
		return 0
	}
	m := javaVersion.FindSubmatch(out)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

// writeLauncher writes a jar holding only a manifest that names
// mainClass and puts target on the class path.
func writeLauncher(path, target string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	zw := zip.NewWriter(f)
	w, err := zw.Create("META-INF/MANIFEST.MF")
	if err == nil {
		_, err = w.Write([]byte(manifest(map[string]string{
			"Manifest-Version": "1.0",
			"Main-Class":       mainClass,
			"Class-Path":       "file:" + filepath.ToSlash(target),
		}, "Manifest-Version", "Main-Class", "Class-Path")))
	}
	if cerr := zw.Close(); err == nil {
		err = cerr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// manifest renders a jar manifest's main section in the order given:
// lines of at most 72 bytes, longer values continued on lines starting
// with a space, as the JAR specification requires.
func manifest(attrs map[string]string, order ...string) string {
	var b strings.Builder
	for _, k := range order {
		line := k + ": " + attrs[k]
		for len(line) > 72 {
			b.WriteString(line[:72] + "\r\n")
			line = " " + line[72:]
		}
		b.WriteString(line + "\r\n")
	}
	b.WriteString("\r\n")
	return b.String()
}
