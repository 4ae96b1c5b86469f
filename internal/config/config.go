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
	"slices"
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
	// DatabaseRules and StorageRules are the rules files firebase.json's
	// "database" and "storage" sections name (the first target's when
	// they are lists).
	DatabaseRules string
	StorageRules  string
	// Emulator ports and hosts from firebase.json's "emulators" section
	// (0 / "" when absent).
	FirestorePort int
	FirestoreHost string
	AuthPort      int
	AuthHost      string
	// Functions is firebase.json's "functions" section as written (nil
	// when absent); package functions parses it.
	Functions json.RawMessage
	// Hosting is firebase.json's "hosting" value as written (an object or
	// a list of sites; nil when absent), read by hosting.ParseConfig.
	Hosting json.RawMessage
	// Ports holds every emulator's port by its firebase.json name
	// (firestore, auth, database, storage, ui, hub, and pyric's own
	// messaging and ai); absent when not configured.
	Ports map[string]int
	// Hosts are the emulators' configured hosts (emulators.*.host).
	Hosts []string
	// AllowOrigins is emulators.allowOrigins: the origins besides
	// loopback ones whose pages may call the emulators (pyric's own key).
	AllowOrigins []string
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

// rulesSection is firebase.json's "database" or "storage": an object, or
// a list of targets each with its rules.
type rulesSection struct {
	Rules string `json:"rules"`
}

type firebaseJSON struct {
	Firestore json.RawMessage            `json:"firestore"`
	Database  json.RawMessage            `json:"database"`
	Storage   json.RawMessage            `json:"storage"`
	Functions json.RawMessage            `json:"functions"`
	Hosting   json.RawMessage            `json:"hosting"`
	Emulators map[string]json.RawMessage `json:"emulators"`
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
	var err2 error
	if p.DatabaseRules, err2 = p.rulesOf(f.Database); err2 != nil {
		return fmt.Errorf("%s: database: %w", path, err2)
	}
	if p.StorageRules, err2 = p.rulesOf(f.Storage); err2 != nil {
		return fmt.Errorf("%s: storage: %w", path, err2)
	}
	p.Functions = f.Functions
	if len(f.Hosting) > 0 && string(f.Hosting) != "null" {
		p.Hosting = f.Hosting
	}
	p.Ports = map[string]int{}
	emu := map[string]emulatorSection{}
	if raw, ok := f.Emulators["allowOrigins"]; ok {
		if err := json.Unmarshal(raw, &p.AllowOrigins); err != nil {
			return fmt.Errorf("%s: emulators.allowOrigins: want a list of origins such as [\"http://192.168.1.20:5173\"]: %w", path, err)
		}
	}
	for name, raw := range f.Emulators {
		if len(raw) == 0 || raw[0] != '{' {
			continue // e.g. "singleProjectMode": true
		}
		var s emulatorSection
		if err := json.Unmarshal(raw, &s); err != nil {
			return fmt.Errorf("%s: emulators.%s: %w", path, name, err)
		}
		if s.Port < 0 || s.Port > 65535 {
			return fmt.Errorf("%s: emulators.%s.port: %d is not a port", path, name, s.Port)
		}
		emu[name] = s
		if s.Host != "" {
			p.Hosts = append(p.Hosts, s.Host)
		}
		if s.Port > 0 {
			p.Ports[name] = s.Port
		}
	}
	slices.Sort(p.Hosts)
	p.FirestorePort, p.FirestoreHost = emu["firestore"].Port, emu["firestore"].Host
	p.AuthPort, p.AuthHost = emu["auth"].Port, emu["auth"].Host
	return nil
}

// rulesOf reads the rules file of a "database" or "storage" section.
func (p *Project) rulesOf(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var secs []rulesSection
	if raw[0] == '[' {
		if err := json.Unmarshal(raw, &secs); err != nil {
			return "", err
		}
	} else {
		var s rulesSection
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", err
		}
		secs = []rulesSection{s}
	}
	for _, s := range secs {
		if s.Rules != "" {
			return p.resolve(s.Rules), nil
		}
	}
	return "", nil
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
