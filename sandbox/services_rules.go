package sandbox

import "github.com/pyric/pyric/rules/source"

// firestoreService offers the engine's service.LiveRules capability.

func (f firestoreService) RulesFileName() string { return f.sb.fs.RulesFileName() }
func (f firestoreService) RulesFile() (name, text string, loaded bool) {
	return f.sb.fs.RulesFile()
}
func (f firestoreService) SetRulesFile(name, text string) (source.Diagnostics, error) {
	return f.sb.fs.SetRulesFile(name, text)
}
func (f firestoreService) CheckRules(name, text string) (bool, source.Diagnostics, source.Diagnostics) {
	return f.sb.fs.CheckRules(name, text)
}
func (f firestoreService) CollectCoverage() { f.sb.fs.CollectCoverage() }
