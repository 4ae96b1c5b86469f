package pubsub

import "strings"

// Resource kinds as they appear in names and in the emulator's
// "Invalid [kind] name" message.
const (
	kindTopics        = "topics"
	kindSubscriptions = "subscriptions"
	kindSnapshots     = "snapshots"
	kindSchemas       = "schemas"
)

// DeletedTopic is what a subscription's topic reads after its topic was
// deleted, as in production.
const DeletedTopic = "_deleted-topic_"

// ParseName splits projects/P/<kind>/ID, checking ID against
// production's resource-id rules: 3 to 255 characters, a letter first,
// then letters, digits and - _ . ~ + %, and not starting with "goog".
// The project may be any non-empty id without a slash (the emulator
// serves every project id).
func ParseName(kind, name string) (project, id string, err error) {
	rest, ok := strings.CutPrefix(name, "projects/")
	if !ok {
		return "", "", errInvalidName(kind, name)
	}
	project, rest, ok = strings.Cut(rest, "/")
	if !ok || project == "" {
		return "", "", errInvalidName(kind, name)
	}
	id, ok = strings.CutPrefix(rest, kind+"/")
	if !ok || !validID(id) {
		return "", "", errInvalidName(kind, name)
	}
	return project, id, nil
}

func validID(id string) bool {
	if len(id) < 3 || len(id) > 255 || strings.HasPrefix(id, "goog") {
		return false
	}
	c := id[0]
	if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
		return false
	}
	for i := 1; i < len(id); i++ {
		c := id[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("-_.~+%", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// ProjectOf is the project of a name already checked by ParseName.
func ProjectOf(name string) string {
	rest, _ := strings.CutPrefix(name, "projects/")
	p, _, _ := strings.Cut(rest, "/")
	return p
}
