package firestore

import (
	"fmt"
	"strings"
	"sync"

	engine "github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/rules/source"
)

// RulesManager holds the live firestore.rules of an engine: it compiles new
// source, swaps it in only when it compiles (the last good rules stay live
// otherwise), and remembers the source and its diagnostics for the
// emulator's GET securityRules endpoint and for Studio.
type RulesManager struct {
	engine *engine.Engine

	mu     sync.Mutex
	name   string // file name, e.g. firestore.rules
	text   string // the live source; "" when no rules are loaded
	loaded bool
	diags  source.Diagnostics // warnings of the live rules
}

// NewRulesManager manages the rules of e. Until Set succeeds, the engine
// keeps whatever gate it has (by default: deny everything except admin).
func NewRulesManager(e *engine.Engine) *RulesManager {
	return &RulesManager{engine: e}
}

// CompileError is returned by Set for source that does not compile.
type CompileError struct {
	File  *source.File
	Diags source.Diagnostics
}

// Error renders every error as file:line:col: message.
func (e *CompileError) Error() string {
	var b strings.Builder
	for _, d := range e.Diags {
		if d.Severity != source.Error {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "%s:%d:%d: %s", e.File.Name, d.Span.Start.Line, d.Span.Start.Column, d.Message)
	}
	return b.String()
}

// EmulatorMessage renders the errors as the official emulator does:
// "Error compiling rules:\nL1:53 Missing conditional expression after 'if'."
func (e *CompileError) EmulatorMessage() string {
	var b strings.Builder
	b.WriteString("Error compiling rules:")
	for _, d := range e.Diags {
		if d.Severity == source.Error {
			fmt.Fprintf(&b, "\nL%d:%d %s", d.Span.Start.Line, d.Span.Start.Column, d.Message)
		}
	}
	return b.String()
}

// Set compiles text and, when it compiles, makes it the live rules. It
// returns the diagnostics (warnings included); on a compile error the
// previous rules stay live and the error is a *CompileError.
func (m *RulesManager) Set(name, text string) (source.Diagnostics, error) {
	if name == "" {
		name = "firestore.rules"
	}
	f := source.NewFile(name, text)
	gate, diags := engine.NewRulesGate(f)
	if gate == nil {
		return diags, &CompileError{File: f, Diags: diags}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.engine.SetRules(gate)
	m.name, m.text, m.loaded, m.diags = name, text, true, diags
	return diags, nil
}

// Source returns the live rules' file name and text, and whether any rules
// are loaded.
func (m *RulesManager) Source() (name, text string, loaded bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.name, m.text, m.loaded
}

// Warnings returns the live rules' non-fatal diagnostics.
func (m *RulesManager) Warnings() source.Diagnostics {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.diags
}
