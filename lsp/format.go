package lsp

import "strings"

// indentUnit is the canonical indentation: two spaces per open brace,
// bracket or parenthesis, as the Firebase documentation's examples.
const indentUnit = "  "

// Format returns the canonical layout of a Firestore or Storage rules
// source: every line indented by how many braces, brackets and
// parentheses are open at its start (a line starting with a closer
// counts it closed), trailing whitespace removed, runs of blank lines
// collapsed to one, and one final newline. Only whitespace at the start
// and end of lines changes — tokens, comments and the inside of strings
// and block comments are kept as written — so formatting twice equals
// formatting once and never changes what the rules mean.
func Format(text string) string {
	var b strings.Builder
	b.Grow(len(text) + len(text)/8)
	depth := 0
	inBlock := false // inside /* … */ carried over from the previous line
	inString := byte(0)
	blank := 0
	wrote := false
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	for _, line := range lines {
		verbatim := inBlock || inString != 0 // the line continues a comment or string
		content := strings.TrimRight(line, " \t\r")
		if !verbatim {
			content = strings.TrimLeft(content, " \t")
		}
		if content == "" && !verbatim {
			blank++
			continue
		}
		if wrote && blank > 0 {
			b.WriteByte('\n')
		}
		blank = 0
		if !verbatim {
			lead := 0
			for lead < len(content) && strings.IndexByte("}])", content[lead]) >= 0 {
				lead++
			}
			b.WriteString(strings.Repeat(indentUnit, max(depth-lead, 0)))
		}
		b.WriteString(content)
		b.WriteByte('\n')
		wrote = true
		// Scan the line's tokens for the next line's depth.
		for i := 0; i < len(content); i++ {
			c := content[i]
			switch {
			case inBlock:
				if c == '*' && i+1 < len(content) && content[i+1] == '/' {
					inBlock = false
					i++
				}
			case inString != 0:
				if c == '\\' {
					i++
				} else if c == inString {
					inString = 0
				}
			case c == '/' && i+1 < len(content) && content[i+1] == '/':
				i = len(content)
			case c == '/' && i+1 < len(content) && content[i+1] == '*':
				inBlock = true
				i++
			case c == '\'' || c == '"':
				inString = c
			case c == '{' || c == '[' || c == '(':
				depth++
			case c == '}' || c == ']' || c == ')':
				depth = max(depth-1, 0)
			}
		}
		if inString != 0 {
			// Rules strings don't span lines: an unterminated one ends
			// here, as the lexer reports it.
			inString = 0
		}
	}
	return b.String()
}

// formatting answers textDocument/formatting with one edit replacing the
// document when its layout is not canonical. Database rules (JSON) are
// left as they are.
func formatting(_ *Server, a *analysis) any {
	edits := []TextEdit{}
	if a.kind != Firestore && a.kind != Storage {
		return edits
	}
	out := Format(a.doc.text)
	if out == a.doc.text {
		return edits
	}
	end := a.doc.position(len(a.doc.text))
	return append(edits, TextEdit{Range: Range{End: end}, NewText: out})
}
