package lint

import (
	"fmt"
	"strings"

	"github.com/pyric/pyric/rules/source"
)

// invalidOp is a JavaScript operator found in the source.
type invalidOp struct {
	start, end int
	diag       source.Diagnostic
}

// lexOps mirrors the shared lexer's operator table, longest first, so the
// scan below splits the text into the same tokens the parser sees: `==>`
// is `==` then `>`, not `=>`.
var lexOps = []string{
	"===", "!==", "&&", "||", "==", "!=", "<=", ">=", "=>", "?.", "??", "++", "--",
}

// jsOps are the operators people bring from JavaScript, with what to say.
var jsOps = map[string]struct{ message, fix string }{
	"===": {"`===` is not a rules operator; `==` already compares without converting types", "replace `===` with `==`"},
	"!==": {"`!==` is not a rules operator; `!=` already compares without converting types", "replace `!==` with `!=`"},
	"?.": {"optional chaining `?.` does not exist in rules: reading a missing field is an error, not undefined",
		"guard the field with `'f' in m && m.f …`, or read it with a default: `m.get('f', null)`"},
	"??": {"`??` does not exist in rules: reading a missing field is an error, not undefined",
		"read the field with a default: `m.get('f', fallback)`, or use a ternary `x != null ? x : fallback`"},
	"=>": {"arrow functions do not exist in rules: there are no callbacks or lambdas",
		"declare a helper `function name(arg) { return …; }`, or test lists with hasAll/hasAny/hasOnly and `in`"},
}

// strictEquality are the JavaScript operators with a mechanical rules
// spelling.
var strictEquality = map[string]string{"===": "==", "!==": "!="}

// scanOperators finds ===, !==, ?., ??, => and template strings outside
// comments and string literals. The shared parser rejects each of them;
// lint reports them as INVALID_OPERATOR with the rules spelling.
func scanOperators(f *source.File) []invalidOp {
	src := f.Text
	var out []invalidOp
	add := func(start, end int, message, fix string) {
		out = append(out, invalidOp{start: start, end: end, diag: source.Diagnostic{
			Severity: source.Error, Code: CodeInvalidOperator, Message: message, Span: f.Span(start, end), Fix: fix,
		}})
	}
	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return out
			}
			i += end + 4
		case c == '\'' || c == '"':
			i = skipString(src, i)
		case c == '`':
			end := strings.IndexByte(src[i+1:], '`')
			stop := len(src)
			if end >= 0 {
				stop = i + end + 2
			}
			add(i, stop, "template strings (backticks) do not exist in rules", templateFix(src[i:stop]))
			i = stop
		case isWordByte(c):
			for i < len(src) && isWordByte(src[i]) {
				i++
			}
		case strings.IndexByte("=!&|<>?+-", c) < 0:
			// No operator starts here (most often a space): a large
			// file's blank stretches cost one comparison a byte.
			i++
		default:
			n := 1
			for _, op := range lexOps {
				if strings.HasPrefix(src[i:], op) {
					n = len(op)
					if js, ok := jsOps[op]; ok {
						add(i, i+n, js.message, js.fix)
						if eq := strictEquality[op]; eq != "" {
							out[len(out)-1].diag.Edit = &source.Edit{Span: f.Span(i, i+n), Text: eq}
						}
					}
					break
				}
			}
			i += n
		}
	}
	return out
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// skipString returns the offset after the string literal starting at i. Like
// the lexer, a string ends at its closing quote or at the end of the line.
func skipString(src string, i int) int {
	quote := src[i]
	i++
	for i < len(src) && src[i] != '\n' {
		switch src[i] {
		case '\\':
			i += 2
			continue
		case quote:
			return i + 1
		}
		i++
	}
	return i
}

// templateFix rewrites `users/${uid}` as 'users/' + uid.
func templateFix(tpl string) string {
	body := strings.TrimSuffix(strings.TrimPrefix(tpl, "`"), "`")
	if len(tpl) < 2 || !strings.HasSuffix(tpl, "`") || strings.ContainsAny(body, "\n`") {
		return "build the string with + (`'users/' + uid`), or use a path literal with $(…)"
	}
	var parts []string
	for body != "" {
		open := strings.Index(body, "${")
		if open < 0 {
			parts = append(parts, quoteRules(body))
			break
		}
		if open > 0 {
			parts = append(parts, quoteRules(body[:open]))
		}
		close := strings.IndexByte(body[open:], '}')
		if close < 0 {
			parts = append(parts, quoteRules(body[open:]))
			break
		}
		expr := strings.TrimSpace(body[open+2 : open+close])
		parts = append(parts, expr)
		body = body[open+close+1:]
	}
	if len(parts) == 0 {
		parts = []string{"''"}
	}
	return fmt.Sprintf("write `%s`", strings.Join(parts, " + "))
}

// quoteRules writes s as a single-quoted rules string literal.
func quoteRules(s string) string {
	s = strings.ReplaceAll(s, `\`, `\\`)
	s = strings.ReplaceAll(s, `'`, `\'`)
	return "'" + s + "'"
}
