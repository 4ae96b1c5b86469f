package check

import "github.com/pyric/pyric/rules/eval"

// Service names of the environments.
const (
	Firestore = "cloud.firestore"
	Storage   = "firebase.storage"
)

// builtin declares a Firestore builtin. Its argument count is checked
// when it is evaluated, not at compile time (MaxArgs eval.AnyArgs):
// production's compile-time treatment of get(a, b) has not been
// observed, its runtime answer has ("Incorrect number of arguments
// supplied to function: get.").
func builtin(name, doc string) eval.Decl {
	return eval.Decl{Kind: eval.Global, Name: name, MinArgs: 0, MaxArgs: eval.AnyArgs, Doc: doc, Status: eval.Production}
}

var environments = map[string]eval.Decls{
	Firestore: eval.Standard.With(
		builtin("get", "The document at a path as it is before the request (an error when it does not exist)."),
		builtin("exists", "Whether a document exists before the request."),
		builtin("getAfter", "The document at a path as it would be after the request's writes."),
		builtin("existsAfter", "Whether a document would exist after the request's writes."),
	),
	// Storage reads Firestore documents through its firestore namespace;
	// a wrong argument count there is a compile error (as for every
	// namespaced function).
	Storage: eval.Standard.With(
		eval.Decl{Kind: eval.Namespaced, Namespace: "firestore", Name: "get", MinArgs: 1, MaxArgs: 1, Status: eval.Production,
			Doc: "The Firestore document at a path (/databases/(default)/documents/…)."},
		eval.Decl{Kind: eval.Namespaced, Namespace: "firestore", Name: "exists", MinArgs: 1, MaxArgs: 1, Status: eval.Production,
			Doc: "Whether the Firestore document at a path exists."},
	),
}

// Environment returns the declaration table of a service's rules
// environment: the standard library plus the service's builtins. It is
// what the checker resolves calls against and what lint suggests names
// from; an unknown service gets the standard library alone.
func Environment(service string) eval.Decls {
	if d, ok := environments[service]; ok {
		return d
	}
	return eval.Standard
}
