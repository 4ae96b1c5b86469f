package lint

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/pyric/pyric/rules/ast"
	"github.com/pyric/pyric/rules/check"
	"github.com/pyric/pyric/rules/eval"
	"github.com/pyric/pyric/rules/source"
)

// unit is one expression root with the scope it is evaluated in.
type unit struct {
	e ast.Expr
	s *scope
}

// units lists every expression of the ruleset with its scope.
func (m *model) units() []unit {
	var out []unit
	for _, fi := range m.funcs {
		for _, l := range fi.f.Lets {
			out = append(out, unit{l.Value, fi.scope})
		}
		out = append(out, unit{fi.f.Return, fi.scope})
	}
	for _, r := range m.rules {
		out = append(out, unit{r.allow.Cond, r.scope})
	}
	return out
}

// pathInterpolations reports {name} segments of path literals (the parser
// rejects them too) and returns their offsets, so the parse error at the
// same place is not reported twice.
func (l *linter) pathInterpolations() map[int]bool {
	at := map[int]bool{}
	for _, u := range l.m.units() {
		inspect(u.e, func(e, _ ast.Expr) bool {
			p, ok := e.(*ast.Path)
			if !ok {
				return true
			}
			for _, seg := range p.Segments {
				if seg.Interp != nil || !strings.HasPrefix(seg.Text, "{") {
					continue
				}
				name := strings.TrimSpace(strings.Trim(seg.Text, "{}"))
				at[seg.Sp.Start.Offset] = true
				l.report(source.Error, CodeInvalidPathInterpolation, seg.Sp,
					fmt.Sprintf("write `$(%s)`", name),
					"`%s` inside a path literal is not the variable %s: a path literal interpolates only $(…), and production rejects this segment",
					seg.Text, name)
			}
			return true
		})
	}
	return at
}

// mistakes reports what people and agents get wrong about the language:
// JavaScript methods and globals, properties request and resource don't
// have, .length, methods without (), and functions production rejects.
// It runs on partial trees too.
func (l *linter) mistakes() {
	for _, u := range l.m.units() {
		s := u.s
		inspect(u.e, func(e, parent ast.Expr) bool {
			switch e := e.(type) {
			case *ast.Ident:
				l.ident(e, parent, s)
			case *ast.Call:
				l.call(e, s)
			case *ast.Member:
				if c, ok := parent.(*ast.Call); ok && c.Fn == ast.Expr(e) {
					return true // a method name; call() looked at it
				}
				l.wrongContext(e, s)
				l.lengthProperty(e, s)
				l.missingParens(e, s)
			case *ast.Index:
				l.wrongContext(e, s)
			}
			return true
		})
	}
}

// jsGlobals are JavaScript globals with the rules way to do what they do;
// member is the property used on them (Math.max → "max") or "".
var jsGlobals = map[string]func(member string) string{
	"Math": func(member string) string {
		for _, f := range namespaceFuncs["math"] {
			if f == member {
				return fmt.Sprintf("write `math.%s(…)` (lowercase)", member)
			}
		}
		if fix := mathFix(member); fix != "" {
			return fix
		}
		return "use the math namespace: math.abs, ceil, floor, round, sqrt, pow, isNaN"
	},
	"Date": func(member string) string {
		return "use `request.time` for the current time, and timestamp.date(y, m, d) or timestamp.value(ms) to build one"
	},
	"JSON": func(string) string {
		return "rules work on maps directly: compare fields, or test keys with m.keys().hasAll([...])"
	},
	"Object": func(member string) string {
		switch member {
		case "keys":
			return "write `m.keys()`"
		case "values":
			return "write `m.values()`"
		}
		return "rules work on maps directly: m.keys(), m.values(), m.get(k, default), k in m"
	},
	"Array": func(member string) string {
		if member == "isArray" {
			return "write `x is list`"
		}
		return "use a list literal [a, b] and the list methods (size, hasAll, hasAny, hasOnly, concat)"
	},
	"String":     func(string) string { return "write `string(x)`" },
	"Number":     func(string) string { return "write `int(x)` or `float(x)`" },
	"parseInt":   func(string) string { return "write `int(x)`" },
	"parseFloat": func(string) string { return "write `float(x)`" },
	"Boolean":    func(string) string { return "compare instead: `x == true` or `x == 'true'`" },
	"isNaN":      func(string) string { return "write `math.isNaN(x)`" },
	"isFinite":   func(string) string { return "compare with finite bounds instead (x > -1000000 && x < 1000000)" },
	"NaN":        func(string) string { return "test for it with `math.isNaN(x)`" },
	"Infinity":   func(string) string { return "compare with a finite bound instead" },
	"Promise":    func(string) string { return "rules are evaluated synchronously: call get() and exists() directly" },
	"console":    func(string) string { return "remove it: rules cannot log" },
	"undefined": func(string) string {
		return "a missing field is an error, not undefined: test `!('f' in m)`, or read it with `m.get('f', null)`"
	},
	"this": func(string) string {
		return "use `resource` (the stored document) or `request.resource` (the incoming one)"
	},
}

// rejectedFuncs are bare functions production fails at evaluation with
// "Function not found error" (rules-language.json: debug, bool).
var rejectedFuncs = map[string]string{
	"debug": "remove the debug() wrapper and use its argument directly",
	"bool":  "compare instead: `x == true`, or `x == 'true'` for a string",
}

// rtdbVars are Realtime Database rule variables, wrong in these rules.
var rtdbVars = map[string]string{
	"auth":    "request.auth",
	"data":    "resource.data",
	"newData": "request.resource.data",
	"now":     "request.time",
	"root":    "get(/databases/$(database)/documents/…)",
}

func mathFix(member string) string {
	switch member {
	case "max":
		return "write `a > b ? a : b`"
	case "min":
		return "write `a < b ? a : b`"
	case "trunc":
		return "write `int(x)`"
	case "isInfinite":
		return "compare with finite bounds instead (x > -1000000 && x < 1000000)"
	case "random":
		return "rules are deterministic: there is no random number"
	}
	return ""
}

func (l *linter) ident(e *ast.Ident, parent ast.Expr, s *scope) {
	if c, ok := parent.(*ast.Call); ok && c.Fn == ast.Expr(e) {
		return // a function name; call() looks at it
	}
	if s.isVar(e.Name) || s.isGlobal(e.Name) || isNamespace(l.svc, e.Name) {
		return
	}
	if fix, ok := jsGlobals[e.Name]; ok {
		member := ""
		if m, ok := parent.(*ast.Member); ok && m.X == ast.Expr(e) {
			member = m.Name
		}
		what := e.Name
		if member != "" {
			what += "." + member
			// Math.max(…): one diagnostic, not another for max().
			l.also[parent.(*ast.Member).NameSp.Start.Offset] = true
		}
		l.report(source.Error, CodeHallucinatedGlobal, e.Sp, fix(member),
			"`%s` is JavaScript; the rules language has no %s", what, e.Name)
		return
	}
	if e.Name == "firestore" && !l.svc.storage {
		if m, ok := parent.(*ast.Member); ok && m.X == ast.Expr(e) {
			l.also[m.NameSp.Start.Offset] = true
		}
		l.report(source.Error, CodeHallucinatedGlobal, e.Sp, "write `get(/databases/$(database)/documents/…)` or `exists(…)`",
			"`firestore.get()` and `firestore.exists()` exist only in Storage rules; Firestore rules call get() and exists() directly")
		return
	}
	if want, ok := rtdbVars[e.Name]; ok {
		l.report(source.Error, CodeWrongContextPath, e.Sp, fmt.Sprintf("did you mean `%s`?", want),
			"`%s` is a Realtime Database rules variable; in these rules it is undefined and reading it fails", e.Name)
	}
}

func (l *linter) call(c *ast.Call, s *scope) {
	switch fn := c.Fn.(type) {
	case *ast.Ident:
		if s.lookupFunc(fn.Name) != nil || l.svc.builtins[fn.Name] || standardFuncs[fn.Name] {
			return
		}
		if fix, ok := rejectedFuncs[fn.Name]; ok {
			l.report(source.Error, CodeHallucinatedGlobal, fn.Sp, fix,
				"production has no %s() function: the call fails at evaluation (\"Function not found error: Name: [%s]\")", fn.Name, fn.Name)
			return
		}
		if fix, ok := jsGlobals[fn.Name]; ok {
			l.report(source.Error, CodeHallucinatedGlobal, fn.Sp, fix(""),
				"`%s()` is JavaScript; the rules language has no %s", fn.Name, fn.Name)
		}
	case *ast.Member:
		span := source.Span{Start: fn.NameSp.Start, End: c.Sp.End}
		if id, ok := fn.X.(*ast.Ident); ok && !s.isVar(id.Name) {
			if funcs, ok := namespaceFuncs[id.Name]; ok {
				for _, f := range funcs {
					if f == fn.Name {
						return
					}
				}
				fix := mathFix(fn.Name)
				if id.Name != "math" {
					fix = ""
				}
				if id.Name == "timestamp" && (fn.Name == "now" || fn.Name == "current") {
					fix = "write `request.time`"
				}
				if fix == "" {
					if sug := suggest(fn.Name, funcs); sug != "" {
						fix = fmt.Sprintf("did you mean `%s.%s()`?", id.Name, sug)
					} else {
						fix = fmt.Sprintf("%s has %s", id.Name, strings.Join(funcs, ", "))
					}
				}
				l.report(source.Error, CodeHallucinatedMethod, span, fix,
					"%s.%s() does not exist: the call fails at evaluation (\"Function not found error: Name: [%s.%s]\")", id.Name, fn.Name, id.Name, fn.Name)
				return
			}
			if id.Name == "firestore" && !l.svc.storage {
				return // ident() reports firestore.get in Firestore rules
			}
			if id.Name == "firestore" && l.svc.storage {
				if _, ok := check.Environment(l.svc.name).Lookup(eval.Namespaced, "firestore", fn.Name); !ok {
					l.report(source.Error, CodeHallucinatedMethod, span, "use `firestore.get(path)` or `firestore.exists(path)`",
						"firestore.%s() does not exist: Storage rules can call only firestore.get() and firestore.exists()", fn.Name)
				}
				return
			}
		}
		if fix, ok := jsMethodFix(l.file, fn, c); ok {
			l.report(source.Error, CodeHallucinatedMethod, span, fix,
				"`.%s()` is not a method in the rules language; the call fails at evaluation (\"Function not found error\")", fn.Name)
			return
		}
		if (fn.Name == "hasAll" || fn.Name == "hasAny" || fn.Name == "hasOnly") && isMapLike(fn.X) {
			recv := srcText(l.file, fn.X.Span())
			args := argsText(l.file, c)
			l.report(source.Error, CodeHallucinatedMethod, span, fmt.Sprintf("write `%s.keys().%s(%s)`", recv, fn.Name, args),
				"%s() is a list and set method; called on a map, production fails it at evaluation (\"Function not found error: Name: [%s]\")", fn.Name, fn.Name)
		}
	}
}

// isMapLike reports whether e is certainly a map: a map literal, or a
// document's data, Storage metadata or token claims.
func isMapLike(e ast.Expr) bool {
	e = unparen(e)
	if _, ok := e.(*ast.Map); ok {
		return true
	}
	p := memberPath(e)
	if len(p) == 0 {
		return false
	}
	switch p[len(p)-1] {
	case "data", "metadata", "token":
		return len(p) >= 2
	}
	return false
}

func argsText(f *source.File, c *ast.Call) string {
	parts := make([]string, len(c.Args))
	for i, a := range c.Args {
		parts[i] = srcText(f, a.Span())
	}
	return strings.Join(parts, ", ")
}

// jsMethodFix returns the rules way to write a JavaScript (or Realtime
// Database) method call, and whether the method is one.
func jsMethodFix(f *source.File, fn *ast.Member, c *ast.Call) (string, bool) {
	recv := srcText(f, fn.X.Span())
	arg := ""
	if len(c.Args) > 0 {
		arg = srcText(f, c.Args[0].Span())
	}
	lit := ""
	if len(c.Args) == 1 {
		if l, ok := unparen(c.Args[0]).(*ast.Literal); ok && l.Kind == ast.String {
			lit = l.Str
		}
	}
	switch fn.Name {
	case "includes", "contains":
		if lit != "" {
			return fmt.Sprintf("write `%s in %s` for a list, or `%s.matches('.*%s.*')` for a substring", arg, recv, recv, regexLiteral(lit)), true
		}
		return fmt.Sprintf("write `%s in %s` (membership in a list or a map's keys)", arg, recv), true
	case "indexOf":
		return fmt.Sprintf("test membership with `%s in %s`", arg, recv), true
	case "toLowerCase":
		return fmt.Sprintf("write `%s.lower()`", recv), true
	case "toUpperCase":
		return fmt.Sprintf("write `%s.upper()`", recv), true
	case "trimStart", "trimEnd", "trimLeft", "trimRight":
		return fmt.Sprintf("write `%s.trim()` (it trims both ends)", recv), true
	case "startsWith", "beginsWith":
		if lit != "" {
			return fmt.Sprintf("write `%s.matches('%s.*')`", recv, regexLiteral(lit)), true
		}
		return fmt.Sprintf("write `%s.matches(prefix + '.*')` with prefix written as a regular expression", recv), true
	case "endsWith":
		if lit != "" {
			return fmt.Sprintf("write `%s.matches('.*%s')`", recv, regexLiteral(lit)), true
		}
		return fmt.Sprintf("write `%s.matches('.*' + suffix)` with suffix written as a regular expression", recv), true
	case "substring", "substr", "slice":
		if len(c.Args) == 2 {
			return fmt.Sprintf("write `%s[%s:%s]`", recv, arg, srcText(f, c.Args[1].Span())), true
		}
		return fmt.Sprintf("write a slice: `%s[start:end]`", recv), true
	case "length":
		return fmt.Sprintf("write `%s.size()`", recv), true
	case "charAt":
		return fmt.Sprintf("write `%s[%s]`", recv, arg), true
	case "toString":
		return fmt.Sprintf("write `string(%s)`", recv), true
	case "equals":
		return fmt.Sprintf("write `%s == %s`", recv, arg), true
	case "map", "filter", "reduce", "forEach", "find", "findIndex", "every", "some", "where",
		"flat", "flatMap", "sort", "reverse", "push", "pop", "shift", "unshift", "splice":
		return "rules have no loops or callbacks: check list contents with hasAll, hasAny, hasOnly and `in`, and sizes with size()", true
	case "padStart", "padEnd", "charCodeAt", "localeCompare", "normalize", "repeat":
		return "the rules language has no equivalent; compare with matches() or size() instead", true
	case "val":
		return fmt.Sprintf("values are read directly: write `%s`", recv), true
	case "child":
		if lit != "" && isIdent(lit) {
			return fmt.Sprintf("write `%s.%s`", recv, lit), true
		}
		return fmt.Sprintf("write `%s[%s]`", recv, arg), true
	case "hasChild":
		return fmt.Sprintf("write `%s in %s`", arg, recv), true
	case "hasChildren":
		return fmt.Sprintf("write `%s.keys().hasAll(%s)`", recv, arg), true
	case "exists":
		return "test a field with `'f' in m`, or a document with exists(/databases/$(database)/documents/…)", true
	case "isString":
		return fmt.Sprintf("write `%s is string`", recv), true
	case "isNumber":
		return fmt.Sprintf("write `%s is number`", recv), true
	case "isBoolean":
		return fmt.Sprintf("write `%s is bool`", recv), true
	}
	return "", false
}

var identRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func isIdent(s string) bool { return identRe.MatchString(s) }

// regexLiteral escapes s for a regular expression inside a single-quoted
// rules string: a regex metacharacter gets a backslash, which the string
// literal needs doubled.
func regexLiteral(s string) string {
	q := regexp.QuoteMeta(s)
	q = strings.ReplaceAll(q, `\`, `\\`)
	return strings.ReplaceAll(q, `'`, `\'`)
}

// Properties request and resource have, per service.
var (
	requestProps        = map[string]bool{"auth": true, "method": true, "path": true, "query": true, "resource": true, "time": true}
	storageRequestProps = map[string]bool{"auth": true, "method": true, "path": true, "params": true, "resource": true, "time": true}
	authProps           = map[string]bool{"uid": true, "token": true}
	firestoreDocProps   = map[string]bool{"data": true, "__name__": true}
	storageObjectProps  = map[string]bool{
		"name": true, "bucket": true, "generation": true, "metageneration": true, "size": true,
		"timeCreated": true, "updated": true, "md5Hash": true, "crc32c": true, "etag": true,
		"cacheControl": true, "contentDisposition": true, "contentEncoding": true, "contentLanguage": true,
		"contentType": true, "metadata": true,
	}
)

// contextFixes are the properties people reach for, with the real one.
var contextFixes = map[string]string{
	"request.uid":                 "request.auth.uid",
	"request.userId":              "request.auth.uid",
	"request.user":                "request.auth",
	"request.token":               "request.auth.token",
	"request.email":               "request.auth.token.email",
	"request.claims":              "request.auth.token",
	"request.data":                "request.resource.data",
	"request.body":                "request.resource.data",
	"request.now":                 "request.time",
	"request.timestamp":           "request.time",
	"request.auth.id":             "request.auth.uid",
	"request.auth.userId":         "request.auth.uid",
	"request.auth.email":          "request.auth.token.email",
	"request.auth.emailVerified":  "request.auth.token.email_verified",
	"request.auth.email_verified": "request.auth.token.email_verified",
	"request.auth.name":           "request.auth.token.name",
	"request.auth.displayName":    "request.auth.token.name",
	"request.auth.claims":         "request.auth.token",
	"request.auth.customClaims":   "request.auth.token",
	"resource.path":               "request.path",
	"resource.exists":             "resource != null",
	"resource.auth":               "request.auth",
}

// wrongContext reports request/resource properties that do not exist.
func (l *linter) wrongContext(e ast.Expr, s *scope) {
	why, fix, bad := l.contextProblem(memberPath(e), s)
	if bad {
		l.report(source.Error, CodeWrongContextPath, e.Span(), fix, "%s", why)
	}
}

// contextProblem judges a property of request, request.auth,
// request.resource or resource: bad is set when it does not exist, with
// what to say and the property meant.
func (l *linter) contextProblem(p []string, s *scope) (why, fix string, bad bool) {
	if !contextual(p, s) {
		return "", "", false
	}
	full := strings.Join(p, ".")
	storage := l.svc.storage
	var valid map[string]bool
	switch {
	case len(p) == 2 && p[0] == "request":
		valid = requestProps
		if storage {
			valid = storageRequestProps
		}
	case len(p) == 3 && p[1] == "auth":
		valid = authProps
	default: // request.resource.x, resource.x
		if p[0] == "resource" && len(p) != 2 {
			return "", "", false
		}
		valid = firestoreDocProps
		if storage {
			valid = storageObjectProps
		}
	}
	name := p[len(p)-1]
	if valid[name] {
		return "", "", false
	}
	obj := strings.Join(p[:len(p)-1], ".")
	object := obj == "resource" || obj == "request.resource"
	want := contextFixes[full]
	switch {
	case storage && object && (name == "id" || name == "path"):
		want = obj + ".name"
	case storage && object && (name == "customMetadata" || name == "data"):
		want = obj + ".metadata"
	case want != "":
	case !storage && object && name == "id":
		if w := s.lastWildcard(); w != "" {
			want = w
		} else {
			want = obj + ".__name__"
		}
	case !storage && object:
		want = obj + ".data." + name
	case storage && object:
		if sug := suggest(name, sortedKeys(valid)); sug != "" {
			want = obj + "." + sug
		} else {
			want = obj + ".metadata." + name
		}
	default:
		if sug := suggest(name, sortedKeys(valid)); sug != "" {
			want = obj + "." + sug
		}
	}
	why = fmt.Sprintf("`%s` does not exist: %s has %s, and reading anything else fails at evaluation", full, obj, strings.Join(sortedKeys(valid), ", "))
	switch {
	case !storage && name == "id" && object:
		why = fmt.Sprintf("`%s` is not set on documents in production's Rules Test API (\"Property id is undefined on object.\"); the document id is the match path's wildcard", full)
	case storage && object && name == "data":
		why = fmt.Sprintf("`%s` does not exist: Storage objects have no data, only size, contentType, custom metadata and the other object properties", full)
	case storage && object:
		why = fmt.Sprintf("`%s` does not exist on a Storage object, and reading it fails at evaluation", full)
	}
	if want != "" {
		fix = fmt.Sprintf("did you mean `%s`?", want)
	}
	return why, fix, true
}

// stringProps are bindings known to be strings (or lists) rather than maps.
var stringProps = map[string]bool{
	"request.auth.uid": true, "request.path": true, "request.method": true,
	"request.auth.token.email": true, "request.auth.token.name": true, "request.auth.token.phone_number": true,
	"resource.name": true, "request.resource.name": true, "resource.contentType": true, "request.resource.contentType": true,
}

// lengthProperty reports .length: the rules language measures with size().
func (l *linter) lengthProperty(e *ast.Member, s *scope) {
	if e.Name != "length" {
		return
	}
	recv := srcText(l.file, e.X.Span())
	span := source.Span{Start: e.NameSp.Start, End: e.Sp.End}
	if contextual(memberPath(e), s) {
		return // request.length and the like are WRONG_CONTEXT_PATH
	}
	fix := fmt.Sprintf("write `%s.size()`", recv)
	if notMap(e.X, s) {
		l.report(source.Error, CodeLengthProperty, span, fix,
			"`.length` does not exist in the rules language: `%s` is a string or list, and its size is %s.size()", shorten(recv, 50), shorten(recv, 50))
		l.edit(span, "size()")
		return
	}
	l.report(source.Warning, CodeLengthProperty, span, fix,
		"`.length` reads a field named length; if `%s` is a string, list or map, its size is %s.size()", shorten(recv, 50), shorten(recv, 50))
	l.edit(span, "size()")
}

// notMap reports whether e is certainly a string, list or other non-map
// value, so `.length` on it cannot be a field.
func notMap(e ast.Expr, s *scope) bool {
	switch x := unparen(e).(type) {
	case *ast.List, *ast.Slice:
		return true
	case *ast.Literal:
		return x.Kind == ast.String
	case *ast.Ident:
		return !s.locals[x.Name] && s.isVar(x.Name) // a path variable: a string
	case *ast.Call:
		if m, ok := x.Fn.(*ast.Member); ok {
			return m.Name != "get" && m.Name != "diff"
		}
		return calleeName(x) == "string"
	}
	if p := memberPath(e); p != nil && s.isGlobal(p[0]) {
		return stringProps[strings.Join(p, ".")]
	}
	return false
}

// parenMethods are methods that read as fields when written without ().
var parenMethods = map[string]bool{
	"size": true, "keys": true, "values": true, "lower": true, "upper": true, "trim": true,
	"hasAll": true, "hasAny": true, "hasOnly": true, "toSet": true, "toUtf8": true,
	"addedKeys": true, "removedKeys": true, "changedKeys": true, "affectedKeys": true, "unchangedKeys": true,
	"toMillis": true,
}

// contextual reports whether p is a property of request, request.auth,
// request.resource or resource, which wrongContext judges.
func contextual(p []string, s *scope) bool {
	if p == nil || !s.isGlobal(p[0]) {
		return false
	}
	return len(p) == 2 || len(p) == 3 && p[0] == "request" && (p[1] == "auth" || p[1] == "resource")
}

func (l *linter) missingParens(e *ast.Member, s *scope) {
	if !parenMethods[e.Name] {
		return
	}
	if contextual(memberPath(e), s) {
		return // a real property (Storage's resource.size) or WRONG_CONTEXT_PATH
	}
	if _, _, bad := l.contextProblem(memberPath(e.X), s); bad {
		return // request.resource.data.size in Storage: WRONG_CONTEXT_PATH
	}
	recv := srcText(l.file, e.X.Span())
	span := source.Span{Start: e.NameSp.Start, End: e.Sp.End}
	l.report(source.Warning, CodeMissingParens, span, fmt.Sprintf("write `%s.%s()`", shorten(recv, 60), e.Name),
		"`.%s` without () reads a field named %s; %s() is a method and needs its parentheses", e.Name, e.Name, e.Name)
	l.edit(source.Span{Start: e.Sp.End, End: e.Sp.End}, "()")
}
