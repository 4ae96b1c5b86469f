package lsp

import (
	"github.com/pyric/pyric/rules/source"
	"github.com/sourcegraph/jsonrpc2"
)

// codeActions answers textDocument/codeAction: every finding of the
// document's current version with a mechanical fix (source.Diagnostic's
// Edit, which lint states) whose range touches the requested one becomes
// a quick fix with that edit.
func (s *Server) codeActions(p CodeActionParams) ([]CodeAction, error) {
	if len(p.Context.Only) > 0 {
		quick := false
		for _, k := range p.Context.Only {
			quick = quick || k == "quickfix" || k == ""
		}
		if !quick {
			return []CodeAction{}, nil
		}
	}
	s.mu.Lock()
	d, ok := s.docs[p.TextDocument.URI]
	if !ok {
		s.mu.Unlock()
		return nil, errorf(jsonrpc2.CodeInvalidParams, "codeAction: document not open: %s", p.TextDocument.URI)
	}
	snap := *d.document
	l := d.linted
	kind := d.kind
	s.mu.Unlock()
	var ds source.Diagnostics
	if l != nil && l.text == snap.text {
		ds = l.diags
	} else {
		ds = Diagnose(kind, source.NewFile(uriPath(snap.uri), snap.text))
	}
	out := []CodeAction{}
	for _, x := range ds {
		if x.Edit == nil {
			continue
		}
		r := snap.rangeOf(x.Span)
		if before(p.Range.End, r.Start) || before(r.End, p.Range.Start) {
			continue
		}
		title := "Fix " + x.Code
		if x.Fix != "" {
			title = x.Fix
		}
		pd := toProtocol(&snap, source.Diagnostics{x})
		out = append(out, CodeAction{
			Title:       title,
			Kind:        "quickfix",
			Diagnostics: pd,
			IsPreferred: true,
			Edit: &WorkspaceEdit{Changes: map[string][]TextEdit{
				snap.uri: {{Range: snap.rangeOf(x.Edit.Span), NewText: x.Edit.Text}},
			}},
		})
	}
	return out, nil
}

// before reports whether position a comes strictly before b.
func before(a, b Position) bool {
	return a.Line < b.Line || a.Line == b.Line && a.Character < b.Character
}
