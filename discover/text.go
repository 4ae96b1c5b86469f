package discover

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// WriteText prints a result as a tree: each template path under its
// parent, with its fields (types, presence when partial, nullability,
// enum values, references and reserved names), then the counters and, for
// a paused walk, the continuation.
func WriteText(w io.Writer, r *Result) {
	children := map[string][]string{}
	for tp, s := range r.Schemas {
		children[s.ParentPath] = append(children[s.ParentPath], tp)
	}
	for k := range children {
		sort.Strings(children[k])
	}
	var walk func(parent string, indent int)
	walk = func(parent string, indent int) {
		for _, tp := range children[parent] {
			s := r.Schemas[tp]
			pad := strings.Repeat("  ", indent)
			fmt.Fprintf(w, "%s%s  (%d docs in %d collection(s); %d sampled, %s)\n", pad, tp, s.Documents, s.Collections, s.SamplesSeen, s.SamplingComplete)
			writeFields(w, s.Fields, pad+"  │ ")
			walk(tp, indent+1)
		}
	}
	walk("", 0)
	if r.DryRunCostEstimate != nil {
		e := r.DryRunCostEstimate
		fmt.Fprintf(w, "dry run: %d root collection(s); estimate ≤ %d collections, ≤ %d list ops, ≤ %d reads\n",
			e.RootCollections, e.EstimatedCollections, e.EstimatedListOps, e.EstimatedReadOps)
	}
	for _, e := range r.Events {
		if e.Kind == "error" {
			fmt.Fprintf(w, "error %s: %s (%s)\n", e.Code, e.Message, e.RecoveryHint)
		}
	}
	fmt.Fprintf(w, "%d template path(s), %d list op(s), %d read(s)", len(r.Schemas), r.ListOps, r.ReadOps)
	if r.Continuation != "" {
		fmt.Fprintf(w, "; paused: resume with --continuation %s", r.Continuation)
	}
	fmt.Fprintln(w)
}

func writeFields(w io.Writer, fields map[string]*FieldDescriptor, pad string) {
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, n := range names {
		d := fields[n]
		var types []string
		var maps []*FieldType
		for _, t := range d.Types {
			types = append(types, typeText(t))
			if t.Kind == "map" && len(t.Fields) > 0 {
				maps = append(maps, t)
			}
		}
		if len(types) == 0 {
			types = []string{"null"}
		}
		line := pad + n + ": " + strings.Join(types, " | ")
		if d.Nullable && len(d.Types) > 0 {
			line += " | null"
		}
		if d.PresenceSeen < d.PresenceTotal {
			line += fmt.Sprintf("  (in %d/%d)", d.PresenceSeen, d.PresenceTotal)
		}
		if e := d.EnumCandidate; e != nil {
			vals := make([]string, len(e.Values))
			for i, v := range e.Values {
				vals[i] = fmt.Sprintf("%v", v)
			}
			line += "  enum{" + strings.Join(vals, ", ") + "}"
		}
		if d.ReservedReason != "" {
			line += "  [" + d.ReservedReason + "]"
		}
		fmt.Fprintln(w, line)
		for _, m := range maps {
			writeFields(w, m.Fields, pad+"  ")
		}
	}
}

func typeText(t *FieldType) string {
	switch t.Kind {
	case "scalar":
		return t.Type
	case "reference":
		return "reference → " + t.TargetCollection
	case "vector":
		return fmt.Sprintf("vector(%d)", t.Dimension)
	case "array":
		var el []string
		for _, e := range t.ElementTypes {
			el = append(el, typeText(e))
		}
		if len(el) == 0 {
			return "array"
		}
		return "array<" + strings.Join(el, " | ") + ">"
	}
	return t.Kind
}
