package lint

import (
	"fmt"
	"strings"

	"github.com/pyric/pyric/rules/ast"
	"github.com/pyric/pyric/rules/source"
)

// constBool folds a condition made of boolean literals, !, &&, || and
// ternaries with constant conditions. Production's && and || absorb an
// error from the other side (error || true is true, error && false is
// false), so one constant side can decide. A nil condition (`allow read;`)
// is true.
func constBool(e ast.Expr) (value, known bool) {
	if isNil(e) {
		return true, true
	}
	switch e := unparen(e).(type) {
	case *ast.Literal:
		return e.Bool, e.Kind == ast.Bool
	case *ast.Unary:
		if e.Op == "!" {
			v, ok := constBool(e.X)
			return !v, ok
		}
	case *ast.Binary:
		x, okx := constBool(e.X)
		y, oky := constBool(e.Y)
		switch e.Op {
		case "&&":
			if okx && !x || oky && !y {
				return false, true
			}
			return true, okx && oky
		case "||":
			if okx && x || oky && y {
				return true, true
			}
			return false, okx && oky
		}
	case *ast.Ternary:
		if c, ok := constBool(e.Cond); ok {
			if c {
				return constBool(e.Then)
			}
			return constBool(e.Else)
		}
	}
	return false, false
}

// reachable returns every function the calls lead to, transitively.
func reachable(calls []callSite) map[*fnInfo]bool {
	seen := map[*fnInfo]bool{}
	var visit func(fi *fnInfo)
	visit = func(fi *fnInfo) {
		if seen[fi] {
			return
		}
		seen[fi] = true
		for _, cs := range fi.facts.calls {
			visit(cs.fn)
		}
	}
	for _, cs := range calls {
		visit(cs.fn)
	}
	return seen
}

// deepFacts merges a rule's facts with those of every function it reaches.
func deepFacts(r *rule) facts {
	f := r.facts
	for fi := range reachable(r.facts.calls) {
		f.auth = f.auth || fi.facts.auth
		f.incoming = f.incoming || fi.facts.incoming
	}
	return f
}

// verbs describes what a method set lets someone do.
func verbs(methods map[string]bool) string {
	var out []string
	if methods["get"] || methods["list"] {
		out = append(out, "read")
	}
	if methods["create"] {
		out = append(out, "create")
	}
	if methods["update"] {
		out = append(out, "change")
	}
	if methods["delete"] {
		out = append(out, "delete")
	}
	switch len(out) {
	case 0:
		return "access"
	case 1:
		return out[0]
	}
	return strings.Join(out[:len(out)-1], ", ") + " and " + out[len(out)-1]
}

// security reports rules that open data to anyone.
func (l *linter) security() {
	for _, r := range l.m.rules {
		v, known := constBool(r.allow.Cond)
		rec := recursive(r.block)
		span := l.ruleSpan(r)
		// below names what a recursive wildcard covers.
		below := ""
		if rec {
			segs := r.block.Match.Path.Segments
			prefix := display(strings.TrimSuffix(r.block.Pattern, "/"+segs[len(segs)-1].String()))
			switch {
			case prefix != "/" && prefix != "":
				below = "every " + l.svc.noun + " below " + prefix
			case l.svc.storage:
				below = "every file in the bucket"
			default:
				below = "every document in the database"
			}
		}
		switch {
		case known && v && rec:
			l.report(source.Error, CodeRecursiveWildcardOpen, span,
				"deny by default here (allow read, write: if false;) and grant access in narrower match blocks, with conditions",
				"%s is always true under a recursive wildcard: anyone, signed in or not, can %s %s",
				ruleLabel(r), verbs(r.methods), below)
			continue
		case known && v && isWrite(r.methods):
			owner := l.owner(r)
			l.report(source.Warning, CodePermissiveRule, span,
				fmt.Sprintf("require a signed-in owner: `if request.auth != null && request.auth.uid == %s`", owner),
				"%s is always true: anyone, signed in or not, can %s these %ss",
				ruleLabel(r), verbs(r.methods), l.svc.noun)
			continue
		case known:
			continue
		}
		deep := deepFacts(r)
		if rec && isRead(r.methods) && !deep.auth {
			l.report(source.Warning, CodeRecursiveWildcardRead, span,
				"require sign-in (request.auth != null && …), or grant the read only on the collections meant to be public",
				"%s never checks request.auth: anyone, signed in or not, can read %s that passes `%s`",
				ruleLabel(r), below, shorten(srcText(l.file, span), 60))
		}
		if isWrite(r.methods) && !deep.auth {
			owner := l.owner(r)
			l.report(source.Warning, CodeWriteWithoutAuth, span,
				fmt.Sprintf("check the caller first: `request.auth != null && request.auth.uid == %s && …`", owner),
				"%s never checks request.auth, directly or in the functions it calls: anyone, signed in or not, can %s whenever the condition holds",
				ruleLabel(r), verbs(onlyWrites(r.methods)))
			l.authGuard(r)
		}
		if (r.methods["create"] || r.methods["update"]) && !deep.incoming {
			if l.svc.storage {
				l.report(source.Warning, CodeWriteUnvalidated, span,
					"validate the upload, e.g. request.resource.size < 5 * 1024 * 1024 && request.resource.contentType.matches('image/.*')",
					"%s never looks at request.resource, so a file of any size, type and metadata can be uploaded",
					ruleLabel(r))
			} else {
				l.report(source.Warning, CodeWriteUnvalidated, span,
					"validate the incoming document, e.g. request.resource.data.keys().hasOnly(['title', 'body']) && request.resource.data.title is string",
					"%s never looks at request.resource.data, so a document with any fields and values can be written",
					ruleLabel(r))
			}
		}
	}
}

func onlyWrites(methods map[string]bool) map[string]bool {
	return map[string]bool{"create": methods["create"], "update": methods["update"], "delete": methods["delete"]}
}

// owner suggests what request.auth.uid should equal in a fix: the path's
// user wildcard when there is one (/users/{userId}), else an owner field of
// the stored (or, for create, the incoming) document or file.
func (l *linter) owner(r *rule) string {
	if w := r.scope.lastWildcard(); w != "" {
		lw := strings.ToLower(w)
		for _, hint := range []string{"user", "uid", "owner", "account", "profile", "member"} {
			if strings.Contains(lw, hint) {
				return w
			}
		}
	}
	obj := "resource"
	if !r.methods["update"] && !r.methods["delete"] {
		obj = "request.resource"
	}
	if l.svc.storage {
		return obj + ".metadata.owner"
	}
	return obj + ".data.owner"
}

// authGuard attaches to the diagnostic just reported the sign-in guard
// its fix proposes, `request.auth != null && …`, in front of the rule's
// condition (parenthesized when it has an operator binding looser than
// &&). A rule without a condition gets none: its fix is a new condition,
// not an edit of one.
func (l *linter) authGuard(r *rule) {
	if isNil(r.allow.Cond) {
		return
	}
	sp := r.allow.Cond.Span()
	cond := srcText(l.file, sp)
	if strings.Contains(cond, "||") || strings.Contains(cond, "?") {
		l.edit(sp, "request.auth != null && ("+cond+")")
		return
	}
	l.edit(source.Span{Start: sp.Start, End: sp.Start}, "request.auth != null && ")
}
