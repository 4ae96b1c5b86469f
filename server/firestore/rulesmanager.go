package firestoreserver

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	engine "github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/rules/coverage"
	"github.com/pyric/pyric/rules/source"
)

// RulesManager holds the live firestore.rules of an engine, per project
// as the official emulator keeps them: the rules file (Set) applies to
// every project, and rules loaded for one project through the emulator's
// securityRules endpoint (SetProject) override it for that project. New
// source is swapped in only when it compiles; the last good rules stay
// live otherwise. The manager is the engine's rules gate: it routes each
// request to its project's rules, or denies everything except admin when
// none are loaded.
type RulesManager struct {
	engine *engine.Engine

	mu       sync.RWMutex
	base     *liveRules
	projects map[string]*liveRules
	// home is the project whose endpoint override a new rules file
	// replaces (the project `pyric serve` runs), as firebase-tools re-PUTs
	// the file for its project.
	home string
	// counting says decisions count rule coverage (CollectCoverage).
	counting atomic.Bool
}

// liveRules is one loaded ruleset.
type liveRules struct {
	name, text string
	gate       *engine.RulesGate
	diags      source.Diagnostics

	// covs is each project's rule coverage of these rules (the rules file
	// serves many projects; the emulator reports coverage per project).
	covMu sync.Mutex
	covs  map[string]*coverage.Coverage
}

// coverage returns project's counts of these rules, starting them.
func (lr *liveRules) coverage(project string) *coverage.Coverage {
	lr.covMu.Lock()
	defer lr.covMu.Unlock()
	c := lr.covs[project]
	if c == nil {
		if lr.covs == nil {
			lr.covs = map[string]*coverage.Coverage{}
		}
		c = lr.gate.NewCoverage()
		lr.covs[project] = c
	}
	return c
}

// NewRulesManager manages the rules of e and installs itself as e's rules
// gate. Until rules are set, client requests are denied (admin requests
// bypass rules).
func NewRulesManager(e *engine.Engine) *RulesManager {
	m := &RulesManager{engine: e, projects: map[string]*liveRules{}}
	if e != nil {
		e.SetRules(m)
	}
	return m
}

// SetHomeProject names the project whose endpoint-loaded rules a new rules
// file replaces.
func (m *RulesManager) SetHomeProject(p string) {
	m.mu.Lock()
	m.home = p
	m.mu.Unlock()
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

func compile(name, text string) (*liveRules, source.Diagnostics, error) {
	if name == "" {
		name = "firestore.rules"
	}
	f := source.NewFile(name, text)
	gate, diags := engine.NewRulesGate(f)
	if gate == nil {
		return nil, diags, &CompileError{File: f, Diags: diags}
	}
	return &liveRules{name: name, text: text, gate: gate, diags: diags}, diags, nil
}

// Set compiles the rules file and, when it compiles, makes it the rules of
// every project without rules of its own (and of the home project). It
// returns the diagnostics (warnings included); on a compile error the
// previous rules stay live and the error is a *CompileError.
func (m *RulesManager) Set(name, text string) (source.Diagnostics, error) {
	lr, diags, err := compile(name, text)
	if err != nil {
		return diags, err
	}
	m.mu.Lock()
	m.base = lr
	delete(m.projects, m.home)
	m.mu.Unlock()
	m.recheck()
	return diags, nil
}

// SetProject compiles rules for one project, as the emulator's PUT
// securityRules endpoint does.
func (m *RulesManager) SetProject(project, name, text string) (source.Diagnostics, error) {
	lr, diags, err := compile(name, text)
	if err != nil {
		return diags, err
	}
	m.mu.Lock()
	m.projects[project] = lr
	m.mu.Unlock()
	m.recheck()
	return diags, nil
}

// recheck makes the engine re-judge its listeners under the new rules.
func (m *RulesManager) recheck() {
	if m.engine != nil {
		m.engine.SetRules(m)
	}
}

// rules returns the project's live rules, or nil.
func (m *RulesManager) rules(project string) *liveRules {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if lr := m.projects[project]; lr != nil {
		return lr
	}
	return m.base
}

// Source returns the file name and text of the rules live for project, and
// whether any are loaded.
func (m *RulesManager) Source(project string) (name, text string, loaded bool) {
	lr := m.rules(project)
	if lr == nil {
		return "", "", false
	}
	return lr.name, lr.text, true
}

// Base returns the rules file's name and text (the rules of every project
// without its own), and whether one is loaded.
func (m *RulesManager) Base() (name, text string, loaded bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.base == nil {
		return "", "", false
	}
	return m.base.name, m.base.text, true
}

// Warnings returns the non-fatal diagnostics of project's live rules.
func (m *RulesManager) Warnings(project string) source.Diagnostics {
	if lr := m.rules(project); lr != nil {
		return lr.diags
	}
	return nil
}

// Authorize implements engine.Rules: the request's project's rules decide.
func (m *RulesManager) Authorize(ctx context.Context, req *engine.AuthzRequest) engine.Decision {
	lr := m.rules(req.Database.Project)
	if lr == nil {
		return engine.NoRules{}.Authorize(ctx, req)
	}
	if m.counting.Load() {
		return lr.gate.AuthorizeCounted(ctx, req, lr.coverage(req.Database.Project))
	}
	return lr.gate.Authorize(ctx, req)
}

// CollectCoverage makes every decision from now on count rule coverage
// (each expression's values, allowed requests included) into the live
// rules' Coverage. Counting costs a fraction of a decision, not a trace,
// but nothing pays it until a coverage consumer (the emulator's
// ruleCoverage endpoint, the Studio) asks.
func (m *RulesManager) CollectCoverage() { m.counting.Store(true) }

// Coverage returns project's rule coverage of its live rules since they
// were loaded, or nil when none are loaded.
func (m *RulesManager) Coverage(project string) *coverage.Coverage {
	if lr := m.rules(project); lr != nil {
		return lr.coverage(project)
	}
	return nil
}
