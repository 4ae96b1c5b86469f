package emulator

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/pyric/pyric/internal/needs"
)

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
	env, err := FirebaseToolsRunEnv(dir, os.Getenv("PATH"))
	if err != nil {
		needs.Missing(t, "%v", err)
	}
	return env
}

// FirebaseToolsRunEnv is FirebaseToolsEnv for a command: the same
// variables, with the Java put first on path, or an error naming what is
// missing.
func FirebaseToolsRunEnv(dir, path string) ([]string, error) {
	javaBin := java21()
	if javaBin == "" {
		return nil, fmt.Errorf("no Java 21 or later found (firebase-tools' Firestore emulator needs it; set PYRIC_JAVA_HOME or install temurin-25-jdk)")
	}
	launcher, err := LauncherJar(dir)
	if err != nil {
		return nil, err
	}
	return []string{
		"PATH=" + javaBin + string(os.PathListSeparator) + path,
		"FIRESTORE_EMULATOR_BINARY_PATH=" + launcher,
		"CI=1", "NO_UPDATE_NOTIFIER=1", "METADATA_SERVER_DETECTION=none",
	}, nil
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
