package firestore

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/internal/conformance"
	"github.com/pyric/pyric/rules/sim"
	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/rules/value"
)

// construct is a witness for one rules-language construct: a condition
// evaluated as `allow <method>` on users/alice by alice (real-request
// semantics) with the stored document {name: 'A', age: 30, tags: ['a'],
// m: {k: 1}}, and what production does with it.
type construct struct {
	method string // get (default) or create
	cond   string
	want   sim.Outcome
	// err is production's error text for a rejected construct.
	err string
	// testAPI evaluates with the Rules Test API's conventions. Production's
	// Test API builds resource and request.resource from the supplied data
	// alone, so their id and __name__ are absent there; real requests (and
	// the official emulator) carry them, which TestResourceIdentity checks.
	testAPI bool
}

var languageWitnesses = map[string]construct{
	"firestore.binding.request":                     {cond: "request != null", want: sim.Allow},
	"firestore.binding.request.auth":                {cond: "request.auth != null", want: sim.Allow},
	"firestore.binding.request.auth.uid":            {cond: "request.auth.uid == 'alice'", want: sim.Allow},
	"firestore.binding.request.auth.token":          {cond: "request.auth.token.email == 'alice@example.com'", want: sim.Allow},
	"firestore.binding.request.resource":            {method: Create, cond: "request.resource != null", want: sim.Allow},
	"firestore.binding.request.resource.data":       {method: Create, cond: "request.resource.data.name == 'A'", want: sim.Allow},
	"firestore.binding.request.time":                {cond: "request.time > timestamp.date(2020, 1, 1)", want: sim.Allow},
	"firestore.binding.request.path":                {cond: "request.path == /databases/(default)/documents/users/alice", want: sim.Allow},
	"firestore.binding.request.method":              {cond: "request.method == 'get'", want: sim.Allow},
	"firestore.binding.request.query":               {method: List, cond: "request.query.limit == null", want: sim.Allow},
	"firestore.binding.resource":                    {cond: "resource != null", want: sim.Allow},
	"firestore.binding.resource.data":               {cond: "resource.data.age == 30", want: sim.Allow},
	"firestore.binding.resource.id":                 {cond: "resource.id == 'alice'", want: sim.Deny, err: "Property id is undefined on object.", testAPI: true},
	"firestore.binding.resource.__name__":           {cond: "resource.__name__ != null", want: sim.Deny, err: "Property __name__ is undefined on object.", testAPI: true},
	"firestore.binding.request.resource.id":         {method: Create, cond: "request.resource.id == 'alice'", want: sim.Deny, err: "Property id is undefined on object.", testAPI: true},
	"firestore.binding.path-variable":               {cond: "uid == 'alice'", want: sim.Allow},
	"firestore.function.get":                        {cond: "get(/databases/$(database)/documents/cfg/site).data.open == true", want: sim.Allow},
	"firestore.function.exists":                     {cond: "exists(/databases/$(database)/documents/cfg/site)", want: sim.Allow},
	"firestore.function.getAfter":                   {method: Create, cond: "getAfter(request.path).data.name == 'A'", want: sim.Allow},
	"firestore.function.existsAfter":                {method: Create, cond: "existsAfter(request.path)", want: sim.Allow},
	"firestore.function.debug":                      {cond: "debug(true)", want: sim.Deny, err: "Function not found error: Name: [debug]."},
	"firestore.function.math.abs":                   {cond: "math.abs(-2) == 2", want: sim.Allow},
	"firestore.function.math.ceil":                  {cond: "math.ceil(1.2) == 2.0", want: sim.Allow},
	"firestore.function.math.floor":                 {cond: "math.floor(1.8) == 1.0", want: sim.Allow},
	"firestore.function.math.round":                 {cond: "math.round(1.5) == 2", want: sim.Allow},
	"firestore.function.math.sqrt":                  {cond: "math.sqrt(16) == 4.0", want: sim.Allow},
	"firestore.function.math.pow":                   {cond: "math.pow(2, 10) == 1024.0", want: sim.Allow},
	"firestore.function.math.isInfinite":            {cond: "math.isInfinite(1.0)", want: sim.Deny, err: "Function not found error: Name: [math.isInfinite]."},
	"firestore.function.math.isNaN":                 {cond: "math.isNaN(0.0 / 0.0)", want: sim.Allow},
	"firestore.function.timestamp.date":             {cond: "timestamp.date(2024, 2, 29).day() == 29", want: sim.Allow},
	"firestore.function.timestamp.value":            {cond: "timestamp.value(1000).toMillis() == 1000", want: sim.Allow},
	"firestore.function.duration.value":             {cond: "duration.value(90, 'm') == duration.value(5400, 's')", want: sim.Allow},
	"firestore.function.duration.time":              {cond: "duration.time(1, 2, 3, 4).seconds() == 3723", want: sim.Allow},
	"firestore.function.duration.abs":               {cond: "duration.abs(duration.value(-3, 's')) == duration.value(3, 's')", want: sim.Allow},
	"firestore.function.latlng.value":               {cond: "latlng.value(10.0, 20.0).latitude() == 10.0", want: sim.Allow},
	"firestore.function.hashing.md5":                {cond: "hashing.md5('').toHexString() == 'D41D8CD98F00B204E9800998ECF8427E'", want: sim.Allow},
	"firestore.function.hashing.sha256":             {cond: "hashing.sha256('abc').size() == 32", want: sim.Allow},
	"firestore.function.hashing.crc32":              {cond: "hashing.crc32('123456789').toHexString() == '2639F4CB'", want: sim.Allow},
	"firestore.function.hashing.crc32c":             {cond: "hashing.crc32c('123456789').toHexString() == '839206E3'", want: sim.Allow},
	"firestore.function.cast.string":                {cond: "string(1.5) == '1.5'", want: sim.Allow},
	"firestore.function.cast.int":                   {cond: "int('42') == 42", want: sim.Allow},
	"firestore.function.cast.float":                 {cond: "float(2) == 2.0", want: sim.Allow},
	"firestore.function.cast.bool":                  {cond: "bool('true')", want: sim.Deny, err: "Function not found error: Name: [bool]."},
	"firestore.function.cast.path":                  {cond: "path('users/alice') == path('users/alice')", want: sim.Allow},
	"firestore.method.string.matches":               {cond: "'alice@acme.com'.matches('.*@acme[.]com')", want: sim.Allow},
	"firestore.method.string.lower":                 {cond: "'AbC'.lower() == 'abc'", want: sim.Allow},
	"firestore.method.string.upper":                 {cond: "'AbC'.upper() == 'ABC'", want: sim.Allow},
	"firestore.method.string.trim":                  {cond: "'  x '.trim() == 'x'", want: sim.Allow},
	"firestore.method.string.size":                  {cond: "'héllo'.size() == 5", want: sim.Allow},
	"firestore.method.string.split":                 {cond: "'a,b'.split(',') == ['a', 'b']", want: sim.Allow},
	"firestore.method.string.replace":               {cond: "'a-b-c'.replace('-', '+') == 'a+b+c'", want: sim.Allow},
	"firestore.method.string.toUtf8":                {cond: "'é'.toUtf8().size() == 2", want: sim.Allow},
	"firestore.method.list.hasAll":                  {cond: "[1, 2, 3].hasAll([1, 3])", want: sim.Allow},
	"firestore.method.list.hasAny":                  {cond: "[1, 2, 3].hasAny([4, 3])", want: sim.Allow},
	"firestore.method.list.hasOnly":                 {cond: "[1, 2].hasOnly([1, 2, 3])", want: sim.Allow},
	"firestore.method.list.size":                    {cond: "[1, 2].size() == 2", want: sim.Allow},
	"firestore.method.list.toSet":                   {cond: "[1, 1, 2].toSet().size() == 2", want: sim.Allow},
	"firestore.method.list.concat":                  {cond: "[1].concat([2]) == [1, 2]", want: sim.Allow},
	"firestore.method.list.removeAll":               {cond: "[1, 2, 1].removeAll([1]) == [2]", want: sim.Allow},
	"firestore.method.list.join":                    {cond: "['a', 'b'].join('-') == 'a-b'", want: sim.Allow},
	"firestore.method.map.keys":                     {cond: "resource.data.m.keys() == ['k']", want: sim.Allow},
	"firestore.method.map.values":                   {cond: "resource.data.m.values() == [1]", want: sim.Allow},
	"firestore.method.map.size":                     {cond: "resource.data.size() == 4", want: sim.Allow},
	"firestore.method.map.get":                      {cond: "resource.data.get('nope', 7) == 7", want: sim.Allow},
	"firestore.method.map.hasAll":                   {cond: "resource.data.hasAll(['name'])", want: sim.Deny, err: "Function not found error: Name: [hasAll]."},
	"firestore.method.map.hasAny":                   {cond: "resource.data.hasAny(['name'])", want: sim.Deny, err: "Function not found error: Name: [hasAny]."},
	"firestore.method.map.hasOnly":                  {cond: "resource.data.hasOnly(['name'])", want: sim.Deny, err: "Function not found error: Name: [hasOnly]."},
	"firestore.method.map.diff":                     {cond: "{'a': 1}.diff({}) is map_diff", want: sim.Allow},
	"firestore.method.mapdiff.addedKeys":            {cond: "{'a': 1, 'b': 2}.diff({'b': 2}).addedKeys() == ['a'].toSet()", want: sim.Allow},
	"firestore.method.mapdiff.removedKeys":          {cond: "{'b': 2}.diff({'a': 1, 'b': 2}).removedKeys() == ['a'].toSet()", want: sim.Allow},
	"firestore.method.mapdiff.changedKeys":          {cond: "{'a': 2}.diff({'a': 1}).changedKeys() == ['a'].toSet()", want: sim.Allow},
	"firestore.method.mapdiff.affectedKeys":         {cond: "{'a': 2, 'c': 1}.diff({'a': 1, 'b': 1}).affectedKeys() == ['a', 'b', 'c'].toSet()", want: sim.Allow},
	"firestore.method.mapdiff.unchangedKeys":        {cond: "{'a': 1, 'b': 2}.diff({'a': 1, 'b': 3}).unchangedKeys() == ['a'].toSet()", want: sim.Allow},
	"firestore.method.set.difference":               {cond: "[1, 2].toSet().difference([2].toSet()) == [1].toSet()", want: sim.Allow},
	"firestore.method.set.union":                    {cond: "[1].toSet().union([2].toSet()).size() == 2", want: sim.Allow},
	"firestore.method.set.intersection":             {cond: "[1, 2].toSet().intersection([2, 3].toSet()) == [2].toSet()", want: sim.Allow},
	"firestore.method.set.hasAll":                   {cond: "[1, 2].toSet().hasAll([1])", want: sim.Allow},
	"firestore.method.set.hasAny":                   {cond: "[1, 2].toSet().hasAny([2, 5])", want: sim.Allow},
	"firestore.method.set.hasOnly":                  {cond: "[1, 2].toSet().hasOnly([1, 2])", want: sim.Allow},
	"firestore.method.set.size":                     {cond: "[1, 2, 2].toSet().size() == 2", want: sim.Allow},
	"firestore.method.bytes.size":                   {cond: "b'\\x01\\x02'.size() == 2", want: sim.Allow},
	"firestore.method.bytes.toBase64":               {cond: "'hi'.toUtf8().toBase64() == 'aGk='", want: sim.Allow},
	"firestore.method.bytes.toHexString":            {cond: "b'\\xab'.toHexString() == 'AB'", want: sim.Allow},
	"firestore.method.path.bind":                    {cond: "path('users/{u}').bind({'u': 'bob'}) == path('users/bob')", want: sim.Allow},
	"firestore.method.timestamp.year":               {cond: "timestamp.date(2024, 2, 29).year() == 2024", want: sim.Allow},
	"firestore.method.timestamp.month":              {cond: "timestamp.date(2024, 2, 29).month() == 2", want: sim.Allow},
	"firestore.method.timestamp.day":                {cond: "timestamp.date(2024, 2, 29).day() == 29", want: sim.Allow},
	"firestore.method.timestamp.hours":              {cond: "timestamp.value(3600000).hours() == 1", want: sim.Allow},
	"firestore.method.timestamp.minutes":            {cond: "timestamp.value(60000).minutes() == 1", want: sim.Allow},
	"firestore.method.timestamp.seconds":            {cond: "timestamp.value(1000).seconds() == 1", want: sim.Allow},
	"firestore.method.timestamp.nanos":              {cond: "timestamp.value(1).nanos() == 1000000", want: sim.Allow},
	"firestore.method.timestamp.dayOfWeek":          {cond: "timestamp.date(2024, 2, 29).dayOfWeek() == 4", want: sim.Allow},
	"firestore.method.timestamp.dayOfYear":          {cond: "timestamp.date(2024, 2, 29).dayOfYear() == 60", want: sim.Allow},
	"firestore.method.timestamp.date":               {cond: "timestamp.value(3600000).date() == timestamp.value(0)", want: sim.Allow},
	"firestore.method.timestamp.time":               {cond: "timestamp.value(3600000).time() == duration.value(1, 'h')", want: sim.Allow},
	"firestore.method.timestamp.toMillis":           {cond: "timestamp.value(42).toMillis() == 42", want: sim.Allow},
	"firestore.method.duration.seconds":             {cond: "duration.value(1500, 'ms').seconds() == 1", want: sim.Allow},
	"firestore.method.duration.nanos":               {cond: "duration.value(1500, 'ms').nanos() == 500000000", want: sim.Allow},
	"firestore.method.latlng.latitude":              {cond: "latlng.value(1.5, 2.5).latitude() == 1.5", want: sim.Allow},
	"firestore.method.latlng.longitude":             {cond: "latlng.value(1.5, 2.5).longitude() == 2.5", want: sim.Allow},
	"firestore.method.latlng.distance":              {cond: "latlng.value(0.0, 0.0).distance(latlng.value(0.0, 0.0)) == 0.0", want: sim.Allow},
	"firestore.operator.eq":                         {cond: "1 == 1.0", want: sim.Allow},
	"firestore.operator.neq":                        {cond: "'a' != 'b'", want: sim.Allow},
	"firestore.operator.lt":                         {cond: "1 < 1.5", want: sim.Allow},
	"firestore.operator.gt":                         {cond: "'b' > 'a'", want: sim.Allow},
	"firestore.operator.lte":                        {cond: "2 <= 2", want: sim.Allow},
	"firestore.operator.gte":                        {cond: "duration.value(2, 's') >= duration.value(2000, 'ms')", want: sim.Allow},
	"firestore.operator.add":                        {cond: "'a' + 'b' == 'ab'", want: sim.Allow},
	"firestore.operator.sub":                        {cond: "5 - 7 == -2", want: sim.Allow},
	"firestore.operator.mul":                        {cond: "3 * 1.5 == 4.5", want: sim.Allow},
	"firestore.operator.div":                        {cond: "-7 / 2 == -3", want: sim.Allow},
	"firestore.operator.mod":                        {cond: "-7 % 2 == -1", want: sim.Allow},
	"firestore.operator.and":                        {cond: "true && (1 / 0 == 0 && false) == false", want: sim.Allow},
	"firestore.operator.or":                         {cond: "1 / 0 == 0 || true", want: sim.Allow},
	"firestore.operator.not":                        {cond: "!false", want: sim.Allow},
	"firestore.operator.ternary":                    {cond: "request.auth == null ? false : true", want: sim.Allow},
	"firestore.operator.in":                         {cond: "'k' in resource.data.m && 'a' in resource.data.tags", want: sim.Allow},
	"firestore.operator.is":                         {cond: "resource.data.age is int && resource.data.age is number && !(resource.data.age is float)", want: sim.Allow},
	"firestore.operator.unary-minus":                {cond: "-(resource.data.age) == -30", want: sim.Allow},
	"firestore.operator.member":                     {cond: "resource.data.m.k == 1", want: sim.Allow},
	"firestore.operator.index":                      {cond: "resource.data['tags'][0] == 'a'", want: sim.Allow},
	"firestore.operator.slice":                      {cond: "'hello'[1:3] == 'el' && [1, 2, 3][1:] == [2, 3]", want: sim.Allow},
	"firestore.rule-kind.allow-read":                {cond: "true", want: sim.Allow},
	"firestore.rule-kind.allow-write":               {method: Create, cond: "true", want: sim.Allow},
	"firestore.rule-kind.allow-get":                 {cond: "true", want: sim.Allow},
	"firestore.rule-kind.allow-list":                {method: List, cond: "true", want: sim.Allow},
	"firestore.rule-kind.allow-create":              {method: Create, cond: "true", want: sim.Allow},
	"firestore.rule-kind.allow-update":              {method: Update, cond: "true", want: sim.Allow},
	"firestore.rule-kind.allow-delete":              {method: Delete, cond: "true", want: sim.Allow},
	"firestore.rule-kind.match":                     {cond: "true", want: sim.Allow},
	"firestore.rule-kind.function":                  {cond: "isOwner()", want: sim.Allow},
	"firestore.rule-kind.let":                       {cond: "twice(21) == 42", want: sim.Allow},
	"firestore.rule-kind.rules_version":             {cond: "true", want: sim.Allow},
	"firestore.semantic.hierarchical-match-cascade": {cond: "true", want: sim.Allow},
	"firestore.semantic.recursive-wildcard":         {cond: "true", want: sim.Allow},
	"firestore.semantic.error-absorption-and":       {cond: "!(resource.data.nope == 1 && false)", want: sim.Allow},
	"firestore.semantic.error-absorption-or":        {cond: "resource.data.nope == 1 || true", want: sim.Allow},
}

// TestLanguageConstructs exercises every construct of rules-language.json:
// accepted ones evaluate as production does, rejected ones fail the way
// production fails (with its message).
func TestLanguageConstructs(t *testing.T) {
	lang, err := conformance.Language()
	if err != nil {
		t.Fatal(err)
	}
	covered := 0
	for _, c := range lang["firestore"] {
		if c.Status == "unprobeable" {
			continue
		}
		w, ok := languageWitnesses[c.ID]
		if !ok {
			t.Errorf("no witness for construct %s (%s)", c.ID, c.Status)
			continue
		}
		covered++
		t.Run(c.ID, func(t *testing.T) {
			d := decideWitness(t, c.ID, w)
			if d.Outcome != w.want {
				t.Fatalf("%s: %s → %s, want %s (notes %v)", c.ID, w.cond, d.Outcome, w.want, d.Notes)
			}
			if c.Status == "rejected" {
				if w.want != sim.Deny || w.err == "" {
					t.Fatalf("rejected construct needs a denying witness with production's error")
				}
				if len(d.Trace) == 0 || d.Trace[0].Message != w.err {
					t.Fatalf("%s: message %q, want %q", c.ID, d.Trace[0].Message, w.err)
				}
				if c.ProbeNote != "" && !strings.Contains(c.ProbeNote, w.err) {
					t.Fatalf("%s: production's note %q lacks %q", c.ID, c.ProbeNote, w.err)
				}
			}
		})
	}
	t.Logf("%d constructs witnessed", covered)
}

func decideWitness(t *testing.T, id string, w construct) *Decision {
	t.Helper()
	method := w.method
	if method == "" {
		method = Get
	}
	src := fmt.Sprintf(`rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    function twice(n) {
      let doubled = n * 2;
      return doubled;
    }
    match /users/{uid} {
      function isOwner() { return request.auth.uid == uid; }
      allow %s: if %s;
    }
    match /{other=**} {
      allow read: if false;
    }
  }
}`, methodFor(id, method), w.cond)
	rs, diags := Compile(source.NewFile("firestore.rules", src))
	if rs == nil {
		t.Fatalf("%s does not compile: %v", id, diags)
	}
	doc := value.Map{"name": value.String("A"), "age": value.Int(30), "tags": value.List{value.String("a")}, "m": value.Map{"k": value.Int(1)}}
	req := &Request{Method: method, Path: "users/alice", Time: time.Now(), TestAPI: w.testAPI,
		Auth: &Auth{UID: "alice", Token: map[string]any{"email": "alice@example.com"}},
		Get: LookupFunc(func(p string) (value.Map, bool, error) {
			if p == "cfg/site" {
				return value.Map{"open": value.Bool(true)}, true, nil
			}
			return nil, false, nil
		})}
	switch method {
	case Create:
		req.After = value.Map{"name": value.String("A")}
	case Update:
		req.Resource, req.After = &Doc{Path: "users/alice", Data: doc}, doc
	case List:
		req.Path = "users"
	default:
		req.Resource = &Doc{Path: "users/alice", Data: doc}
	}
	return rs.Decide(req)
}

// methodFor picks the allow verb a construct is about.
func methodFor(id, method string) string {
	for _, verb := range []string{"read", "write", "get", "list", "create", "update", "delete"} {
		if id == "firestore.rule-kind.allow-"+verb {
			return verb
		}
	}
	return method
}

// TestResourceIdentity checks that real requests carry the document's
// identity, as the official emulator's g8 probe showed: resource.id and
// resource.__name__ exist outside the Rules Test API.
func TestResourceIdentity(t *testing.T) {
	d := decideWitness(t, "identity", construct{cond: "resource.id == 'alice' && resource.__name__ == /databases/$(database)/documents/users/alice"})
	if !d.Allowed() {
		t.Errorf("resource identity on a real get: %s %v", d.Outcome, d.Notes)
	}
	d = decideWitness(t, "identity", construct{method: Create, cond: "request.resource.id == 'alice'"})
	if !d.Allowed() {
		t.Errorf("request.resource.id on a real create: %s %v", d.Outcome, d.Notes)
	}
}
