// Package discover finds the shape of a Firestore database: a layered
// breadth-first walk over collections and documents that folds concrete
// paths into template paths (users/{userId}/posts), samples documents of
// each template until their merged schema is stable, and reports the
// schemas (types, presence, nullability, enum candidates, references,
// vectors, reserved field names) with a stream of discovery events. A walk
// may pause at a byte budget and resume from a continuation token kept in
// a bounded SessionStore. It reads through a small Source interface: the
// in-process engine (EngineSource) or a live endpoint through the Go client
// (ClientSource, honouring FIRESTORE_EMULATOR_HOST).
package discover

import "strings"

// TemplatePath maps a concrete collection path to its template form:
// every document id becomes {<singular of its collection>Id}, so
// users/u1/posts becomes users/{userId}/posts and ttt_lobbies/a/games
// becomes ttt_lobbies/{lobbyId}/games. Document paths (even segment
// counts) keep their last id as a variable too.
func TemplatePath(concrete string) string {
	segs := strings.Split(strings.Trim(concrete, "/"), "/")
	for i := 1; i < len(segs); i += 2 {
		segs[i] = "{" + TemplateVariable(segs[i-1]) + "}"
	}
	return strings.Join(segs, "/")
}

// TemplateVariable is the variable a rules author conventionally writes
// for a collection's documents: the singular of the collection id's last
// snake_case or dotted word, plus "Id" (posts → postId, ttt_lobbies →
// lobbyId, addresses → addressId, class → classId).
func TemplateVariable(collectionID string) string {
	w := collectionID
	if i := strings.LastIndexAny(w, "_."); i >= 0 && i < len(w)-1 {
		w = w[i+1:]
	}
	return singular(w) + "Id"
}

func singular(w string) string {
	lw := strings.ToLower(w)
	switch {
	case strings.HasSuffix(lw, "ies") && len(w) > 3:
		return w[:len(w)-3] + "y"
	case strings.HasSuffix(lw, "ses") && len(w) > 3:
		return w[:len(w)-2]
	case strings.HasSuffix(lw, "ss"):
		return w
	case strings.HasSuffix(lw, "s") && len(w) > 1:
		return w[:len(w)-1]
	}
	return w
}

// ReservedReason classifies a field name codegen and rules should treat
// with care; "" for an ordinary name.
func ReservedReason(name string) string {
	switch {
	case name == "__name__" || name == "__key__" || name == "__id__":
		return "firestore_reserved_name"
	case strings.Contains(name, "."):
		return "dotted_field_name"
	case name != "" && strings.Trim(name, "0123456789") == "":
		return "numeric_field_name"
	case len(name) > 4 && strings.HasPrefix(name, "__") && strings.HasSuffix(name, "__"):
		return "double_underscore_wrap"
	}
	return ""
}
