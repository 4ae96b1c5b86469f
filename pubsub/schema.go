package pubsub

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/bufbuild/protocompile"
	"github.com/hamba/avro/v2"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/pyric/pyric/sandbox/service"
)

// Schema types and message encodings, as the proto enums name them.
const (
	SchemaAvro     = "AVRO"
	SchemaProtobuf = "PROTOCOL_BUFFER"
	EncodingJSON   = "JSON"
	EncodingBinary = "BINARY"
)

// DeletedSchema is what a topic's schema reads after its schema was
// deleted, as in production.
const DeletedSchema = "_deleted-schema_"

// Schema is a registered message schema.
type Schema struct {
	Name               string    `json:"name"`
	Type               string    `json:"type"`
	Definition         string    `json:"definition"`
	RevisionID         string    `json:"revisionId"`
	RevisionCreateTime time.Time `json:"revisionCreateTime"`
}

// SchemaSettings binds a topic to a schema: every message published to
// it must conform, in Encoding.
type SchemaSettings struct {
	Schema          string `json:"schema"`
	Encoding        string `json:"encoding"`
	FirstRevisionID string `json:"firstRevisionId,omitempty"`
	LastRevisionID  string `json:"lastRevisionId,omitempty"`
}

// schemaState is a schema's revisions, oldest first; the last is the
// current one (what Get answers and a commit follows).
type schemaState struct {
	revs []*schemaRev
}

// schemaRev is one revision and its compiled checker.
type schemaRev struct {
	cfg   *Schema
	check checker
}

func (st *schemaState) current() *schemaRev { return st.revs[len(st.revs)-1] }

// revision returns the revision with id, or nil.
func (st *schemaState) revision(id string) (int, *schemaRev) {
	for i, r := range st.revs {
		if r.cfg.RevisionID == id {
			return i, r
		}
	}
	return -1, nil
}

// schemaRecord is a schema as stored: every revision, oldest first. A
// record written before revisions were kept is one Schema.
type schemaRecord struct {
	Revisions []*Schema `json:"revisions"`
}

func (st *schemaState) record() *schemaRecord {
	r := &schemaRecord{Revisions: make([]*Schema, len(st.revs))}
	for i, v := range st.revs {
		r.Revisions[i] = v.cfg
	}
	return r
}

// decodeSchemaRecord reads a stored schema, compiling every revision.
func decodeSchemaRecord(b []byte) (*schemaState, error) {
	var r struct {
		Schema
		Revisions []*Schema `json:"revisions"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, err
	}
	if len(r.Revisions) == 0 {
		c := r.Schema
		r.Revisions = []*Schema{&c}
	}
	st := &schemaState{}
	for _, c := range r.Revisions {
		chk, err := compileSchema(c.Type, c.Definition)
		if err != nil {
			return nil, err
		}
		st.revs = append(st.revs, &schemaRev{cfg: c, check: chk})
	}
	return st, nil
}

// checker tells whether data conforms to a schema in an encoding.
type checker interface {
	check(data []byte, encoding string) bool
}

// The official emulator's schema messages (0.8.20, observed).
var (
	errSchemaNotFound      = &Error{Kind: ErrNotFound, Msg: "Schema not found"}
	errSchemaExists        = &Error{Kind: ErrAlreadyExists, Msg: "Schema already exists"}
	errSchemaDefinition    = invalid("Could not parse schema definition")
	errSchemaType          = invalid("Invalid schema type")
	errNoEncoding          = invalid("No encoding provided.")
	errTopicSchemaNotFound = &Error{Kind: ErrNotFound, Msg: "Schema could not be found"}
	errTopicEncoding       = invalid("Invalid schema encoding provided")
	errNonConforming       = invalid("Could not parse message")
	errSchemaDeleted       = &Error{Kind: ErrFailedPrecondition, Msg: "The topic's schema was deleted."}
	errRevisionNotFound    = &Error{Kind: ErrNotFound, Msg: "Schema revision not found"}
	errRollbackNotFound    = &Error{Kind: ErrNotFound, Msg: "Revision not found"}
	errNoRevisionID        = invalid("Missing revision ID")
	errLastRevision        = invalid("Cannot delete last revision. Please use DeleteSchema.")
	errFirstRevision       = &Error{Kind: ErrNotFound, Msg: "First revision could not be found"}
	errLastRevisionMissing = &Error{Kind: ErrNotFound, Msg: "Last revision could not be found"}
	errRevisionOrder       = invalid("First revision creation time is after last revision creation time")
)

func schemaKey(name string) []byte { return []byte("x/" + name) }

// compileSchema checks a definition of its type and returns its checker.
// PROTOCOL_BUFFER follows production (the official emulator answers
// UNIMPLEMENTED): one proto file, its first message type is the schema.
func compileSchema(typ, def string) (checker, error) {
	switch typ {
	case SchemaAvro:
		s, err := avro.ParseWithCache(def, "", &avro.SchemaCache{})
		if err != nil {
			return nil, errSchemaDefinition
		}
		return avroChecker{s}, nil
	case SchemaProtobuf:
		const file = "schema.proto"
		c := protocompile.Compiler{Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{
			Accessor: func(path string) (io.ReadCloser, error) {
				if path != file {
					return nil, fmt.Errorf("no file %s", path)
				}
				return io.NopCloser(strings.NewReader(def)), nil
			}}), MaxParallelism: 1}
		files, err := c.Compile(context.Background(), file)
		if err != nil || len(files) == 0 || files[0].Messages().Len() == 0 {
			return nil, errSchemaDefinition
		}
		return protoChecker{files[0].Messages().Get(0)}, nil
	}
	return nil, errSchemaType
}

func newRevisionID() string {
	var b [4]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// CreateSchema registers a schema named parent/schemas/id.
func (e *Engine) CreateSchema(parent, id string, s *Schema) (*Schema, error) {
	name := parent + "/" + kindSchemas + "/" + id
	if _, _, err := ParseName(kindSchemas, name); err != nil {
		return nil, err
	}
	rev, err := e.newRevision(name, s)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.schemas[name] != nil {
		return nil, errSchemaExists
	}
	st := &schemaState{revs: []*schemaRev{rev}}
	if err := e.putSchema(name, st); err != nil {
		return nil, err
	}
	e.schemas[name] = st
	return cloneSchema(rev.cfg, true), nil
}

// newRevision compiles s as a new revision of the schema name.
func (e *Engine) newRevision(name string, s *Schema) (*schemaRev, error) {
	chk, err := compileSchema(s.Type, s.Definition)
	if err != nil {
		return nil, err
	}
	c := &Schema{Name: name, Type: s.Type, Definition: s.Definition, RevisionID: newRevisionID(), RevisionCreateTime: e.now().UTC()}
	return &schemaRev{cfg: c, check: chk}, nil
}

// putSchema durably stores st as the schema name (e.mu held).
func (e *Engine) putSchema(name string, st *schemaState) error {
	rec := st.record()
	return e.com.do(func(tx service.Tx) error { return putJSON(tx, schemaKey(name), rec) })
}

func cloneSchema(s *Schema, full bool) *Schema {
	c := *s
	if !full {
		c.Definition = ""
	}
	return &c
}

// schemaRef splits "projects/P/schemas/S@REV" into the schema's name and
// the revision id ("" without one).
func schemaRef(ref string) (name, rev string, err error) {
	name, rev, _ = strings.Cut(ref, "@")
	if _, _, err := ParseName(kindSchemas, name); err != nil {
		return "", "", err
	}
	return name, rev, nil
}

// CommitSchema gives a schema a new revision, which becomes its current
// one.
func (e *Engine) CommitSchema(name string, s *Schema) (*Schema, error) {
	if _, _, err := ParseName(kindSchemas, name); err != nil {
		return nil, err
	}
	rev, err := e.newRevision(name, s)
	if err != nil {
		return nil, err
	}
	return e.addRevision(name, rev)
}

// addRevision appends rev to the schema name.
func (e *Engine) addRevision(name string, rev *schemaRev) (*Schema, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	st := e.schemas[name]
	if st == nil {
		return nil, errSchemaNotFound
	}
	next := &schemaState{revs: append(slices.Clip(st.revs), rev)}
	if err := e.putSchema(name, next); err != nil {
		return nil, err
	}
	e.schemas[name] = next
	return cloneSchema(rev.cfg, true), nil
}

// RollbackSchema commits a copy of the revision revID as the schema's
// new current revision, as production does.
func (e *Engine) RollbackSchema(name, revID string) (*Schema, error) {
	if _, _, err := ParseName(kindSchemas, name); err != nil {
		return nil, err
	}
	if revID == "" {
		return nil, errNoRevisionID
	}
	e.mu.Lock()
	st := e.schemas[name]
	if st == nil {
		e.mu.Unlock()
		return nil, errSchemaNotFound
	}
	_, old := st.revision(revID)
	e.mu.Unlock()
	if old == nil {
		return nil, errRollbackNotFound
	}
	rev, err := e.newRevision(name, old.cfg)
	if err != nil {
		return nil, err
	}
	return e.addRevision(name, rev)
}

// DeleteSchemaRevision deletes the revision that ref ("…/schemas/S@REV")
// names and returns it; the previous revision becomes current when it
// was. A schema's only revision cannot be deleted.
func (e *Engine) DeleteSchemaRevision(ref string) (*Schema, error) {
	name, revID, err := schemaRef(ref)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	st := e.schemas[name]
	if st == nil {
		return nil, errSchemaNotFound
	}
	i, rev := st.revision(revID)
	if rev == nil || revID == "" {
		return nil, errRevisionNotFound
	}
	if len(st.revs) == 1 {
		return nil, errLastRevision
	}
	next := &schemaState{revs: slices.Delete(slices.Clone(st.revs), i, i+1)}
	if err := e.putSchema(name, next); err != nil {
		return nil, err
	}
	e.schemas[name] = next
	return cloneSchema(rev.cfg, true), nil
}

// GetSchema returns a schema's current revision, or with ref
// "…/schemas/S@REV" that revision; without full, its definition is left
// out (the BASIC view).
func (e *Engine) GetSchema(ref string, full bool) (*Schema, error) {
	name, revID, err := schemaRef(ref)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	st := e.schemas[name]
	if st == nil {
		return nil, errSchemaNotFound
	}
	rev := st.current()
	if revID != "" {
		if _, rev = st.revision(revID); rev == nil {
			return nil, errRevisionNotFound
		}
	}
	return cloneSchema(rev.cfg, full), nil
}

// ListSchemaRevisions lists a schema's revisions, oldest first, paged
// (the token is the last listed revision's id).
func (e *Engine) ListSchemaRevisions(name string, full bool, size int, token string) ([]*Schema, string, error) {
	if _, _, err := ParseName(kindSchemas, name); err != nil {
		return nil, "", err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	st := e.schemas[name]
	if st == nil {
		return nil, "", errSchemaNotFound
	}
	revs := st.revs
	if token != "" {
		i, r := st.revision(token)
		if r == nil {
			return nil, "", invalid("Invalid page token %q: no such revision of %s.", token, name)
		}
		revs = revs[i+1:]
	}
	next := ""
	if size > 0 && size < len(revs) {
		revs = revs[:size]
		next = revs[size-1].cfg.RevisionID
	}
	out := make([]*Schema, len(revs))
	for i, r := range revs {
		out[i] = cloneSchema(r.cfg, full)
	}
	return out, next, nil
}

// ListSchemas lists a project's schemas ("projects/P"), by name, each as
// its current revision.
func (e *Engine) ListSchemas(parent string, size int, token string) ([]*Schema, string, error) {
	project, ok := strings.CutPrefix(parent, "projects/")
	if !ok || project == "" || strings.Contains(project, "/") {
		return nil, "", invalid("Invalid [projects] name: (name=%s)", parent)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	names, next := page(namesIn(e.schemas, project), size, token)
	out := make([]*Schema, len(names))
	for i, n := range names {
		out[i] = cloneSchema(e.schemas[n].current().cfg, true)
	}
	return out, next, nil
}

// DeleteSchema deletes a schema; topics bound to it then read
// DeletedSchema and refuse publishes, as in production.
func (e *Engine) DeleteSchema(name string) error {
	if _, _, err := ParseName(kindSchemas, name); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.schemas[name] == nil {
		return errSchemaNotFound
	}
	var changed []*topicState
	for _, t := range e.topics {
		if t.cfg.SchemaSettings != nil && t.cfg.SchemaSettings.Schema == name {
			changed = append(changed, t)
		}
	}
	if err := e.com.do(func(tx service.Tx) error {
		for _, t := range changed {
			next := cloneTopic(t.cfg)
			next.SchemaSettings.Schema = DeletedSchema
			if err := putJSON(tx, topicKey(next.Name), next); err != nil {
				return err
			}
		}
		return tx.Delete(schemaKey(name))
	}); err != nil {
		return err
	}
	for _, t := range changed {
		next := cloneTopic(t.cfg)
		next.SchemaSettings.Schema = DeletedSchema
		t.cfg = next
	}
	delete(e.schemas, name)
	return nil
}

// ValidateSchema checks a definition.
func (e *Engine) ValidateSchema(parent string, s *Schema) error {
	if _, ok := strings.CutPrefix(parent, "projects/"); !ok {
		return invalid("Invalid [projects] name: (name=%s)", parent)
	}
	_, err := compileSchema(s.Type, s.Definition)
	return err
}

// ValidateMessage checks a message against a registered schema (name)
// or an inline one (s), in encoding.
func (e *Engine) ValidateMessage(name string, s *Schema, data []byte, encoding string) error {
	var chk checker
	if s != nil {
		c, err := compileSchema(s.Type, s.Definition)
		if err != nil {
			return err
		}
		chk = c
	} else {
		e.mu.Lock()
		st := e.schemas[name]
		e.mu.Unlock()
		if st == nil {
			return errSchemaNotFound
		}
		chk = st.current().check
	}
	if encoding != EncodingJSON && encoding != EncodingBinary {
		return errNoEncoding
	}
	if !chk.check(data, encoding) {
		kind := "JSON"
		if encoding == EncodingBinary {
			kind = "binary"
		}
		if _, ok := chk.(avroChecker); ok {
			return invalid("Could not parse %s Avro message", kind)
		}
		return invalid("Could not parse %s Protocol Buffer message", kind)
	}
	return nil
}

// checkTopicSchema checks a topic's schema settings against the
// registry (e.mu held): the schema, the encoding and the revision range
// must exist and be in order.
func (e *Engine) checkTopicSchema(ss *SchemaSettings) error {
	if ss == nil {
		return nil
	}
	st := e.schemas[ss.Schema]
	if st == nil {
		return errTopicSchemaNotFound
	}
	if ss.Encoding != EncodingJSON && ss.Encoding != EncodingBinary {
		return errTopicEncoding
	}
	var first, last *schemaRev
	if ss.FirstRevisionID != "" {
		if _, first = st.revision(ss.FirstRevisionID); first == nil {
			return errFirstRevision
		}
	}
	if ss.LastRevisionID != "" {
		if _, last = st.revision(ss.LastRevisionID); last == nil {
			return errLastRevisionMissing
		}
	}
	if first != nil && last != nil && first.cfg.RevisionCreateTime.After(last.cfg.RevisionCreateTime) {
		return errRevisionOrder
	}
	return nil
}

// allowed returns the revisions a topic's messages may conform to: those
// created from its first revision to its last (either end open when
// unset, or when that revision was deleted since).
func (st *schemaState) allowed(ss *SchemaSettings) []*schemaRev {
	lo, hi := 0, len(st.revs)
	if i, r := st.revision(ss.FirstRevisionID); r != nil {
		lo = i
	}
	if i, r := st.revision(ss.LastRevisionID); r != nil {
		hi = i + 1
	}
	if lo >= hi {
		return nil
	}
	return st.revs[lo:hi]
}

// conforming checks messages published to topic against its schema:
// each must conform to one of the allowed revisions, or the whole
// publish fails with INVALID_ARGUMENT.
func (e *Engine) conforming(topic string, msgs []*Message) error {
	e.mu.Lock()
	t := e.topics[topic]
	if t == nil || t.cfg.SchemaSettings == nil {
		e.mu.Unlock()
		return nil
	}
	ss := *t.cfg.SchemaSettings
	st := e.schemas[ss.Schema]
	e.mu.Unlock()
	if st == nil {
		return errSchemaDeleted
	}
	revs := st.allowed(&ss)
	for _, m := range msgs {
		if !slices.ContainsFunc(revs, func(r *schemaRev) bool { return r.check.check(m.Data, ss.Encoding) }) {
			return errNonConforming
		}
	}
	return nil
}

// protoChecker checks protocol buffer messages of one type.
type protoChecker struct {
	md protoreflect.MessageDescriptor
}

func (p protoChecker) check(data []byte, encoding string) bool {
	m := dynamicpb.NewMessage(p.md)
	if encoding == EncodingJSON {
		return protojson.Unmarshal(data, m) == nil
	}
	return proto.Unmarshal(data, m) == nil
}

// avroChecker checks Avro messages: binary by decoding them, JSON
// against Avro's JSON encoding (unions as {"type": value}; every field
// present, as the official emulator requires even with a default; extra
// fields ignored).
type avroChecker struct{ s avro.Schema }

func (a avroChecker) check(data []byte, encoding string) bool {
	if encoding == EncodingBinary {
		// A Reader, not avro.Unmarshal, which does not report running out
		// of input. Trailing bytes pass, as on the official emulator.
		r := avro.NewReader(nil, 0)
		r.Reset(data)
		var v any
		r.ReadVal(a.s, &v)
		return r.Error == nil
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return false
	}
	if _, err := d.Token(); err != io.EOF {
		return false
	}
	return avroJSON(a.s, v, 0)
}

// maxAvroDepth bounds recursion through recursive record types.
const maxAvroDepth = 100

func avroJSON(s avro.Schema, v any, depth int) bool {
	if depth > maxAvroDepth {
		return false
	}
	if r, ok := s.(*avro.RefSchema); ok {
		s = r.Schema()
	}
	switch s.Type() {
	case avro.Null:
		return v == nil
	case avro.Boolean:
		_, ok := v.(bool)
		return ok
	case avro.Int, avro.Long:
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		i, err := n.Int64()
		if err != nil {
			return false
		}
		return s.Type() == avro.Long || i >= math.MinInt32 && i <= math.MaxInt32
	case avro.Float, avro.Double:
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		_, err := n.Float64()
		return err == nil
	case avro.String:
		_, ok := v.(string)
		return ok
	case avro.Bytes:
		_, ok := v.(string)
		return ok
	case avro.Fixed:
		str, ok := v.(string)
		return ok && len([]rune(str)) == s.(*avro.FixedSchema).Size()
	case avro.Enum:
		str, ok := v.(string)
		if !ok {
			return false
		}
		for _, sym := range s.(*avro.EnumSchema).Symbols() {
			if sym == str {
				return true
			}
		}
		return false
	case avro.Array:
		arr, ok := v.([]any)
		if !ok {
			return false
		}
		for _, x := range arr {
			if !avroJSON(s.(*avro.ArraySchema).Items(), x, depth+1) {
				return false
			}
		}
		return true
	case avro.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		for _, x := range m {
			if !avroJSON(s.(*avro.MapSchema).Values(), x, depth+1) {
				return false
			}
		}
		return true
	case avro.Record:
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		for _, f := range s.(*avro.RecordSchema).Fields() {
			x, ok := m[f.Name()]
			if !ok || !avroJSON(f.Type(), x, depth+1) {
				return false
			}
		}
		return true
	case avro.Union:
		types := s.(*avro.UnionSchema).Types()
		if v == nil {
			for _, t := range types {
				if t.Type() == avro.Null {
					return true
				}
			}
			return false
		}
		m, ok := v.(map[string]any)
		if !ok || len(m) != 1 {
			return false
		}
		for k, x := range m {
			for _, t := range types {
				if unionName(t) == k {
					return avroJSON(t, x, depth+1)
				}
			}
		}
		return false
	}
	return false
}

// unionName is the key naming a branch of a union in Avro's JSON
// encoding: a named type's full name, else the type.
func unionName(s avro.Schema) string {
	if r, ok := s.(*avro.RefSchema); ok {
		s = r.Schema()
	}
	if n, ok := s.(avro.NamedSchema); ok {
		return n.FullName()
	}
	return string(s.Type())
}
