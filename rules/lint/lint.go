package lint

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/pyric/pyric/rules/ast"
	"github.com/pyric/pyric/rules/check"
	"github.com/pyric/pyric/rules/eval"
	"github.com/pyric/pyric/rules/firestore"
	"github.com/pyric/pyric/rules/parser"
	rulesservice "github.com/pyric/pyric/rules/service"
	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/rules/storage"
)

// Service names a ruleset declares.
const (
	Firestore = firestore.Service
	Storage   = storage.Service
)

// Options configure a lint run.
type Options struct {
	// Service is Firestore (the default) or Storage.
	Service string
	// Previous is the ruleset this one replaces; when set, RULES_WEAKENED
	// reports match blocks, allow statements and conditions it dropped.
	Previous *source.File
	// Cases are simulator test cases; a case without a requestTime that
	// reaches a rule reading request.time gets REQUEST_TIME_NOT_PINNED.
	Cases []Case
	// Decls is the declaration table calls are resolved against and
	// did-you-mean suggests method names from; nil means the service's
	// environment (check.Environment).
	Decls eval.Decls
}

// Case is the part of a simulator test case lint needs. Path is relative to
// the documents root (Firestore, e.g. users/alice) or to the bucket
// (Storage, e.g. uploads/a.png).
type Case struct {
	Description string `json:"description"`
	Method      string `json:"method"`
	Path        string `json:"path"`
	RequestTime string `json:"requestTime"`
	Bucket      string `json:"bucket"`
}

// Metrics summarize a ruleset; JSON output prints them next to the
// diagnostics. Per-rule values are the maximum over every allow statement.
type Metrics struct {
	SourceSize     int `json:"sourceSize"`
	FunctionCount  int `json:"functionCount"`
	AllowRuleCount int `json:"allowRuleCount"`
	// MaxChainDepth is the longest && or || chain, in operands.
	MaxChainDepth int `json:"maxChainDepth"`
	// MaxNestingDepth is production's nesting measure (check.Depth).
	MaxNestingDepth int `json:"maxNestingDepth"`
	MaxLetBindings  int `json:"maxLetBindings"`
	// MaxCallDepth is the longest chain of user functions calling each
	// other, counting every function on the stack.
	MaxCallDepth int `json:"maxCallDepth"`
	// MaxEstimatedExpressions is the largest expression count of one rule
	// with its helper functions expanded, and MaxFunctionCalls the largest
	// number of user-function calls one rule makes.
	MaxEstimatedExpressions int `json:"maxEstimatedExpressions"`
	MaxFunctionCalls        int `json:"maxFunctionCalls"`
	// GetCallCount is the largest number of distinct documents one rule
	// can read with get/exists/getAfter/existsAfter (firestore.get and
	// firestore.exists in Storage).
	GetCallCount int `json:"getCallCount"`
}

// Result is what Lint found.
type Result struct {
	Diagnostics source.Diagnostics
	Metrics     Metrics
	// ParseFailed is set when the file does not parse: it still carries
	// INVALID_OPERATOR, INVALID_PATH_INTERPOLATION, PARSE_ERROR and the
	// mistakes found in the partial tree, but nothing that needs a whole
	// ruleset (limits, budget, security, RULES_WEAKENED).
	ParseFailed bool
}

// HasErrors reports whether any diagnostic has error severity.
func (r *Result) HasErrors() bool { return r.Diagnostics.HasErrors() }

// Codes lists every diagnostic code Lint emits with a one-line description
// (the SARIF rule catalogue).
var Codes = map[string]string{
	// The file itself.
	parser.CodeParse:             "The file does not parse.",
	CodeInvalidOperator:          "A JavaScript operator the rules language does not have (===, !==, ?., ??, =>, template strings).",
	CodeInvalidPathInterpolation: "{name} inside a path literal, which is text, not the variable; write $(name).",
	// Production's compile limits.
	CodeSourceSize:                "The source is larger than production's 256 KiB limit.",
	CodeChainDepth:                "An && / || chain close to or over production's limit (98 comparisons).",
	CodeNesting:                   "An expression nested deeper than production's 99 levels.",
	CodeLetLimit:                  "A function with more than the 11 let bindings production accepts.",
	CodeCallDepth:                 "A chain of functions calling each other close to or over production's limit (21 on one stack).",
	check.CodeRecursion:           "A function that calls itself, directly or through others; production rejects recursion.",
	check.CodeDuplicate:           "A name declared twice in one scope.",
	check.CodeRegex:               "A regular expression literal RE2 cannot compile.",
	check.CodeArgCount:            "A call with the wrong number of arguments.",
	check.CodeMethod:              "An allow statement with a verb that is not read, write, get, list, create, update or delete.",
	check.CodeUnused:              "A function or let binding nothing uses.",
	check.CodeVersion:             "rules_version '1' (or none), whose semantics differ from version 2.",
	check.CodeService:             "A service block for a different product than the one being linted.",
	"RECURSIVE_WILDCARD_POSITION": "A recursive wildcard that is not the last segment of its path.",
	// The runtime budget.
	CodeGetCount:         "A rule that can read more documents than production allows in one evaluation.",
	CodeExpressionBudget: "A rule whose expanded size is in or past production's flaky evaluation-budget zone.",
	CodeSharedGate:       "Rules on one path that start with the same condition, so each request evaluates all their bodies.",
	CodeGetDuplication:   "A helper that reads a document called more than once in one rule.",
	// Security.
	CodePermissiveRule:        "A write rule that is always true.",
	CodeRecursiveWildcardOpen: "An always-true rule under a recursive wildcard, opening every document below it.",
	CodeRecursiveWildcardRead: "A read under a recursive wildcard that never checks request.auth.",
	CodeWriteWithoutAuth:      "A write rule that never checks request.auth.",
	CodeWriteUnvalidated:      "A create or update rule that never looks at the incoming data.",
	// Mistakes.
	CodeHallucinatedMethod: "A method the rules language does not have (JavaScript's includes, map, length, …).",
	CodeHallucinatedGlobal: "A JavaScript global the rules language does not have (Math, Date, JSON, undefined, …) or a function production rejects (debug, bool).",
	CodeWrongContextPath:   "A request or resource property that does not exist (request.uid, resource.id, …).",
	CodeLengthProperty:     "`.length` used for a size; the rules language has .size().",
	CodeMissingParens:      "A method named without () (x.size instead of x.size()).",
	CodeUndefinedFunction:  "A call to a function or method that is not defined; it fails at evaluation.",
	CodeUndefinedVariable:  "A name that is not defined; reading it fails at evaluation.",
	CodeRequestTime:        "A test case that does not pin request.time for a rule that reads it.",
	CodeRulesWeakened:      "A match block, allow statement or condition the previous ruleset had and this one dropped.",
	CodeInternal:           "The linter failed; please report it.",
}

// Diagnostic codes of this package (check and parser codes are reused where
// they mean the same thing).
const (
	CodeInvalidOperator          = "INVALID_OPERATOR"
	CodeInvalidPathInterpolation = "INVALID_PATH_INTERPOLATION"
	CodeSourceSize               = check.CodeSourceSize
	CodeChainDepth               = "CHAIN_DEPTH"
	CodeNesting                  = check.CodeNesting
	CodeLetLimit                 = check.CodeLetLimit
	CodeCallDepth                = check.CodeCallDepth
	CodeGetCount                 = "GET_COUNT"
	CodeExpressionBudget         = "EXPRESSION_BUDGET"
	CodeSharedGate               = "SHARED_GATE"
	CodeGetDuplication           = "GET_DUPLICATION"
	CodePermissiveRule           = "PERMISSIVE_RULE"
	CodeRecursiveWildcardOpen    = "RECURSIVE_WILDCARD_OPEN"
	CodeRecursiveWildcardRead    = "RECURSIVE_WILDCARD_READ"
	CodeWriteWithoutAuth         = "WRITE_WITHOUT_AUTH"
	CodeWriteUnvalidated         = "WRITE_UNVALIDATED"
	CodeHallucinatedMethod       = "HALLUCINATED_METHOD"
	CodeHallucinatedGlobal       = "HALLUCINATED_GLOBAL"
	CodeWrongContextPath         = "WRONG_CONTEXT_PATH"
	CodeLengthProperty           = "LENGTH_PROPERTY"
	CodeMissingParens            = "METHOD_MISSING_PARENS"
	CodeUndefinedFunction        = check.CodeUndefinedFn
	CodeUndefinedVariable        = check.CodeUndefinedID
	CodeRequestTime              = "REQUEST_TIME_NOT_PINNED"
	CodeRulesWeakened            = "RULES_WEAKENED"
	CodeInternal                 = "LINT_INTERNAL_ERROR"
)

// Lint checks a Firestore or Storage rules file. It never panics: an
// internal failure becomes a LINT_INTERNAL_ERROR diagnostic.
func Lint(file *source.File, opts Options) (res *Result) {
	res = &Result{}
	defer func() {
		if r := recover(); r != nil {
			res.Diagnostics = append(res.Diagnostics, source.Diagnostic{
				Severity: source.Error, Code: CodeInternal,
				Message: fmt.Sprintf("the linter failed on this file (%v); please report it", r),
				Span:    file.Span(0, 0),
			})
		}
	}()
	l := newLinter(file, opts)
	l.run()
	res.Diagnostics = l.diags
	res.Metrics = l.metrics
	res.ParseFailed = l.parseFailed
	return res
}

// linter holds one run's state.
type linter struct {
	file        *source.File
	opts        Options
	svc         *service
	diags       source.Diagnostics
	metrics     Metrics
	parseFailed bool
	m           *model
	// overflow holds the spans of chains too deep to compile, which
	// explain check's NESTING_DEPTH for the same expression.
	overflow []source.Span
	// also holds offsets a mistake diagnostic accounts for beyond its
	// own start (the method of Math.max).
	also map[int]bool
	// methods are the method names of the run's declaration table, for
	// did-you-mean.
	methods []string
}

func newLinter(file *source.File, opts Options) *linter {
	l := &linter{file: file, opts: opts, svc: serviceFor(opts.Service), also: map[int]bool{}}
	if opts.Decls != nil {
		l.methods = opts.Decls.Methods()
	} else if l.svc.storage {
		l.methods = storageMethods
	} else {
		l.methods = firestoreMethods
	}
	return l
}

// compile returns production's compile diagnostics for the file: from
// the service bindings (so lint and `rules validate` agree), or from the
// checker over Options.Decls when a table is given.
func (l *linter) compile() source.Diagnostics {
	if l.opts.Decls != nil {
		opts := check.Options{Service: l.svc.name, Decls: l.opts.Decls}
		name := "firestore.rules"
		if l.svc.storage {
			opts.Globals, name = storage.Globals, "storage.rules"
		}
		_, diags := rulesservice.Compile(l.file, name, opts, nil)
		return diags
	}
	if l.svc.storage {
		_, diags := storage.Compile(l.file)
		return diags
	}
	_, diags := firestore.Compile(l.file)
	return diags
}

func (l *linter) report(sev source.Severity, code string, sp source.Span, fix, format string, args ...any) {
	l.diags = append(l.diags, source.Diagnostic{Severity: sev, Code: code, Message: fmt.Sprintf(format, args...), Span: sp, Fix: fix})
}

// edit attaches a mechanical fix to the diagnostic just reported.
func (l *linter) edit(sp source.Span, text string) {
	l.diags[len(l.diags)-1].Edit = &source.Edit{Span: sp, Text: text}
}

func (l *linter) run() {
	l.metrics.SourceSize = len(l.file.Text)
	l.sourceSize()
	ops := scanOperators(l.file)
	for _, o := range ops {
		l.diags = append(l.diags, o.diag)
	}
	rs, pdiags := parser.Parse(l.file)
	l.m = newModel(l.file, rs, l.svc)
	interps := l.pathInterpolations()
	for _, d := range pdiags {
		if coveredBy(d, l.file.Text, ops) || interps[d.Span.Start.Offset] {
			continue
		}
		l.diags = append(l.diags, d)
	}
	l.parseFailed = len(pdiags) > 0
	l.mistakes()
	if l.parseFailed || rs.Service == nil {
		l.finish()
		return
	}
	cdiags := l.compile()
	l.limits(cdiags)
	l.budget()
	l.security()
	l.undefined(cdiags)
	l.mergeCheck(cdiags)
	l.requestTime()
	l.weakened()
	l.finish()
}

// finish removes duplicates (one code per span) and sorts.
func (l *linter) finish() {
	seen := map[string]bool{}
	out := l.diags[:0]
	for _, d := range l.diags {
		key := fmt.Sprintf("%s@%d-%d|%s", d.Code, d.Span.Start.Offset, d.Span.End.Offset, d.Message)
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, d)
	}
	l.diags = out
	l.diags.Sort()
}

// mergeCheck adds check's diagnostics that lint does not replace with its
// own: lint reports SOURCE_SIZE, LET_LIMIT, CALL_DEPTH and undefined names
// itself (with fixes and warning bands), and explains NESTING_DEPTH.
func (l *linter) mergeCheck(cdiags source.Diagnostics) {
	covered := l.covered()
	for _, d := range cdiags {
		switch d.Code {
		case check.CodeSourceSize, check.CodeLetLimit, check.CodeCallDepth, check.CodeUndefinedFn, check.CodeUndefinedID:
			continue
		case check.CodeArgCount:
			if covered[d.Span.Start.Offset] {
				continue // the call is already reported as a mistake
			}
		case check.CodeNesting:
			l.nestingDiag(d)
			continue
		case check.CodeMethod:
			if d.Fix == "" {
				name := l.file.Text[d.Span.Start.Offset:d.Span.End.Offset]
				if s := suggest(name, allowVerbs); s != "" {
					d.Fix = fmt.Sprintf("did you mean `%s`?", s)
				} else {
					d.Fix = "use read, write, get, list, create, update or delete"
				}
			}
		case check.CodeRecursion:
			if d.Fix == "" {
				d.Fix = "rules have no recursion or loops: write the steps out for the depth you need"
			}
		case check.CodeDuplicate:
			if d.Fix == "" {
				d.Fix = "rename one of the two"
			}
		case check.CodeRegex:
			if d.Fix == "" {
				d.Fix = "use RE2 syntax (no lookaround or backreferences), and escape special characters with \\\\ inside the string"
			}
		case check.CodeUnused:
			if d.Fix == "" {
				d.Fix = "remove it, or use it"
			}
		case check.CodeVersion:
			if d.Fix == "" {
				d.Fix = "start the file with rules_version = '2';"
			}
		}
		l.diags = append(l.diags, d)
	}
}

var allowVerbs = []string{"read", "write", "get", "list", "create", "update", "delete"}

// coveredBy reports whether a parse diagnostic is the parser's view of an
// invalid operator lint already reported.
// What the parser says after one on the same line, or on the very next
// token (the operand a template string left missing), is a consequence of
// it while the parser recovers, not another problem.
func coveredBy(d source.Diagnostic, text string, ops []invalidOp) bool {
	off := d.Span.Start.Offset
	for _, o := range ops {
		next := o.end
		for next < len(text) && strings.IndexByte(" \t\r\n", text[next]) >= 0 {
			next++
		}
		sameLine := off >= o.start && !strings.Contains(text[o.start:min(off, len(text))], "\n")
		if sameLine || off == next {
			return true
		}
	}
	return false
}

// ruleLabel names an allow statement for messages: "allow update at
// /users/{uid} (line 12)".
func ruleLabel(r *rule) string {
	return fmt.Sprintf("allow %s at %s", strings.Join(methodNames(r.allow), ", "), display(r.block.Pattern))
}

// rootRe matches the service's root match path: Firestore's documents root
// and Storage's bucket objects root.
var rootRe = regexp.MustCompile(`^(/databases/\{[^}]*\}/documents|/b/\{[^}]*\}/o)`)

// display shortens a full match pattern to the part people think of:
// /databases/{database}/documents/users/{uid} is /users/{uid}.
func display(pattern string) string {
	if loc := rootRe.FindStringIndex(pattern); loc != nil {
		if rest := pattern[loc[1]:]; rest != "" {
			return rest
		}
		return "/"
	}
	return pattern
}

func methodNames(a *ast.Allow) []string {
	out := make([]string, len(a.Methods))
	for i, m := range a.Methods {
		out[i] = m.Name
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
