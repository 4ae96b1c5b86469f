package pubsub_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"cloud.google.com/go/pubsub/v2"
	vkit "cloud.google.com/go/pubsub/v2/apiv1"
	pb "cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"

	engine "github.com/pyric/pyric/pubsub"
	"github.com/pyric/pyric/sandbox/service"
	"github.com/pyric/pyric/sandbox/service/servicetest"
)

// revLabels names revision ids by order of first appearance (rev1,
// rev2, …), so two servers' transcripts compare.
type revLabels map[string]string

func (l revLabels) of(id string) string {
	if id == "" {
		return "<none>"
	}
	if n, ok := l[id]; ok {
		return n
	}
	l[id] = fmt.Sprintf("rev%d", len(l)+1)
	return l[id]
}

func fieldDef(f string) string {
	return `{"type":"record","name":"R","fields":[{"name":"` + f + `","type":"string"}]}`
}

// TestDifferentialSchemaRevisions drives the revision history through
// the Go client's SchemaClient against both servers: commit, list
// revisions (views, pages), get a revision, rollback, delete a revision
// (the current one, the last one), their errors, and topics bound to a
// revision range accepting exactly the messages of those revisions.
func TestDifferentialSchemaRevisions(t *testing.T) {
	differential(t, func(t *testing.T, c *pubsub.Client, id func(string) string) []string {
		ctx := context.Background()
		sc, err := vkit.NewSchemaClient(ctx, option.WithGRPCConn(c.TopicAdminClient.Connection()))
		if err != nil {
			t.Fatal(err)
		}
		ta := c.TopicAdminClient
		p := "projects/" + id("revs")
		name := p + "/schemas/" + id("sch")
		labels := revLabels{}
		var out []string
		norm := func(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, name, "SCHEMA"), p, "P") }
		rec := func(what string, err error) { out = append(out, what+" -> "+norm(errText(err))) }
		show := func(what string, s *pb.Schema, err error) {
			rec(what, err)
			if s != nil {
				out = append(out, fmt.Sprintf("  %s %s %s def=%q", norm(s.GetName()), labels.of(s.GetRevisionId()), s.GetType(), s.GetDefinition()))
			}
		}
		list := func(what string, r *pb.ListSchemaRevisionsRequest) {
			it := sc.ListSchemaRevisions(ctx, r)
			for {
				s, err := it.Next()
				if err == iterator.Done {
					break
				}
				if err != nil {
					rec(what, err)
					break
				}
				out = append(out, fmt.Sprintf("%s: %s def=%q", what, labels.of(s.GetRevisionId()), s.GetDefinition()))
			}
		}
		avro := func(f string) *pb.Schema { return &pb.Schema{Type: pb.Schema_AVRO, Definition: fieldDef(f)} }

		s1, err := sc.CreateSchema(ctx, &pb.CreateSchemaRequest{Parent: p, SchemaId: id("sch"), Schema: avro("a")})
		show("create", s1, err)
		s2, err := sc.CommitSchema(ctx, &pb.CommitSchemaRequest{Name: name, Schema: avro("b")})
		show("commit b", s2, err)
		s3, err := sc.CommitSchema(ctx, &pb.CommitSchemaRequest{Name: name, Schema: avro("c")})
		show("commit c", s3, err)
		_, err = sc.CommitSchema(ctx, &pb.CommitSchemaRequest{Name: name + "-missing", Schema: avro("c")})
		rec("commit missing", err)
		_, err = sc.CommitSchema(ctx, &pb.CommitSchemaRequest{Name: name, Schema: &pb.Schema{Type: pb.Schema_AVRO, Definition: "junk"}})
		rec("commit junk", err)
		_, err = sc.CommitSchema(ctx, &pb.CommitSchemaRequest{Name: name})
		rec("commit nothing", err)
		_, err = sc.CommitSchema(ctx, &pb.CommitSchemaRequest{Name: "nope", Schema: avro("c")})
		rec("commit bad name", err)
		list("full", &pb.ListSchemaRevisionsRequest{Name: name})
		list("basic", &pb.ListSchemaRevisionsRequest{Name: name, View: pb.SchemaView_BASIC})
		list("pages of 2", &pb.ListSchemaRevisionsRequest{Name: name, PageSize: 2})
		page, next, err := sc.ListSchemaRevisions(ctx, &pb.ListSchemaRevisionsRequest{Name: name, PageSize: 2}).InternalFetch(2, "")
		rec("first page", err)
		out = append(out, fmt.Sprintf("first page: %d, more %v", len(page), next != ""))
		list("missing", &pb.ListSchemaRevisionsRequest{Name: name + "-missing"})
		list("bad name", &pb.ListSchemaRevisionsRequest{Name: "nope"})

		g, err := sc.GetSchema(ctx, &pb.GetSchemaRequest{Name: name + "@" + s1.GetRevisionId()})
		show("get @rev1", g, err)
		g, err = sc.GetSchema(ctx, &pb.GetSchemaRequest{Name: name, View: pb.SchemaView_BASIC})
		show("get basic", g, err)
		g, err = sc.GetSchema(ctx, &pb.GetSchemaRequest{Name: name + "@"})
		show("get @", g, err)
		_, err = sc.GetSchema(ctx, &pb.GetSchemaRequest{Name: name + "@zzzz"})
		rec("get missing revision", err)
		_, err = sc.GetSchema(ctx, &pb.GetSchemaRequest{Name: name + "-missing@" + s1.GetRevisionId()})
		rec("get revision of missing schema", err)

		// Topics bound to revision ranges.
		r1, r2, r3 := s1.GetRevisionId(), s2.GetRevisionId(), s3.GetRevisionId()
		for i, rng := range [][2]string{{"", ""}, {r1, r2}, {r2, ""}, {"", r1}, {"zzzz", ""}, {"", "zzzz"}, {r3, r1}} {
			topic := fmt.Sprintf("%s/topics/%s-%d", p, id("typed"), i)
			what := fmt.Sprintf("topic %s..%s", labels.of(rng[0]), labels.of(rng[1]))
			tp, err := ta.CreateTopic(ctx, &pb.Topic{Name: topic, SchemaSettings: &pb.SchemaSettings{Schema: name, Encoding: pb.Encoding_JSON, FirstRevisionId: rng[0], LastRevisionId: rng[1]}})
			rec(what, err)
			if err != nil {
				continue
			}
			ss := tp.GetSchemaSettings()
			out = append(out, fmt.Sprintf("  settings %s..%s", labels.of(ss.GetFirstRevisionId()), labels.of(ss.GetLastRevisionId())))
			for _, f := range []string{"a", "b", "c"} {
				_, err := ta.Publish(ctx, &pb.PublishRequest{Topic: topic, Messages: []*pb.PubsubMessage{{Data: []byte(`{"` + f + `":"x"}`)}}})
				rec("  publish "+f, err)
			}
		}

		rb, err := sc.RollbackSchema(ctx, &pb.RollbackSchemaRequest{Name: name, RevisionId: r1})
		show("rollback to rev1", rb, err)
		_, err = sc.RollbackSchema(ctx, &pb.RollbackSchemaRequest{Name: name, RevisionId: "zzzz"})
		rec("rollback to missing", err)
		_, err = sc.RollbackSchema(ctx, &pb.RollbackSchemaRequest{Name: name})
		rec("rollback without revision", err)
		_, err = sc.RollbackSchema(ctx, &pb.RollbackSchemaRequest{Name: name + "-missing", RevisionId: r1})
		rec("rollback missing schema", err)
		_, err = sc.RollbackSchema(ctx, &pb.RollbackSchemaRequest{Name: "nope", RevisionId: r1})
		rec("rollback bad name", err)
		g, err = sc.GetSchema(ctx, &pb.GetSchemaRequest{Name: name})
		show("current after rollback", g, err)

		d, err := sc.DeleteSchemaRevision(ctx, &pb.DeleteSchemaRevisionRequest{Name: name + "@" + r2})
		show("delete rev2", d, err)
		_, err = sc.DeleteSchemaRevision(ctx, &pb.DeleteSchemaRevisionRequest{Name: name + "@" + r2})
		rec("delete rev2 again", err)
		_, err = sc.DeleteSchemaRevision(ctx, &pb.DeleteSchemaRevisionRequest{Name: name, RevisionId: r3})
		rec("delete with the revision_id field", err)
		_, err = sc.DeleteSchemaRevision(ctx, &pb.DeleteSchemaRevisionRequest{Name: name})
		rec("delete without revision", err)
		_, err = sc.DeleteSchemaRevision(ctx, &pb.DeleteSchemaRevisionRequest{Name: name + "-missing@" + r3})
		rec("delete revision of missing schema", err)
		_, err = sc.DeleteSchemaRevision(ctx, &pb.DeleteSchemaRevisionRequest{Name: "nope@x"})
		rec("delete bad name", err)
		d, err = sc.DeleteSchemaRevision(ctx, &pb.DeleteSchemaRevisionRequest{Name: name + "@" + rb.GetRevisionId()})
		show("delete current", d, err)
		g, err = sc.GetSchema(ctx, &pb.GetSchemaRequest{Name: name})
		show("current after deleting it", g, err)
		for _, r := range []string{r1, r3} {
			d, err = sc.DeleteSchemaRevision(ctx, &pb.DeleteSchemaRevisionRequest{Name: name + "@" + r})
			show("delete "+labels.of(r), d, err)
		}
		list("left", &pb.ListSchemaRevisionsRequest{Name: name})
		return out
	})
}

// TestDifferentialSchemaREST sends the SchemaService's REST calls to
// both servers and compares statuses and bodies (revision ids named by
// order, times dropped).
func TestDifferentialSchemaREST(t *testing.T) {
	compareTargets(t, func(tg target, suffix string) []string {
		base := tg.host
		p := "/v1/projects/rest-schemas-" + suffix
		name := p + "/schemas/rsch"
		labels := revLabels{}
		var first string
		def := func(f string) string { return strings.ReplaceAll(fieldDef(f), `"`, `\"`) }
		calls := []struct{ method, path, body string }{
			{"POST", p + "/schemas?schemaId=rsch", `{"type":"AVRO","definition":"` + def("a") + `"}`},
			{"POST", p + "/schemas?schemaId=rsch", `{"type":"AVRO","definition":"` + def("a") + `"}`},
			{"POST", p + "/schemas?schemaId=bad1", `{"type":"AVRO","definition":"junk"}`},
			{"POST", p + "/schemas?schemaId=bad2", `{"type":"AVRO","definition":`},
			{"GET", name, ""},
			{"GET", name + "?view=BASIC", ""},
			{"GET", name + "-missing", ""},
			{"GET", p + "/schemas", ""},
			{"POST", name + ":commit", `{"schema":{"type":"AVRO","definition":"` + def("b") + `"}}`},
			{"POST", name + "-missing:commit", `{"schema":{"type":"AVRO","definition":"` + def("b") + `"}}`},
			{"GET", name + ":listRevisions", ""},
			{"GET", name + ":listRevisions?view=BASIC", ""},
			{"GET", name + "@{first}", ""},
			{"POST", name + ":rollback", `{"revisionId":"{first}"}`},
			{"POST", name + ":rollback", `{"revisionId":"zzzz"}`},
			{"POST", name + ":rollback", `{}`},
			{"DELETE", name + "@{first}:deleteRevision", ""},
			{"DELETE", name + "@{first}:deleteRevision", ""},
			{"GET", name + ":listRevisions", ""},
			{"POST", p + "/schemas:validate", `{"schema":{"type":"AVRO","definition":"` + def("a") + `"}}`},
			{"POST", p + "/schemas:validate", `{"schema":{"type":"AVRO","definition":"junk"}}`},
			{"POST", p + "/schemas:validateMessage", `{"name":"projects/rest-schemas-` + suffix + `/schemas/rsch","message":"eyJhIjoieCJ9","encoding":"JSON"}`},
			{"POST", p + "/schemas:validateMessage", `{"name":"projects/rest-schemas-` + suffix + `/schemas/rsch","message":"eyJiIjoieCJ9","encoding":"JSON"}`},
			{"DELETE", name, ""},
			{"DELETE", name, ""},
			{"GET", p + "/schemas", ""},
		}
		var out []string
		for _, c := range calls {
			path := strings.ReplaceAll(c.path, "{first}", first)
			body := strings.ReplaceAll(c.body, "{first}", first)
			req, _ := http.NewRequest(c.method, "http://"+base+path, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if first == "" {
				if _, rest, ok := strings.Cut(string(b), `"revisionId"`); ok {
					_, v, _ := strings.Cut(rest, `"`)
					first, _, _ = strings.Cut(v, `"`)
				}
			}
			shown := normalizeSchema(b, suffix, labels)
			out = append(out, fmt.Sprintf("%s %s -> %d %s", c.method, strings.ReplaceAll(c.path, suffix, "X"), resp.StatusCode, shown))
		}
		return out
	})
}

// normalizeSchema re-encodes a JSON body compactly with revision ids
// named by labels, creation times replaced and the suffix removed.
func normalizeSchema(b []byte, suffix string, labels revLabels) string {
	var v any
	if json.Unmarshal(b, &v) != nil {
		return strings.TrimSpace(string(b))
	}
	var walk func(any) any
	walk = func(x any) any {
		switch x := x.(type) {
		case map[string]any:
			for k, e := range x {
				switch k {
				case "revisionId":
					s, _ := e.(string)
					x[k] = labels.of(s)
				case "revisionCreateTime":
					x[k] = "<time>"
				default:
					x[k] = walk(e)
				}
			}
		case []any:
			for i := range x {
				x[i] = walk(x[i])
			}
		case string:
			// Pyric names the problem after the emulator's words.
			if p, _, ok := strings.Cut(x, "Payload isn't valid for request. ("); ok {
				x = p + "Payload isn't valid for request."
			}
			return strings.ReplaceAll(x, suffix, "X")
		}
		return x
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(walk(v))
	return strings.TrimSpace(buf.String())
}

// TestSchemaRevisionsSurviveRestartAndImport: a durable engine keeps
// every revision (and which is current) across a restart, and export
// then import brings them back after the schema was deleted.
func TestSchemaRevisionsSurviveRestartAndImport(t *testing.T) {
	env := service.Env{Bucket: servicetest.NewBucket()}
	e, err := engine.NewEngine(env, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const name = "projects/p/schemas/revs"
	s1, err := e.CreateSchema("projects/p", "revs", &engine.Schema{Type: engine.SchemaAvro, Definition: fieldDef("a")})
	if err != nil {
		t.Fatal(err)
	}
	s2, err := e.CommitSchema(name, &engine.Schema{Type: engine.SchemaAvro, Definition: fieldDef("b")})
	if err != nil {
		t.Fatal(err)
	}
	revs := func(e *engine.Engine) string {
		list, _, err := e.ListSchemaRevisions(name, true, 0, "")
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, s := range list {
			ids = append(ids, s.RevisionID+"="+s.Definition)
		}
		return strings.Join(ids, " ")
	}
	want := s1.RevisionID + "=" + fieldDef("a") + " " + s2.RevisionID + "=" + fieldDef("b")
	e.Close()
	if e, err = engine.NewEngine(env, engine.Options{}); err != nil {
		t.Fatal(err)
	}
	defer func() { e.Close() }()
	if got := revs(e); got != want {
		t.Fatalf("revisions after restart: %s, want %s", got, want)
	}
	if cur, err := e.GetSchema(name, true); err != nil || cur.RevisionID != s2.RevisionID {
		t.Fatalf("current after restart: %+v %v", cur, err)
	}
	exported, err := e.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if err := e.DeleteSchema(name); err != nil {
		t.Fatal(err)
	}
	if err := e.Restore(exported); err != nil {
		t.Fatal(err)
	}
	if got := revs(e); got != want {
		t.Fatalf("revisions after import: %s, want %s", got, want)
	}
}
