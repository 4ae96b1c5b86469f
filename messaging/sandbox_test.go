package messaging_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/messaging"
	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/sandbox/service"
)

func open(t testing.TB, dir string) (*sandbox.Sandbox, *messaging.Engine) {
	t.Helper()
	sb, err := sandbox.Open(sandbox.Options{DataDir: dir, Services: []service.Registration{messaging.Registration}})
	if err != nil {
		t.Fatal(err)
	}
	eng, ok := sandbox.Lookup[*messaging.Engine](sb)
	if !ok {
		t.Fatal("no messaging engine in the sandbox")
	}
	return sb, eng
}

// TestSandboxStore runs the engine on the sandbox's real bbolt bucket:
// what it acknowledged is there after reopening, and Reset clears it.
func TestSandboxStore(t *testing.T) {
	dir := t.TempDir()
	sb, eng := open(t, dir)
	p := eng.DefaultProject()
	admin := identity.AdminIdentity()
	tok, err := eng.MintToken(admin, p, messaging.MintRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Subscribe(admin, "news", []string{tok.Token}); err != nil {
		t.Fatal(err)
	}
	req, _ := messaging.DecodeSendRequest([]byte(`{"message": {"topic": "news", "data": {"k": "v"}}}`))
	name, err := eng.Send(admin, p, req)
	if err != nil {
		t.Fatal(err)
	}
	if err := sb.Close(); err != nil {
		t.Fatal(err)
	}
	sb, eng = open(t, dir)
	in, err := eng.Inbox(p, tok.Token)
	if err != nil || len(in) != 1 || in[0].Name != name {
		t.Fatalf("inbox after reopening: %v %v", in, err)
	}
	if err := sb.Reset(); err != nil {
		t.Fatal(err)
	}
	if len(eng.Tokens(p)) != 0 {
		t.Fatal("reset kept tokens")
	}
	sb.Close()
	sb, eng = open(t, dir)
	defer sb.Close()
	if len(eng.Tokens(p)) != 0 || len(eng.Messages(p)) != 0 {
		t.Fatal("reset was not durable")
	}
}

// TestSurvivesKill9: every send the child acknowledged is in the store
// after the child is killed with SIGKILL mid-stream.
// conformance: messaging.durability.kill9
func TestSurvivesKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a child process")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKill9Child$")
	cmd.Env = append(os.Environ(), "PYRIC_MESSAGING_CHILD_DIR="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var acked []string
	token := ""
	sc := bufio.NewScanner(out)
	deadline := time.After(20 * time.Second)
	for len(acked) < 100 && sc.Scan() {
		line := sc.Text()
		if s, ok := strings.CutPrefix(line, "TOKEN "); ok {
			token = s
		}
		if s, ok := strings.CutPrefix(line, "ACK "); ok {
			acked = append(acked, s)
		}
		select {
		case <-deadline:
			t.Fatal("the child was too slow")
		default:
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if len(acked) < 100 || token == "" {
		t.Fatalf("the child acknowledged only %d sends", len(acked))
	}
	sb, eng := open(t, dir)
	defer sb.Close()
	in, err := eng.Inbox(eng.DefaultProject(), token)
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, d := range in {
		have[d.Name] = true
	}
	for _, name := range acked {
		if !have[name] {
			t.Fatalf("acknowledged message %s lost after kill -9 (%d kept)", name, len(in))
		}
	}
}

// TestKill9Child is the child of TestSurvivesKill9: it sends until
// killed, printing each acknowledged message.
func TestKill9Child(t *testing.T) {
	dir := os.Getenv("PYRIC_MESSAGING_CHILD_DIR")
	if dir == "" {
		t.Skip("child process of TestSurvivesKill9")
	}
	sb, eng := open(t, dir)
	defer sb.Close()
	admin := identity.AdminIdentity()
	p := eng.DefaultProject()
	tok, err := eng.MintToken(admin, p, messaging.MintRequest{})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("TOKEN %s\n", tok.Token)
	for i := 0; ; i++ {
		req, _ := messaging.DecodeSendRequest([]byte(fmt.Sprintf(`{"message": {"token": %q, "data": {"i": "%d"}}}`, tok.Token, i)))
		name, err := eng.Send(admin, p, req)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("ACK %s\n", name)
	}
}
