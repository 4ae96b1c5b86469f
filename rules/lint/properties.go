package lint

import "sort"

// Properties returns the properties production defines on a binding of a
// service's rules — "request", "request.auth", "request.resource" or
// "resource" — sorted; nil for any other. They are the names lint's
// WRONG_CONTEXT_PATH checks accesses against, and what the language
// server (package lsp) completes after a dot.
func Properties(service, binding string) []string {
	var props map[string]bool
	switch binding {
	case "request":
		props = requestProps
		if service == Storage {
			props = storageRequestProps
		}
	case "request.auth":
		props = authProps
	case "request.resource", "resource":
		props = firestoreDocProps
		if service == Storage {
			props = storageObjectProps
		}
	}
	out := make([]string, 0, len(props))
	for p := range props {
		out = append(out, p)
	}
	sort.Strings(out)
	if len(out) == 0 {
		return nil
	}
	return out
}
