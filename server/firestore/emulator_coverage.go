package firestoreserver

import (
	"fmt"
	"html"
	"net/http"
	"strings"

	"github.com/pyric/pyric/rules/coverage"
)

// Rule coverage, as the official emulator's GET …:ruleCoverage reports it,
// is counted by rules/coverage from every decision of the live rules
// (LiveRules.CollectCoverage): the handler turns counting on and serves
// the report of the project's live rules.

// ruleCoverage serves one project's rule coverage.
type ruleCoverage struct{ s *Server }

// newCoverage prepares rule coverage; it counts once started.
func newCoverage(s *Server) *ruleCoverage { return &ruleCoverage{s: s} }

// start counts every decision from now on. Coverage starts when rules are
// loaded through the emulator endpoint (as @firebase/rules-unit-testing and
// firebase-tools do before a test run) or when a report is first asked for.
func (c *ruleCoverage) start() { c.s.Rules().CollectCoverage() }

type coverageReport struct {
	Rules  *rulesSource     `json:"rules,omitempty"`
	Report []*coverage.Node `json:"report,omitempty"`
}

// report builds the coverage tree of project's live rules.
func (c *ruleCoverage) report(project string) coverageReport {
	lr := c.s.Rules().For(project)
	if lr == nil {
		return coverageReport{}
	}
	name := lr.Name
	if name == "" {
		name = "firestore.rules"
	}
	out := coverageReport{Rules: &rulesSource{Files: []rulesFile{{Name: name, Content: lr.Text}}}}
	if lr.Compiled != nil {
		out.Report = lr.Coverage(project).Report()
	}
	return out
}

func (h *httpHandler) ruleCoverage(w http.ResponseWriter, ep emulatorPath) {
	h.cov.start()
	emulatorAPI.JSON(w, http.StatusOK, h.cov.report(ep.project))
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
	var rows func(n *coverage.Node, depth int)
	rows = func(n *coverage.Node, depth int) {
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
