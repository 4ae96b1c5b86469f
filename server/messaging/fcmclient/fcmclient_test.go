package fcmclient

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestTransportRewritesGoogleHosts(t *testing.T) {
	t.Parallel()
	var got []string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Method+" "+r.Host+" "+r.URL.RequestURI()+" auth="+r.Header.Get("Authorization"))
		io.WriteString(w, "ok")
	}))
	defer ts.Close()
	hc, err := HTTPClient(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	host := strings.TrimPrefix(ts.URL, "http://")
	for _, u := range []string{
		"https://fcm.googleapis.com/v1/projects/p/messages:send",
		"https://iid.googleapis.com/iid/v1:batchAdd?x=1",
		"https://fcm.googleapis.com:443/batch",
	} {
		resp, err := hc.Post(u, "application/json", strings.NewReader("{}"))
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		resp.Body.Close()
	}
	req, _ := http.NewRequest("POST", "https://fcm.googleapis.com/v1/x", nil)
	req.Header.Set("Authorization", "Bearer ya29.token")
	if resp, err := hc.Do(req); err == nil {
		resp.Body.Close()
	}
	want := []string{
		"POST " + host + " /v1/projects/p/messages:send auth=Bearer owner",
		"POST " + host + " /iid/v1:batchAdd?x=1 auth=Bearer owner",
		"POST " + host + " /batch auth=Bearer owner",
		"POST " + host + " /v1/x auth=Bearer ya29.token",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("requests:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Other hosts pass through untouched (here: straight to the test
	// server under its own name, which the rewrite would not change).
	resp, err := hc.Get(ts.URL + "/direct")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if last := got[len(got)-1]; last != "GET "+host+" /direct auth=" {
		t.Fatalf("pass-through request: %s", last)
	}
}

func TestBaseForms(t *testing.T) {
	t.Parallel()
	for _, base := range []string{"http://127.0.0.1:9599", "127.0.0.1:9599", "http://127.0.0.1:9599/prefix"} {
		if _, err := Option(base); err != nil {
			t.Errorf("Option(%q): %v", base, err)
		}
	}
	for _, base := range []string{"", "http://", "::"} {
		if _, err := HTTPClient(base); err == nil {
			t.Errorf("HTTPClient(%q) accepted", base)
		}
	}
}

func TestEnvOption(t *testing.T) {
	t.Setenv(EnvVar, "")
	if _, ok, err := EnvOption(); ok || err != nil {
		t.Fatalf("unset: %v %v", ok, err)
	}
	t.Setenv(EnvVar, "127.0.0.1:9599")
	if opt, ok, err := EnvOption(); !ok || err != nil || opt == nil {
		t.Fatalf("set: %v %v", ok, err)
	}
	t.Setenv(EnvVar, "http://")
	if _, ok, err := EnvOption(); ok || err == nil {
		t.Fatalf("bad: %v %v", ok, err)
	}
}
