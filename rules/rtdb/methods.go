package rtdb

import "sort"

// SnapshotMethods returns the methods of data, newData and root (and of
// what child() and parent() return), sorted; StringMethods those of
// strings. They are the tables the checker resolves calls against, for
// the language server's completion (package lsp).
func SnapshotMethods() []string { return methodNames(snapshotMethods) }

// StringMethods returns the methods of strings, sorted.
func StringMethods() []string { return methodNames(stringMethods) }

func methodNames(m map[string]method) []string {
	out := make([]string, 0, len(m))
	for name := range m {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}
