// Package ai is the AI Logic engine: it answers Gemini-shaped
// generateContent, streamGenerateContent and countTokens calls the way the
// Gemini API does for the Firebase AI Logic SDK and the Google Gen AI SDKs
// — the same envelopes, stream chunks and error envelopes — without
// reaching Google.
//
// The default answerer is scripted and offline. With no script it
// synthesizes a deterministic answer from the request (text, a JSON value
// following generationConfig.responseSchema, or a function call when
// toolConfig forces one; maxOutputTokens and text/x.enum are honored); a
// script of canned answers (FIFO, substring and regular-expression
// matchers, raw envelopes pasted from captures, stream chunk boundaries,
// function calls with minted ids and thought signatures, scripted errors)
// takes precedence. generationConfig.candidateCount (1 to 8) asks for
// that many candidates: each takes the script's next answer, then the
// synthesizer's or the upstream's. An optional answerer forwards to an
// OpenAI-compatible chat-completions endpoint the user configures,
// translating both ways.
//
// The engine is a sandbox service (service.Service, name "ai"): its state
// is the scripts and the call log of every project. A script change, and
// the consumption of the entry that answers a call, reach its bucket
// before the call is answered; the call's record is written as the call
// ends. Every call is an event carrying the prompt, the answer and the
// token counts. Transports live in server/ai.
package ai
