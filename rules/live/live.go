// Package live holds a service's rules in force, the one mechanism the
// Firestore, Storage and Realtime Database engines share for it: the
// rules file every scope (a Firestore project, an RTDB namespace; Storage
// has one scope) runs under unless rules were loaded for that scope
// alone, compiled before they are swapped in so the last good rules stay
// live when new source does not compile, with their diagnostics and the
// rule coverage counted since they were loaded.
//
// The package knows nothing of any service: an engine gives it its
// compiler and its coverage counts as functions (Options).
package live

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/pyric/pyric/rules/source"
)

// Options configure New. R is the engine's compiled rules, C its coverage
// counts of one scope under one Ruleset.
type Options[R, C any] struct {
	// DefaultName names source loaded without a name ("firestore.rules").
	DefaultName string
	// Compile compiles a rules file; ok is false when it does not compile
	// (the diagnostics then hold its errors).
	Compile func(f *source.File) (rules R, diags source.Diagnostics, ok bool)
	// NewCoverage starts empty coverage counts of rules; nil means the
	// service counts no coverage (Coverage returns C's zero value).
	NewCoverage func(rules R) C
	// Changed, when set, is called after every swap (outside the lock):
	// the engine re-judges what the old rules allowed (listeners).
	Changed func()
}

// Ruleset is one loaded rules file.
type Ruleset[R, C any] struct {
	Name, Text string
	// Compiled is what Options.Compile returned.
	Compiled R
	// Diags are the file's non-fatal diagnostics (warnings).
	Diags source.Diagnostics

	newCov func(R) C
	covMu  sync.Mutex
	covs   map[string]C // per scope: one rules file serves many scopes
}

// Coverage returns scope's coverage counts of these rules, starting them;
// C's zero value when the service counts none.
func (r *Ruleset[R, C]) Coverage(scope string) C {
	var zero C
	if r == nil || r.newCov == nil {
		return zero
	}
	r.covMu.Lock()
	defer r.covMu.Unlock()
	c, ok := r.covs[scope]
	if !ok {
		if r.covs == nil {
			r.covs = map[string]C{}
		}
		c = r.newCov(r.Compiled)
		r.covs[scope] = c
	}
	return c
}

// Rules is a service's rules in force. It is safe for concurrent use.
type Rules[R, C any] struct {
	opts Options[R, C]

	mu     sync.RWMutex
	base   *Ruleset[R, C]
	scoped map[string]*Ruleset[R, C]
	// home is the scope whose own rules a new rules file replaces (the
	// project `pyric serve` runs: firebase-tools re-PUTs the file for it).
	home string
	// counting says decisions count coverage (CollectCoverage).
	counting atomic.Bool
}

// New returns rules with none loaded.
func New[R, C any](opts Options[R, C]) *Rules[R, C] {
	return &Rules[R, C]{opts: opts, scoped: map[string]*Ruleset[R, C]{}}
}

// CompileError is source that does not compile; the previous rules stay
// live.
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

// Compile compiles source without loading it: the Ruleset Set would make
// live, or a *CompileError.
func (l *Rules[R, C]) Compile(name, text string) (*Ruleset[R, C], source.Diagnostics, error) {
	if name == "" {
		name = l.opts.DefaultName
	}
	f := source.NewFile(name, text)
	r, diags, ok := l.opts.Compile(f)
	if !ok {
		return nil, diags, &CompileError{File: f, Diags: diags}
	}
	return &Ruleset[R, C]{Name: name, Text: text, Compiled: r, Diags: diags, newCov: l.opts.NewCoverage}, diags, nil
}

// SetHome names the scope whose own rules a new rules file replaces.
func (l *Rules[R, C]) SetHome(scope string) {
	l.mu.Lock()
	l.home = scope
	l.mu.Unlock()
}

// Set compiles the rules file and, when it compiles, makes it the rules of
// every scope without rules of its own (and of the home scope). It
// returns the diagnostics (warnings included); on a compile error the
// previous rules stay live and the error is a *CompileError.
func (l *Rules[R, C]) Set(name, text string) (source.Diagnostics, error) {
	rs, diags, err := l.Compile(name, text)
	if err != nil {
		return diags, err
	}
	l.SetCompiled(rs)
	return diags, nil
}

// SetScope compiles rules for one scope alone (the Firestore emulator's
// PUT securityRules, RTDB's PUT /.settings/rules.json).
func (l *Rules[R, C]) SetScope(scope, name, text string) (source.Diagnostics, error) {
	rs, diags, err := l.Compile(name, text)
	if err != nil {
		return diags, err
	}
	l.SetScopeCompiled(scope, rs)
	return diags, nil
}

// SetScopeCompiled makes rs (from Compile) the rules of scope.
func (l *Rules[R, C]) SetScopeCompiled(scope string, rs *Ruleset[R, C]) {
	l.mu.Lock()
	l.scoped[scope] = rs
	l.mu.Unlock()
	l.changed()
}

// Clear unloads the rules file: scopes without their own have no rules.
func (l *Rules[R, C]) Clear() {
	l.mu.Lock()
	l.base = nil
	l.mu.Unlock()
	l.changed()
}

// ClearScope drops scope's own rules: it runs under the rules file again.
func (l *Rules[R, C]) ClearScope(scope string) {
	l.mu.Lock()
	_, had := l.scoped[scope]
	delete(l.scoped, scope)
	l.mu.Unlock()
	if had {
		l.changed()
	}
}

// ClearScopes drops every scope's own rules.
func (l *Rules[R, C]) ClearScopes() {
	l.mu.Lock()
	n := len(l.scoped)
	l.scoped = map[string]*Ruleset[R, C]{}
	l.mu.Unlock()
	if n > 0 {
		l.changed()
	}
}

func (l *Rules[R, C]) changed() {
	if l.opts.Changed != nil {
		l.opts.Changed()
	}
}

// For returns the rules of scope: its own, else the rules file; nil when
// none are loaded.
func (l *Rules[R, C]) For(scope string) *Ruleset[R, C] {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if rs := l.scoped[scope]; rs != nil {
		return rs
	}
	return l.base
}

// Own returns scope's own rules (nil when it runs under the rules file).
func (l *Rules[R, C]) Own(scope string) *Ruleset[R, C] {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.scoped[scope]
}

// Scopes returns the scopes with rules of their own.
func (l *Rules[R, C]) Scopes() []string {
	l.mu.RLock()
	defer l.mu.RUnlock()
	out := make([]string, 0, len(l.scoped))
	for s := range l.scoped {
		out = append(out, s)
	}
	return out
}

// BaseRuleset returns the rules file's Ruleset, nil when none is loaded.
func (l *Rules[R, C]) BaseRuleset() *Ruleset[R, C] {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.base
}

// Base returns the rules file's name and text (the rules of every scope
// without its own), and whether one is loaded.
func (l *Rules[R, C]) Base() (name, text string, loaded bool) {
	if rs := l.BaseRuleset(); rs != nil {
		return rs.Name, rs.Text, true
	}
	return "", "", false
}

// Source returns the file name and text of the rules live for scope, and
// whether any are loaded.
func (l *Rules[R, C]) Source(scope string) (name, text string, loaded bool) {
	if rs := l.For(scope); rs != nil {
		return rs.Name, rs.Text, true
	}
	return "", "", false
}

// Warnings returns the non-fatal diagnostics of scope's live rules.
func (l *Rules[R, C]) Warnings(scope string) source.Diagnostics {
	if rs := l.For(scope); rs != nil {
		return rs.Diags
	}
	return nil
}

// CollectCoverage makes every decision from now on count rule coverage
// (each expression's values, allowed requests included). Counting costs a
// fraction of a decision, but nothing pays it until a coverage consumer
// (the emulator's ruleCoverage endpoint, the Studio) asks.
func (l *Rules[R, C]) CollectCoverage() { l.counting.Store(true) }

// Counting reports whether decisions count coverage.
func (l *Rules[R, C]) Counting() bool { return l.counting.Load() }

// Coverage returns scope's coverage of its live rules since they were
// loaded; C's zero value when none are loaded.
func (l *Rules[R, C]) Coverage(scope string) C {
	return l.For(scope).Coverage(scope)
}

// ResetCoverage starts scope's coverage counts of these rules afresh.
func (r *Ruleset[R, C]) ResetCoverage(scope string) {
	if r == nil {
		return
	}
	r.covMu.Lock()
	delete(r.covs, scope)
	r.covMu.Unlock()
}

// SetCompiled makes rs (from Compile) the rules file, as Set does.
func (l *Rules[R, C]) SetCompiled(rs *Ruleset[R, C]) {
	l.mu.Lock()
	l.base = rs
	if l.home != "" {
		delete(l.scoped, l.home)
	}
	l.mu.Unlock()
	l.changed()
}
