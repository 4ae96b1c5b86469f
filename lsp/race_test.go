//go:build race

package lsp_test

func init() { raceEnabled = true }
