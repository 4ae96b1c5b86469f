package fndiff

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// The normalizations: each replaces a value that must differ between two
// runs (whatever the server) by a placeholder, on both sides alike.
//
//   - the values the client reports in vars (the uids the Auth emulators
//     chose, alice's ID token) become <name>, wherever they appear: both
//     servers pick random uids and sign tokens with the current time;
//
//   - any other string under the key uid, user_id, sub or authId becomes
//     <uid>: the uids of the users whose sign-up failed or was refused,
//     random on both sides;
//
//   - timestamps (RFC 3339, and the RFC 1123 dates of a UserRecord's
//     metadata) become <time>, and the epoch seconds under iat, exp and
//     auth_time become <epoch>: they are the time of the run; the
//     document's own fixed timestamp field (2024-01-02T03:04:05.678Z) is
//     data and is kept;
//
//   - event ids (a v2 event's id, a v1 context's eventId) become
//     <eventId>: random per delivery;
//
//   - OAuth and ID tokens under idToken, accessToken, refreshToken become
//     <token>: signed with the run's time.
//
//   - "Function X does not exist, valid functions are: …" keeps its
//     first sentence: the list is each server's internal ids (firebase-tools
//     names event triggers "region-name-0", in load order);
//
//   - the stack frames of express's error page for a malformed body
//     (" &nbsp; &nbsp;at …") are dropped: they are file paths inside each
//     runtime (firebase-tools' or pyric's harness), the error line is kept.
//
// Ports and host names need none: both sides run on the same 127.0.0.1
// ports, written into the same firebase.json.
const fixedTimestamp = "2024-01-02T03:04:05.678Z"

var (
	rfc3339    = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$`)
	stackFrame = regexp.MustCompile(`<br> &nbsp; &nbsp;at [^<]*`)
	rfc1123    = regexp.MustCompile(`^[A-Z][a-z]{2}, \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d GMT$`)
)

func normalize(v any, key string, vars map[string]string) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			out[k] = normalize(val, k, vars)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, val := range x {
			out[i] = normalize(val, key, vars)
		}
		return out
	case string:
		for _, name := range sortedKeys(vars) {
			if val := vars[name]; val != "" {
				x = strings.ReplaceAll(x, val, "<"+name+">")
			}
		}
		if head, _, ok := strings.Cut(x, " valid functions are: "); ok {
			x = head + " valid functions are: <list>"
		}
		x = stackFrame.ReplaceAllString(x, "")
		switch {
		case x == fixedTimestamp:
			return x
		case rfc3339.MatchString(x) || rfc1123.MatchString(x):
			return "<time>"
		case key == "eventId" || key == "id" && len(x) >= 16:
			return "<eventId>"
		case (key == "uid" || key == "user_id" || key == "sub" || key == "authId") && !strings.HasPrefix(x, "<"):
			return "<uid>"
		case key == "idToken" || key == "accessToken" || key == "refreshToken":
			return "<token>"
		}
		return x
	case float64:
		if key == "iat" || key == "exp" || key == "auth_time" {
			return "<epoch>"
		}
	}
	return v
}

func sortedKeys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	// Longer values first would matter only if one var contained another;
	// a stable order keeps the output reproducible.
	sort.Strings(ks)
	return ks
}

// departure is a place where firebase-tools departs from production and
// pyric follows production: the emulator's value there is replaced by
// production's before comparing, so pyric is still held to production.
type departure struct {
	cases  *regexp.Regexp // the case names it concerns
	why    string
	toProd func(emu any) any // the emulator's normalized answer → production's
}

var departures = []departure{
	{
		cases: regexp.MustCompile(`^recorded (created|updated|deleted|written|createdAuth|writtenAuth|nested)2-`),
		why: "firebase-tools writes a v2 Firestore event's source as //firestore.googleapis.com/projects/projects/{project}/…; " +
			"production's (and pyric's) is //firestore.googleapis.com/projects/{project}/databases/{database}",
		toProd: func(emu any) any {
			return edit(emu, func(m map[string]any) {
				if src, ok := m["source"].(string); ok {
					m["source"] = strings.Replace(src, "/projects/projects/", "/projects/", 1)
				}
			})
		},
	},
	{
		cases: regexp.MustCompile(`^recorded (createdAuth|writtenAuth)2-`),
		why: "firebase-tools' Firestore emulator gives every WithAuthContext event authtype \"unknown\" and authid \"fake-auth-id@gmail.com\" " +
			"(normalized <uid>); production gives a client SDK write by a signed-in user \"app_user\" and the user's uid, " +
			"an unauthenticated one \"unauthenticated\" and no authid",
		toProd: func(emu any) any {
			return edit(emu, func(m map[string]any) {
				if m["authType"] != "unknown" {
					return
				}
				if d, ok := m["document"].(string); ok && d == "d2/anon" || m["params"] != nil && fmt.Sprint(m["params"]) == "map[docId:anon]" {
					m["authType"] = "unauthenticated"
					delete(m, "authId")
				} else {
					m["authType"], m["authId"] = "app_user", "<aliceUid>"
				}
			})
		},
	},
}

// edit applies f to the event and to the v1-style context
// firebase-functions puts in it.
func edit(v any, f func(map[string]any)) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	f(m)
	if c, ok := m["context"].(map[string]any); ok {
		if _, has := c["authType"]; has || m["authType"] != nil {
			c["params"] = m["params"]
			f(c)
		}
	}
	return m
}

// compare checks every case either side observed.
func compare(t *testing.T, emu, pyr run) {
	t.Helper()
	names := map[string]bool{}
	for k := range emu.Cases {
		names[k] = true
	}
	for k := range pyr.Cases {
		names[k] = true
	}
	var sorted []string
	for k := range names {
		sorted = append(sorted, k)
	}
	slices.Sort(sorted)
	same := 0
	for _, name := range sorted {
		e, p := decode(emu.Cases[name], emu.Vars), decode(pyr.Cases[name], pyr.Vars)
		for _, d := range departures {
			if d.cases.MatchString(name) {
				e = d.toProd(e)
			}
		}
		eb, _ := json.MarshalIndent(e, "", "  ")
		pb, _ := json.MarshalIndent(p, "", "  ")
		if string(eb) == string(pb) {
			same++
			continue
		}
		t.Errorf("%s differs:\n%s", name, diffJSON(e, p, ""))
	}
	t.Logf("%d cases compared, %d the same", len(sorted), same)
}

func decode(raw json.RawMessage, vars map[string]string) any {
	if raw == nil {
		return "absent"
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "undecodable: " + string(raw)
	}
	return normalize(v, "", vars)
}

// diffJSON lists the paths where a (firebase-tools) and b (pyric) differ.
func diffJSON(a, b any, path string) string {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		var out strings.Builder
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		for _, k := range sortedKeys(keys) {
			av, ain := am[k]
			bv, bin := bm[k]
			switch {
			case !ain:
				fmt.Fprintf(&out, "  %s/%s: firebase-tools has none, pyric %s\n", path, k, short(bv))
			case !bin:
				fmt.Fprintf(&out, "  %s/%s: firebase-tools %s, pyric has none\n", path, k, short(av))
			default:
				out.WriteString(diffJSON(av, bv, path+"/"+k))
			}
		}
		return out.String()
	}
	as, bs := short(a), short(b)
	if as == bs {
		return ""
	}
	return fmt.Sprintf("  %s: firebase-tools %s, pyric %s\n", path, as, bs)
}

func short(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 400 {
		return string(b[:400]) + "…"
	}
	return string(b)
}
