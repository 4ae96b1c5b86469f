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
// environment. The standard library's table is Standard; services add
// their builtins (get, exists, firestore.get, …) with Decls.With. The
// evaluator checks calls' argument counts against it, package check
// reports production's "Incorrect number of arguments" from it, and lint
// suggests names ("did you mean …?") from it.
type Decl struct {
	Kind Kind
	// Namespace is the namespace of a Namespaced function (math, …).
	Namespace string
	Name      string
	// Receivers are the types a Method is defined on.
	Receivers []value.Type
	// MinArgs and MaxArgs bound the argument count.
	MinArgs, MaxArgs int
	Doc              string
	Status           Status
}

// Decls is a declaration table.
type Decls []Decl

// With returns the table extended with more declarations.
func (d Decls) With(more ...Decl) Decls { return append(append(Decls(nil), d...), more...) }

func m(name string, min, max int, doc string, recv ...value.Type) Decl {
	return Decl{Kind: Method, Name: name, Receivers: recv, MinArgs: min, MaxArgs: max, Doc: doc, Status: Production}
}

func ns(space, name string, n int, doc string) Decl {
	return Decl{Kind: Namespaced, Namespace: space, Name: name, MinArgs: n, MaxArgs: n, Doc: doc, Status: Production}
}

func g(name string, n int, doc string) Decl {
	return Decl{Kind: Global, Name: name, MinArgs: n, MaxArgs: n, Doc: doc, Status: Production}
}

var (
	tS, tB, tL, tM, tSet = value.TString, value.TBytes, value.TList, value.TMap, value.TSet
	tD, tP, tT, tDur, tG = value.TMapDiff, value.TPath, value.TTimestamp, value.TDuration, value.TLatLng
)

// Standard is the rules language's standard library, shared by every
// service. Adding a function is one entry here plus its implementation in
// methods.go or stdlib.go (TestDeclsMatchImplementations keeps them in
// step).
var Standard = Decls{
	g("string", 1, "Converts a bool, int, float, null, list or map to its string form."),
	g("int", 1, "Converts a float or a numeric string to an int (floats truncate)."),
	g("float", 1, "Converts an int or a numeric string to a float."),
	g("path", 1, "Converts a string to a path."),

	ns("math", "abs", 1, "Absolute value of an int or float."),
	ns("math", "ceil", 1, "Smallest integral float not below x (a float even for an int)."),
	ns("math", "floor", 1, "Largest integral float not above x (a float even for an int)."),
	ns("math", "round", 1, "x rounded half away from zero, as an int."),
	ns("math", "sqrt", 1, "Square root as a float."),
	ns("math", "pow", 2, "x raised to the power y, as a float."),
	ns("math", "isNaN", 1, "Whether x is NaN."),
	ns("timestamp", "date", 3, "The timestamp at midnight UTC of year, month, day."),
	ns("timestamp", "value", 1, "The timestamp of a count of milliseconds since the epoch."),
	ns("duration", "value", 2, "A duration of n units: w, d, h, m, s, ms or ns."),
	ns("duration", "time", 4, "A duration of hours, minutes, seconds and nanoseconds."),
	ns("duration", "abs", 1, "The absolute value of a duration."),
	ns("latlng", "value", 2, "A geographic point from latitude and longitude."),
	ns("hashing", "md5", 1, "MD5 digest of a string or bytes, as bytes."),
	ns("hashing", "sha256", 1, "SHA-256 digest of a string or bytes, as bytes."),
	ns("hashing", "crc32", 1, "CRC-32 checksum of a string or bytes, as bytes."),
	ns("hashing", "crc32c", 1, "CRC-32C checksum of a string or bytes, as bytes."),

	m("size", 0, 0, "Number of characters, bytes, elements or keys.", tS, tB, tL, tM, tSet),
	m("lower", 0, 0, "The string in lower case.", tS),
	m("upper", 0, 0, "The string in upper case.", tS),
	m("trim", 0, 0, "The string without leading and trailing whitespace.", tS),
	m("toUtf8", 0, 0, "The string's UTF-8 bytes.", tS),
	m("matches", 1, 1, "Whether the whole string matches an RE2 regular expression.", tS),
	m("split", 1, 1, "The string split around matches of a regular expression.", tS),
	m("replace", 2, 2, "The string with every match of a regular expression replaced.", tS),
	m("hasAll", 1, 1, "Whether every element of the argument is in the collection.", tL, tSet),
	m("hasAny", 1, 1, "Whether any element of the argument is in the collection.", tL, tSet),
	m("hasOnly", 1, 1, "Whether every element of the collection is in the argument.", tL, tSet),
	m("toSet", 0, 0, "The list's distinct elements as a set.", tL),
	{Kind: Method, Name: "join", Receivers: []value.Type{tL}, MinArgs: 0, MaxArgs: 1, Status: Production,
		Doc: "The elements joined with a separator; join() without one compiles but fails when evaluated."},
	m("concat", 1, 1, "The list followed by another list.", tL),
	m("removeAll", 1, 1, "The list without the elements of another list.", tL),
	m("difference", 1, 1, "The set's elements not in another set.", tSet),
	m("union", 1, 1, "The elements of both sets.", tSet),
	m("intersection", 1, 1, "The elements in both sets.", tSet),
	m("keys", 0, 0, "The map's keys as a list.", tM),
	m("values", 0, 0, "The map's values as a list.", tM),
	m("get", 2, 2, "The value at a key or key path, or a default.", tM),
	m("diff", 1, 1, "The differences between the map and another map.", tM),
	m("addedKeys", 0, 0, "Keys in the other map only.", tD),
	m("removedKeys", 0, 0, "Keys in this map only.", tD),
	m("changedKeys", 0, 0, "Keys in both maps with different values.", tD),
	m("affectedKeys", 0, 0, "Keys added, removed or changed.", tD),
	m("unchangedKeys", 0, 0, "Keys in both maps with equal values.", tD),
	m("toBase64", 0, 0, "The bytes in base64.", tB),
	m("toHexString", 0, 0, "The bytes in lower-case hexadecimal.", tB),
	m("bind", 1, 1, "The path with its {variables} bound from a map.", tP),
	m("year", 0, 0, "The timestamp's UTC year.", tT),
	m("month", 0, 0, "The timestamp's UTC month, 1–12.", tT),
	m("day", 0, 0, "The timestamp's UTC day of the month.", tT),
	m("hours", 0, 0, "The timestamp's UTC hour.", tT),
	m("minutes", 0, 0, "The timestamp's UTC minute.", tT),
	m("seconds", 0, 0, "Seconds: of the timestamp's minute, or of the whole duration.", tT, tDur),
	m("nanos", 0, 0, "Nanoseconds: of the timestamp's second, or the duration's fraction.", tT, tDur),
	m("dayOfWeek", 0, 0, "The timestamp's UTC weekday, 1 (Monday) to 7.", tT),
	m("dayOfYear", 0, 0, "The timestamp's UTC day of the year.", tT),
	m("toMillis", 0, 0, "Milliseconds since the epoch.", tT),
	m("date", 0, 0, "The timestamp at midnight UTC of its day.", tT),
	m("time", 0, 0, "The time of day as a duration.", tT),
	m("latitude", 0, 0, "The point's latitude.", tG),
	m("longitude", 0, 0, "The point's longitude.", tG),
	m("distance", 1, 1, "The distance in meters to another point.", tG),
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
