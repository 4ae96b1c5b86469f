package eval

import (
	"sort"

	"github.com/pyric/pyric/rules/value"
)

// Kind says how a declared function is called.
type Kind int

// Kinds of declarations.
const (
	Global     Kind = iota // f(x)
	Namespaced             // ns.f(x)
	Method                 // x.f()
)

// Status is what production does with a declared function.
type Status string

// Statuses.
const (
	// Production: deployed rules and the Rules Test API accept and
	// evaluate it as documented.
	Production Status = "production"
	// CompileOnly: it compiles but always fails when evaluated (join()
	// without a separator).
	CompileOnly Status = "compile-only"
)

// Decl declares one function, namespaced function or method of a rules
// environment, with its implementation. The standard library's table is
// Standard; services add their builtins (get, exists, firestore.get, …)
// with Decls.With. The evaluator binds calls to the implementations
// declared in Standard (once, when the package initialises: see
// stdlib), package check reports production's "Incorrect number of
// arguments" from the argument bounds, and lint suggests names ("did you
// mean …?") from the names.
type Decl struct {
	Kind Kind
	// Namespace is the namespace of a Namespaced function (math, …).
	Namespace string
	Name      string
	// Func implements a Global or Namespaced function. A service's
	// builtins leave it nil: the service binds them per request
	// (Env.Funcs, Env.Namespaces, Env.Service).
	Func Builtin
	// Receivers are the types a Method is defined on, each with its
	// implementation for that type.
	Receivers []Receiver
	// MinArgs and MaxArgs bound the argument count.
	MinArgs, MaxArgs int
	Doc              string
	Status           Status
}

// Receiver is a method's implementation for one receiver type.
type Receiver struct {
	Type value.Type
	Impl MethodFunc
}

// MethodFunc implements a method: it gets the receiver (of the
// Receiver's type) and the evaluated arguments, and checks their count
// and types itself.
type MethodFunc func(recv value.Value, args []value.Value) value.Value

// Decls is a declaration table.
type Decls []Decl

// With returns the table extended with more declarations.
func (d Decls) With(more ...Decl) Decls { return append(append(Decls(nil), d...), more...) }

func m(name string, min, max int, doc string, recv ...Receiver) Decl {
	return Decl{Kind: Method, Name: name, Receivers: recv, MinArgs: min, MaxArgs: max, Doc: doc, Status: Production}
}

func on(t value.Type, impl MethodFunc) Receiver { return Receiver{Type: t, Impl: impl} }

func ns(space, name string, n int, doc string, f Builtin) Decl {
	return Decl{Kind: Namespaced, Namespace: space, Name: name, Func: f, MinArgs: n, MaxArgs: n, Doc: doc, Status: Production}
}

func g(name string, n int, doc string, f Builtin) Decl {
	return Decl{Kind: Global, Name: name, Func: f, MinArgs: n, MaxArgs: n, Doc: doc, Status: Production}
}

var (
	tS, tB, tL, tM, tSet = value.TString, value.TBytes, value.TList, value.TMap, value.TSet
	tD, tP, tT, tDur, tG = value.TMapDiff, value.TPath, value.TTimestamp, value.TDuration, value.TLatLng
)

// Standard is the rules language's standard library, shared by every
// service, and the one place the standard library is declared: adding a
// function or method is one entry here, naming its implementation
// (written in methods.go or stdlib.go). The evaluator's call tables
// (stdlib), the checker (package check, through check.Environment) and
// lint's suggestions all read this table; TestOneEditAddsAMethod (in
// package lint, which sees all three) proves a new entry reaches them.
var Standard = Decls{
	g("string", 1, "Converts a bool, int, float, null, list or map to its string form.", fnString),
	g("int", 1, "Converts a float or a numeric string to an int (floats truncate).", fnInt),
	g("float", 1, "Converts an int or a numeric string to a float.", fnFloat),
	g("path", 1, "Converts a string to a path.", fnPath),

	ns("math", "abs", 1, "Absolute value of an int or float.", fnMathAbs),
	ns("math", "ceil", 1, "Smallest integral float not below x (a float even for an int).", fnMathCeil),
	ns("math", "floor", 1, "Largest integral float not above x (a float even for an int).", fnMathFloor),
	ns("math", "round", 1, "x rounded half away from zero, as an int.", fnMathRound),
	ns("math", "sqrt", 1, "Square root as a float.", fnMathSqrt),
	ns("math", "pow", 2, "x raised to the power y, as a float.", fnMathPow),
	ns("math", "isNaN", 1, "Whether x is NaN.", fnMathIsNaN),
	ns("timestamp", "date", 3, "The timestamp at midnight UTC of year, month, day.", fnTimestampDate),
	ns("timestamp", "value", 1, "The timestamp of a count of milliseconds since the epoch.", fnTimestampValue),
	ns("duration", "value", 2, "A duration of n units: w, d, h, m, s, ms or ns.", fnDurationValue),
	ns("duration", "time", 4, "A duration of hours, minutes, seconds and nanoseconds.", fnDurationTime),
	ns("duration", "abs", 1, "The absolute value of a duration.", fnDurationAbs),
	ns("latlng", "value", 2, "A geographic point from latitude and longitude.", fnLatlngValue),
	ns("hashing", "md5", 1, "MD5 digest of a string or bytes, as bytes.", fnHashingMd5),
	ns("hashing", "sha256", 1, "SHA-256 digest of a string or bytes, as bytes.", fnHashingSha256),
	ns("hashing", "crc32", 1, "CRC-32 checksum of a string or bytes, as bytes.", fnHashingCrc32),
	ns("hashing", "crc32c", 1, "CRC-32C checksum of a string or bytes, as bytes.", fnHashingCrc32c),

	m("size", 0, 0, "Number of characters, bytes, elements or keys.", on(tS, sizeMethod), on(tB, sizeMethod), on(tL, sizeMethod), on(tM, sizeMethod), on(tSet, sizeMethod)),
	m("lower", 0, 0, "The string in lower case.", on(tS, strLower)),
	m("upper", 0, 0, "The string in upper case.", on(tS, strUpper)),
	m("trim", 0, 0, "The string without leading and trailing whitespace.", on(tS, strTrim)),
	m("toUtf8", 0, 0, "The string's UTF-8 bytes.", on(tS, strToUtf8)),
	m("matches", 1, 1, "Whether the whole string matches an RE2 regular expression.", on(tS, strMatches)),
	m("split", 1, 1, "The string split around matches of a regular expression.", on(tS, strSplit)),
	m("replace", 2, 2, "The string with every match of a regular expression replaced.", on(tS, strReplace)),
	m("hasAll", 1, 1, "Whether every element of the argument is in the collection.", on(tL, listHasAll), on(tSet, setHasAll)),
	m("hasAny", 1, 1, "Whether any element of the argument is in the collection.", on(tL, listHasAny), on(tSet, setHasAny)),
	m("hasOnly", 1, 1, "Whether every element of the collection is in the argument.", on(tL, listHasOnly), on(tSet, setHasOnly)),
	m("toSet", 0, 0, "The list's distinct elements as a set.", on(tL, listToSet)),
	{Kind: Method, Name: "join", Receivers: []Receiver{on(tL, listJoin)}, MinArgs: 0, MaxArgs: 1, Status: Production,
		Doc: "The elements joined with a separator; join() without one compiles but fails when evaluated."},
	m("concat", 1, 1, "The list followed by another list.", on(tL, listConcat)),
	m("removeAll", 1, 1, "The list without the elements of another list.", on(tL, listRemoveAll)),
	m("difference", 1, 1, "The set's elements not in another set.", on(tSet, setDifference)),
	m("union", 1, 1, "The elements of both sets.", on(tSet, setUnion)),
	m("intersection", 1, 1, "The elements in both sets.", on(tSet, setIntersection)),
	m("keys", 0, 0, "The map's keys as a list.", on(tM, mapKeys)),
	m("values", 0, 0, "The map's values as a list.", on(tM, mapValues)),
	m("get", 2, 2, "The value at a key or key path, or a default.", on(tM, mapGet)),
	m("diff", 1, 1, "The differences between the map and another map.", on(tM, mapDiff)),
	m("addedKeys", 0, 0, "Keys in the other map only.", on(tD, diffAddedKeys)),
	m("removedKeys", 0, 0, "Keys in this map only.", on(tD, diffRemovedKeys)),
	m("changedKeys", 0, 0, "Keys in both maps with different values.", on(tD, diffChangedKeys)),
	m("affectedKeys", 0, 0, "Keys added, removed or changed.", on(tD, diffAffectedKeys)),
	m("unchangedKeys", 0, 0, "Keys in both maps with equal values.", on(tD, diffUnchangedKeys)),
	m("toBase64", 0, 0, "The bytes in base64.", on(tB, bytesToBase64)),
	m("toHexString", 0, 0, "The bytes in lower-case hexadecimal.", on(tB, bytesToHexString)),
	m("bind", 1, 1, "The path with its {variables} bound from a map.", on(tP, pathBind)),
	m("year", 0, 0, "The timestamp's UTC year.", on(tT, tsYear)),
	m("month", 0, 0, "The timestamp's UTC month, 1–12.", on(tT, tsMonth)),
	m("day", 0, 0, "The timestamp's UTC day of the month.", on(tT, tsDay)),
	m("hours", 0, 0, "The timestamp's UTC hour.", on(tT, tsHours)),
	m("minutes", 0, 0, "The timestamp's UTC minute.", on(tT, tsMinutes)),
	m("seconds", 0, 0, "Seconds: of the timestamp's minute, or of the whole duration.", on(tT, tsSeconds), on(tDur, durSeconds)),
	m("nanos", 0, 0, "Nanoseconds: of the timestamp's second, or the duration's fraction.", on(tT, tsNanos), on(tDur, durNanos)),
	m("dayOfWeek", 0, 0, "The timestamp's UTC weekday, 1 (Monday) to 7.", on(tT, tsDayOfWeek)),
	m("dayOfYear", 0, 0, "The timestamp's UTC day of the year.", on(tT, tsDayOfYear)),
	m("toMillis", 0, 0, "Milliseconds since the epoch.", on(tT, tsToMillis)),
	m("date", 0, 0, "The timestamp at midnight UTC of its day.", on(tT, tsDate)),
	m("time", 0, 0, "The time of day as a duration.", on(tT, tsTime)),
	m("latitude", 0, 0, "The point's latitude.", on(tG, geoLatitude)),
	m("longitude", 0, 0, "The point's longitude.", on(tG, geoLongitude)),
	m("distance", 1, 1, "The distance in meters to another point.", on(tG, geoDistance)),
}

// Methods returns the method names, sorted and distinct.
func (d Decls) Methods() []string { return d.names(func(x Decl) bool { return x.Kind == Method }) }

// Globals returns the names of functions called by bare name.
func (d Decls) Globals() []string { return d.names(func(x Decl) bool { return x.Kind == Global }) }

// Namespace returns the functions of a namespace.
func (d Decls) Namespace(space string) []string {
	return d.names(func(x Decl) bool { return x.Kind == Namespaced && x.Namespace == space })
}

// Namespaces returns the namespaces declared.
func (d Decls) Namespaces() []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range d {
		if x.Kind == Namespaced && !seen[x.Namespace] {
			seen[x.Namespace] = true
			out = append(out, x.Namespace)
		}
	}
	sort.Strings(out)
	return out
}

func (d Decls) names(keep func(Decl) bool) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range d {
		if keep(x) && !seen[x.Name] {
			seen[x.Name] = true
			out = append(out, x.Name)
		}
	}
	sort.Strings(out)
	return out
}

// Lookup returns the declaration of a method (space "" and kind Method), a
// namespaced function or a global.
func (d Decls) Lookup(kind Kind, space, name string) (Decl, bool) {
	for _, x := range d {
		if x.Kind == kind && x.Name == name && (kind != Namespaced || x.Namespace == space) {
			return x, true
		}
	}
	return Decl{}, false
}

// AnyArgs as a MaxArgs accepts any number of arguments at compile time
// (the implementation checks them when evaluated).
const AnyArgs = -1

// Accepts reports whether n arguments are a valid count for the call.
func (x Decl) Accepts(n int) bool { return n >= x.MinArgs && (x.MaxArgs == AnyArgs || n <= x.MaxArgs) }

// stdlib is a declaration table's implementations indexed for the
// evaluator. The evaluator's is built from Standard once, when the
// package initialises; preparing a program binds each call site to
// these implementations (planCalls), so evaluating never reads the
// declaration table.
type stdlib struct {
	// methods are the implementations by receiver type and name.
	methods map[value.Type]map[string]MethodFunc
	// methodSets are the same grouped by name, for call plans.
	methodSets map[string]*methodSet
	// namespaces are the namespaced functions; globals are the functions
	// called by bare name.
	namespaces map[string]map[string]Builtin
	globals    map[string]Builtin
}

// newStdlib indexes the implementations of a table. Declarations
// without one (a service's builtins, bound per request) are skipped.
func newStdlib(d Decls) *stdlib {
	s := &stdlib{
		methods:    map[value.Type]map[string]MethodFunc{},
		methodSets: map[string]*methodSet{},
		namespaces: map[string]map[string]Builtin{},
		globals:    map[string]Builtin{},
	}
	for _, x := range d {
		switch x.Kind {
		case Method:
			for _, r := range x.Receivers {
				if r.Impl == nil {
					continue
				}
				if s.methods[r.Type] == nil {
					s.methods[r.Type] = map[string]MethodFunc{}
				}
				s.methods[r.Type][x.Name] = r.Impl
				if s.methodSets[x.Name] == nil {
					s.methodSets[x.Name] = new(methodSet)
				}
				s.methodSets[x.Name][r.Type] = r.Impl
			}
		case Namespaced:
			if x.Func == nil {
				continue
			}
			if s.namespaces[x.Namespace] == nil {
				s.namespaces[x.Namespace] = map[string]Builtin{}
			}
			s.namespaces[x.Namespace][x.Name] = x.Func
		case Global:
			if x.Func != nil {
				s.globals[x.Name] = x.Func
			}
		}
	}
	return s
}

// std is the standard library's implementations, shared by every
// program NewProgram prepares.
var std = newStdlib(Standard)
