package functions

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// DefaultCodebase is the name of a codebase that names none.
const DefaultCodebase = "default"

// DefaultIgnore is what firebase-tools leaves out of a codebase when
// firebase.json lists no "ignore" (also what a change to does not reload).
var DefaultIgnore = []string{"node_modules", ".git", "firebase-debug.log", "firebase-debug.*.log", "*.local"}

// Codebase is one entry of firebase.json's "functions".
type Codebase struct {
	// Name is "codebase" (DefaultCodebase when absent).
	Name string `json:"codebase"`
	// Source is the directory holding package.json, absolute.
	Source string `json:"source"`
	// Runtime is firebase.json's "runtime" (e.g. nodejs22); informative.
	Runtime string `json:"runtime,omitempty"`
	// Ignore are glob patterns of paths a change to does not reload.
	Ignore []string `json:"ignore,omitempty"`
}

type codebaseJSON struct {
	Source    *string         `json:"source"`
	Codebase  string          `json:"codebase"`
	Runtime   string          `json:"runtime"`
	Ignore    []string        `json:"ignore"`
	Predeploy json.RawMessage `json:"predeploy"` // ignored, as by the emulator
}

// codebaseName is what firebase-tools accepts as a codebase's name: 1
// to 63 of [a-z0-9_-]. (The length is checked apart: a regexp's {1,63}
// compiles to 63 copies of the class, at every start of pyric.)
var codebaseName = regexp.MustCompile(`^[a-z0-9_-]+$`)

// ParseConfig reads firebase.json's "functions" section (an object or a
// list of codebases); relative sources resolve against projectDir. An
// absent section (nil or null) is no codebases.
func ParseConfig(raw json.RawMessage, projectDir string) ([]Codebase, error) {
	raw = json.RawMessage(strings.TrimSpace(string(raw)))
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var list []codebaseJSON
	if raw[0] == '[' {
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, fmt.Errorf("functions: %w", err)
		}
	} else {
		var one codebaseJSON
		if err := json.Unmarshal(raw, &one); err != nil {
			return nil, fmt.Errorf("functions: %w", err)
		}
		list = []codebaseJSON{one}
	}
	var out []Codebase
	names, sources := map[string]bool{}, map[string]bool{}
	for i, c := range list {
		where := "functions"
		if raw[0] == '[' {
			where = fmt.Sprintf("functions[%d]", i)
		}
		if c.Source == nil || *c.Source == "" {
			return nil, fmt.Errorf("%s: \"source\" is required (the directory holding the functions' package.json)", where)
		}
		cb := Codebase{Name: c.Codebase, Source: *c.Source, Runtime: c.Runtime, Ignore: c.Ignore}
		if cb.Name == "" {
			cb.Name = DefaultCodebase
		}
		if len(cb.Name) > 63 || !codebaseName.MatchString(cb.Name) {
			return nil, fmt.Errorf("%s: codebase %q: use 1 to 63 lowercase letters, digits, dashes and underscores", where, cb.Name)
		}
		if !filepath.IsAbs(cb.Source) {
			cb.Source = filepath.Join(projectDir, cb.Source)
		}
		cb.Source = filepath.Clean(cb.Source)
		if cb.Ignore == nil {
			cb.Ignore = DefaultIgnore
		}
		if names[cb.Name] {
			return nil, fmt.Errorf("%s: codebase %q is listed twice", where, cb.Name)
		}
		if sources[cb.Source] {
			return nil, fmt.Errorf("%s: source %q is used by two codebases", where, *c.Source)
		}
		names[cb.Name], sources[cb.Source] = true, true
		out = append(out, cb)
	}
	return out, nil
}

// reservedKeys cannot be set from a .env file (firebase-tools'
// functions env validation).
var reservedKeys = map[string]bool{
	"FIREBASE_CONFIG": true, "CLOUD_RUNTIME_CONFIG": true, "EVENTARC_CLOUD_EVENT_SOURCE": true,
	"ENTRY_POINT": true, "GCP_PROJECT": true, "GCLOUD_PROJECT": true, "GOOGLE_CLOUD_PROJECT": true,
	"FUNCTION_TRIGGER_TYPE": true, "FUNCTION_NAME": true, "FUNCTION_MEMORY_MB": true,
	"FUNCTION_TIMEOUT_SEC": true, "FUNCTION_IDENTITY": true, "FUNCTION_REGION": true,
	"FUNCTION_TARGET": true, "FUNCTION_SIGNATURE_TYPE": true, "K_SERVICE": true, "K_REVISION": true,
	"PORT": true, "K_CONFIGURATION": true,
}

var (
	reservedPrefixes = []string{"X_GOOGLE_", "FIREBASE_", "EXT_", "KIT_"}
	allowedPrefixes  = []string{"FIREBASE_SECRET_REF_", "EXT_MIGRATED_SYSTEM_"}
	envKeyShape      = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*$`)
	envLine          = regexp.MustCompile(`(?ms)^\s*(?:export)?\s*([\w./]+)\s*=[\f\t\v]*(\s*'(?:\\'|[^'])*'|\s*"(?:\\"|[^"])*"|[^#\r\n]*)?\s*(?:#[^\n]*)?$`)
	quoted           = regexp.MustCompile(`(?s)^(["'])(.*)(["'])$`)
	envEscape        = strings.NewReplacer(`\n`, "\n", `\r`, "\r", `\t`, "\t", `\v`, "\v", `\\`, `\`, `\'`, "'", `\"`, `"`)
)

// ParseDotenv reads a functions .env file as firebase-tools does: KEY=value
// lines, optional "export", single or double quotes (escapes in double
// quotes), # comments. Unparsable lines and reserved or malformed keys
// are errors naming them.
func ParseDotenv(data string) (map[string]string, error) {
	data = strings.ReplaceAll(data, "\r\n", "\n")
	out := map[string]string{}
	var bad []string
	rest := envLine.ReplaceAllStringFunc(data, func(line string) string {
		m := envLine.FindStringSubmatch(line)
		k, v := m[1], strings.TrimSpace(m[2])
		if q := quoted.FindStringSubmatch(v); q != nil && q[1] == q[3] {
			v = q[2]
			if q[1] == `"` {
				v = envEscape.Replace(v)
			}
		}
		out[k] = v
		return ""
	})
	sc := bufio.NewScanner(strings.NewReader(rest))
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" && !strings.HasPrefix(l, "#") {
			bad = append(bad, l)
		}
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("invalid dotenv file, error on lines: %s", strings.Join(bad, ","))
	}
	var errs []error
	for k := range out {
		if err := validateEnvKey(k); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

func validateEnvKey(k string) error {
	if reservedKeys[k] {
		return fmt.Errorf("key %s is reserved for internal use", k)
	}
	if !envKeyShape.MatchString(k) {
		return fmt.Errorf("key %s must start with an uppercase ASCII letter or underscore, and then consist of uppercase ASCII letters, digits, and underscores", k)
	}
	for _, p := range reservedPrefixes {
		if !strings.HasPrefix(k, p) {
			continue
		}
		for _, a := range allowedPrefixes {
			if strings.HasPrefix(k, a) && k != a {
				return nil
			}
		}
		return fmt.Errorf("key %s starts with a reserved prefix (%s)", k, strings.Join(reservedPrefixes, " "))
	}
	return nil
}

// UserEnv is the environment a codebase's functions get from its files,
// loaded as the Emulator Suite loads it: .env, then .env.<project>, then
// .env.local (later files win), the secrets of .secret.local, and
// .runtimeconfig.json as CLOUD_RUNTIME_CONFIG. Files names which files
// were read, for the terminal.
type UserEnv struct {
	Vars  map[string]string
	Files []string
}

// LoadUserEnv reads a codebase directory's env files for the project.
func LoadUserEnv(dir, project string) (UserEnv, error) {
	env := UserEnv{Vars: map[string]string{}}
	for _, name := range []string{".env", ".env." + project, ".env.local"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return UserEnv{}, err
		}
		vars, err := ParseDotenv(string(data))
		if err != nil {
			return UserEnv{}, fmt.Errorf("failed to load environment variables from %s: %w", name, err)
		}
		for k, v := range vars {
			env.Vars[k] = v
		}
		env.Files = append(env.Files, name)
	}
	if data, err := os.ReadFile(filepath.Join(dir, ".secret.local")); err == nil {
		vars, err := ParseDotenv(string(data))
		if err != nil {
			return UserEnv{}, fmt.Errorf("failed to read local secrets file .secret.local: %w", err)
		}
		for k, v := range vars {
			env.Vars[k] = v
		}
		env.Files = append(env.Files, ".secret.local")
	} else if !errors.Is(err, os.ErrNotExist) {
		return UserEnv{}, err
	}
	if data, err := os.ReadFile(filepath.Join(dir, ".runtimeconfig.json")); err == nil {
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			return UserEnv{}, fmt.Errorf(".runtimeconfig.json: %w", err)
		}
		compact, _ := json.Marshal(v)
		env.Vars["CLOUD_RUNTIME_CONFIG"] = string(compact)
		env.Files = append(env.Files, ".runtimeconfig.json")
	} else if !errors.Is(err, os.ErrNotExist) {
		return UserEnv{}, err
	}
	return env, nil
}
