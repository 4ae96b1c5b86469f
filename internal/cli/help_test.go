package cli

import (
	"bytes"
	"context"
	"flag"
	"strings"
	"testing"
)

// TestEveryCommandHelpListsItsFlags runs `pyric <command> -h` for every
// command and checks that the help names each flag the command's flag set
// defines, with its default when it has one, and that serve's and exec's
// help group them.
func TestEveryCommandHelpListsItsFlags(t *testing.T) {
	defer func() { flagSetCreated = nil }()
	for _, c := range commands {
		t.Run(c.path, func(t *testing.T) {
			var sets []*flag.FlagSet
			flagSetCreated = func(fs *flag.FlagSet) { sets = append(sets, fs) }
			var out, errOut bytes.Buffer
			Run(context.Background(), append(strings.Fields(c.path), "-h"), Stdio{In: strings.NewReader(""), Out: &out, Err: &errOut})
			help := out.String() + errOut.String()
			flat := strings.Join(strings.Fields(help), " ")
			if !strings.Contains(help, "Usage: pyric "+c.path) {
				t.Errorf("help lacks the synopsis:\n%s", help)
			}
			for _, fs := range sets {
				fs.VisitAll(func(f *flag.Flag) {
					if !strings.Contains(help, "--"+f.Name+"\n") && !strings.Contains(help, "--"+f.Name+" ") {
						t.Errorf("help lacks --%s:\n%s", f.Name, help)
					}
					if def := flagDefault(f); def != "" && !strings.Contains(f.Usage, "(default") && !strings.Contains(flat, "(default "+def+")") {
						t.Errorf("help lacks the default of --%s (%s)", f.Name, def)
					}
				})
			}
		})
	}
	for _, cmd := range []string{"serve", "exec"} {
		var out, errOut bytes.Buffer
		Run(context.Background(), []string{cmd, "-h"}, Stdio{In: strings.NewReader(""), Out: &out, Err: &errOut})
		help := errOut.String()
		for _, want := range []string{"Project and network:", "Rules and indexes:", "State and durability:", "--firestore-port N", "--in-memory", "--data-dir STRING", "--project STRING", "--enforce-indexes"} {
			if !strings.Contains(help, want) {
				t.Errorf("%s -h lacks %q", cmd, want)
			}
		}
	}
	var out, errOut bytes.Buffer
	Run(context.Background(), []string{"exec", "-h"}, Stdio{In: strings.NewReader(""), Out: &out, Err: &errOut})
	if h := strings.Join(strings.Fields(errOut.String()), " "); !strings.Contains(h, "leaves it off (default 4400)") || !strings.Contains(h, "leaves it off (default 4000)") {
		t.Errorf("exec -h lacks its own hub and Studio defaults:\n%s", h)
	}
}
