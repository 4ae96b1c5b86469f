package mcp

// StdlibEntry documents one member of the Security Rules standard library.
type StdlibEntry struct {
	Key       string   `json:"key"`
	Signature string   `json:"signature"`
	Summary   string   `json:"summary"`
	Example   string   `json:"example,omitempty"`
	Services  []string `json:"services"`
}

var both = []string{"firestore", "storage"}

// stdlib is the catalog rules_stdlib_list and rules_stdlib_get serve. Its
// test compiles every example with each service's engine, so an entry the
// engines don't know fails the build's tests.
var stdlib = []StdlibEntry{
	{"get", "get(path) → rules.firestore.Resource", "Read a document (counts against the 10-document limit per request, 20 in batches and transactions; same-path reads are cached). Errors when the document does not exist: guard with exists().", "get(/databases/$(database)/documents/users/$(request.auth.uid)).data.admin == true", []string{"firestore"}},
	{"exists", "exists(path) → bool", "Whether a document exists (counts against the document read limit).", "exists(/databases/$(database)/documents/users/$(request.auth.uid))", []string{"firestore"}},
	{"getAfter", "getAfter(path) → rules.firestore.Resource", "Read a document as it would be after the current batch or transaction commits.", "getAfter(/databases/$(database)/documents/users/$(request.auth.uid)).data.count == 1", []string{"firestore"}},
	{"existsAfter", "existsAfter(path) → bool", "Whether a document exists after the current batch or transaction commits.", "existsAfter(/databases/$(database)/documents/users/$(request.auth.uid))", []string{"firestore"}},
	{"firestore.get", "firestore.get(path) → rules.firestore.Resource", "Read a Firestore document from Storage rules (at most 2 distinct documents per request).", "firestore.get(/databases/(default)/documents/users/$(request.auth.uid)).data.admin == true", []string{"storage"}},
	{"firestore.exists", "firestore.exists(path) → bool", "Whether a Firestore document exists, from Storage rules.", "firestore.exists(/databases/(default)/documents/users/$(request.auth.uid))", []string{"storage"}},
	{"string", "string(value) → string", "Convert an int, float, bool, null, path or string to a string.", "string(1) == '1'", both},
	{"int", "int(value) → int", "Convert a float (truncating) or a numeric string to an int.", "int('42') == 42", both},
	{"float", "float(value) → float", "Convert an int or a numeric string to a float.", "float(1) == 1.0", both},
	{"path", "path(string) → path", "Build a path from a string.", "path('/databases/(default)/documents/a/b') == /databases/(default)/documents/a/b", both},
	{"math.abs", "math.abs(number) → number", "Absolute value.", "math.abs(-1) == 1", both},
	{"math.ceil", "math.ceil(number) → int", "Round up to an integer.", "math.ceil(1.2) == 2", both},
	{"math.floor", "math.floor(number) → int", "Round down to an integer.", "math.floor(1.8) == 1", both},
	{"math.round", "math.round(number) → int", "Round to the nearest integer (halves away from zero).", "math.round(1.5) == 2", both},
	{"math.sqrt", "math.sqrt(number) → float", "Square root.", "math.sqrt(4) == 2.0", both},
	{"math.pow", "math.pow(base, exponent) → float", "Power.", "math.pow(2, 3) == 8.0", both},
	{"math.isNaN", "math.isNaN(number) → bool", "Whether a number is NaN.", "math.isNaN(1.0) == false", both},
	{"timestamp.date", "timestamp.date(year, month, day) → timestamp", "A timestamp at midnight UTC of a date.", "timestamp.date(2026, 1, 1) < request.time", both},
	{"timestamp.value", "timestamp.value(epochMillis) → timestamp", "A timestamp from milliseconds since the epoch.", "timestamp.value(0) < request.time", both},
	{"duration.value", "duration.value(magnitude, unit) → duration", "A duration; unit is w, d, h, m, s, ms or ns.", "request.time < timestamp.value(0) + duration.value(100000, 'd')", both},
	{"duration.abs", "duration.abs(duration) → duration", "The absolute value of a duration.", "duration.abs(duration.value(-1, 's')) == duration.value(1, 's')", both},
	{"duration.time", "duration.time(hours, minutes, seconds, nanos) → duration", "A duration from its parts.", "duration.time(1, 0, 0, 0) == duration.value(1, 'h')", both},
	{"hashing.sha256", "hashing.sha256(string|bytes) → bytes", "SHA-256 digest.", "hashing.sha256('a') != hashing.sha256('b')", both},
	{"hashing.md5", "hashing.md5(string|bytes) → bytes", "MD5 digest.", "hashing.md5('a') != hashing.md5('b')", both},
	{"hashing.crc32", "hashing.crc32(string|bytes) → bytes", "CRC-32 checksum.", "hashing.crc32('a') != hashing.crc32('b')", both},
	{"hashing.crc32c", "hashing.crc32c(string|bytes) → bytes", "CRC-32C checksum.", "hashing.crc32c('a') != hashing.crc32c('b')", both},
	{"latlng.value", "latlng.value(lat, lng) → latlng", "A geo point.", "latlng.value(1.0, 2.0).distance(latlng.value(1.0, 2.0)) == 0", both},
	{"string.size", "s.size() → int", "Number of characters.", "'abc'.size() == 3", both},
	{"string.matches", "s.matches(regex) → bool", "Whether the whole string matches an RE2 regular expression.", "'a1'.matches('[a-z][0-9]')", both},
	{"string.lower", "s.lower() → string", "Lower-case copy.", "'AB'.lower() == 'ab'", both},
	{"string.upper", "s.upper() → string", "Upper-case copy.", "'ab'.upper() == 'AB'", both},
	{"string.trim", "s.trim() → string", "Copy without leading and trailing whitespace.", "' a '.trim() == 'a'", both},
	{"string.split", "s.split(regex) → list", "Split around matches of a regular expression.", "'a,b'.split(',') == ['a', 'b']", both},
	{"string.replace", "s.replace(regex, replacement) → string", "Replace every match of a regular expression.", "'aa'.replace('a', 'b') == 'bb'", both},
	{"string.toUtf8", "s.toUtf8() → bytes", "The UTF-8 bytes of a string.", "'a'.toUtf8().size() == 1", both},
	{"list.size", "l.size() → int", "Number of elements.", "[1, 2].size() == 2", both},
	{"list.hasAny", "l.hasAny(list) → bool", "Whether any element of the argument is in the list.", "[1, 2].hasAny([2, 3])", both},
	{"list.hasAll", "l.hasAll(list) → bool", "Whether every element of the argument is in the list.", "[1, 2].hasAll([1])", both},
	{"list.hasOnly", "l.hasOnly(list) → bool", "Whether every element of the list is in the argument.", "[1].hasOnly([1, 2])", both},
	{"list.join", "l.join(separator) → string", "Join a list of strings.", "['a', 'b'].join('-') == 'a-b'", both},
	{"list.concat", "l.concat(list) → list", "The list followed by the argument.", "[1].concat([2]) == [1, 2]", both},
	{"list.removeAll", "l.removeAll(list) → list", "The list without the argument's elements.", "[1, 2].removeAll([1]) == [2]", both},
	{"list.toSet", "l.toSet() → set", "The set of the list's elements.", "[1, 1].toSet().size() == 1", both},
	{"set.size", "s.size() → int", "Number of elements.", "[1, 2].toSet().size() == 2", both},
	{"set.difference", "s.difference(set) → set", "Elements not in the argument.", "[1, 2].toSet().difference([1].toSet()) == [2].toSet()", both},
	{"set.intersection", "s.intersection(set) → set", "Elements in both.", "[1, 2].toSet().intersection([2].toSet()) == [2].toSet()", both},
	{"set.union", "s.union(set) → set", "Elements in either.", "[1].toSet().union([2].toSet()).size() == 2", both},
	{"set.hasAny", "s.hasAny(list|set) → bool", "Whether any element of the argument is in the set.", "[1].toSet().hasAny([1])", both},
	{"map.keys", "m.keys() → list", "The map's keys.", "{'a': 1}.keys() == ['a']", both},
	{"map.values", "m.values() → list", "The map's values.", "{'a': 1}.values() == [1]", both},
	{"map.size", "m.size() → int", "Number of entries.", "{'a': 1}.size() == 1", both},
	{"map.get", "m.get(key, default) → value", "The value at key (a string or a list of keys for a nested path), or default when absent.", "{'a': 1}.get('b', 0) == 0", both},
	{"map.diff", "m.diff(map) → MapDiff", "Compare with another map: addedKeys(), removedKeys(), changedKeys(), affectedKeys(), unchangedKeys().", "{'a': 1}.diff({'a': 2}).changedKeys() == ['a'].toSet()", both},
	{"map.in", "key in m → bool", "Whether a map has a key (also: element in list).", "'a' in {'a': 1}", both},
	{"timestamp.toMillis", "t.toMillis() → int", "Milliseconds since the epoch.", "request.time.toMillis() > 0", both},
	{"timestamp.year", "t.year() → int", "The year (also month(), day(), hours(), minutes(), seconds(), nanos(), dayOfWeek(), dayOfYear(), date(), time()).", "request.time.year() > 2000", both},
	{"duration.seconds", "d.seconds() → int", "The duration's whole seconds (also nanos()).", "duration.value(1, 'm').seconds() == 60", both},
	{"bytes.size", "b.size() → int", "Number of bytes.", "b'abc'.size() == 3", both},
	{"bytes.toBase64", "b.toBase64() → string", "Base64 (URL alphabet) encoding.", "b'a'.toBase64() == 'YQ=='", both},
	{"bytes.toHexString", "b.toHexString() → string", "Upper-case hexadecimal encoding.", "b'a'.toHexString() == '61'", both},
	{"path.bind", "p.bind(map) → path", "Fill a path's variables.", "/a/$(id).bind({'id': 'b'}) == /a/b", both},
	{"latlng.distance", "p.distance(latlng) → float", "Distance in metres.", "latlng.value(0.0, 0.0).distance(latlng.value(0.0, 0.0)) == 0.0", both},
	{"request.auth", "request.auth → map | null", "The caller: {uid, token} (token holds the ID token's claims, e.g. email, email_verified, firebase.sign_in_provider and custom claims); null when signed out.", "request.auth != null && request.auth.uid == 'a'", both},
	{"request.resource", "request.resource → Resource", "The document (Firestore: its data after the write, request.resource.data) or object metadata (Storage: size, contentType, metadata) being written.", "request.resource.data.size() > 0", []string{"firestore"}},
	{"request.time", "request.time → timestamp", "When the request was received (serverTimestamp() writes resolve to it).", "request.time > timestamp.value(0)", both},
	{"request.method", "request.method → string", "get, list, create, update or delete.", "request.method == 'get'", both},
	{"request.path", "request.path → path", "The requested path.", "request.path != null", both},
	{"request.query", "request.query → map", "For list: {limit, offset, orderBy}.", "request.query.limit <= 50", []string{"firestore"}},
	{"resource", "resource → Resource | null", "The stored document (data, id, __name__) before the request; null when it does not exist. Storage: the stored object's metadata.", "resource == null || resource.data.owner == request.auth.uid", []string{"firestore"}},
}

func stdlibFor(service string) []StdlibEntry {
	var out []StdlibEntry
	for _, e := range stdlib {
		for _, s := range e.Services {
			if s == service {
				out = append(out, e)
				break
			}
		}
	}
	return out
}
