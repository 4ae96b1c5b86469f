package lsp

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/internal/benchkit"
	"github.com/pyric/pyric/internal/conformance"
	"github.com/pyric/pyric/rules/source"
)

// multiUnit is a ruleset whose units share header functions, a path
// shape across units (SHARED_GATE), unused functions and findings in
// every unit, so edits reach every carried-over kind of finding.
const multiUnit = `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    function signedIn() { return request.auth != null; }
    function owner(d) { return d.owner == request.auth.uid; }
    function unused() { return true; }
    match /a/{id} {
      allow read: if signedIn() && resource.data.x.length > 2;
      allow write: if true;
    }
    function between() { return request.time != null; }
    match /b/{id} {
      allow read: if signedIn() && owner(resource.data);
      allow read: if signedIn() && resource.data.size > 1;
      match /c/{x} { allow create: if request.auth.uid == x; }
    }
    match /b/{id}/c/{y} { allow create: if request.auth.uid == y && Math.max(1, 2) > 0; }
    match /{coll}/{id} { allow get: if between(); }
    match /d/{id} {
      function local() { return request.resource.data.keys().hasOnly(['a']); }
      allow update: if local() && request.resource.data.a is string;
      allow delete: if request.uid != null;
    }
  }
}
`

// edits are changes typical of typing inside a rule.
var edits = []string{" ", "\n", "x", " && true", " && signedIn()", " || false", "(", ")", ".size()", ".length", "'", "}", "{", " && owner(resource.data)", "\n      allow list: if true;\n", ""}

// corpus returns rulesets to edit: the conformance corpus, lint's golden
// inputs and multiUnit, by kind.
func corpus(t *testing.T) map[Kind][]string {
	out := map[Kind][]string{Firestore: {multiUnit, bigText(20_000)}}
	for svc, k := range map[string]Kind{"firestore": Firestore, "storage": Storage} {
		scs, err := conformance.Load(svc)
		if err != nil {
			t.Fatal(err)
		}
		for _, sc := range scs {
			out[k] = append(out[k], sc.Rules)
		}
		paths, _ := filepath.Glob(filepath.Join("..", "rules", "lint", "testdata", svc, "*.rules"))
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			out[k] = append(out[k], string(b))
		}
	}
	return out
}

func dump(ds source.Diagnostics) string {
	var b strings.Builder
	for _, d := range ds {
		fmt.Fprintf(&b, "%d:%d-%d:%d@%d-%d %v %s %q %q\n", d.Span.Start.Line, d.Span.Start.Column, d.Span.End.Line, d.Span.End.Column,
			d.Span.Start.Offset, d.Span.End.Offset, d.Severity, d.Code, d.Message, d.Fix)
		if e := d.Edit; e != nil {
			fmt.Fprintf(&b, "  edit %d:%d-%d:%d@%d-%d %q\n", e.Span.Start.Line, e.Span.Start.Column, e.Span.End.Line, e.Span.End.Column, e.Span.Start.Offset, e.Span.End.Offset, e.Text)
		}
	}
	return b.String()
}

// TestIncrementalEqualsFull applies chains of random edits to every
// ruleset of the corpus and requires each incremental re-diagnosis to
// equal a full lint of the same text (the golden test then ties the full
// lint to the CLI). It also requires the incremental path to be taken.
func TestIncrementalEqualsFull(t *testing.T) {
	t.Parallel()
	composed, total := 0, 0
	all := corpus(t)
	for seed := uint64(28); seed < 31; seed++ {
		rng := rand.New(rand.NewPCG(seed, 1))
		for _, kind := range []Kind{Firestore, Storage} {
			for ti, text := range all[kind] {
				// A chain of edits, each re-diagnosed from the previous
				// composition; where that is not possible the chain starts
				// again from the original text.
				base := newLinted(kind, source.NewFile("x.rules", text))
				cur, prev := text, base
				rounds := 20
				if strings.Count(text, "match") > 3 {
					rounds = 100
				}
				for r := 0; r < rounds; r++ {
					edited := editText(rng, cur)
					f := source.NewFile("x.rules", edited)
					full := newLinted(kind, f)
					inc, ok := rediagnose(prev, f)
					total++
					if !ok {
						cur, prev = text, base
						continue
					}
					composed++
					if got, want := dump(inc.diags), dump(full.diags); got != want {
						t.Fatalf("seed %d, %v file %d, edit %d:\n%s\nincremental:\n%s\nfull:\n%s", seed, kind, ti, r+1, edited, got, want)
					}
					cur, prev = edited, inc
				}
			}
		}
	}
	t.Logf("%d of %d re-diagnoses composed incrementally", composed, total)
	if composed < total/10 {
		t.Fatalf("only %d of %d re-diagnoses were incremental", composed, total)
	}
}

// editText makes one random edit: an insertion of a typical fragment, a
// deletion of a few bytes, or both, at a random place of a random line.
func editText(rng *rand.Rand, text string) string {
	if len(text) == 0 {
		return "x"
	}
	at := rng.IntN(len(text))
	n := 0
	if rng.IntN(3) == 0 {
		n = rng.IntN(min(4, len(text)-at) + 1)
	}
	ins := edits[rng.IntN(len(edits))]
	return text[:at] + ins + text[at+n:]
}

// BenchmarkRediagnose is an edit of a 1 MB file inside one of its match
// blocks followed by its re-diagnosis, as the server runs it (compare
// BenchmarkDiagnose, the full lint it replaces).
func BenchmarkRediagnose(b *testing.B) {
	text := bigText(1 << 20)
	base := newLinted(Firestore, source.NewFile("firestore.rules", text))
	at := strings.Index(text, "match /c5000/")
	at += strings.Index(text[at:], "resource.data.owner")
	edited := text[:at] + "x" + text[at:]
	if _, ok := rediagnose(base, source.NewFile("firestore.rules", edited)); !ok {
		b.Fatal("not incremental")
	}
	defer reportCPU(b)()
	for b.Loop() {
		f := source.NewFile("firestore.rules", edited)
		if _, ok := rediagnose(base, f); !ok {
			b.Fatal("not incremental")
		}
	}
}

// BenchmarkRediagnoseBroken is BenchmarkRediagnose with an edit that
// leaves the block (and so the file) unparsable, the state of most
// keystrokes.
func BenchmarkRediagnoseBroken(b *testing.B) {
	text := bigText(1 << 20)
	base := newLinted(Firestore, source.NewFile("firestore.rules", text))
	at := strings.Index(text, "match /c5000/")
	at += strings.Index(text[at:], "resource.data.owner")
	edited := text[:at] + "== " + text[at:]
	defer reportCPU(b)()
	for b.Loop() {
		if _, ok := rediagnose(base, source.NewFile("firestore.rules", edited)); !ok {
			b.Fatal("not incremental")
		}
	}
}

// BenchmarkDiagnoseBroken is the full lint of a 1 MB file an edit left
// unparsable, which the incremental path does not cover.
func BenchmarkDiagnoseBroken(b *testing.B) {
	text := bigText(1 << 20)
	at := strings.Index(text, "match /c5000/")
	at += strings.Index(text[at:], "resource.data.owner")
	f := source.NewFile("firestore.rules", text[:at]+"== "+text[at:])
	defer reportCPU(b)()
	for b.Loop() {
		newLinted(Firestore, f)
	}
}

// reportCPU adds the process's CPU time per operation to a benchmark's
// output: on a shared machine it says what an operation costs better
// than the wall clock.
func reportCPU(b *testing.B) func() {
	cpu := benchkit.SelfCPU
	t0 := cpu()
	return func() {
		b.ReportMetric(float64(cpu()-t0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
	}
}
