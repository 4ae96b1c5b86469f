package authe2e

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/pyric/pyric/auth"
	authserver "github.com/pyric/pyric/server/auth"
	"github.com/pyric/pyric/server/auth/authtest"
)

// blockingFn is a stand-in blocking function for one side of the
// differential test: it records the decoded event tokens and answers by
// the account's email.
type blockingFn struct {
	*httptest.Server
	mu     sync.Mutex
	claims []map[string]any
}

func newBlockingFn(t *testing.T) *blockingFn {
	f := &blockingFn{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Data struct {
				JWT string `json:"jwt"`
			} `json:"data"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		parts := strings.Split(body.Data.JWT, ".")
		var c map[string]any
		if len(parts) == 3 {
			b, _ := base64.RawURLEncoding.DecodeString(parts[1])
			_ = json.Unmarshal(b, &c)
		}
		f.mu.Lock()
		f.claims = append(f.claims, c)
		f.mu.Unlock()
		rec, _ := c["user_record"].(map[string]any)
		w.Header().Set("Content-Type", "application/json")
		switch {
		case rec["email"] == "deny@x.com":
			w.WriteHeader(400)
			fmt.Fprint(w, `{"error":{"message":"Unauthorized email","status":"INVALID_ARGUMENT"}}`)
		case rec["email"] == "off@x.com":
			fmt.Fprint(w, `{"userRecord":{"disabled":true,"updateMask":"disabled"}}`)
		case c["event_type"] == "beforeCreate":
			fmt.Fprint(w, `{"userRecord":{"displayName":"From Fn","emailVerified":true,"customClaims":{"role":"admin"},"updateMask":"displayName,emailVerified,customClaims"}}`)
		default:
			fmt.Fprint(w, `{"userRecord":{"sessionClaims":{"sess":"s1"},"updateMask":"sessionClaims"}}`)
		}
	}))
	t.Cleanup(f.Close)
	return f
}

// blockingOutcome is one step's answer with the function's URL replaced
// and, for a success, what the test compares of it.
type blockingOutcome struct {
	Status      int
	Error       string
	DisplayName any
	Claims      map[string]any // of the ID token: name, role, sess, email_verified
}

func blockingSide(t *testing.T, base, project string, fn *blockingFn) ([]blockingOutcome, []map[string]any) {
	t.Helper()
	do := func(method, path, authz, body string) blockingOutcome {
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if authz != "" {
			req.Header.Set("Authorization", authz)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		o := blockingOutcome{Status: resp.StatusCode, DisplayName: m["displayName"]}
		if e, ok := m["error"].(map[string]any); ok {
			o.Error = strings.ReplaceAll(fmt.Sprint(e["message"]), fn.URL, "<fn>")
		}
		if tok, ok := m["idToken"].(string); ok {
			parts := strings.Split(tok, ".")
			pb, _ := base64.RawURLEncoding.DecodeString(parts[1])
			var c map[string]any
			_ = json.Unmarshal(pb, &c)
			o.Claims = map[string]any{}
			for _, k := range []string{"name", "role", "sess", "email_verified", "email"} {
				o.Claims[k] = c[k]
			}
		}
		return o
	}
	cfg := func(triggers string) string {
		return do("PATCH", "/identitytoolkit.googleapis.com/v2/projects/"+project+"/config?updateMask=blockingFunctions", "Bearer owner",
			`{"blockingFunctions":{"triggers":`+triggers+`}}`).Error
	}
	// The reference emulator is shared with the other tests of the
	// package: leave its project as it was.
	t.Cleanup(func() {
		do("PATCH", "/identitytoolkit.googleapis.com/v2/projects/"+project+"/config?updateMask=blockingFunctions", "Bearer owner", `{"blockingFunctions":{}}`)
		do("DELETE", "/emulator/v1/projects/"+project+"/accounts", "", "")
	})
	signUp := "/identitytoolkit.googleapis.com/v1/accounts:signUp?key=fake"
	var out []blockingOutcome
	if e := cfg(`{"beforeCreate":{"functionUri":"` + fn.URL + `/c"},"beforeSignIn":{"functionUri":"` + fn.URL + `/s"}}`); e != "<nil>" && e != "" {
		t.Fatalf("config: %s", e)
	}
	out = append(out,
		do("POST", signUp, "", `{"email":"ok@x.com","password":"secret1","returnSecureToken":true}`),
		do("POST", signUp, "", `{"email":"deny@x.com","password":"secret1","returnSecureToken":true}`),
		do("POST", signUp, "", `{"email":"off@x.com","password":"secret1","returnSecureToken":true}`),
		do("POST", "/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword?key=fake", "", `{"email":"ok@x.com","password":"secret1","returnSecureToken":true}`),
		do("POST", signUp, "", `{}`), // anonymous: no blocking call
		blockingOutcome{Error: cfg(`{"beforeFoo":{"functionUri":"http://x/y"}}`)},
		blockingOutcome{Error: cfg(`{"beforeCreate":{"functionUri":"not a uri"}}`)},
	)
	fn.mu.Lock()
	defer fn.mu.Unlock()
	return out, append([]map[string]any(nil), fn.claims...)
}

// comparableClaims drops what differs by nature (ids, times, the
// function's URL) from a recorded event token.
func comparableClaims(c map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range c {
		switch k {
		case "event_id", "iat", "exp", "sub", "aud":
			out[k] = "<" + k + ">"
		case "user_record":
			rec := map[string]any{}
			for rk, rv := range v.(map[string]any) {
				switch rk {
				case "uid":
					rec[rk] = "<uid>"
				case "metadata":
					m, _ := rv.(map[string]any)
					keys := []string{}
					for mk := range m {
						keys = append(keys, mk)
					}
					sort.Strings(keys)
					rec[rk] = keys
				default:
					rec[rk] = rv
				}
			}
			out[k] = rec
		default:
			out[k] = v
		}
	}
	return out
}

// TestBlockingFunctionsDifferential: the same blocking-function scenario
// against the firebase-tools Auth emulator and pyric, each calling its
// own stand-in function: the event tokens the functions receive and the
// answers the clients get are the same.
func TestBlockingFunctionsDifferential(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the reference emulator")
	}
	const project = diffProject // the reference's project (API-key calls go to it)
	ref := startReference(t, diffProject)
	ours := authtest.Start(t, auth.Options{}, authserver.Options{DefaultProject: project})
	wantOut, wantClaims := blockingSide(t, ref, project, newBlockingFn(t))
	gotOut, gotClaims := blockingSide(t, ours.URL, project, newBlockingFn(t))
	for i := range wantOut {
		if !reflect.DeepEqual(wantOut[i], gotOut[i]) {
			t.Errorf("step %d:\nemulator: %+v\npyric:    %+v", i, wantOut[i], gotOut[i])
		}
	}
	if len(wantClaims) != len(gotClaims) {
		t.Fatalf("the emulator called the functions %d times, pyric %d", len(wantClaims), len(gotClaims))
	}
	for i := range wantClaims {
		w, _ := json.Marshal(comparableClaims(wantClaims[i]))
		g, _ := json.Marshal(comparableClaims(gotClaims[i]))
		if string(w) != string(g) {
			t.Errorf("event token %d:\nemulator: %s\npyric:    %s", i, w, g)
		}
	}
	// ok: beforeCreate and beforeSignIn; deny and off: beforeCreate only
	// (refused; disabled); the sign-in: beforeSignIn; anonymous: none.
	if len(gotClaims) != 5 {
		t.Errorf("%d blocking calls, want 5", len(gotClaims))
	}
	t.Logf("%d answers and %d event tokens compared", len(wantOut), len(wantClaims))
}
