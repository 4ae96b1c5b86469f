// Package compat is Pyric's conformance registry: one row per public
// behavior of every service (the official SDKs and Admin SDKs against
// `pyric serve`, and the Go embedding), each with a status — conforming,
// diverged on purpose, not implemented, unverified — and the tests that
// prove it. The rows live in rows/<service>.txt; seeds/<matrix>.tsv say
// what became of every row of the original product's conformance
// matrices. `pyric conformance`, the Studio's Conformance page and the
// committed pages under docs/conformance are all generated from here;
// the package's tests keep the registry honest against the repository's
// tests.
//
// (The name is not "conformance": internal/conformance is the corpus of
// rules verdicts recorded from Google's engines.)
package compat

import (
	"bufio"
	"embed"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"
)

//go:generate go run ../../cmd/pyric conformance --markdown --write ../../docs/conformance --readme ../../README.md

//go:embed rows/*.txt seeds/*.tsv
var files embed.FS

// Status is how a row's behavior stands against production.
type Status string

// The four statuses. Diverged rows count toward a service's score (they
// behave as documented, on purpose); the others do not.
const (
	Conforming     Status = "conforming"
	Diverged       Status = "diverged"
	NotImplemented Status = "not implemented"
	Unverified     Status = "unverified"
)

// Row is one public behavior of one service.
type Row struct {
	ID       string `json:"id"`
	API      string `json:"api"`
	Behavior string `json:"behavior"`
	Status   Status `json:"status"`
	// Note is, for a diverged row, why; for a row not implemented or
	// unverified, what it would take to make it conforming.
	Note  string   `json:"note,omitempty"`
	Tests []string `json:"tests,omitempty"`
}

// Seed is one row of the original product's conformance matrices and
// what became of it here.
type Seed struct {
	Matrix string `json:"matrix"`
	Num    string `json:"num"`
	API    string `json:"api"`
	// Fate is "kept" (translated into the rows named), "merged" (into the
	// rows named, with the reason) or "n/a" (with the reason).
	Fate   string   `json:"fate"`
	Rows   []string `json:"rows,omitempty"`
	Reason string   `json:"reason,omitempty"`
}

// Score counts a service's rows by status.
type Score struct {
	Conforming     int `json:"conforming"`
	Diverged       int `json:"diverged"`
	NotImplemented int `json:"notImplemented"`
	Unverified     int `json:"unverified"`
	Total          int `json:"total"`
}

// Percent is the share of rows that behave as documented: conforming or
// diverged on purpose, over every row.
func (s Score) Percent() float64 {
	if s.Total == 0 {
		return 0
	}
	return 100 * float64(s.Conforming+s.Diverged) / float64(s.Total)
}

// String is "87.5% (35 of 40)".
func (s Score) String() string {
	return fmt.Sprintf("%.1f%% (%d of %d)", s.Percent(), s.Conforming+s.Diverged, s.Total)
}

// Service is one service's rows.
type Service struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	About string `json:"about"`
	// Matrices are the seed matrices whose rows this service answers for.
	Matrices []string `json:"matrices,omitempty"`
	Rows     []Row    `json:"rows"`
	Seeds    []Seed   `json:"seeds,omitempty"`
}

// Score counts the service's rows.
func (s *Service) Score() Score {
	var sc Score
	for _, r := range s.Rows {
		sc.Total++
		switch r.Status {
		case Conforming:
			sc.Conforming++
		case Diverged:
			sc.Diverged++
		case NotImplemented:
			sc.NotImplemented++
		case Unverified:
			sc.Unverified++
		}
	}
	return sc
}

// order is the services in the order every output lists them.
var order = []string{"firestore", "database", "auth", "storage", "messaging", "ai", "app",
	"firestore-rules", "storage-rules", "database-rules", "functions", "pubsub", "hosting", "lsp"}

var (
	loadOnce sync.Once
	loaded   []*Service
	loadErr  error
)

// Services returns every service with its rows and seeds, in order.
// The registry is embedded, so an error means a malformed file (the
// package's tests catch it first).
func Services() ([]*Service, error) {
	loadOnce.Do(func() { loaded, loadErr = load() })
	return loaded, loadErr
}

// Lookup returns the service whose id is id.
func Lookup(id string) (*Service, error) {
	all, err := Services()
	if err != nil {
		return nil, err
	}
	for _, s := range all {
		if s.ID == id {
			return s, nil
		}
	}
	return nil, fmt.Errorf("no service %q (want one of %s)", id, strings.Join(order, ", "))
}

func load() ([]*Service, error) {
	byID := map[string]*Service{}
	var out []*Service
	for _, id := range order {
		b, err := files.ReadFile("rows/" + id + ".txt")
		if err != nil {
			return nil, fmt.Errorf("compat: service %s has no rows file: %w", id, err)
		}
		s, err := parseRows(id, string(b))
		if err != nil {
			return nil, err
		}
		byID[id] = s
		out = append(out, s)
	}
	owner := map[string]*Service{}
	for _, s := range out {
		for _, m := range s.Matrices {
			owner[m] = s
		}
	}
	names, _ := files.ReadDir("seeds")
	for _, n := range names {
		// A matrix whose rows several services answer for is split into
		// seeds/<matrix>@<service>.tsv files.
		matrix, svc, _ := strings.Cut(strings.TrimSuffix(n.Name(), ".tsv"), "@")
		s := owner[matrix]
		if svc != "" {
			s = byID[svc]
		}
		if s == nil || !slices.Contains(s.Matrices, matrix) {
			return nil, fmt.Errorf("compat: seeds/%s: no service names the matrix %s", n.Name(), matrix)
		}
		b, _ := files.ReadFile(path.Join("seeds", n.Name()))
		seeds, err := parseSeeds(matrix, string(b))
		if err != nil {
			return nil, err
		}
		s.Seeds = append(s.Seeds, seeds...)
	}
	return out, nil
}

// parseRows reads a rows file: "key: value" headers (service, name,
// about, matrices), then one row a line as
// "id | API | behavior | status[: note] | test; test"; blank lines and
// lines starting with # are comments.
func parseRows(id, text string) (*Service, error) {
	s := &Service{}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		where := fmt.Sprintf("compat: rows/%s.txt:%d", id, n)
		if !strings.Contains(line, " | ") {
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				return nil, fmt.Errorf("%s: want a header (key: value) or a row (id | API | behavior | status | tests)", where)
			}
			v = strings.TrimSpace(v)
			switch k {
			case "service":
				s.ID = v
			case "name":
				s.Name = v
			case "about":
				s.About = v
			case "matrices":
				s.Matrices = strings.Fields(v)
			default:
				return nil, fmt.Errorf("%s: unknown header %q", where, k)
			}
			continue
		}
		f := strings.Split(line, " | ")
		if len(f) != 5 {
			return nil, fmt.Errorf("%s: a row has 5 fields separated by \" | \", this one has %d", where, len(f))
		}
		r := Row{ID: strings.TrimSpace(f[0]), API: strings.TrimSpace(f[1]), Behavior: strings.TrimSpace(f[2])}
		st, note, _ := strings.Cut(f[3], ":")
		r.Status, r.Note = Status(strings.TrimSpace(st)), strings.TrimSpace(note)
		for _, t := range strings.Split(f[4], ";") {
			if t = strings.TrimSpace(t); t != "" && t != "-" {
				r.Tests = append(r.Tests, t)
			}
		}
		if err := r.check(id); err != nil {
			return nil, fmt.Errorf("%s: %v", where, err)
		}
		s.Rows = append(s.Rows, r)
	}
	if s.ID != id {
		return nil, fmt.Errorf("compat: rows/%s.txt: its service header says %q", id, s.ID)
	}
	if s.Name == "" {
		return nil, fmt.Errorf("compat: rows/%s.txt: no name header", id)
	}
	seen := map[string]bool{}
	for _, r := range s.Rows {
		if seen[r.ID] {
			return nil, fmt.Errorf("compat: rows/%s.txt: row %s appears twice", id, r.ID)
		}
		seen[r.ID] = true
	}
	return s, nil
}

func (r *Row) check(service string) error {
	if !strings.HasPrefix(r.ID, service+".") || strings.ContainsAny(r.ID, " \t|;") {
		return fmt.Errorf("row id %q must start with %q and hold no space", r.ID, service+".")
	}
	if r.API == "" || r.Behavior == "" {
		return fmt.Errorf("row %s: empty API or behavior", r.ID)
	}
	switch r.Status {
	case Conforming:
		if len(r.Tests) == 0 {
			return fmt.Errorf("row %s is conforming but names no test", r.ID)
		}
	case Diverged, NotImplemented, Unverified:
		if r.Note == "" {
			return fmt.Errorf("row %s is %s without a note (the reason, or what it would take)", r.ID, r.Status)
		}
	default:
		return fmt.Errorf("row %s: unknown status %q (want conforming, diverged, not implemented or unverified)", r.ID, r.Status)
	}
	for _, t := range r.Tests {
		if _, _, _, err := SplitTest(t); err != nil {
			return fmt.Errorf("row %s: %v", r.ID, err)
		}
	}
	return nil
}

// SplitTest splits a test name "dir/of/pkg.TestName/subtest" into the
// package directory (from the repository root), the test function and
// the subtest (empty for none).
func SplitTest(name string) (dir, fn, sub string, err error) {
	i := strings.Index(name, ".Test")
	if i <= 0 {
		return "", "", "", fmt.Errorf("test %q: want dir/of/pkg.TestName[/subtest]", name)
	}
	dir, rest := name[:i], name[i+1:]
	fn, sub, _ = strings.Cut(rest, "/")
	if fn == "" || strings.ContainsAny(fn, " .") {
		return "", "", "", fmt.Errorf("test %q: bad test function name %q", name, fn)
	}
	return dir, fn, sub, nil
}

// parseSeeds reads a seeds file: one seed row a line as
// "num<TAB>API<TAB>fate", where fate is "row-id[, row-id]" (kept),
// "merged row-id[, row-id]: reason" or "n/a: reason".
func parseSeeds(matrix, text string) ([]Seed, error) {
	var out []Seed
	seen := map[string]bool{}
	for n, line := range strings.Split(text, "\n") {
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		where := fmt.Sprintf("compat: seeds/%s.tsv:%d", matrix, n+1)
		f := strings.Split(line, "\t")
		if len(f) != 3 {
			return nil, fmt.Errorf("%s: want num<TAB>API<TAB>fate", where)
		}
		sd := Seed{Matrix: matrix, Num: f[0], API: f[1]}
		if seen[sd.Num] {
			return nil, fmt.Errorf("%s: seed row %s appears twice", where, sd.Num)
		}
		seen[sd.Num] = true
		fate := strings.TrimSpace(f[2])
		switch {
		case strings.HasPrefix(fate, "n/a:"):
			sd.Fate, sd.Reason = "n/a", strings.TrimSpace(strings.TrimPrefix(fate, "n/a:"))
		case strings.HasPrefix(fate, "merged "):
			ids, reason, ok := strings.Cut(strings.TrimPrefix(fate, "merged "), ":")
			if !ok {
				return nil, fmt.Errorf("%s: a merged seed row needs its reason (merged id: reason)", where)
			}
			sd.Fate, sd.Rows, sd.Reason = "merged", splitIDs(ids), strings.TrimSpace(reason)
		default:
			sd.Fate, sd.Rows = "kept", splitIDs(fate)
		}
		if sd.Fate != "kept" && sd.Reason == "" || sd.Fate != "n/a" && len(sd.Rows) == 0 {
			return nil, fmt.Errorf("%s: seed row %s: fate %q lacks its rows or its reason", where, sd.Num, fate)
		}
		out = append(out, sd)
	}
	return out, nil
}

func splitIDs(s string) []string {
	var out []string
	for _, id := range strings.Split(s, ",") {
		if id = strings.TrimSpace(id); id != "" {
			out = append(out, id)
		}
	}
	return out
}

// RowIDs returns every row id of every service, sorted.
func RowIDs() ([]string, error) {
	all, err := Services()
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, s := range all {
		for _, r := range s.Rows {
			ids = append(ids, r.ID)
		}
	}
	sort.Strings(ids)
	return ids, nil
}
