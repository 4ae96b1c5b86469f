// Package config discovers a Firebase project directory the way
// firebase-tools does: firebase.json in the working directory or the
// nearest parent, .firebaserc beside it for the project id, and the files
// firebase.json names (firestore.rules, firestore.indexes.json) resolved
// relative to it.
package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Project is what was found. Paths are absolute; empty when not configured.
type Project struct {
	// Dir is the directory holding firebase.json; empty when none was found.
	Dir string
	// ID is .firebaserc's default project; empty when unknown.
	ID string
	// FirestoreRules and FirestoreIndexes are the paths firebase.json's
	// "firestore" section names (for the (default) database when it is a
	// list).
	FirestoreRules   string
	FirestoreIndexes string
	// Emulator ports and hosts from firebase.json's "emulators" section
	// (0 / "" when absent).
	FirestorePort int
	FirestoreHost string
	AuthPort      int
	AuthHost      string
}

// firestoreSection is one entry of firebase.json's "firestore": an object,
// or a list of objects with a "database" for several databases.
type firestoreSection struct {
	Database string `json:"database"`
	Rules    string `json:"rules"`
	Indexes  string `json:"indexes"`
}

type emulatorSection struct {
	Host string `json:"host"`
	Port int    `json:"port"`
}

type firebaseJSON struct {
	Firestore json.RawMessage `json:"firestore"`
	Emulators struct {
		Firestore emulatorSection `json:"firestore"`
		Auth      emulatorSection `json:"auth"`
	} `json:"emulators"`
}

// Discover looks for firebase.json in dir and its parents. Without one it
// still reads a .firebaserc in dir. Malformed files are errors naming the
// file.
func Discover(dir string) (*Project, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	p := &Project{}
	for d := abs; ; {
		if _, err := os.Stat(filepath.Join(d, "firebase.json")); err == nil {
			p.Dir = d
			break
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	rcDir := abs
	if p.Dir != "" {
		rcDir = p.Dir
		if err := p.readFirebaseJSON(filepath.Join(p.Dir, "firebase.json")); err != nil {
			return nil, err
		}
	}
	if err := p.readFirebaserc(filepath.Join(rcDir, ".firebaserc")); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *Project) readFirebaseJSON(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var f firebaseJSON
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	var secs []firestoreSection
	if len(f.Firestore) > 0 && f.Firestore[0] == '[' {
		if err := json.Unmarshal(f.Firestore, &secs); err != nil {
			return fmt.Errorf("%s: firestore: %w", path, err)
		}
	} else if len(f.Firestore) > 0 && string(f.Firestore) != "null" {
		var s firestoreSection
		if err := json.Unmarshal(f.Firestore, &s); err != nil {
			return fmt.Errorf("%s: firestore: %w", path, err)
		}
		secs = []firestoreSection{s}
	}
	for _, s := range secs {
		if len(secs) > 1 && s.Database != "" && s.Database != "(default)" {
			continue // pyric serves one rules file, the default database's
		}
		p.FirestoreRules = p.resolve(s.Rules)
		p.FirestoreIndexes = p.resolve(s.Indexes)
		break
	}
	p.FirestorePort, p.FirestoreHost = f.Emulators.Firestore.Port, f.Emulators.Firestore.Host
	p.AuthPort, p.AuthHost = f.Emulators.Auth.Port, f.Emulators.Auth.Host
	return nil
}

func (p *Project) resolve(rel string) string {
	if rel == "" || filepath.IsAbs(rel) {
		return rel
	}
	return filepath.Join(p.Dir, rel)
}

func (p *Project) readFirebaserc(path string) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var rc struct {
		Projects map[string]string `json:"projects"`
	}
	if err := json.Unmarshal(b, &rc); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	p.ID = rc.Projects["default"]
	return nil
}
