package mcp

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/pyric/pyric/database"
	"github.com/pyric/pyric/discover"
	"github.com/pyric/pyric/sandbox"
)

// Limits of rtdb_crawl_structure.
const (
	DefaultCrawlDepth    = 10
	DefaultCrawlChildren = 100
	DefaultCrawlNodes    = 10000
	MaxCrawlNodes        = 100000
)

type rtdbCrawlIn struct {
	Path        string `json:"path,omitempty" jsonschema:"where to start, e.g. / or users (default /)"`
	Namespace   string `json:"namespace,omitempty" jsonschema:"the database namespace (default <project>-default-rtdb)"`
	MaxDepth    int    `json:"maxDepth,omitempty" jsonschema:"most levels below path to walk (default 10, 1 to 64); deeper nodes are reported as truncated"`
	MaxChildren int    `json:"maxChildren,omitempty" jsonschema:"most children walked per node (default 100, 1 to 10000), in key order; the rest are counted in skippedChildren"`
	MaxNodes    int    `json:"maxNodes,omitempty" jsonschema:"most nodes visited in total (default 10000, at most 100000); the walk stops there with truncated: true"`
	As          *As    `json:"as,omitempty" jsonschema:"identity to read as (default admin); a user's read of path is judged by the RTDB rules"`
}

// crawlTemplate is what the crawl learned about one template path.
type crawlTemplate struct {
	// Types are the value types seen there: object, string, number,
	// boolean.
	Types []string `json:"types"`
	// Count is how many concrete nodes folded into the template.
	Count int `json:"count"`
	// Children are the child segments seen (template form).
	Children []string `json:"children,omitempty"`
	// Truncated: some of its nodes had children below maxDepth.
	Truncated bool `json:"truncated,omitempty"`

	types    map[string]bool
	children map[string]bool
}

type crawlResult struct {
	Namespace       string                    `json:"namespace"`
	Path            string                    `json:"path"`
	Templates       map[string]*crawlTemplate `json:"templates"`
	NodesVisited    int                       `json:"nodesVisited"`
	SkippedChildren int                       `json:"skippedChildren"`
	Truncated       bool                      `json:"truncated"`
	Empty           bool                      `json:"empty,omitempty"`
}

func (s *Server) addRTDBTools() {
	addTool(s, "rtdb_crawl_structure", "Map the Realtime Database's structure without its leaf values: a breadth-first walk from path that folds push ids, numeric keys and sibling records sharing their fields into template paths (users/{userId}/posts/{postId}) and lists each template's value types (object, string, number, boolean) and child segments. Bounded by maxDepth, maxChildren per node and maxNodes.",
		func(ctx context.Context, in *rtdbCrawlIn, _ []byte) *result { return s.rtdbCrawl(ctx, in) })
}

func (s *Server) rtdbCrawl(ctx context.Context, in *rtdbCrawlIn) *result {
	db, ok := sandbox.Lookup[*database.Database](s.sb)
	if !ok {
		return failure("SERVICE_UNAVAILABLE", "the Realtime Database service is not running in this sandbox", false, "start pyric with the database service enabled")
	}
	depth, children, nodes := in.MaxDepth, in.MaxChildren, in.MaxNodes
	if depth == 0 {
		depth = DefaultCrawlDepth
	}
	if children == 0 {
		children = DefaultCrawlChildren
	}
	if nodes == 0 {
		nodes = DefaultCrawlNodes
	}
	switch {
	case depth < 1 || depth > 64:
		return invalid("maxDepth: want 1 to 64, got %d", depth)
	case children < 1 || children > 10000:
		return invalid("maxChildren: want 1 to 10000, got %d", children)
	case nodes < 1 || nodes > MaxCrawlNodes:
		return invalid("maxNodes: want 1 to %d, got %d", MaxCrawlNodes, nodes)
	}
	ns := in.Namespace
	if ns == "" {
		ns = database.DefaultNamespace(db.Project())
	}
	path := relPath(in.Path)
	keys, err := database.ParsePath(path)
	if err != nil {
		return invalid("path: %v", err)
	}
	who, bad := in.As.identity(ctx)
	if bad != nil {
		return bad
	}
	rd, err := db.Get(who, ns, path, nil, false)
	if err != nil {
		var den *database.Denied
		if errors.As(err, &den) {
			r := failure("PERMISSION_DENIED", fmt.Sprintf("read of /%s denied by the RTDB rules: %s", path, den.Reason), true, "read as admin (omit as) or as an identity the rules allow")
			r.who = &who
			return r
		}
		if errors.Is(err, database.ErrPermissionDenied) {
			r := failure("PERMISSION_DENIED", fmt.Sprintf("read of /%s denied by the RTDB rules", path), true, "read as admin (omit as) or as an identity the rules allow")
			r.who = &who
			return r
		}
		return failure("RTDB_READ_FAILED", err.Error(), false, "")
	}
	res := crawlTree(ns, keys, rd.Value, depth, children, nodes)
	summary := fmt.Sprintf("%d template path(s) from %d node(s) under /%s", len(res.Templates), res.NodesVisited, path)
	if res.Empty {
		summary = fmt.Sprintf("nothing stored at /%s", path)
	}
	if res.Truncated {
		summary += " (truncated: raise maxDepth/maxNodes or crawl a deeper path)"
	}
	r := okResult(summary, res)
	r.who = &who
	return r
}

// crawlNode is one node in the BFS queue: its value and its template.
type crawlNode struct {
	tmpl  string // template path relative to the root ("" for the root)
	depth int
	value any
}

// crawlTree walks v breadth-first. Values are the engine's export format
// (immutable once stored, so the walk needs no lock): a leaf is a scalar
// or {".value", ".priority"}, a node a map whose ".priority" key is not a
// child.
func crawlTree(ns string, keys []string, v any, maxDepth, maxChildren, maxNodes int) *crawlResult {
	root := "/" + strings.Join(keys, "/")
	res := &crawlResult{Namespace: ns, Path: root, Templates: map[string]*crawlTemplate{}}
	if v == nil {
		res.Empty = true
		return res
	}
	parent := ""
	if len(keys) > 0 {
		parent = keys[len(keys)-1]
	}
	queue := []crawlNode{{tmpl: "", value: v}}
	parents := map[string]string{"": parent} // template → the last literal key, for variable names
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if res.NodesVisited >= maxNodes {
			res.Truncated = true
			break
		}
		res.NodesVisited++
		t := res.Templates[templateKey(root, n.tmpl)]
		if t == nil {
			t = &crawlTemplate{types: map[string]bool{}, children: map[string]bool{}}
			res.Templates[templateKey(root, n.tmpl)] = t
		}
		t.Count++
		m, isObj := node(n.value)
		if !isObj {
			t.types[leafType(n.value)] = true
			continue
		}
		t.types["object"] = true
		ks := make([]string, 0, len(m))
		for k := range m {
			if k != ".priority" {
				ks = append(ks, k)
			}
		}
		if len(ks) == 0 {
			continue
		}
		if n.depth >= maxDepth {
			t.Truncated = true
			res.Truncated = true
			continue
		}
		sort.Slice(ks, func(i, j int) bool { return database.CompareKeys(ks[i], ks[j]) < 0 })
		if len(ks) > maxChildren {
			res.SkippedChildren += len(ks) - maxChildren
			res.Truncated = true
			ks = ks[:maxChildren]
		}
		fold := foldable(m, ks)
		seg := ""
		if fold {
			seg = uniqueVar(n.tmpl, variableFor(parents[n.tmpl]))
		}
		for _, k := range ks {
			s := k
			if fold {
				s = seg
			}
			child := s
			if n.tmpl != "" {
				child = n.tmpl + "/" + s
			}
			if _, seen := parents[child]; !seen {
				parents[child] = k
				if fold {
					parents[child] = "" // a record id names nothing below it
				}
			}
			t.children[s] = true
			queue = append(queue, crawlNode{tmpl: child, depth: n.depth + 1, value: m[k]})
		}
	}
	for _, t := range res.Templates {
		for k := range t.types {
			t.Types = append(t.Types, k)
		}
		sort.Strings(t.Types)
		for k := range t.children {
			t.Children = append(t.Children, k)
		}
		sort.Strings(t.Children)
	}
	return res
}

func templateKey(root, tmpl string) string {
	switch {
	case tmpl == "":
		return root
	case root == "/":
		return "/" + tmpl
	}
	return root + "/" + tmpl
}

// node is v's children when v is an interior node.
func node(v any) (map[string]any, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	if _, leaf := m[".value"]; leaf {
		return nil, false
	}
	return m, true
}

func leafType(v any) string {
	if m, ok := v.(map[string]any); ok {
		v = m[".value"]
	}
	switch v.(type) {
	case string:
		return "string"
	case bool:
		return "boolean"
	case nil:
		return "null"
	}
	return "number"
}

// foldable says a node's children are records of one kind, not named
// fields: every key is a push id or an integer, or there are at least two
// children, all interior nodes, whose key sets share at least half of
// their union (users/alice and users/bob both holding name and email).
func foldable(m map[string]any, ks []string) bool {
	idLike := true
	for _, k := range ks {
		if !isPushID(k) && !isIndex(k) {
			idLike = false
			break
		}
	}
	if idLike {
		return true
	}
	if len(ks) < 2 {
		return false
	}
	var common, union map[string]bool
	for _, k := range ks {
		c, ok := node(m[k])
		if !ok {
			return false
		}
		fields := map[string]bool{}
		for f := range c {
			if f != ".priority" {
				fields[f] = true
			}
		}
		if common == nil {
			common, union = fields, map[string]bool{}
			for f := range fields {
				union[f] = true
			}
			continue
		}
		for f := range common {
			if !fields[f] {
				delete(common, f)
			}
		}
		for f := range fields {
			union[f] = true
		}
	}
	return len(common) > 0 && 2*len(common) >= len(union)
}

// isPushID: 20 characters of the push alphabet, the first '-' (as every
// push id minted since 1970 starts).
func isPushID(k string) bool {
	if len(k) != 20 || k[0] != '-' {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c == '-' || c == '_' || c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z') {
			return false
		}
	}
	return true
}

func isIndex(k string) bool {
	if k == "" || len(k) > 10 {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < '0' || k[i] > '9' {
			return false
		}
	}
	return true
}

// variableFor names the variable of a folded level after its parent key,
// as discover does for collections (posts → postId); "id" at the root or
// under a folded level.
func variableFor(parent string) string {
	if parent == "" || isPushID(parent) || isIndex(parent) {
		return "id"
	}
	return discover.TemplateVariable(parent)
}

// uniqueVar is {name}, numbered when tmpl already binds that name
// ({id}/{id2}).
func uniqueVar(tmpl, name string) string {
	segs := map[string]bool{}
	for _, s := range strings.Split(tmpl, "/") {
		segs[s] = true
	}
	v := "{" + name + "}"
	for i := 2; segs[v]; i++ {
		v = fmt.Sprintf("{%s%d}", name, i)
	}
	return v
}
