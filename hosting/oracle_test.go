package hosting_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pyric/pyric/hosting"
	"github.com/pyric/pyric/internal/benchkit"
	"github.com/pyric/pyric/internal/needs"
	"github.com/pyric/pyric/internal/procgroup"
)

// repoRoot is the repository root.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), ".."))
}

// firebaseBin is firebase-tools' CLI pinned in e2e/js, the oracle.
func firebaseBin(t testing.TB) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		needs.Missing(t, "node is not on PATH")
	}
	bin := filepath.Join(repoRoot(), "e2e", "js", "node_modules", ".bin", "firebase")
	if _, err := os.Stat(bin); err != nil {
		needs.Missing(t, "e2e/js/node_modules/.bin/firebase is absent (run `npm ci` in e2e/js)")
	}
	return bin
}

// project copies testdata/project to a temporary directory and adds what
// git does not keep: a dot file, a node_modules folder, a symlink leading
// out of public and one staying inside.
func project(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join("testdata", "project")
	err := filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		dst := filepath.Join(dir, rel)
		if fi.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			return err
		}
		return os.Chtimes(dst, fi.ModTime(), fi.ModTime())
	})
	if err != nil {
		t.Fatal(err)
	}
	pub := filepath.Join(dir, "public")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(pub, ".hidden"), []byte("hidden\n"), 0o644))
	must(os.MkdirAll(filepath.Join(pub, "node_modules", "pkg"), 0o755))
	must(os.WriteFile(filepath.Join(pub, "node_modules", "pkg", "index.js"), []byte("module.exports = 1\n"), 0o644))
	must(os.WriteFile(filepath.Join(dir, "outside.txt"), []byte("outside the public folder\n"), 0o644))
	must(os.Symlink(filepath.Join(dir, "outside.txt"), filepath.Join(pub, "link-out.txt")))
	must(os.Symlink("about.html", filepath.Join(pub, "link-in.html")))
	return dir
}

// loadEngine reads dir/firebase.json's hosting section into an engine.
func loadEngine(t testing.TB, dir string, opts hosting.Options) *hosting.Engine {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "firebase.json"))
	if err != nil {
		t.Fatal(err)
	}
	var fj struct {
		Hosting json.RawMessage `json:"hosting"`
	}
	if err := json.Unmarshal(b, &fj); err != nil {
		t.Fatal(err)
	}
	if opts.Project == "" {
		opts.Project = "demo-x"
	}
	cfgs, err := hosting.ParseConfig(fj.Hosting, dir, opts.Project)
	if err != nil {
		t.Fatal(err)
	}
	return hosting.New(cfgs, opts)
}

var localServerRE = regexp.MustCompile(`hosting(?:\[([^\]]+)\])?: Local server: http://([0-9.:]+)`)

// startEmulator runs `firebase emulators:start --only hosting` in dir
// (its firebase.json's ports replaced by free ones) and returns each
// site's base URL; the emulator stops when the test ends.
func startEmulator(t testing.TB, dir string, sites int) map[string]string {
	t.Helper()
	bin := firebaseBin(t)
	path := filepath.Join(dir, "firebase.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var fj map[string]any
	if err := json.Unmarshal(b, &fj); err != nil {
		t.Fatal(err)
	}
	ports := benchkit.FreePorts(t, 3)
	fj["emulators"] = map[string]any{
		"hosting": map[string]any{"port": ports[0], "host": "127.0.0.1"},
		"hub":     map[string]any{"port": ports[1], "host": "127.0.0.1"},
		"logging": map[string]any{"port": ports[2], "host": "127.0.0.1"},
		"ui":      map[string]any{"enabled": false},
	}
	b, _ = json.MarshalIndent(fj, "", "  ")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "emulators:start", "--only", "hosting", "--project", "demo-x")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CI=1", "NO_UPDATE_NOTIFIER=1", "METADATA_SERVER_DETECTION=none",
		"FIREBASE_CLI_EXPERIMENTS=", "HOME="+t.TempDir())
	procgroup.Own(cmd)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = procgroup.Signal(cmd, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	urls := map[string]string{}
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		_, _ = io.Copy(io.Discard, out)
	}()
	var log strings.Builder
	deadline := time.After(90 * time.Second)
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("the Hosting emulator exited:\n%s", log.String())
			}
			log.WriteString(line + "\n")
			if m := localServerRE.FindStringSubmatch(line); m != nil {
				urls[m[1]] = "http://" + m[2]
			}
			if strings.Contains(line, "All emulators ready") {
				if len(urls) != sites {
					t.Fatalf("the emulator started %d sites, want %d:\n%s", len(urls), sites, log.String())
				}
				go func() {
					for range lines {
					}
				}()
				return urls
			}
		case <-deadline:
			t.Fatalf("the Hosting emulator did not start in 90 s:\n%s", log.String())
		}
	}
}

func describe(status int, h map[string]string) string {
	return fmt.Sprintf("%d %v", status, h)
}
