package pubsub_test

import (
	"context"
	"fmt"
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

const avroRecord = `{"type":"record","name":"R","fields":[{"name":"a","type":"string"},{"name":"n","type":"int"},{"name":"u","type":["null","string"],"default":null}]}`

// TestDifferentialSchemas drives google.pubsub.v1.SchemaService through
// the Go client's SchemaClient against both servers: AVRO schemas
// (create, get, list, commit, delete), their errors, ValidateSchema and
// ValidateMessage in JSON and BINARY, and topics bound to a schema
// refusing non-conforming publishes.
func TestDifferentialSchemas(t *testing.T) {
	differential(t, func(t *testing.T, c *pubsub.Client, id func(string) string) []string {
		ctx := context.Background()
		sc, err := vkit.NewSchemaClient(ctx, option.WithGRPCConn(c.TopicAdminClient.Connection()))
		if err != nil {
			t.Fatal(err)
		}
		ta := c.TopicAdminClient
		p := "projects/" + id("schemas") // a project of its own, for List
		name := p + "/schemas/" + id("sch")
		var out []string
		norm := func(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, name, "SCHEMA"), p, "P") }
		rec := func(what string, err error) { out = append(out, what+" -> "+norm(errText(err))) }
		avro := &pb.Schema{Type: pb.Schema_AVRO, Definition: avroRecord}
		s, err := sc.CreateSchema(ctx, &pb.CreateSchemaRequest{Parent: p, SchemaId: id("sch"), Schema: avro})
		rec("create", err)
		out = append(out, fmt.Sprintf("created: %s %s %q revision %d chars", norm(s.GetName()), s.GetType(), s.GetDefinition(), len(s.GetRevisionId())))
		_, err = sc.CreateSchema(ctx, &pb.CreateSchemaRequest{Parent: p, SchemaId: id("sch"), Schema: avro})
		rec("create again", err)
		_, err = sc.CreateSchema(ctx, &pb.CreateSchemaRequest{Parent: p, SchemaId: id("bad"), Schema: &pb.Schema{Type: pb.Schema_AVRO, Definition: "nope"}})
		rec("create bad definition", err)
		_, err = sc.CreateSchema(ctx, &pb.CreateSchemaRequest{Parent: p, SchemaId: id("untyped"), Schema: &pb.Schema{Definition: avroRecord}})
		rec("create without type", err)
		_, err = sc.CreateSchema(ctx, &pb.CreateSchemaRequest{Parent: p, SchemaId: "x", Schema: avro})
		rec("create short id", err)
		_, err = sc.CreateSchema(ctx, &pb.CreateSchemaRequest{Parent: p, Schema: avro})
		rec("create without id", err)
		g, err := sc.GetSchema(ctx, &pb.GetSchemaRequest{Name: name})
		rec("get", err)
		out = append(out, fmt.Sprintf("got: %s %s same revision %v", norm(g.GetName()), g.GetType(), g.GetRevisionId() == s.GetRevisionId()))
		_, err = sc.GetSchema(ctx, &pb.GetSchemaRequest{Name: name + "-missing"})
		rec("get missing", err)
		it := sc.ListSchemas(ctx, &pb.ListSchemasRequest{Parent: p})
		for {
			l, err := it.Next()
			if err == iterator.Done {
				break
			}
			if err != nil {
				rec("list", err)
				break
			}
			out = append(out, "listed: "+norm(l.GetName()))
		}
		_, err = sc.ValidateSchema(ctx, &pb.ValidateSchemaRequest{Parent: p, Schema: &pb.Schema{Type: pb.Schema_AVRO, Definition: `{"type":"record"}`}})
		rec("validate incomplete record", err)
		_, err = sc.ValidateSchema(ctx, &pb.ValidateSchemaRequest{Parent: p, Schema: avro})
		rec("validate schema", err)
		for _, m := range []struct {
			what string
			enc  pb.Encoding
			data string
		}{
			{"json", pb.Encoding_JSON, `{"a":"x","n":1,"u":null}`},
			{"json union branch", pb.Encoding_JSON, `{"a":"x","n":1,"u":{"string":"z"}}`},
			{"json bare union", pb.Encoding_JSON, `{"a":"x","n":1,"u":"z"}`},
			{"json missing field", pb.Encoding_JSON, `{"a":"x","n":1}`},
			{"json extra field", pb.Encoding_JSON, `{"a":"x","n":1,"u":null,"z":true}`},
			{"json wrong type", pb.Encoding_JSON, `{"a":1,"n":1,"u":null}`},
			{"json int out of range", pb.Encoding_JSON, `{"a":"x","n":3000000000,"u":null}`},
			{"json not json", pb.Encoding_JSON, `{"a":`},
			{"binary", pb.Encoding_BINARY, "\x02x\x02\x00"},
			{"binary truncated", pb.Encoding_BINARY, "\x02x"},
			{"binary bad union", pb.Encoding_BINARY, "\x02x\x02\x04"},
			{"no encoding", pb.Encoding_ENCODING_UNSPECIFIED, `{"a":"x","n":1,"u":null}`},
		} {
			_, err := sc.ValidateMessage(ctx, &pb.ValidateMessageRequest{Parent: p, SchemaSpec: &pb.ValidateMessageRequest_Name{Name: name}, Message: []byte(m.data), Encoding: m.enc})
			rec("validate message "+m.what, err)
		}
		_, err = sc.ValidateMessage(ctx, &pb.ValidateMessageRequest{Parent: p, SchemaSpec: &pb.ValidateMessageRequest_Name{Name: name + "-missing"}, Message: []byte("{}"), Encoding: pb.Encoding_JSON})
		rec("validate message missing schema", err)
		_, err = sc.ValidateMessage(ctx, &pb.ValidateMessageRequest{Parent: p, SchemaSpec: &pb.ValidateMessageRequest_Schema{Schema: &pb.Schema{Type: pb.Schema_AVRO, Definition: `{"type":"enum","name":"E","symbols":["A","B"]}`}}, Message: []byte(`"C"`), Encoding: pb.Encoding_JSON})
		rec("validate message inline enum", err)

		topic := p + "/topics/" + id("typed")
		_, err = ta.CreateTopic(ctx, &pb.Topic{Name: topic, SchemaSettings: &pb.SchemaSettings{Schema: name + "-missing", Encoding: pb.Encoding_JSON}})
		rec("topic with missing schema", err)
		_, err = ta.CreateTopic(ctx, &pb.Topic{Name: topic, SchemaSettings: &pb.SchemaSettings{Schema: name}})
		rec("topic without encoding", err)
		tp, err := ta.CreateTopic(ctx, &pb.Topic{Name: topic, SchemaSettings: &pb.SchemaSettings{Schema: name, Encoding: pb.Encoding_JSON}})
		rec("topic", err)
		out = append(out, fmt.Sprintf("topic schema: %s %s", norm(tp.GetSchemaSettings().GetSchema()), tp.GetSchemaSettings().GetEncoding()))
		gt, err := ta.GetTopic(ctx, &pb.GetTopicRequest{Topic: topic})
		rec("get topic", err)
		out = append(out, fmt.Sprintf("got topic schema: %s %s", norm(gt.GetSchemaSettings().GetSchema()), gt.GetSchemaSettings().GetEncoding()))
		pub := func(what string, data ...string) {
			var msgs []*pb.PubsubMessage
			for _, d := range data {
				msgs = append(msgs, &pb.PubsubMessage{Data: []byte(d)})
			}
			r, err := ta.Publish(ctx, &pb.PublishRequest{Topic: topic, Messages: msgs})
			rec(what, err)
			out = append(out, fmt.Sprintf("%s ids: %d", what, len(r.GetMessageIds())))
		}
		pub("publish conforming", `{"a":"x","n":1,"u":null}`)
		pub("publish non-conforming", `{"a":"x"}`)
		pub("publish batch with one non-conforming", `{"a":"x","n":1,"u":null}`, `[]`)
		// The client library's publisher surfaces the same error.
		_, err = c.Publisher(topic).Publish(ctx, &pubsub.Message{Data: []byte("nope")}).Get(ctx)
		rec("client publish non-conforming", err)

		c2, err := sc.CommitSchema(ctx, &pb.CommitSchemaRequest{Name: name, Schema: &pb.Schema{Type: pb.Schema_AVRO, Definition: `{"type":"string"}`}})
		rec("commit", err)
		out = append(out, fmt.Sprintf("new revision: %v", c2.GetRevisionId() != s.GetRevisionId()))
		pub("publish to committed schema", `"s"`)
		err = sc.DeleteSchema(ctx, &pb.DeleteSchemaRequest{Name: name + "-missing"})
		rec("delete missing", err)
		return out
	})
}

// TestSchemasWhereProductionDiffers: PROTOCOL_BUFFER schemas, which the
// official emulator answers UNIMPLEMENTED, work as in production; a
// deleted schema leaves its topics reading _deleted-schema_; schemas
// survive a restart of a durable engine.
func TestSchemasWhereProductionDiffers(t *testing.T) {
	env := service.Env{Bucket: servicetest.NewBucket()}
	e, err := engine.NewEngine(env, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const def = "syntax = \"proto3\";\nmessage M {\n  string a = 1;\n  int32 n = 2;\n}\n"
	if _, err := e.CreateSchema("projects/p", "proto", &engine.Schema{Type: engine.SchemaProtobuf, Definition: def}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.CreateSchema("projects/p", "broken", &engine.Schema{Type: engine.SchemaProtobuf, Definition: "message {"}); engine.Code(err).String() != "InvalidArgument" {
		t.Errorf("bad proto definition: %v", err)
	}
	for _, c := range []struct {
		enc, data string
		ok        bool
	}{
		{engine.EncodingJSON, `{"a":"x","n":1}`, true},
		{engine.EncodingJSON, `{"zz":1}`, false},
		{engine.EncodingBinary, "\x0a\x01x\x10\x01", true},
		{engine.EncodingBinary, "\xff\xff", false},
	} {
		err := e.ValidateMessage("projects/p/schemas/proto", nil, []byte(c.data), c.enc)
		if (err == nil) != c.ok {
			t.Errorf("validate %s %q: %v, want ok=%v", c.enc, c.data, err, c.ok)
		}
	}
	topic := &engine.Topic{Name: "projects/p/topics/typed", SchemaSettings: &engine.SchemaSettings{Schema: "projects/p/schemas/proto", Encoding: engine.EncodingBinary}}
	if _, err := e.CreateTopic(topic); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Publish(topic.Name, []*engine.Message{{Data: []byte("\xff\xff")}}); engine.Code(err).String() != "InvalidArgument" {
		t.Errorf("non-conforming publish: %v", err)
	}
	if _, err := e.Publish(topic.Name, []*engine.Message{{Data: []byte("\x0a\x01x")}}); err != nil {
		t.Errorf("conforming publish: %v", err)
	}
	e.Close()
	e, err = engine.NewEngine(env, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if s, err := e.GetSchema("projects/p/schemas/proto", true); err != nil || s.Definition != def {
		t.Fatalf("schema after restart: %v %v", s, err)
	}
	if _, err := e.Publish(topic.Name, []*engine.Message{{Data: []byte("\xff\xff")}}); engine.Code(err).String() != "InvalidArgument" {
		t.Errorf("non-conforming publish after restart: %v", err)
	}
	exported, err := e.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if err := e.DeleteSchema("projects/p/schemas/proto"); err != nil {
		t.Fatal(err)
	}
	got, _ := e.GetTopic(topic.Name)
	if got.SchemaSettings == nil || got.SchemaSettings.Schema != engine.DeletedSchema {
		t.Errorf("topic after its schema was deleted: %+v", got.SchemaSettings)
	}
	if _, err := e.Publish(topic.Name, []*engine.Message{{Data: []byte("\x0a\x01x")}}); engine.Code(err).String() != "FailedPrecondition" {
		t.Errorf("publish to a topic whose schema was deleted: %v", err)
	}
	if err := e.Restore(exported); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Publish(topic.Name, []*engine.Message{{Data: []byte("\xff\xff")}}); engine.Code(err).String() != "InvalidArgument" {
		t.Errorf("non-conforming publish after import: %v", err)
	}
}
