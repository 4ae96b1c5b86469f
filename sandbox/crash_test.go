package sandbox

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	pb "cloud.google.com/go/firestore/apiv1/firestorepb"

	"github.com/pyric/pyric/firestore"
	"github.com/pyric/pyric/identity"
	"github.com/pyric/pyric/sandbox/service"
)

// crashRun re-executes the test binary as a child running workload mode
// on a store in dir with the sync mode, reads the acknowledgements it
// prints ("ACK key value"), kills it with SIGKILL once it has printed want
// of them, and returns the last acknowledged value per key.
func crashRun(t *testing.T, test, mode string, sm SyncMode, want int) (string, map[string]int) {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$")
	cmd.Env = append(os.Environ(), "PYRIC_CRASH_WORKLOAD="+mode+":"+string(sm)+":"+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	acked := map[string]int{}
	n := 0
	read := func(line string) {
		if rest, ok := strings.CutPrefix(line, "ACK "); ok {
			k, v, _ := strings.Cut(rest, " ")
			i, _ := strconv.Atoi(v)
			if i > acked[k] {
				acked[k] = i
			}
			n++
		} else if strings.HasPrefix(line, "ERR") {
			t.Errorf("child: %s", line)
		}
	}
	sc := bufio.NewScanner(out)
	deadline := time.Now().Add(20 * time.Second)
	for sc.Scan() {
		read(sc.Text())
		if n >= want || time.Now().After(deadline) {
			break
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for sc.Scan() { // acks printed before the kill landed count too
		read(sc.Text())
	}
	_ = cmd.Wait()
	if n < want/4 {
		t.Fatalf("child acknowledged only %d writes", n)
	}
	t.Logf("%s (%s): %d acknowledgements before SIGKILL", mode, sm, n)
	return dir, acked
}

// crashWorkload runs in the child: it never returns (the parent kills it).
func crashWorkload(spec string) {
	mode, rest, _ := strings.Cut(spec, ":")
	syncMode, dir, _ := strings.Cut(rest, ":")
	sb, err := openFS(Options{DataDir: dir, Sync: SyncMode(syncMode), Services: []service.Registration{notesRegistration}})
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(1)
	}
	var mu sync.Mutex
	ack := func(k string, v int) {
		mu.Lock()
		fmt.Printf("ACK %s %d\n", k, v)
		mu.Unlock()
	}
	fail := func(err error) {
		mu.Lock()
		fmt.Println("ERR", err)
		mu.Unlock()
		os.Exit(1)
	}
	fs, db, admin := fsOf(sb).Engine, fsOf(sb).Default(), identity.AdminIdentity()
	switch mode {
	case "writers":
		for g := range 64 {
			go func() {
				for i := 1; ; i++ {
					rel := fmt.Sprintf("w%d/%d", g, i)
					_, err := fs.Commit(bg, admin, &pb.CommitRequest{Database: db.String(), Writes: []*pb.Write{{
						Operation: &pb.Write_Update{Update: &pb.Document{Name: db.DocName(rel), Fields: map[string]*pb.Value{"i": firestore.Int(int64(i))}}}}}})
					if err != nil {
						fail(err)
					}
					ack(fmt.Sprint("w", g), i)
				}
			}()
		}
	case "txn":
		// Eight clients increment four counters in read-write
		// transactions (read, then write value+1 and a log entry), retrying
		// on contention as the SDKs do.
		for g := range 8 {
			go func() {
				for {
					k := fmt.Sprintf("n%d", g%4)
					bt, err := fs.BeginTransaction(bg, admin, &pb.BeginTransactionRequest{Database: db.String()})
					if err != nil {
						fail(err)
					}
					cur := 0
					d, err := fs.GetDocument(bg, admin, &pb.GetDocumentRequest{Name: db.DocName("counters/" + k),
						ConsistencySelector: &pb.GetDocumentRequest_Transaction{Transaction: bt.Transaction}})
					switch {
					case err == nil:
						cur = int(d.Fields["v"].GetIntegerValue())
					case !errors.Is(err, firestore.ErrNotFound):
						fail(err)
					}
					next := cur + 1
					_, err = fs.Commit(bg, admin, &pb.CommitRequest{Database: db.String(), Transaction: bt.Transaction, Writes: []*pb.Write{
						{Operation: &pb.Write_Update{Update: &pb.Document{Name: db.DocName("counters/" + k), Fields: map[string]*pb.Value{"v": firestore.Int(int64(next))}}}},
						{Operation: &pb.Write_Update{Update: &pb.Document{Name: db.DocName(fmt.Sprintf("log/%s-%d", k, next))}}},
					}})
					if errors.Is(err, firestore.ErrAborted) {
						continue
					}
					if err != nil {
						fail(err)
					}
					ack(k, next)
				}
			}()
		}
	case "log":
		// Another service's Log shares the write-ahead log with
		// Firestore's commits: eight writers append to it while eight
		// write documents.
		notes, _ := Lookup[*notesService](sb)
		for g := range 8 {
			go func() {
				for i := 1; ; i++ {
					if err := notes.env.Log.Append(fmt.Sprint("s", g), []service.LogChange{{Key: fmt.Sprintf("k%06d", i), Value: []byte(fmt.Sprint(i))}}); err != nil {
						fail(err)
					}
					ack(fmt.Sprint("s", g), i)
				}
			}()
			go func() {
				for i := 1; ; i++ {
					rel := fmt.Sprintf("f%d/%d", g, i)
					_, err := fs.Commit(bg, admin, &pb.CommitRequest{Database: db.String(), Writes: []*pb.Write{{
						Operation: &pb.Write_Update{Update: &pb.Document{Name: db.DocName(rel), Fields: map[string]*pb.Value{"i": firestore.Int(int64(i))}}}}}})
					if err != nil {
						fail(err)
					}
					ack(fmt.Sprint("f", g), i)
				}
			}()
		}
	case "group":
		// 32 writers append to one Log at once, sharing its writes
		// (group commit): each writes a key per append and its own
		// "last", and the keys of 4 writers in one space.
		notes, _ := Lookup[*notesService](sb)
		for g := range 32 {
			go func() {
				space := fmt.Sprint("s", g%8)
				for i := 1; ; i++ {
					err := notes.env.Log.Append(space, []service.LogChange{
						{Key: fmt.Sprintf("w%d/k%06d", g, i), Value: []byte(fmt.Sprint(i))},
						{Key: fmt.Sprintf("w%d/last", g), Value: []byte(fmt.Sprint(i))}})
					if err != nil {
						fail(err)
					}
					ack(fmt.Sprint("w", g), i)
				}
			}()
		}
	case "bulk":
		// Four BulkWriter-like clients send BatchWrite requests of 20
		// independent writes each; a write is acknowledged by its status.
		for g := range 4 {
			go func() {
				for i := 0; ; i += 20 {
					req := &pb.BatchWriteRequest{Database: db.String()}
					for j := range 20 {
						req.Writes = append(req.Writes, &pb.Write{Operation: &pb.Write_Update{Update: &pb.Document{
							Name: db.DocName(fmt.Sprintf("b%d/%d", g, i+j+1)), Fields: map[string]*pb.Value{"i": firestore.Int(int64(i + j + 1))}}}})
					}
					resp, err := fs.BatchWrite(bg, admin, req)
					if err != nil {
						fail(err)
					}
					for j, st := range resp.Status {
						if st.GetCode() == 0 {
							ack(fmt.Sprintf("b%d/%d", g, i+j+1), 1)
						}
					}
				}
			}()
		}
	}
	select {}
}

// TestCrash64Writers: 64 concurrent writers (sharing group commits) are
// killed with SIGKILL; every write acknowledged to any of them is in the
// reopened store, in both sync modes.
func TestCrash64Writers(t *testing.T) {
	if spec := os.Getenv("PYRIC_CRASH_WORKLOAD"); spec != "" {
		crashWorkload(spec)
		return
	}
	for _, mode := range []SyncMode{SyncBatch, SyncAlways} {
		dir, acked := crashRun(t, "TestCrash64Writers", "writers", mode, 3000)
		sb, err := openFS(Options{DataDir: dir})
		if err != nil {
			t.Fatalf("reopen after kill -9: %v", err)
		}
		lost := 0
		for g := range 64 {
			for i := 1; i <= acked[fmt.Sprint("w", g)]; i++ {
				if d, _ := fsOf(sb).Admin().GetDocument(bg, fmt.Sprintf("w%d/%d", g, i)); d == nil {
					lost++
				}
			}
		}
		sb.Close()
		if lost > 0 {
			t.Errorf("%s: %d acknowledged writes lost", mode, lost)
		}
	}
}

// TestCrashTransactions: a stream of contending read-write transactions is
// killed with SIGKILL; every acknowledged transaction's writes are in the
// reopened store (each counter at least its last acknowledged value, every
// acknowledged log entry present).
func TestCrashTransactions(t *testing.T) {
	if spec := os.Getenv("PYRIC_CRASH_WORKLOAD"); spec != "" {
		crashWorkload(spec)
		return
	}
	dir, acked := crashRun(t, "TestCrashTransactions", "txn", SyncBatch, 1000)
	sb, err := openFS(Options{DataDir: dir})
	if err != nil {
		t.Fatalf("reopen after kill -9: %v", err)
	}
	defer sb.Close()
	for k, v := range acked {
		d, err := fsOf(sb).Admin().GetDocument(bg, "counters/"+k)
		if err != nil {
			t.Fatalf("counter %s: %v", k, err)
		}
		got, _ := strconv.Atoi(fmt.Sprint(d["v"]))
		if got < v {
			t.Errorf("counter %s = %d, but %d was acknowledged", k, got, v)
		}
		for i := 1; i <= v; i++ {
			if l, _ := fsOf(sb).Admin().GetDocument(bg, fmt.Sprintf("log/%s-%d", k, i)); l == nil {
				t.Errorf("acknowledged transaction %s-%d lost", k, i)
			}
		}
	}
}

// TestCrashBulkWriter: BatchWrite streams (as BulkWriter sends) are killed
// with SIGKILL after long enough for the write-ahead log to have been
// checkpointed into the store file at least once; every write whose
// status was OK is in the reopened store, whether it was read back from
// the store file or from the log.
func TestCrashBulkWriter(t *testing.T) {
	if spec := os.Getenv("PYRIC_CRASH_WORKLOAD"); spec != "" {
		crashWorkload(spec)
		return
	}
	start := time.Now()
	dir, acked := crashRun(t, "TestCrashBulkWriter", "bulk", SyncBatch, 30000)
	if el := time.Since(start); el < SyncInterval {
		t.Logf("killed after %v, before the first checkpoint", el)
	}
	sb, err := openFS(Options{DataDir: dir})
	if err != nil {
		t.Fatalf("reopen after kill -9: %v", err)
	}
	defer sb.Close()
	lost := 0
	for rel := range acked {
		if d, _ := fsOf(sb).Admin().GetDocument(bg, rel); d == nil {
			lost++
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d acknowledged writes lost", lost, len(acked))
	}
}

// notesService is a service that keeps its state in its Log: the
// write-ahead log behind the contract, used by a service other than
// Firestore.
type notesService struct{ env service.Env }

var notesRegistration = service.Registration{Name: "notes", New: func(env service.Env) (service.Service, error) {
	return &notesService{env: env}, nil
}}

func (n *notesService) Name() string { return "notes" }
func (n *notesService) Reset() error { return nil }

// Snapshot is every space's keys and values.
func (n *notesService) Snapshot() (json.RawMessage, error) {
	out := map[string]map[string]string{}
	if n.env.Log != nil {
		err := n.env.Log.Load(func(space string, entries []service.LogChange) error {
			out[space] = map[string]string{}
			for _, e := range entries {
				out[space][e.Key] = string(e.Value)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return json.Marshal(out)
}

func (n *notesService) Restore(json.RawMessage) error { return errors.New("notes: not restorable") }

// TestCrashLogService: a service other than Firestore appends to its Log
// while Firestore commits through the same write-ahead log; both are
// killed with SIGKILL, and every acknowledged append and commit is there
// after the reopen, each in its own service's keys.
func TestCrashLogService(t *testing.T) {
	if spec := os.Getenv("PYRIC_CRASH_WORKLOAD"); spec != "" {
		crashWorkload(spec)
		return
	}
	dir, acked := crashRun(t, "TestCrashLogService", "log", SyncBatch, 4000)
	sb, err := openFS(Options{DataDir: dir, Services: []service.Registration{notesRegistration}})
	if err != nil {
		t.Fatalf("reopen after kill -9: %v", err)
	}
	defer sb.Close()
	notes, _ := Lookup[*notesService](sb)
	kept := map[string]map[string]string{}
	if err := notes.env.Log.Load(func(space string, entries []service.LogChange) error {
		kept[space] = map[string]string{}
		for _, e := range entries {
			kept[space][e.Key] = string(e.Value)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	lost := 0
	for g := range 8 {
		for i := 1; i <= acked[fmt.Sprint("s", g)]; i++ {
			if kept[fmt.Sprint("s", g)][fmt.Sprintf("k%06d", i)] != fmt.Sprint(i) {
				lost++
			}
		}
		for i := 1; i <= acked[fmt.Sprint("f", g)]; i++ {
			if d, _ := fsOf(sb).Admin().GetDocument(bg, fmt.Sprintf("f%d/%d", g, i)); d == nil {
				lost++
			}
		}
	}
	if lost > 0 {
		t.Errorf("%d acknowledged writes lost", lost)
	}
	if len(kept) != 8 || acked["s0"] == 0 || acked["f0"] == 0 {
		t.Errorf("spaces kept: %d, acknowledged: %v", len(kept), acked)
	}
	for _, name := range fsOf(sb).Engine.Databases() {
		if strings.Contains(name.String(), "s0") {
			t.Errorf("a notes space became a Firestore database: %s", name)
		}
	}
	// Reset clears the notes' log too.
	if err := sb.Reset(); err != nil {
		t.Fatal(err)
	}
	if st, _ := notes.Snapshot(); string(st) != "{}" {
		t.Errorf("notes after reset: %s", st)
	}
}

// TestCrashGroupCommit: 32 writers appending to one Log at once (sharing
// writes) are killed with SIGKILL, in both sync modes; the reopened store
// holds every acknowledged append, and each writer's "last" key the
// value of its last acknowledged append or of the one it was making (a
// record replayed out of order would leave an older one).
func TestCrashGroupCommit(t *testing.T) {
	if spec := os.Getenv("PYRIC_CRASH_WORKLOAD"); spec != "" {
		crashWorkload(spec)
		return
	}
	for _, mode := range []SyncMode{SyncBatch, SyncAlways} {
		dir, acked := crashRun(t, "TestCrashGroupCommit", "group", mode, 4000)
		sb, err := openFS(Options{DataDir: dir, Services: []service.Registration{notesRegistration}})
		if err != nil {
			t.Fatalf("%s: reopen after kill -9: %v", mode, err)
		}
		notes, _ := Lookup[*notesService](sb)
		kept := map[string]string{}
		err = notes.env.Log.Load(func(space string, entries []service.LogChange) error {
			for _, e := range entries {
				kept[e.Key] = string(e.Value)
			}
			return nil
		})
		sb.Close()
		if err != nil {
			t.Fatal(err)
		}
		lost := 0
		for g := range 32 {
			n := acked[fmt.Sprint("w", g)]
			for i := 1; i <= n; i++ {
				if kept[fmt.Sprintf("w%d/k%06d", g, i)] != fmt.Sprint(i) {
					lost++
				}
			}
			if last := kept[fmt.Sprintf("w%d/last", g)]; n > 0 && last != fmt.Sprint(n) && last != fmt.Sprint(n+1) {
				t.Errorf("%s: writer %d's last is %q, but %d was acknowledged", mode, g, last, n)
			}
		}
		if lost > 0 {
			t.Errorf("%s: %d acknowledged appends lost", mode, lost)
		}
	}
}
