package databaseserver

import (
	"net/http/httptest"
	"net/url"
	"reflect"
	"testing"
)

// TestOnlyNamespaceReadsWhatParseQueryReads: a raw query the unparsed
// path takes (onlyNamespace) is one url.ParseQuery reads as exactly the
// one parameter ns with that name, so answering every other lookup as
// absent (nil values) is what the parsed query would answer; anything
// else is parsed.
func TestOnlyNamespaceReadsWhatParseQueryReads(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{
		"ns=demo-default-rtdb", "ns=a_b-9", "ns=", "ns", "", "ns=a&ns=b", "ns=a&print=silent",
		"print=silent&ns=a", "ns=a%2Db", "ns=a+b", "ns=a;b", "ns=a.b", "ns=%61", "NS=a", "ns==a",
		"ns=a&", "&ns=a", "ns=a#x", "ns=" + string(make([]byte, 129)),
	} {
		name, fast := onlyNamespace(raw)
		parsed, err := url.ParseQuery(raw)
		if !fast {
			continue
		}
		if err != nil || !reflect.DeepEqual(parsed, url.Values{"ns": {name}}) {
			t.Errorf("%q: unparsed as ns=%q, but ParseQuery reads %v (%v)", raw, name, parsed, err)
		}
	}
	for raw, want := range map[string]bool{"ns=demo-default-rtdb": true, "ns=a&print=silent": false, "ns=": false, "ns=a%2Db": false} {
		if _, fast := onlyNamespace(raw); fast != want {
			t.Errorf("onlyNamespace(%q) = %v, want %v", raw, fast, want)
		}
	}
}

// TestQueryNamespace: the handler's namespace and parameters are the
// same whether or not the query was parsed.
func TestQueryNamespace(t *testing.T) {
	t.Parallel()
	h := &Handler{opts: Options{Namespace: "dflt"}}
	for target, want := range map[string]string{
		"/a.json?ns=x":              "x",
		"/a.json?ns=x&print=silent": "x",
		"/a.json":                   "dflt",
		"/a.json?ns=":               "dflt",
	} {
		r := httptest.NewRequest("GET", target, nil)
		r.Host = "127.0.0.1:9000"
		qv, ns := h.query(r)
		if ns != want || ns != h.namespace(r) {
			t.Errorf("%s: namespace %q, want %q (namespace() %q)", target, ns, want, h.namespace(r))
		}
		full := r.URL.Query()
		for _, k := range []string{"print", "format", "shallow", "auth", "orderBy", "x-http-method-override"} {
			if qv.Get(k) != full.Get(k) {
				t.Errorf("%s: %s = %q, parsed %q", target, k, qv.Get(k), full.Get(k))
			}
		}
	}
}
