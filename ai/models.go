package ai

import "strings"

// retiredFamilies are model families production answers with
// RETIRED_MODEL (ai-error-retired-model) rather than "not found".
var retiredFamilies = []struct{ prefix, family, date string }{
	{"gemini-1.5-", "Gemini 1.5", "September 24, 2025"},
}

// aliases maps the moving "-latest" names to the model version production
// reported for them (ai-generate-minimal-envelope's modelVersion).
var aliases = map[string]string{
	"gemini-flash-lite-latest": "gemini-3.1-flash-lite",
}

// checkModel reports production's error for a model name that is not
// served: retired families, and names outside the gemini-/gemma- families
// unless the engine's Options list them. Gemini 1.0 names are unknown.
func (e *Engine) checkModel(model, method string) error {
	for _, r := range retiredFamilies {
		if strings.HasPrefix(model, r.prefix) {
			return errRetiredModel(r.family, r.date)
		}
	}
	if e.models[model] {
		return nil
	}
	served := (strings.HasPrefix(model, "gemini-") || strings.HasPrefix(model, "gemma-")) &&
		!strings.HasPrefix(model, "gemini-1.0") && model != "gemini-pro" && model != "gemini-pro-vision"
	if !served || model == "" {
		return errUnknownModel(model, method)
	}
	return nil
}

// modelVersion is the envelope's modelVersion for a requested model.
func modelVersion(model string) string {
	if v, ok := aliases[model]; ok {
		return v
	}
	return model
}

// thinks reports whether the model is of the Gemini 3 generation, whose
// answers carry thought signatures on every part and which rejects a
// replayed function call without one. The "-latest" aliases resolve to it.
func thinks(model string) bool {
	v := modelVersion(model)
	return strings.HasPrefix(v, "gemini-3")
}
