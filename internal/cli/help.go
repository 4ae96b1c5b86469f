package cli

import (
	"flag"
	"fmt"
	"io"
	"reflect"
	"strings"
	"time"
)

// flagGroup is a titled group of flags in a command's help.
type flagGroup struct {
	title string
	names []string
}

// flagSetCreated, when set (by tests), sees every flag set a command
// builds, so that a test can check the help lists each of its flags.
var flagSetCreated func(*flag.FlagSet)

// commandUsage is the help of the command at path: its synopsis and
// summary from the command table, then its flags.
func commandUsage(w io.Writer, path string, fs *flag.FlagSet) {
	c := lookup(strings.Fields(path))
	synopsis := path
	if c != nil && c.args != "" {
		synopsis += " " + c.args
	}
	fmt.Fprintf(w, "Usage: pyric %s\n", synopsis)
	if c != nil && c.summary != "" {
		fmt.Fprintf(w, "\n%s\n", wrapText(strings.ToUpper(c.summary[:1])+c.summary[1:]+".", 76, ""))
	}
	printFlags(w, fs, nil)
}

// printFlags lists every flag of fs under the groups' titles, in the
// groups' order; flags no group names are listed last ("Flags" when there
// are no groups). Each line gives the flag, the kind of value it takes,
// and its default after the description (unless the description states
// it, as for defaults read from firebase.json).
func printFlags(w io.Writer, fs *flag.FlagSet, groups []flagGroup) {
	listed := map[string]bool{}
	for _, g := range groups {
		var fl []*flag.Flag
		for _, n := range g.names {
			if f := fs.Lookup(n); f != nil && !listed[n] {
				fl = append(fl, f)
				listed[n] = true
			}
		}
		printGroup(w, g.title, fl)
	}
	var rest []*flag.Flag
	fs.VisitAll(func(f *flag.Flag) {
		if !listed[f.Name] {
			rest = append(rest, f)
		}
	})
	title := "Other flags"
	if len(groups) == 0 {
		title = "Flags"
	}
	printGroup(w, title, rest)
}

func printGroup(w io.Writer, title string, fl []*flag.Flag) {
	if len(fl) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%s:\n", title)
	for _, f := range fl {
		head := "  --" + f.Name
		if name := valueName(f); name != "" {
			head += " " + name
		}
		desc := f.Usage
		if def := flagDefault(f); def != "" && !strings.Contains(f.Usage, "(default") {
			desc += " (default " + def + ")"
		}
		fmt.Fprintf(w, "%s\n%s\n", head, wrapText(desc, 76, "      "))
	}
}

// flagDefault renders a flag's default for help, "" when it is the
// zero value (off, empty).
func flagDefault(f *flag.Flag) string {
	if f.DefValue == "" || f.DefValue == "false" || f.DefValue == "0" && isBoolOrString(f) {
		return ""
	}
	if isString(f) {
		return fmt.Sprintf("%q", f.DefValue)
	}
	return f.DefValue
}

// valueName is the kind of value a flag takes, "" for a switch.
func valueName(f *flag.Flag) string {
	if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
		return ""
	}
	g, ok := f.Value.(flag.Getter)
	if !ok || g.Get() == nil {
		return "VALUE"
	}
	switch g.Get().(type) {
	case string:
		return "STRING"
	case int, int64, uint, uint64:
		return "N"
	case float64:
		return "NUMBER"
	case time.Duration:
		return "DURATION"
	}
	return "VALUE"
}

func isString(f *flag.Flag) bool {
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return false
	}
	return reflect.TypeOf(g.Get()).Kind() == reflect.String
}

func isBoolOrString(f *flag.Flag) bool {
	if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
		return true
	}
	return isString(f)
}

// wrapText wraps s at width columns, each line after indent.
func wrapText(s string, width int, indent string) string {
	var b strings.Builder
	line := indent
	for _, word := range strings.Fields(s) {
		if len(line) > len(indent) && len(line)+1+len(word) > width {
			b.WriteString(line + "\n")
			line = indent
		}
		if len(line) > len(indent) {
			line += " "
		}
		line += word
	}
	b.WriteString(line)
	return b.String()
}
