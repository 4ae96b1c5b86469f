package firestore

import (
	"context"

	"github.com/pyric/pyric/rules/coverage"
	"github.com/pyric/pyric/rules/live"
	"github.com/pyric/pyric/rules/source"
)

// LiveRules holds the live firestore.rules of an engine, per project as
// the official emulator keeps them (rules/live): the rules file (Set)
// applies to every project, and rules loaded for one project through the
// emulator's securityRules endpoint (SetProject) override it for that
// project. New source is swapped in only when it compiles; the last good
// rules stay live otherwise. It is the engine's rules gate: it routes
// each request to its project's rules, or denies everything except admin
// when none are loaded.
type LiveRules struct {
	*live.Rules[*RulesGate, *coverage.Coverage]
	engine *Engine
}

// CompileError is returned for firestore.rules that do not compile.
type CompileError = live.CompileError

// NewLiveRules manages the rules of e and installs itself as e's rules
// gate. Until rules are set, client requests are denied (admin requests
// bypass rules). Engine.LiveRules is the engine's own.
func NewLiveRules(e *Engine) *LiveRules {
	m := &LiveRules{engine: e}
	m.Rules = live.New(live.Options[*RulesGate, *coverage.Coverage]{
		DefaultName: "firestore.rules",
		Compile: func(f *source.File) (*RulesGate, source.Diagnostics, bool) {
			g, diags := NewRulesGate(f)
			return g, diags, g != nil
		},
		NewCoverage: (*RulesGate).NewCoverage,
		// The engine re-judges its listeners under the new rules.
		Changed: m.recheck,
	})
	m.recheck()
	return m
}

// LiveRules returns the engine's live rules, making them its rules gate
// on first use.
func (e *Engine) LiveRules() *LiveRules {
	e.liveOnce.Do(func() { e.live = NewLiveRules(e) })
	return e.live
}

func (m *LiveRules) recheck() {
	if m.engine != nil {
		m.engine.SetRules(m)
	}
}

// SetProject compiles rules for one project, as the emulator's PUT
// securityRules endpoint does.
func (m *LiveRules) SetProject(project, name, text string) (source.Diagnostics, error) {
	return m.SetScope(project, name, text)
}

// SetHomeProject names the project whose endpoint-loaded rules a new
// rules file replaces.
func (m *LiveRules) SetHomeProject(p string) { m.SetHome(p) }

// Authorize implements Rules: the request's project's rules decide.
func (m *LiveRules) Authorize(ctx context.Context, req *AuthzRequest) AuthzDecision {
	project := req.Database.Project
	lr := m.For(project)
	if lr == nil {
		return NoRules{}.Authorize(ctx, req)
	}
	if m.Counting() {
		return lr.Compiled.AuthorizeCounted(ctx, req, lr.Coverage(project))
	}
	return lr.Compiled.Authorize(ctx, req)
}
