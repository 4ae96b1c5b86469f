package ai

import "encoding/json"

// Content is one turn of a conversation: a role and its parts.
type Content struct {
	Parts []Part `json:"parts"`
	Role  string `json:"role,omitempty"`
}

// Part is one piece of a Content. Exactly one of the data fields is set on
// the wire; Thought and ThoughtSignature ride alongside.
type Part struct {
	Text             *string           `json:"text,omitempty"`
	InlineData       *Blob             `json:"inlineData,omitempty"`
	FileData         *FileData         `json:"fileData,omitempty"`
	FunctionCall     *FunctionCall     `json:"functionCall,omitempty"`
	FunctionResponse *FunctionResponse `json:"functionResponse,omitempty"`
	ExecutableCode   json.RawMessage   `json:"executableCode,omitempty"`
	CodeExecResult   json.RawMessage   `json:"codeExecutionResult,omitempty"`
	Thought          bool              `json:"thought,omitempty"`
	ThoughtSignature string            `json:"thoughtSignature,omitempty"`
}

// Blob is inline bytes (base64 on the wire).
type Blob struct {
	MIMEType string `json:"mimeType"`
	Data     string `json:"data"`
}

// FileData names bytes stored elsewhere.
type FileData struct {
	MIMEType string `json:"mimeType,omitempty"`
	FileURI  string `json:"fileUri"`
}

// FunctionCall is the model asking the client to call a declared function.
// Args is a JSON object (not a string, unlike OpenAI's tool calls).
type FunctionCall struct {
	Name string         `json:"name"`
	Args map[string]any `json:"args"`
	ID   string         `json:"id,omitempty"`
}

// FunctionResponse is the client's result of a FunctionCall.
type FunctionResponse struct {
	Name     string         `json:"name"`
	Response map[string]any `json:"response"`
	ID       string         `json:"id,omitempty"`
}

// Request is a decoded GenerateContentRequest (also the payload of
// countTokens).
type Request struct {
	Model             string            `json:"model,omitempty"`
	Contents          []Content         `json:"contents"`
	SystemInstruction *Content          `json:"systemInstruction,omitempty"`
	Tools             []Tool            `json:"tools,omitempty"`
	ToolConfig        *ToolConfig       `json:"toolConfig,omitempty"`
	GenerationConfig  *GenerationConfig `json:"generationConfig,omitempty"`
	SafetySettings    json.RawMessage   `json:"safetySettings,omitempty"`
	CachedContent     string            `json:"cachedContent,omitempty"`
	Labels            json.RawMessage   `json:"labels,omitempty"`
}

// Tool declares functions (other tool kinds are accepted and ignored).
type Tool struct {
	FunctionDeclarations []FunctionDeclaration `json:"functionDeclarations,omitempty"`
	GoogleSearch         json.RawMessage       `json:"googleSearch,omitempty"`
	CodeExecution        json.RawMessage       `json:"codeExecution,omitempty"`
	URLContext           json.RawMessage       `json:"urlContext,omitempty"`
}

// FunctionDeclaration is one callable function. Parameters is a Gemini
// Schema (OpenAPI subset, upper- or lower-case types); ParametersJSONSchema
// is the JSON Schema alternative.
type FunctionDeclaration struct {
	Name                 string         `json:"name"`
	Description          string         `json:"description,omitempty"`
	Parameters           map[string]any `json:"parameters,omitempty"`
	ParametersJSONSchema map[string]any `json:"parametersJsonSchema,omitempty"`
}

// ToolConfig steers function calling.
type ToolConfig struct {
	FunctionCallingConfig *FunctionCallingConfig `json:"functionCallingConfig,omitempty"`
}

// FunctionCallingConfig is AUTO (the default), ANY (a call is forced) or
// NONE, optionally restricted to some function names.
type FunctionCallingConfig struct {
	Mode                 string   `json:"mode,omitempty"`
	AllowedFunctionNames []string `json:"allowedFunctionNames,omitempty"`
}

// GenerationConfig is the subset of generation options the engines read;
// the rest is accepted.
type GenerationConfig struct {
	Temperature        *float64        `json:"temperature,omitempty"`
	TopP               *float64        `json:"topP,omitempty"`
	TopK               *float64        `json:"topK,omitempty"`
	CandidateCount     *int            `json:"candidateCount,omitempty"`
	MaxOutputTokens    *int            `json:"maxOutputTokens,omitempty"`
	StopSequences      []string        `json:"stopSequences,omitempty"`
	ResponseMIMEType   string          `json:"responseMimeType,omitempty"`
	ResponseSchema     map[string]any  `json:"responseSchema,omitempty"`
	ResponseJSONSchema map[string]any  `json:"responseJsonSchema,omitempty"`
	ThinkingConfig     json.RawMessage `json:"thinkingConfig,omitempty"`
	PresencePenalty    *float64        `json:"presencePenalty,omitempty"`
	FrequencyPenalty   *float64        `json:"frequencyPenalty,omitempty"`
	Seed               *int64          `json:"seed,omitempty"`
	ResponseModalities []string        `json:"responseModalities,omitempty"`
}

// Response is a GenerateContentResponse as production writes it: the key
// order of the captured envelope (ai-generate-minimal-envelope).
type Response struct {
	Candidates    []Candidate     `json:"candidates,omitempty"`
	PromptFeedbk  json.RawMessage `json:"promptFeedback,omitempty"`
	UsageMetadata *Usage          `json:"usageMetadata,omitempty"`
	ModelVersion  string          `json:"modelVersion,omitempty"`
	ResponseID    string          `json:"responseId,omitempty"`
}

// Candidate is one answer. Index is always on the wire (0 for the single
// candidate), as captured.
type Candidate struct {
	Content       *Content `json:"content,omitempty"`
	FinishReason  string   `json:"finishReason,omitempty"`
	Index         int      `json:"index"`
	FinishMessage string   `json:"finishMessage,omitempty"`
}

// Usage is usageMetadata: the key set of the captured envelope, serviceTier
// included although the SDK typings omit it.
type Usage struct {
	PromptTokenCount     int             `json:"promptTokenCount"`
	CandidatesTokenCount int             `json:"candidatesTokenCount"`
	TotalTokenCount      int             `json:"totalTokenCount"`
	PromptTokensDetails  []ModalityCount `json:"promptTokensDetails"`
	ServiceTier          string          `json:"serviceTier"`
}

// ModalityCount is a token count of one modality.
type ModalityCount struct {
	Modality   string `json:"modality"`
	TokenCount int    `json:"tokenCount"`
}

// CountTokensResponse is countTokens' envelope: exactly totalTokens and
// promptTokensDetails (ai-counttokens-envelope).
type CountTokensResponse struct {
	TotalTokens         int             `json:"totalTokens"`
	PromptTokensDetails []ModalityCount `json:"promptTokensDetails"`
}

// Text returns the concatenated text of the parts that are not thoughts.
func (c Content) Text() string {
	s := ""
	for _, p := range c.Parts {
		if p.Text != nil && !p.Thought {
			s += *p.Text
		}
	}
	return s
}

func strp(s string) *string { return &s }
