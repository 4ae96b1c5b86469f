package goclient

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/firestore"
	vkit "cloud.google.com/go/firestore/apiv1"
	pb "cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"
	"google.golang.org/genproto/googleapis/type/latlng"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/pyric/pyric/internal/emulator"
	"github.com/pyric/pyric/server/firestore/fstest"
)

// TestMain stops the official emulator the differential test started.
func TestMain(m *testing.M) {
	code := m.Run()
	emulator.StopAll()
	os.Exit(code)
}

// target is one backend the scenario runs against.
type target struct {
	project string
	owner   *firestore.Client
	alice   *firestore.Client
	raw     *vkit.Client
	conn    *grpc.ClientConn // as owner, for raw-byte calls

	// state carried between steps
	listener *firestore.QuerySnapshotIterator
	docIter  *firestore.DocumentSnapshotIterator
}

// dial connects the clients to addr as FIRESTORE_EMULATOR_HOST would.
func dial(t *testing.T, addr, project string) *target {
	conn := func(token string) *grpc.ClientConn {
		opts := []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
		if token != "" {
			opts = append(opts, grpc.WithPerRPCCredentials(bearer(token)))
		}
		c, err := grpc.NewClient("passthrough:///"+addr, opts...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	client := func(token string) *firestore.Client {
		c, err := firestore.NewClient(bg, project, option.WithGRPCConn(conn(token)))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	oc := conn("owner")
	rc, err := vkit.NewClient(bg, option.WithGRPCConn(oc))
	if err != nil {
		t.Fatal(err)
	}
	return &target{project: project, owner: client("owner"), alice: client(mockToken("alice")), raw: rc, conn: oc}
}

type bearer string

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(b)}, nil
}
func (bearer) RequireTransportSecurity() bool { return false }

// step is one client action; it returns any value to compare (documents,
// results, snapshots) and the error the client saw.
type step struct {
	name string
	run  func(tg *target) (any, error)
}

var (
	refTime = time.Date(2020, 5, 17, 12, 30, 45, 123456000, time.UTC)
)

func set(path string, data any, opts ...firestore.SetOption) func(*target) (any, error) {
	return func(tg *target) (any, error) {
		_, err := tg.owner.Doc(path).Set(bg, data, opts...)
		return nil, err
	}
}

func get(path string) func(*target) (any, error) {
	return func(tg *target) (any, error) {
		s, err := tg.owner.Doc(path).Get(bg)
		if err != nil {
			return nil, err
		}
		return s.Data(), nil
	}
}

func update(path string, ups ...firestore.Update) func(*target) (any, error) {
	return func(tg *target) (any, error) {
		_, err := tg.owner.Doc(path).Update(bg, ups)
		if err != nil {
			return nil, err
		}
		s, err := tg.owner.Doc(path).Get(bg)
		if err != nil {
			return nil, err
		}
		return s.Data(), nil
	}
}

func query(q func(c *firestore.Client) firestore.Query) func(*target) (any, error) {
	return func(tg *target) (any, error) {
		docs, err := q(tg.owner).Documents(bg).GetAll()
		if err != nil {
			return nil, err
		}
		out := []any{}
		for _, d := range docs {
			out = append(out, []any{d.Ref.Path[strings.Index(d.Ref.Path, "/documents/")+11:], d.Data()})
		}
		return out, nil
	}
}

func aggregate(q func(c *firestore.Client) *firestore.AggregationQuery) func(*target) (any, error) {
	return func(tg *target) (any, error) {
		r, err := q(tg.owner).Get(bg)
		if err != nil {
			return nil, err
		}
		out := map[string]any{}
		for k, v := range r {
			out[k] = v.(*pb.Value)
		}
		return out, nil
	}
}

// scenario is the differential scenario: about forty client steps.
func scenario() []step {
	cities := func(c *firestore.Client) *firestore.CollectionRef { return c.Collection("cities") }
	return []step{
		{"set every value type", set("types/all", map[string]any{
			"int": 42, "neg": -7, "double": 3.5, "nan": math.NaN(), "inf": math.Inf(1), "str": "héllo", "bool": true, "null": nil,
			"bytes": []byte{0, 1, 2}, "time": refTime, "geo": &latlng.LatLng{Latitude: 48.85, Longitude: 2.35},
			"arr": []any{1, "a", nil, []byte("x")}, "map": map[string]any{"a": map[string]any{"b": 1}, "with space": "x"},
			"vec": firestore.Vector64{1, 2, 3},
		})},
		{"get it back", get("types/all")},
		{"empty field name", set("types/empty", map[string]any{"m": map[string]any{"": 1}})},
		{"set a reference", func(tg *target) (any, error) {
			_, err := tg.owner.Doc("types/ref").Set(bg, map[string]any{"r": tg.owner.Doc("types/all")})
			if err != nil {
				return nil, err
			}
			return get("types/ref")(tg)
		}},
		{"create an existing document", func(tg *target) (any, error) {
			_, err := tg.owner.Doc("types/all").Create(bg, map[string]any{"x": 1})
			return nil, err
		}},
		{"update a missing document", update("types/missing", firestore.Update{Path: "x", Value: 1})},
		{"get a missing document", get("types/missing")},
		{"seed a document", set("docs/d", map[string]any{"a": 1, "m": map[string]any{"x": 1, "y": 2}, "tags": []any{"a", "b"}})},
		{"merge all", func(tg *target) (any, error) {
			if _, err := tg.owner.Doc("docs/d").Set(bg, map[string]any{"b": 2, "m": map[string]any{"z": 3}}, firestore.MergeAll); err != nil {
				return nil, err
			}
			return get("docs/d")(tg)
		}},
		{"merge listed paths", func(tg *target) (any, error) {
			if _, err := tg.owner.Doc("docs/d").Set(bg, map[string]any{"a": 10, "m": map[string]any{"x": 100, "y": 200}}, firestore.Merge([]string{"a"}, []string{"m", "x"})); err != nil {
				return nil, err
			}
			return get("docs/d")(tg)
		}},
		{"update a nested field and delete one", update("docs/d", firestore.Update{Path: "m.y", Value: "yy"}, firestore.Update{Path: "b", Value: firestore.Delete})},
		{"increment int by int and by float", update("docs/d", firestore.Update{Path: "a", Value: firestore.Increment(5)}, firestore.Update{Path: "f", Value: firestore.Increment(1.5)})},
		{"array union and remove", update("docs/d", firestore.Update{Path: "tags", Value: firestore.ArrayUnion("c", "a", 1)}, firestore.Update{Path: "u", Value: firestore.ArrayRemove("q")})},
		{"maximum and minimum", update("docs/d", firestore.Update{Path: "a", Value: firestore.FieldTransformMaximum(100)}, firestore.Update{Path: "lo", Value: firestore.FieldTransformMinimum(-1)})},
		{"server timestamp", update("docs/d", firestore.Update{Path: "at", Value: firestore.ServerTimestamp})},
		{"stale precondition", func(tg *target) (any, error) {
			_, err := tg.owner.Doc("docs/d").Update(bg, []firestore.Update{{Path: "a", Value: 0}}, firestore.LastUpdateTime(refTime))
			return nil, err
		}},
		{"batch of cities", func(tg *target) (any, error) {
			b := tg.owner.Batch()
			for i, c := range []struct {
				id      string
				state   any
				pop     any
				regions []any
			}{
				{"SF", "CA", 870000, []any{"west", "coast"}}, {"LA", "CA", 3900000, []any{"west", "south"}},
				{"NY", "NY", 8400000, []any{"east", "coast"}}, {"DC", nil, 700000, []any{"east"}},
				{"TK", "JP", 13960000.5, []any{"asia"}}, {"XX", "ZZ", "unknown", nil}, {"NN", "NA", nil, []any{}},
				{"NAN", "NA", math.NaN(), nil},
			} {
				data := map[string]any{"state": c.state, "pop": c.pop, "rank": i}
				if c.regions != nil {
					data["regions"] = c.regions
				}
				b.Set(cities(tg.owner).Doc(c.id), data)
			}
			r, err := b.Commit(bg)
			return len(r), err
		}},
		{"where ==", query(func(c *firestore.Client) firestore.Query { return cities(c).Where("state", "==", "CA") })},
		{"order by pop desc (mixed types) limit 6", query(func(c *firestore.Client) firestore.Query { return cities(c).OrderBy("pop", firestore.Desc).Limit(6) })},
		{"order by pop asc across types", query(func(c *firestore.Client) firestore.Query { return cities(c).OrderBy("pop", firestore.Asc) })},
		{"range with cursors", query(func(c *firestore.Client) firestore.Query {
			return cities(c).Where("pop", ">", 0).OrderBy("pop", firestore.Asc).StartAt(870000).EndBefore(13960000.5)
		})},
		{"start after a snapshot", func(tg *target) (any, error) {
			snap, err := cities(tg.owner).Doc("LA").Get(bg)
			if err != nil {
				return nil, err
			}
			return query(func(c *firestore.Client) firestore.Query {
				return cities(c).OrderBy("rank", firestore.Asc).StartAfter(snap)
			})(tg)
		}},
		{"limit to last", query(func(c *firestore.Client) firestore.Query {
			return cities(c).OrderBy("rank", firestore.Asc).LimitToLast(2)
		})},
		{"in, not-in", query(func(c *firestore.Client) firestore.Query {
			return cities(c).Where("state", "in", []any{"CA", "JP", "NA"}).Where("rank", "not-in", []any{0, 7})
		})},
		{"array-contains and array-contains-any", query(func(c *firestore.Client) firestore.Query {
			return cities(c).Where("regions", "array-contains", "coast").Where("rank", "<", 5)
		})},
		{"array-contains-any", query(func(c *firestore.Client) firestore.Query {
			return cities(c).Where("regions", "array-contains-any", []any{"east", "asia"})
		})},
		{"!= with nulls and NaN", query(func(c *firestore.Client) firestore.Query { return cities(c).Where("pop", "!=", 870000) })},
		{"or filter", query(func(c *firestore.Client) firestore.Query {
			return cities(c).WhereEntity(firestore.OrFilter{Filters: []firestore.EntityFilter{
				firestore.PropertyFilter{Path: "state", Operator: "==", Value: "NY"},
				firestore.AndFilter{Filters: []firestore.EntityFilter{
					firestore.PropertyFilter{Path: "state", Operator: "==", Value: "CA"},
					firestore.PropertyFilter{Path: "rank", Operator: ">", Value: 0}}}}})
		})},
		{"select projection", query(func(c *firestore.Client) firestore.Query { return cities(c).Select("state").Where("rank", "<=", 2) })},
		{"null and NaN equality", query(func(c *firestore.Client) firestore.Query { return cities(c).Where("pop", "==", nil) })},
		{"collection group", func(tg *target) (any, error) {
			for _, p := range []string{"a/1/landmarks/x", "b/2/landmarks/y", "landmarks/z", "a/1/other/w"} {
				if _, err := tg.owner.Doc(p).Set(bg, map[string]any{"p": p}); err != nil {
					return nil, err
				}
			}
			return query(func(c *firestore.Client) firestore.Query { return c.CollectionGroup("landmarks").Query })(tg)
		}},
		{"count, sum, avg", aggregate(func(c *firestore.Client) *firestore.AggregationQuery {
			q := cities(c).Where("rank", "<", 7)
			return q.NewAggregationQuery().WithCount("n").WithSum("pop", "sum").WithAvg("pop", "avg").WithSum("rank", "ranks")
		})},
		{"aggregations over nothing", aggregate(func(c *firestore.Client) *firestore.AggregationQuery {
			q := cities(c).Where("state", "==", "none")
			return q.NewAggregationQuery().WithCount("n").WithSum("pop", "sum").WithAvg("pop", "avg")
		})},
		{"transaction read-modify-write", func(tg *target) (any, error) {
			err := tg.owner.RunTransaction(bg, func(ctx context.Context, tx *firestore.Transaction) error {
				s, err := tx.Get(tg.owner.Doc("cities/SF"))
				if err != nil {
					return err
				}
				docs, err := tx.Documents(cities(tg.owner).Where("state", "==", "CA")).GetAll()
				if err != nil {
					return err
				}
				return tx.Update(s.Ref, []firestore.Update{{Path: "seen", Value: len(docs)}, {Path: "pop", Value: firestore.Increment(1)}})
			})
			if err != nil {
				return nil, err
			}
			return get("cities/SF")(tg)
		}},
		{"transaction creating a missing document", func(tg *target) (any, error) {
			err := tg.owner.RunTransaction(bg, func(ctx context.Context, tx *firestore.Transaction) error {
				s, err := tx.Get(tg.owner.Doc("cities/NEW"))
				if err != nil && !s.Exists() && status.Code(err) != 5 {
					return err
				}
				return tx.Create(tg.owner.Doc("cities/NEW"), map[string]any{"existed": s.Exists()})
			})
			if err != nil {
				return nil, err
			}
			return get("cities/NEW")(tg)
		}},
		{"delete, then get all with a missing one", func(tg *target) (any, error) {
			if _, err := tg.owner.Doc("cities/NEW").Delete(bg); err != nil {
				return nil, err
			}
			snaps, err := tg.owner.GetAll(bg, []*firestore.DocumentRef{tg.owner.Doc("cities/NEW"), tg.owner.Doc("cities/SF")})
			if err != nil {
				return nil, err
			}
			return []any{snaps[0].Exists(), snaps[1].Exists()}, nil
		}},
		{"query listener: initial", func(tg *target) (any, error) {
			tg.listener = cities(tg.owner).Where("state", "==", "CA").OrderBy("rank", firestore.Asc).Snapshots(bg)
			return snapshot(tg.listener)
		}},
		{"query listener: add, modify, remove", func(tg *target) (any, error) {
			b := tg.owner.Batch()
			b.Set(tg.owner.Doc("cities/SJ"), map[string]any{"state": "CA", "rank": 1.5})
			b.Update(tg.owner.Doc("cities/LA"), []firestore.Update{{Path: "pop", Value: 1}})
			b.Update(tg.owner.Doc("cities/SF"), []firestore.Update{{Path: "state", Value: "XX"}})
			if _, err := b.Commit(bg); err != nil {
				return nil, err
			}
			return snapshot(tg.listener)
		}},
		{"document listener on a missing document", func(tg *target) (any, error) {
			tg.listener.Stop()
			tg.docIter = tg.owner.Doc("cities/LATER").Snapshots(bg)
			s, err := tg.docIter.Next()
			if err != nil {
				return nil, err
			}
			return s.Exists(), nil
		}},
		{"document listener sees the create", func(tg *target) (any, error) {
			if _, err := tg.owner.Doc("cities/LATER").Set(bg, map[string]any{"v": 1}); err != nil {
				return nil, err
			}
			s, err := tg.docIter.Next()
			tg.docIter.Stop()
			if err != nil {
				return nil, err
			}
			return s.Data(), nil
		}},
		{"list collection ids", func(tg *target) (any, error) {
			cs, err := tg.owner.Collections(bg).GetAll()
			if err != nil {
				return nil, err
			}
			var out []string
			for _, c := range cs {
				out = append(out, c.ID)
			}
			return out, nil
		}},
		{"list documents with missing parents", func(tg *target) (any, error) {
			refs, err := tg.owner.Collection("a").DocumentRefs(bg).GetAll()
			var out []string
			for _, r := range refs {
				out = append(out, r.ID)
			}
			return out, err
		}},
		{"bulk writer results", func(tg *target) (any, error) {
			bw := tg.owner.BulkWriter(bg)
			j1, _ := bw.Create(tg.owner.Doc("bulk/1"), map[string]any{"n": 1})
			j2, _ := bw.Create(tg.owner.Doc("cities/SF"), map[string]any{"n": 1})
			j3, _ := bw.Update(tg.owner.Doc("bulk/missing"), []firestore.Update{{Path: "n", Value: 1}})
			bw.End()
			var out []any
			for _, j := range []*firestore.BulkWriterJob{j1, j2, j3} {
				_, err := j.Results()
				out = append(out, status.Code(err).String())
			}
			return out, nil
		}},
		{"denied write by a user", func(tg *target) (any, error) {
			_, err := tg.alice.Doc("users/bob").Set(bg, map[string]any{"x": 1})
			return nil, err
		}},
		{"allowed write by a user", func(tg *target) (any, error) {
			_, err := tg.alice.Doc("users/alice").Set(bg, map[string]any{"x": 1})
			return nil, err
		}},
		{"reserved field name", func(tg *target) (any, error) {
			_, err := tg.raw.Commit(bg, &pb.CommitRequest{Database: "projects/" + tg.project + "/databases/(default)", Writes: []*pb.Write{{
				Operation: &pb.Write_Update{Update: &pb.Document{Name: "projects/" + tg.project + "/databases/(default)/documents/x/y",
					Fields: map[string]*pb.Value{"__x__": {ValueType: &pb.Value_NullValue{}}}}}}}})
			return nil, err
		}},
		{"write in a read-only transaction", func(tg *target) (any, error) {
			db := "projects/" + tg.project + "/databases/(default)"
			tx, err := tg.raw.BeginTransaction(bg, &pb.BeginTransactionRequest{Database: db,
				Options: &pb.TransactionOptions{Mode: &pb.TransactionOptions_ReadOnly_{ReadOnly: &pb.TransactionOptions_ReadOnly{}}}})
			if err != nil {
				return nil, err
			}
			_, err = tg.raw.Commit(bg, &pb.CommitRequest{Database: db, Transaction: tx.Transaction, Writes: []*pb.Write{{
				Operation: &pb.Write_Update{Update: &pb.Document{Name: db + "/documents/x/y"}}}}})
			return nil, err
		}},
	}
}

func snapshot(it *firestore.QuerySnapshotIterator) (any, error) {
	qs, err := it.Next()
	if err != nil {
		return nil, err
	}
	docs, err := qs.Documents.GetAll()
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, d := range docs {
		ids = append(ids, d.Ref.ID)
	}
	var changes []string
	for _, c := range qs.Changes {
		changes = append(changes, fmt.Sprintf("%v %s %d→%d", c.Kind, c.Doc.Ref.ID, c.OldIndex, c.NewIndex))
	}
	sort.Strings(changes)
	return map[string]any{"docs": ids, "changes": changes, "size": qs.Size}, nil
}

// normalize renders a step's outcome with server-chosen values replaced:
// the project id, times near now, and error messages reduced to the code
// (messages are compared separately, informationally).
func normalize(project string, v any, err error) (outcome, message string) {
	if err != nil {
		st := status.Convert(err)
		return "error " + st.Code().String(), strings.ReplaceAll(st.Message(), project, "<project>")
	}
	b, _ := json.Marshal(typed(v))
	s := strings.ReplaceAll(string(b), project, "<project>")
	return nowish.ReplaceAllStringFunc(s, func(ts string) string {
		t, err := time.Parse(time.RFC3339Nano, ts)
		if err == nil && time.Since(t).Abs() < time.Hour {
			return "<now>"
		}
		return ts
	}), ""
}

var nowish = regexp.MustCompile(`\d{4}-\d\d-\d\dT[0-9:.]+Z`)

// typed tags values with their Firestore type so 1 and 1.0 differ.
func typed(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = typed(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = typed(e)
		}
		return out
	case int64:
		return fmt.Sprintf("int:%d", x)
	case float64:
		return fmt.Sprintf("double:%v", x)
	case time.Time:
		return "timestamp:" + x.UTC().Format(time.RFC3339Nano)
	case []byte:
		return fmt.Sprintf("bytes:%x", x)
	case *latlng.LatLng:
		return fmt.Sprintf("geo:%v,%v", x.Latitude, x.Longitude)
	case *firestore.DocumentRef:
		return "ref:" + x.Path
	case firestore.Vector64:
		return fmt.Sprintf("vector:%v", []float64(x))
	case *pb.Value:
		b, _ := json.Marshal(x.String())
		return "pb:" + string(b)
	case nil:
		return "null"
	default:
		return x
	}
}

// TestDifferential runs one scenario against pyric and against the
// official Cloud Firestore emulator and compares every step's outcome.
// Error messages are compared but differences there are reported, not
// failed: pyric's messages name the field or path in its own words.
func TestDifferential(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the official emulator")
	}
	e := emulator.Start(t)
	ctx := context.Background()
	if err := e.Clear(ctx); err != nil {
		t.Fatal(err)
	}
	diffRules := strings.Replace(rules, "match /open/{doc=**} {", "match /{other=**} {\n      allow read, write: if request.auth.token.admin == true;\n    }\n    match /open/{doc=**} {", 1)
	if err := e.SetRules(ctx, diffRules); err != nil {
		t.Fatal(err)
	}
	s := fstest.Start(t, fstest.Options{Project: "demo-diff", Rules: diffRules})
	theirs := dial(t, e.Host, e.Project)
	ours := dial(t, s.Addr, "demo-diff")

	same, msgDiffs := 0, 0
	for i, st := range scenario() {
		ov, oerr := st.run(ours)
		tv, terr := st.run(theirs)
		o, om := normalize(ours.project, ov, oerr)
		th, tm := normalize(theirs.project, tv, terr)
		if testing.Verbose() {
			t.Logf("step %d %q: %s", i+1, st.name, o)
		}
		switch {
		case o != th:
			t.Errorf("step %d %q:\n  pyric:    %s %s\n  official: %s %s", i+1, st.name, o, om, th, tm)
		case om != tm:
			msgDiffs++
			t.Logf("step %d %q: same outcome (%s), messages differ:\n  pyric:    %q\n  official: %q", i+1, st.name, o, om, tm)
			same++
		default:
			same++
		}
	}
	t.Logf("%d/%d steps agree with the official emulator (%d with different error wording)", same, len(scenario()), msgDiffs)
}

var _ = iterator.Done
