package lsp

import (
	"net/url"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/pyric/pyric/rules/lint"
	"github.com/pyric/pyric/rules/rtdb"
	"github.com/pyric/pyric/rules/source"
)

// Kind is which rules language a document holds.
type Kind int

// Kinds of documents.
const (
	Unknown   Kind = iota
	Firestore      // firestore.rules
	Storage        // storage.rules
	Database       // database.rules.json
)

func (k Kind) String() string {
	switch k {
	case Firestore:
		return "firestore"
	case Storage:
		return "storage"
	case Database:
		return "database"
	}
	return "unknown"
}

// Language ids editors give the rules languages. VS Code's extension in
// editors/vscode declares the first ones; the others are what existing
// Firebase extensions for VS Code and Neovim's filetype detection use.
var languageKinds = map[string]Kind{
	"firestore-rules": Firestore,
	"firestorerules":  Firestore,
	"firerules":       Firestore,
	"firebaserules":   Firestore,
	"storage-rules":   Storage,
	"database-rules":  Database,
}

var storageService = regexp.MustCompile(`(?m)^\s*service\s+firebase\.storage\b`)

// DetectKind says which language a document holds: what firebase.json
// names it (configured, when known), then the file name, then the
// language id; a .rules file's service declaration tells Storage from
// Firestore.
func DetectKind(name, languageID, text string, configured Kind) Kind {
	if configured != Unknown {
		return configured
	}
	base := strings.ToLower(filepath.Base(name))
	switch {
	case base == "database.rules.json" || strings.HasSuffix(base, ".rules.json"):
		return Database
	case base == "storage.rules":
		return Storage
	case base == "firestore.rules":
		return Firestore
	}
	if k, ok := languageKinds[languageID]; ok && k == Database {
		return Database
	}
	if strings.HasSuffix(base, ".rules") || languageKinds[languageID] != Unknown {
		if storageService.MatchString(text) {
			return Storage
		}
		return Firestore
	}
	return Unknown
}

// Diagnose returns what `pyric <service> rules lint` reports for a file of
// the kind, in the same order: production's compile errors and every lint
// finding (lint.Lint for Firestore and Storage, rtdb.Lint for the Realtime
// Database, the functions those commands call).
func Diagnose(kind Kind, f *source.File) source.Diagnostics {
	ds, _ := diagnose(kind, f)
	return ds
}

// diagnose is Diagnose, also saying whether the file failed to parse.
func diagnose(kind Kind, f *source.File) (source.Diagnostics, bool) {
	var r *lint.Result
	switch kind {
	case Firestore:
		r = lint.Lint(f, lint.Options{Service: lint.Firestore})
	case Storage:
		r = lint.Lint(f, lint.Options{Service: lint.Storage})
	case Database:
		rr := rtdb.Lint(f)
		rr.Diagnostics.Sort()
		return rr.Diagnostics, rr.Unparseable
	default:
		return nil, false
	}
	r.Diagnostics.Sort()
	return r.Diagnostics, r.ParseFailed
}

// maxDiagnostics caps what one publish carries, as the CLI's JSON output
// caps its list: the most severe first.
const maxDiagnostics = source.MaxMachineDiagnostics

// toProtocol converts diagnostics to the protocol's, positions in UTF-16.
func toProtocol(d *document, ds source.Diagnostics) []Diagnostic {
	if len(ds) > maxDiagnostics {
		ds = append(source.Diagnostics(nil), ds...)
		sort.SliceStable(ds, func(i, j int) bool { return ds[i].Severity > ds[j].Severity })
		ds = ds[:maxDiagnostics]
		ds.Sort()
	}
	out := make([]Diagnostic, 0, len(ds))
	for _, x := range ds {
		msg := x.Message
		if x.Fix != "" {
			msg += "\nfix: " + x.Fix
		}
		out = append(out, Diagnostic{
			Range:    d.rangeOf(x.Span),
			Severity: severity(x.Severity),
			Code:     x.Code,
			Source:   "pyric",
			Message:  msg,
		})
	}
	return out
}

func severity(s source.Severity) int {
	switch s {
	case source.Error:
		return SeverityError
	case source.Warning:
		return SeverityWarning
	}
	return SeverityInformation
}

// uriPath returns the file system path of a file: URI, or the URI's last
// element for other schemes (untitled:, …).
func uriPath(uri string) string {
	u, err := url.Parse(uri)
	if err != nil {
		return uri
	}
	if u.Scheme == "file" {
		return filepath.FromSlash(u.Path)
	}
	if u.Opaque != "" {
		return u.Opaque
	}
	return u.Path
}

// pathURI is the file: URI of an absolute path.
func pathURI(p string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(p)}).String()
}
