package firestoreserver

import (
	"fmt"
	"html"
	"net/http"
	"strings"
	"sync"

	engine "github.com/pyric/pyric/firestore"
	fsrules "github.com/pyric/pyric/rules/firestore"
)

// Rule coverage, as the official emulator's GET …:ruleCoverage reports it,
// is counted by rules/firestore's Coverage from the typed traces of the
// engine's decisions: the handler only keeps one Coverage per project for
// the rules that made its counts, and serves the report.

// coverage counts evaluations of each project's live rules.
type coverage struct {
	s *Server

	startOnce sync.Once
	mu        sync.Mutex
	byProject map[string]*projectCoverage
}

// projectCoverage is one project's counts for the rules that made them.
type projectCoverage struct {
	rules *liveRules
	cov   *fsrules.Coverage
}

// newCoverage prepares rule coverage; it records once started.
func newCoverage(s *Server) *coverage {
	return &coverage{s: s, byProject: map[string]*projectCoverage{}}
}

// start records every decision from now on. Coverage starts when rules are
// loaded through the emulator endpoint (as @firebase/rules-unit-testing and
// firebase-tools do before a test run) or when a report is first asked
// for, because tracing every decision costs several times an untraced one.
func (c *coverage) start() {
	c.startOnce.Do(func() { c.s.Rules().Observe(c.record) })
}

// record counts a decision; new rules for a project start its counts
// afresh.
func (c *coverage) record(project string, lr *liveRules, d engine.Decision) {
	exp, ok := d.Explanation.(*fsrules.Decision)
	if !ok || lr.gate == nil {
		return
	}
	c.mu.Lock()
	pc := c.byProject[project]
	if pc == nil || pc.rules != lr {
		pc = &projectCoverage{rules: lr, cov: fsrules.NewCoverage(lr.gate.Ruleset())}
		c.byProject[project] = pc
	}
	c.mu.Unlock()
	pc.cov.Record(exp)
}

type coverageReport struct {
	Rules  *rulesSource            `json:"rules,omitempty"`
	Report []*fsrules.CoverageNode `json:"report,omitempty"`
}

// report builds the coverage tree of project's live rules.
func (c *coverage) report(project string) coverageReport {
	lr := c.s.Rules().rules(project)
	if lr == nil {
		return coverageReport{}
	}
	name := lr.name
	if name == "" {
		name = "firestore.rules"
	}
	out := coverageReport{Rules: &rulesSource{Files: []rulesFile{{Name: name, Content: lr.text}}}}
	if lr.gate == nil {
		return out
	}
	c.mu.Lock()
	pc := c.byProject[project]
	c.mu.Unlock()
	if pc == nil || pc.rules != lr {
		pc = &projectCoverage{rules: lr, cov: fsrules.NewCoverage(lr.gate.Ruleset())}
	}
	out.Report = pc.cov.Report()
	return out
}

func (h *httpHandler) ruleCoverage(w http.ResponseWriter, ep emulatorPath) {
	h.cov.start()
	writeJSONValue(w, h.cov.report(ep.project))
}

// ruleCoverageHTML renders the report for a person: the rules source, and
// under it every evaluated expression with its values.
func (h *httpHandler) ruleCoverageHTML(w http.ResponseWriter, ep emulatorPath) {
	h.cov.start()
	rep := h.cov.report(ep.project)
	var b strings.Builder
	b.WriteString("<!doctype html><html><head><meta charset=\"utf-8\"><title>Firestore rule coverage</title>" +
		"<style>body{font-family:sans-serif}pre{background:#f6f6f6;padding:1em}td{padding:2px 8px;vertical-align:top}.none{color:#999}code{white-space:pre-wrap}</style></head><body>")
	if rep.Rules == nil {
		b.WriteString("<p>No rules are loaded.</p></body></html>")
		writeHTML(w, b.String())
		return
	}
	f := rep.Rules.Files[0]
	fmt.Fprintf(&b, "<h1>Rule coverage: %s</h1><pre>", html.EscapeString(f.Name))
	for i, line := range strings.Split(f.Content, "\n") {
		fmt.Fprintf(&b, "%4d  %s\n", i+1, html.EscapeString(line))
	}
	b.WriteString("</pre><table><tr><th>where</th><th>expression</th><th>values</th></tr>")
	var rows func(n *fsrules.CoverageNode, depth int)
	rows = func(n *fsrules.CoverageNode, depth int) {
		cls := ""
		if len(n.Values) == 0 {
			cls = ` class="none"`
		}
		var vals []string
		for _, v := range n.Values {
			vals = append(vals, fmt.Sprintf("%s × %d", string(v.Value), v.Count))
		}
		if len(vals) == 0 {
			vals = []string{"never evaluated"}
		}
		fmt.Fprintf(&b, "<tr%s><td>L%d:%d</td><td><code>%s%s</code></td><td><code>%s</code></td></tr>", cls, n.SourcePosition.Line, n.SourcePosition.Column,
			strings.Repeat("&nbsp;&nbsp;", depth), html.EscapeString(n.Source), html.EscapeString(strings.Join(vals, ", ")))
		for _, c := range n.Children {
			rows(c, depth+1)
		}
	}
	for _, n := range rep.Report {
		rows(n, 0)
	}
	b.WriteString("</table></body></html>")
	writeHTML(w, b.String())
}

func writeHTML(w http.ResponseWriter, s string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte(s))
}
