package authserver

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func getPage(t *testing.T, url string) (int, string, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

// TestIdpWidget: the fake IdP page lists the provider's identities of the
// API key's project (escaped, bounded) and refuses a request without
// apiKey or providerId as the emulator does.
func TestIdpWidget(t *testing.T) {
	ts := newServer(t)
	const j = "application/json"
	link := func(project, rawID, email, name string) {
		t.Helper()
		status, m := do(t, ts, "POST", "/identitytoolkit.googleapis.com/v1/projects/"+project+"/accounts", "Bearer owner", j,
			fmt.Sprintf(`{"localId":%q}`, rawID))
		if status != 200 {
			t.Fatalf("create %s: %d %v", rawID, status, m)
		}
		status, m = do(t, ts, "POST", "/identitytoolkit.googleapis.com/v1/projects/"+project+"/accounts:update", "Bearer owner", j,
			fmt.Sprintf(`{"localId":%q,"linkProviderUserInfo":{"providerId":"oidc.acme","rawId":%q,"email":%q,"displayName":%q}}`, rawID, rawID, email, name))
		if status != 200 {
			t.Fatalf("link %s: %d %v", rawID, status, m)
		}
	}
	link("p", "r1", "b@example.com", `<script>alert(1)</script>`)
	link("p", "r2", "a@example.com", "Ann")
	link("q", "r3", "other@example.com", "Other project")

	status, ctype, page := getPage(t, ts.URL+"/emulator/auth/handler?apiKey=k&providerId=oidc.acme&appName=%5BDEFAULT%5D&authType=signInViaPopup")
	if status != 200 || !strings.HasPrefix(ctype, "text/html") {
		t.Fatalf("%d %s", status, ctype)
	}
	if strings.Contains(page, "<script>alert(1)") || !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("the display name is not HTML-escaped")
	}
	a, b := strings.Index(page, `>a@example.com<`), strings.Index(page, `>b@example.com<`)
	if a < 0 || b < 0 || a > b {
		t.Errorf("accounts missing or not in email order (a at %d, b at %d)", a, b)
	}
	if strings.Contains(page, "other@example.com") {
		t.Error("an account of another project is offered")
	}
	if !strings.Contains(page, `data-id-token="`+url.PathEscape(`{"aud":"","email":"a@example.com","email_verified":true,"exp":0,"iat":0,"iss":"","name":"Ann","picture":"","screen_name":"","sub":"r2"}`)+`"`) {
		t.Error("the claims of a listed account do not carry its raw id as sub")
	}
	_, _, pageQ := getPage(t, ts.URL+"/emulator/auth/handler?apiKey=key-q&providerId=oidc.acme&appName=x")
	if !strings.Contains(pageQ, "other@example.com") || strings.Contains(pageQ, "a@example.com") {
		t.Error("the API key's project does not pick the accounts")
	}
	_, _, empty := getPage(t, ts.URL+"/emulator/auth/handler?apiKey=k&providerId=saml.none&appName=x")
	if !strings.Contains(empty, "No saml.none accounts exist in the emulator yet.") || strings.Contains(empty, `class="js-reuse-account"`) {
		t.Error("an unknown provider's page is not empty")
	}
	for _, q := range []string{"providerId=oidc.acme", "apiKey=k"} {
		status, _, body := getPage(t, ts.URL+"/emulator/auth/handler?"+q)
		if status != 400 || !strings.Contains(body, "missing apiKey or providerId query parameters") {
			t.Errorf("?%s: %d %s", q, status, body)
		}
	}
	var users []string
	for i := range 150 {
		users = append(users, fmt.Sprintf(`{"localId":"bulk%d","providerUserInfo":[{"providerId":"oidc.bulk","rawId":"b%d","email":"b%03d@example.com"}]}`, i, i, i))
	}
	if status, m := do(t, ts, "POST", "/identitytoolkit.googleapis.com/v1/projects/p/accounts:batchCreate", "Bearer owner", j,
		`{"users":[`+strings.Join(users, ",")+`]}`); status != 200 {
		t.Fatalf("import: %d %v", status, m)
	}
	_, _, bulk := getPage(t, ts.URL+"/emulator/auth/handler?apiKey=k&providerId=oidc.bulk&appName=x")
	if n := strings.Count(bulk, `class="js-reuse-account"`); n != 100 {
		t.Errorf("the page offers %d of 150 accounts, want the bound of 100", n)
	}
	status, _, frame := getPage(t, ts.URL+"/emulator/auth/iframe?apiKey=k&appName=x")
	if status != 200 || !strings.Contains(frame, "https://apis.google.com/js/api.js") || !strings.Contains(frame, "webStorageSupport") {
		t.Errorf("iframe: %d", status)
	}
}
