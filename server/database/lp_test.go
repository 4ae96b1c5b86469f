package databaseserver_test

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// lpEncode is the SDK's web-safe base64 ("-_" and "." padding).
func lpEncode(s string) string {
	return strings.NewReplacer("+", "-", "/", "_", "=", ".").Replace(base64.StdEncoding.EncodeToString([]byte(s)))
}

func TestLongPoll(t *testing.T) {
	srv, _ := start(t, testRules)
	r := do(t, srv, "GET", "/.lp?start=t&ser=1&cb=7&v=5&ns=demo-default-rtdb", "")
	m := regexp.MustCompile(`^parent\.pLPCommand7\('start',"([^"]+)","([^"]+)"\);parent\.pRTLPCB7\(0,\[\{"d":\{"d":\{"h":"[^"]+","s":"[^"]+","ts":\d+,"v":"5"\},"t":"h"\},"t":"c"\}\]\);$`).FindStringSubmatch(r.body)
	if m == nil {
		t.Fatalf("start: %s", r.body)
	}
	id, pw := m[1], m[2]
	poll := func(segs ...string) string {
		u := fmt.Sprintf("/.lp?id=%s&pw=%s&ser=2", url.QueryEscape(id), url.QueryEscape(pw))
		for i, s := range segs {
			u += s
			_ = i
		}
		return do(t, srv, "GET", u, "").body
	}
	// One message in two segments.
	msg := lpEncode(`{"t":"d","d":{"r":1,"a":"p","b":{"p":"/public/lp","d":"hello"}}}`)
	half := len(msg) / 2
	if got := poll(fmt.Sprintf("&seg0=0&ts0=2&d0=%s&seg1=1&ts1=2&d1=%s", msg[:half], msg[half:])); got != `parent.pRTLPCB7(1,[{"d":{"b":{"d":"","s":"ok"},"r":1},"t":"d"}]);` {
		t.Fatalf("put reply: %s", got)
	}
	if got := poll(fmt.Sprintf("&seg0=2&ts0=1&d0=%s", lpEncode(`{"t":"d","d":{"r":2,"a":"g","b":{"p":"/public/lp","q":{}}}}`))); got != `parent.pRTLPCB7(2,[{"d":{"b":{"d":"hello","s":"ok"},"r":2},"t":"d"}]);` {
		t.Fatalf("get reply: %s", got)
	}
	// Wrong password: nothing.
	if got := do(t, srv, "GET", "/.lp?id="+url.QueryEscape(id)+"&pw=nope&ser=3", "").body; got != "" {
		t.Fatalf("wrong password answered %s", got)
	}
	// Out-of-order, garbage segments close the session.
	if got := poll("&seg0=x&ts0=1&d0=zz"); got != "" {
		t.Fatalf("bad segment: %s", got)
	}
	if got := poll(); got != "" {
		t.Fatalf("closed session still answers: %s", got)
	}
	if r := do(t, srv, "GET", "/.lp?start=t&cb=%3Cscript%3E", ""); r.status != 400 {
		t.Fatalf("bad callback id: %d", r.status)
	}
}
