package emulator

import (
	"archive/zip"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// MainClass is the official Firestore emulator's entry point in the
// Debian jar.
const MainClass = "com.google.cloud.datastore.emulator.firestore.CloudFirestore"

// LauncherJar writes into dir a jar that only names the emulator's main
// class and puts the Debian jar on its class path, and returns its path.
// firebase-tools runs FIRESTORE_EMULATOR_BINARY_PATH with `java -jar`,
// and the Debian jar's manifest has no Main-Class: this is the jar to
// point it at. It fails when the emulator is not installed.
func LauncherJar(dir string) (string, error) {
	jar := Jar()
	if jar == "" {
		return "", fmt.Errorf("the official Firestore emulator is not installed (Debian package google-cloud-cli-firestore-emulator)")
	}
	abs, err := filepath.Abs(jar)
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "cloud-firestore-emulator-launcher.jar")
	f, err := os.Create(out)
	if err != nil {
		return "", err
	}
	zw := zip.NewWriter(f)
	w, err := zw.Create("META-INF/MANIFEST.MF")
	if err == nil {
		_, err = w.Write([]byte(manifest(map[string]string{
			"Manifest-Version": "1.0",
			"Main-Class":       MainClass,
			// A Class-Path entry is a URL relative to the launcher's;
			// an absolute path is one.
			"Class-Path": (&url.URL{Path: filepath.ToSlash(abs)}).EscapedPath(),
		}, "Manifest-Version", "Main-Class", "Class-Path")))
	}
	if cerr := zw.Close(); err == nil {
		err = cerr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("write %s: %w", out, err)
	}
	return out, nil
}

// manifest renders a jar manifest's main section: lines of at most 72
// bytes, longer ones continued on lines that start with a space.
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
