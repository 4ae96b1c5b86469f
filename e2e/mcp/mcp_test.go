// Package mcp_test proves that pyric's MCP server interoperates with a
// second, independent MCP implementation: the TypeScript SDK's client
// (npm @modelcontextprotocol/sdk) drives the built `pyric mcp` binary over
// stdio.
package mcp_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pyric/pyric/internal/e2etest"
)

type envelope struct {
	OK      bool           `json:"ok"`
	Summary string         `json:"summary"`
	Data    map[string]any `json:"data"`
}

type callResult struct {
	IsError    bool     `json:"isError"`
	Structured envelope `json:"structured"`
	Text       envelope `json:"text"`
}

func TestTypeScriptClient(t *testing.T) {
	e2etest.NeedNode(t)
	if _, err := os.Stat(filepath.Join(e2etest.JSDir(), "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		e2etest.Missing(t, "@modelcontextprotocol/sdk is not installed in e2e/js (npm ci there): %v", err)
	}
	bin := e2etest.Pyric(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	script := filepath.Join(e2etest.Root(), "e2e", "mcp", "interop.cjs")
	var out struct {
		Tools             []string   `json:"tools"`
		SchemasAreObjects bool       `json:"schemasAreObjects"`
		Created           callResult `json:"created"`
		Denied            callResult `json:"denied"`
		Tx                callResult `json:"tx"`
		Doc               callResult `json:"doc"`
		Invalid           callResult `json:"invalid"`
		Resources         []string   `json:"resources"`
		RulesText         string     `json:"rulesText"`
	}
	e2etest.LastJSONLine(t, e2etest.RunNode(t, ctx, script, "PYRIC="+bin), &out)
	if len(out.Tools) < 25 || !out.SchemasAreObjects {
		t.Fatalf("tools: %v (object schemas: %v)", out.Tools, out.SchemasAreObjects)
	}
	for name, c := range map[string]callResult{"created": out.Created, "denied": out.Denied, "tx": out.Tx, "doc": out.Doc, "invalid": out.Invalid} {
		if c.Structured.Summary == "" || c.Structured.Summary != c.Text.Summary {
			t.Errorf("%s: structured %+v, text %+v", name, c.Structured, c.Text)
		}
	}
	if !out.Created.Text.OK || out.Created.Text.Data["documentCount"] != 1.0 {
		t.Fatalf("create: %+v", out.Created)
	}
	msgs, _ := out.Denied.Text.Data["debugMessages"].([]any)
	if out.Denied.Text.OK || out.Denied.IsError || out.Denied.Text.Data["allowed"] != false || !strings.Contains(strings.Trim(strings.Join(anyStrings(msgs), "\n"), " "), "Deciding rule: line 5") {
		t.Fatalf("denied: %+v", out.Denied)
	}
	if !out.Tx.Text.OK {
		t.Fatalf("transaction: %+v", out.Tx)
	}
	if d, _ := out.Doc.Text.Data["data"].(map[string]any); d["balance"] != 70.0 {
		t.Fatalf("after transaction: %+v", out.Doc)
	}
	if !out.Invalid.IsError || out.Invalid.Text.OK {
		t.Fatalf("invalid call: %+v", out.Invalid)
	}
	// The events, the rules in force and each service's state.
	for _, want := range []string{"pyric://events/recent", "pyric://rules/firestore", "pyric://rules/database", "pyric://services/firestore/state", "pyric://services/auth/state"} {
		if !slices.Contains(out.Resources, want) {
			t.Errorf("resources %v lack %s", out.Resources, want)
		}
	}
	if !strings.Contains(out.RulesText, "match /accounts/{uid}") {
		t.Fatalf("resources %v, rules %q", out.Resources, out.RulesText)
	}
}

func anyStrings(l []any) []string {
	out := make([]string, len(l))
	for i, x := range l {
		out[i], _ = x.(string)
	}
	return out
}
