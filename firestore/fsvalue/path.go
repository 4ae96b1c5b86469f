package fsvalue

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// DefaultDatabase is the id of the database most clients use.
const DefaultDatabase = "(default)"

// MaxIDBytes is production's limit on one collection or document id.
const MaxIDBytes = 1500

// maxPathSegments bounds the depth of a document path (100 segments = 50
// collection/document pairs... production allows 100 levels of nesting).
const maxPathSegments = 200

// DatabaseName identifies one database: projects/{Project}/databases/{Database}.
type DatabaseName struct {
	Project  string
	Database string
}

// String returns the resource name projects/P/databases/D.
func (d DatabaseName) String() string {
	return "projects/" + d.Project + "/databases/" + d.Database
}

// Documents returns the documents root, projects/P/databases/D/documents.
func (d DatabaseName) Documents() string { return d.String() + "/documents" }

// DocName returns the full resource name of the document at the relative path.
func (d DatabaseName) DocName(rel string) string {
	if rel == "" {
		return d.Documents()
	}
	return d.Documents() + "/" + rel
}

// ParseDatabaseName parses projects/P/databases/D. A malformed name is
// INVALID_ARGUMENT in the official emulator's words, which say what is
// missing and where: `Database name "" lacks "projects" at index 0.`
func ParseDatabaseName(s string) (DatabaseName, error) {
	kind := "Database name"
	if strings.HasSuffix(s, "/") {
		return DatabaseName{}, Errorf(ErrInvalidArgument, "%s %q has invalid trailing \"/\".", kind, s)
	}
	db, pos, err := parseDatabasePrefix(kind, s)
	if err != nil {
		return DatabaseName{}, err
	}
	if pos != len(s) {
		return DatabaseName{}, Errorf(ErrInvalidArgument, "%s %q has unexpected %q after the database id at index %d.", kind, s, s[pos:], pos)
	}
	return db, nil
}

// parseDatabasePrefix reads projects/P/databases/D at the start of s (a
// name of the given kind) and returns where it ends.
func parseDatabasePrefix(kind, s string) (DatabaseName, int, error) {
	pos := 0
	lacks := func(what string, at int) error {
		return Errorf(ErrInvalidArgument, "%s %q lacks %s at index %d.", kind, s, what, at)
	}
	literal := func(lit string) error {
		if !strings.HasPrefix(s[pos:], lit) {
			return lacks(strconv.Quote(lit), pos)
		}
		pos += len(lit)
		return nil
	}
	slash := func() error {
		if pos >= len(s) || s[pos] != '/' {
			return lacks(`"/"`, pos)
		}
		pos++
		return nil
	}
	id := func(what string) (string, error) {
		end := strings.IndexByte(s[pos:], '/')
		if end < 0 {
			end = len(s) - pos
		}
		if end == 0 {
			return "", lacks(what, pos)
		}
		v := s[pos : pos+end]
		pos += end
		return v, nil
	}
	var db DatabaseName
	var err error
	if err = literal("projects"); err == nil {
		if err = slash(); err == nil {
			if db.Project, err = id("a project id"); err == nil {
				if err = slash(); err == nil {
					if err = literal("databases"); err == nil {
						if err = slash(); err == nil {
							db.Database, err = id("a database id")
						}
					}
				}
			}
		}
	}
	return db, pos, err
}

// splitName splits a resource name under .../documents into its database and
// relative path ("" for the documents root itself); kind names it in
// messages ("Document name", "Document parent name").
func splitName(kind, name string) (DatabaseName, string, error) {
	db, pos, err := parseDatabasePrefix(kind, name)
	if err != nil {
		return DatabaseName{}, "", err
	}
	const docs = "/documents"
	if pos >= len(name) || name[pos] != '/' {
		return DatabaseName{}, "", Errorf(ErrInvalidArgument, "%s %q lacks \"/\" at index %d.", kind, name, pos)
	}
	if !strings.HasPrefix(name[pos:], docs) || !(len(name) == pos+len(docs) || name[pos+len(docs)] == '/') {
		return DatabaseName{}, "", Errorf(ErrInvalidArgument, "%s %q lacks \"documents\" at index %d.", kind, name, pos+1)
	}
	rel := strings.TrimPrefix(name[pos+len(docs):], "/")
	return db, rel, nil
}

// ParseDocumentName parses a document resource name
// projects/P/databases/D/documents/c/d[/c/d...] and validates its path as
// production does.
func ParseDocumentName(name string) (DatabaseName, string, error) {
	db, rel, err := splitName("Document name", name)
	if err != nil {
		return db, "", err
	}
	if err := validatePath(name, rel, len(name)-len(rel), true); err != nil {
		return db, "", err
	}
	return db, rel, nil
}

// ParseParentName parses a query or listing parent: the documents root
// (relative path "") or a document name.
func ParseParentName(name string) (DatabaseName, string, error) {
	if strings.HasPrefix(name, "/") {
		// The official emulator's words for a parent with no database part.
		return DatabaseName{}, "", Errorf(ErrInvalidArgument, "Document parent %q not recognized.", name)
	}
	db, rel, err := splitName("Document parent name", name)
	if err != nil {
		return db, "", err
	}
	if rel == "" {
		return db, "", nil
	}
	if err := validatePath(name, rel, len(name)-len(rel), true); err != nil {
		return db, "", err
	}
	return db, rel, nil
}

// ValidateDocumentPath checks a relative document path such as "users/alice".
func ValidateDocumentPath(rel string) error { return validatePath(rel, rel, 0, true) }

// ValidateCollectionPath checks a relative collection path such as "users"
// or "users/alice/posts".
func ValidateCollectionPath(rel string) error { return validatePath(rel, rel, 0, false) }

// validatePath checks the segments of rel, reporting byte offsets into full
// (where rel starts at offset base) the way production's messages do.
func validatePath(full, rel string, base int, wantDoc bool) error {
	if rel == "" {
		return Errorf(ErrInvalidArgument, "Document name %q lacks a resource id at index %d.", full, base)
	}
	// The segments are visited in place (SplitSeq): every document a
	// request names passes here, and a slice of them was an allocation.
	off, n := base, 0
	for s := range strings.SplitSeq(rel, "/") {
		if err := validateID(full, s, off, n%2 == 0); err != nil {
			return err
		}
		off += len(s) + 1
		n++
	}
	if n > maxPathSegments {
		return Errorf(ErrInvalidArgument, "Document name %q has %d segments; the maximum is %d.", full, n, maxPathSegments)
	}
	if wantDoc && n%2 == 1 {
		return Errorf(ErrInvalidArgument, "Document name %q lacks \"/\" at index %d.", full, len(full))
	}
	if !wantDoc && n%2 == 0 {
		return Errorf(ErrInvalidArgument, "Collection path %q has an even number of segments; a collection path has an odd number.", full)
	}
	return nil
}

// validateID checks one collection id or document id.
func validateID(full, id string, off int, collection bool) error {
	kind := "resource id"
	if collection {
		kind = "collection id"
	}
	switch {
	case id == "":
		return Errorf(ErrInvalidArgument, "Document name %q lacks a resource id at index %d.", full, off)
	case id == "." || id == "..":
		return Errorf(ErrInvalidArgument, "Document name %q contains a %s %q at index %d.", full, kind, id, off)
	case !utf8.ValidString(id):
		return Errorf(ErrInvalidArgument, "Document name %q contains a %s at index %d that is not valid UTF-8.", full, kind, off)
	case len(id) > MaxIDBytes:
		return Errorf(ErrInvalidArgument, "Resource id %q is invalid because it is longer than %d bytes.", Truncate(id, 40), MaxIDBytes)
	case IsReserved(id):
		if _, ok := numericID(id); ok && !collection {
			break // a numeric document id
		}
		return Errorf(ErrInvalidArgument, "Resource id %q is invalid because it is reserved.", id)
	}
	return nil
}

// ValidateCollectionID checks a collection id (as in a query's from clause).
func ValidateCollectionID(id string) error {
	if strings.Contains(id, "/") {
		return Errorf(ErrInvalidArgument, "Collection id %q contains \"/\".", id)
	}
	return validateID(id, id, 0, true)
}

// IsReserved matches production's reserved ids and field names: __.*__.
func IsReserved(s string) bool {
	return len(s) >= 4 && strings.HasPrefix(s, "__") && strings.HasSuffix(s, "__")
}

// Truncate shortens s to n bytes plus "..." for quoting in an error message.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// CompareNames orders document names (full or relative, consistently) as
// production orders __name__: segment by segment; a numeric id
// (__id<int64>__) sorts before every string id and numerically among
// numeric ids; other ids by their UTF-8 bytes. A shorter path that is a
// prefix of a longer one sorts first.
func CompareNames(a, b string) int {
	for {
		i := strings.IndexByte(a, '/')
		j := strings.IndexByte(b, '/')
		sa, sb := a, b
		if i >= 0 {
			sa = a[:i]
		}
		if j >= 0 {
			sb = b[:j]
		}
		if c := compareIDs(sa, sb); c != 0 {
			return c
		}
		switch {
		case i < 0 && j < 0:
			return 0
		case i < 0:
			return -1
		case j < 0:
			return 1
		}
		a, b = a[i+1:], b[j+1:]
	}
}

// compareIDs orders two path segments.
func compareIDs(a, b string) int {
	if a == b {
		return 0
	}
	na, aNum := numericID(a)
	nb, bNum := numericID(b)
	switch {
	case aNum && bNum:
		return cmp.Compare(na, nb)
	case aNum:
		return -1
	case bNum:
		return 1
	}
	return strings.Compare(a, b)
}

// numericID parses a numeric document id, __id<int64>__ (as Datastore's
// numeric keys appear in Firestore: __id7__, __id-9223372036854775808__).
func numericID(s string) (int64, bool) {
	if len(s) < 7 || s[0] != '_' || !strings.HasPrefix(s, "__id") || !strings.HasSuffix(s, "__") {
		return 0, false
	}
	digits := s[4 : len(s)-2]
	if digits == "" || digits == "-" || (digits[0] == '+') {
		return 0, false
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return 0, false
	}
	// Only the canonical spelling: no leading zeros, no "-0".
	if strconv.FormatInt(n, 10) != digits {
		return 0, false
	}
	return n, true
}

// parentOf splits a relative document path into its parent document path
// ("" at the root), collection id and document id.
func parentOf(rel string) (parent, coll, id string) {
	i := strings.LastIndexByte(rel, '/')
	id = rel[i+1:]
	collPath := rel[:i]
	j := strings.LastIndexByte(collPath, '/')
	if j < 0 {
		return "", collPath, id
	}
	return collPath[:j], collPath[j+1:], id
}

// CollectionOf returns the collection path of a relative document path.
func CollectionOf(rel string) string { return rel[:strings.LastIndexByte(rel, '/')] }

// DocID returns the last segment of a path.
func DocID(rel string) string { return rel[strings.LastIndexByte(rel, '/')+1:] }

func quote(s string) string { return fmt.Sprintf("%q", s) }
