package firestore

import (
	"github.com/pyric/pyric/rules/source"
	"github.com/pyric/pyric/sandbox/service"
)

// The service offers the engine's live rules (service.LiveRules).

func (s *engineService) RulesFileName() string { return s.e.RulesFileName() }
func (s *engineService) RulesFile() (name, text string, loaded bool) {
	return s.e.RulesFile()
}
func (s *engineService) SetRulesFile(name, text string) (source.Diagnostics, error) {
	return s.e.SetRulesFile(name, text)
}
func (s *engineService) CheckRules(name, text string) (bool, source.Diagnostics, source.Diagnostics) {
	return s.e.CheckRules(name, text)
}
func (s *engineService) CollectCoverage() { s.e.CollectCoverage() }

var _ service.LiveRules = (*engineService)(nil)
