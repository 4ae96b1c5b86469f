package storagego

import (
	"bufio"
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/internal/await"
	"github.com/pyric/pyric/sandbox"
	"github.com/pyric/pyric/sandbox/service"
	srv "github.com/pyric/pyric/server/storage"
	"github.com/pyric/pyric/storage"
)

// TestUploadsSurviveKill9: a child process serves Storage on a durable
// sandbox; uploads (multipart, media and resumable) stream in from several
// clients, the child is killed with SIGKILL mid-stream, and on reopening
// the data dir every acknowledged object is there with its bytes, while no
// partial upload is visible and no temporary file is left.
// conformance: storage.durability.kill9
func TestUploadsSurviveKill9(t *testing.T) {
	if os.Getenv("PYRIC_STORAGE_CHILD_DIR") != "" {
		t.Skip("runs in the child only")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestStorageChild$", "-test.v")
	cmd.Env = append(os.Environ(), "PYRIC_STORAGE_CHILD_DIR="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	sc := bufio.NewScanner(out)
	var addr string
	for sc.Scan() {
		if a, ok := strings.CutPrefix(sc.Text(), "ADDR "); ok {
			addr = a
			break
		}
	}
	if addr == "" {
		t.Fatal("the child did not start")
	}
	go io.Copy(io.Discard, out)

	var mu sync.Mutex
	acked := map[string]string{} // name → md5
	var partial []string
	sessions := map[string]int64{} // upload id → bytes acknowledged
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				name := fmt.Sprintf("w%d/o%d", w, i)
				data := bytes.Repeat([]byte(name+"|"), 1+(i%7)*20000) // up to ~1 MiB
				var err error
				switch i % 3 {
				case 0:
					err = mediaUpload(ctx, addr, name, data)
				case 1:
					err = multipartUpload(ctx, addr, name, data)
				default:
					var id string
					var acked int64
					id, acked, err = resumableUpload(ctx, addr, name, data, i%2 == 0)
					if err == errPartial {
						mu.Lock()
						partial = append(partial, name)
						sessions[id] = acked
						mu.Unlock()
						continue
					}
				}
				if err != nil {
					return
				}
				sum := md5.Sum(data)
				mu.Lock()
				acked[name] = base64.StdEncoding.EncodeToString(sum[:])
				mu.Unlock()
			}
		}()
	}
	await.Poll(20*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(acked) >= 60
	})
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	cancel()
	wg.Wait()
	if len(acked) < 20 {
		t.Fatalf("the child acknowledged only %d uploads", len(acked))
	}

	sb, err := sandbox.Open(sandbox.Options{Project: "demo-pyric", DataDir: dir, Services: []service.Registration{storage.Registration(storage.Options{})}})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	e, _ := sandbox.Lookup[*storage.Engine](sb)
	admin := identity.AdminIdentity()
	for name, sum := range acked {
		o, r, err := e.Open(admin, storage.ReadRequest{Bucket: bucket, Name: name})
		if err != nil {
			t.Errorf("acknowledged %s lost: %v", name, err)
			continue
		}
		h := md5.New()
		io.Copy(h, io.NewSectionReader(r, 0, o.Size))
		r.Close()
		if got := base64.StdEncoding.EncodeToString(h.Sum(nil)); got != sum || o.MD5Hash != sum {
			t.Errorf("%s: bytes md5 %s, metadata %s, uploaded %s", name, got, o.MD5Hash, sum)
		}
	}
	for _, name := range partial {
		if _, err := e.Stat(admin, storage.ReadRequest{Bucket: bucket, Name: name}); err == nil {
			t.Errorf("partial upload %s is visible", name)
		}
	}
	tmp, _ := os.ReadDir(filepath.Join(dir, "storage", "tmp"))
	if len(tmp) != 0 {
		t.Errorf("temporary files left: %d", len(tmp))
	}
	// The sessions left partial resume from their acknowledged bytes.
	for id, n := range sessions {
		u, err := e.Upload(id)
		if err != nil {
			t.Errorf("session %s lost: %v", id, err)
			continue
		}
		if u.Received() != n {
			t.Errorf("session %s resumed at %d bytes, %d were acknowledged", id, u.Received(), n)
		}
	}
	t.Logf("%d acknowledged uploads intact, %d partial invisible and resumable", len(acked), len(partial))
}

// TestStorageChild is the child of TestUploadsSurviveKill9.
func TestStorageChild(t *testing.T) {
	dir := os.Getenv("PYRIC_STORAGE_CHILD_DIR")
	if dir == "" {
		t.Skip("child process of TestUploadsSurviveKill9")
	}
	sb, err := sandbox.Open(sandbox.Options{Project: "demo-pyric", DataDir: dir, Services: []service.Registration{storage.Registration(storage.Options{})}})
	if err != nil {
		t.Fatal(err)
	}
	e, _ := sandbox.Lookup[*storage.Engine](sb)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("ADDR " + l.Addr().String())
	http.Serve(l, srv.NewHandler(e))
}

var errPartial = fmt.Errorf("left partial on purpose")

func post(ctx context.Context, method, url string, body io.Reader, h ...string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return nil, err
	}
	for i := 0; i+1 < len(h); i += 2 {
		req.Header.Set(h[i], h[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != 200 {
		return res, fmt.Errorf("%s: %d", url, res.StatusCode)
	}
	return res, nil
}

func mediaUpload(ctx context.Context, addr, name string, data []byte) error {
	_, err := post(ctx, "POST", "http://"+addr+"/upload/storage/v1/b/"+bucket+"/o?uploadType=media&name="+name, bytes.NewReader(data), "Content-Type", "text/plain")
	return err
}

func multipartUpload(ctx context.Context, addr, name string, data []byte) error {
	var b bytes.Buffer
	b.WriteString("--B\r\nContent-Type: application/json\r\n\r\n{\"name\":\"" + name + "\"}\r\n--B\r\nContent-Type: text/plain\r\n\r\n")
	b.Write(data)
	b.WriteString("\r\n--B--")
	_, err := post(ctx, "POST", "http://"+addr+"/v0/b/"+bucket+"/o?name="+name, &b, "Content-Type", "multipart/related; boundary=B",
		"X-Goog-Upload-Protocol", "multipart", "Authorization", "Firebase owner")
	return err
}

// resumableUpload sends data in two chunks; with finalize false it stops
// after the first, leaving the session partial, and returns its upload id
// and the bytes acknowledged.
func resumableUpload(ctx context.Context, addr, name string, data []byte, finalize bool) (string, int64, error) {
	res, err := post(ctx, "POST", "http://"+addr+"/v0/b/"+bucket+"/o?name="+name, strings.NewReader("{}"), "Authorization", "Firebase owner",
		"X-Goog-Upload-Protocol", "resumable", "X-Goog-Upload-Command", "start", "X-Goog-Upload-Header-Content-Length", fmt.Sprint(len(data)))
	if err != nil {
		return "", 0, err
	}
	loc := res.Header.Get("X-Goog-Upload-URL")
	u, err := neturl.Parse(loc)
	if err != nil {
		return "", 0, err
	}
	id := u.Query().Get("upload_id")
	half := len(data) / 2
	if _, err := post(ctx, "POST", loc, bytes.NewReader(data[:half]), "X-Goog-Upload-Command", "upload", "X-Goog-Upload-Offset", "0"); err != nil {
		return "", 0, err
	}
	if !finalize {
		return id, int64(half), errPartial
	}
	_, err = post(ctx, "POST", loc, bytes.NewReader(data[half:]), "X-Goog-Upload-Command", "upload, finalize", "X-Goog-Upload-Offset", fmt.Sprint(half))
	return id, 0, err
}
