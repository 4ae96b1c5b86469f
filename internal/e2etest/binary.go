package e2etest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// keepBinary moves the binary at built into root, under a directory
// named by its content's hash, and returns its path there: every test
// process that builds the same code (the e2e packages of one go test
// run, 49 MB each) shares one file, where each kept a temporary
// directory of its own that nothing removed. The move is a rename, so a
// process that finds the file finds it whole, and one replacing it does
// not disturb a process running the old one (its inode stays). Hash
// directories older than maxAge, binaries of code since changed, are
// removed.
func keepBinary(root, built string, maxAge time.Duration) (string, error) {
	f, err := os.Open(built)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	_, err = io.Copy(h, f)
	f.Close()
	if err != nil {
		return "", fmt.Errorf("hashing %s: %w", built, err)
	}
	name := hex.EncodeToString(h.Sum(nil)[:12])
	dir := filepath.Join(root, name)
	path := filepath.Join(dir, filepath.Base(built))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	now := time.Now()
	// The directory's time says when it was last used: a build of the
	// same code keeps it from being pruned.
	_ = os.Chtimes(dir, now, now)
	if _, err := os.Stat(path); err != nil {
		if err := os.Rename(built, path); err != nil {
			return "", fmt.Errorf("keeping the pyric binary: %w", err)
		}
	}
	if entries, err := os.ReadDir(root); err == nil {
		for _, e := range entries {
			if e.Name() == name || !e.IsDir() {
				continue
			}
			if info, err := e.Info(); err == nil && now.Sub(info.ModTime()) > maxAge {
				os.RemoveAll(filepath.Join(root, e.Name()))
			}
		}
	}
	return path, nil
}
