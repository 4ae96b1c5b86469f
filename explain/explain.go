// Package explain turns a rules decision into the short text a developer
// reads where they are: after the emulator's own wording in a
// PERMISSION_DENIED message, in pyric serve's log line, in the Studio.
//
// For each failing sub-expression (sim.Failing) it writes the expression,
// then the same expression with its operands replaced by their values,
// then the outcome:
//
//	request.resource.data.title.size() < 20 → 27 < 20 is false
//
// It reads decisions in the terms events carry them (event.Explanation) and
// imports nothing else of pyric, so every engine renders its own
// decisions with it (firestore.AuthzDecision.Lines) and no text is rendered
// twice.
package explain

import (
	"strings"

	"github.com/pyric/pyric/event"
)

// MaxLines bounds the lines Lines returns; MaxLine the length of each.
const (
	MaxLines = 4
	MaxLine  = 300
)

// Lines renders the failing sub-expressions of a decision, given the
// deciding rule's trace (pre-order, with depths) for the operands' values.
func Lines(d *event.Explanation, trace []event.Step) []string {
	if d == nil {
		return nil
	}
	var out []string
	for _, f := range d.Failing {
		if len(out) == MaxLines {
			out = append(out, "…")
			break
		}
		out = append(out, clip(Step(f, trace)))
	}
	return out
}

// Step renders one failing step.
func Step(f event.Step, trace []event.Step) string {
	text := oneLine(f.Text)
	if f.Error != "" {
		return text + " → error: " + oneLine(f.Error)
	}
	value := oneLine(f.Value)
	if sub := substitute(f, trace); sub != "" && sub != text {
		return text + " → " + sub + " is " + value
	}
	return text + " is " + value
}

// substitute replaces, in f's text, each direct operand's text by its
// value, when every operand is found in order.
func substitute(f event.Step, trace []event.Step) string {
	at := -1
	for i := range trace {
		// Failing may re-base depths: match by text and position.
		if trace[i].Text == f.Text && trace[i].Line == f.Line && trace[i].Column == f.Column && !trace[i].Skipped {
			at = i
			break
		}
	}
	if at < 0 {
		return ""
	}
	var b strings.Builder
	rest := f.Text
	n := 0
	base := trace[at].Depth
	for j := at + 1; j < len(trace) && trace[j].Depth > base; j++ {
		c := trace[j]
		if c.Depth != base+1 {
			continue
		}
		if c.Skipped || c.Value == "" || c.Text == c.Value {
			continue
		}
		k := strings.Index(rest, c.Text)
		if k < 0 {
			return ""
		}
		if strings.HasPrefix(c.Value, "{") && strings.HasPrefix(rest[k+len(c.Text):], ".") {
			// A map selected from (query.orderByKey, request.auth.uid):
			// its whole value says less than the selection's text.
			b.WriteString(rest[:k+len(c.Text)])
			rest = rest[k+len(c.Text):]
			continue
		}
		b.WriteString(rest[:k])
		b.WriteString(c.Value)
		rest = rest[k+len(c.Text):]
		n++
	}
	if n == 0 {
		return ""
	}
	b.WriteString(rest)
	return oneLine(b.String())
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func clip(s string) string {
	if len(s) <= MaxLine {
		return s
	}
	cut := MaxLine
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }
