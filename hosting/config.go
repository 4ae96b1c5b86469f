package hosting

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"strings"
)

// SiteConfig is one site of firebase.json's "hosting" (an object, or a
// list of sites distinguished by "site" or "target"), checked and
// compiled. ParseConfig builds it.
type SiteConfig struct {
	// Name is the site's label: its "site", else its "target", else the
	// project id (as the emulator names an unnamed site).
	Name   string
	Site   string
	Target string
	// Public is the absolute directory served; "" when the site only
	// redirects and rewrites.
	Public string
	// Ignore are the globs of files production never uploads (matched
	// relative to Public).
	Ignore         []string
	CleanURLs      bool
	TrailingSlash  *bool // nil: not set (directories get a slash, files keep theirs)
	Redirects      []Redirect
	Rewrites       []Rewrite
	Headers        []HeaderRule
	I18nRoot       string // "" without i18n; else the folder under Public, with a leading "/"
	AppAssociation string // "AUTO" (default) or "NONE"

	ignore []*glob
}

// Redirect is one entry of "redirects".
type Redirect struct {
	Source      string // a glob (or route pattern with :captures); "" when Regex is set
	Regex       string
	Destination string
	Type        int // 301 or 302

	m       matcher
	capture *regexp.Regexp // nil when the destination names no capture
	keys    []routeToken   // the source's parameters, for a glob source
	dest    []routeToken
}

// Rewrite is one entry of "rewrites": exactly one of Destination,
// Function, Run or DynamicLinks.
type Rewrite struct {
	Source       string
	Regex        string
	Destination  string
	Function     *FunctionTarget
	Run          *RunTarget
	DynamicLinks bool

	m matcher
}

// FunctionTarget is a rewrite to an HTTPS function.
type FunctionTarget struct {
	FunctionID string
	Region     string // default us-central1
	Pinned     bool
}

// RunTarget is a rewrite to a Cloud Run service (not emulated).
type RunTarget struct {
	ServiceID string
	Region    string
}

// HeaderRule is one entry of "headers".
type HeaderRule struct {
	Source  string
	Regex   string
	Headers []Header

	m matcher
}

// Header is one key/value a header rule sets.
type Header struct{ Key, Value string }

// matcher is a compiled source: a glob or a regexp.
type matcher struct {
	glob *glob
	re   *regexp.Regexp
}

func (m matcher) match(path string) bool {
	if m.glob != nil {
		return m.glob.match(path)
	}
	return m.re != nil && m.re.MatchString(path)
}

// DefaultRegion is where a function rewrite without a region goes.
const DefaultRegion = "us-central1"

// ParseConfig reads firebase.json's "hosting" value (an object or a list)
// for the project in dir (public folders resolve against it); project
// names a site that has neither "site" nor "target". An absent or null
// value is no sites. Errors name the site and the field.
func ParseConfig(raw json.RawMessage, dir, project string) ([]*SiteConfig, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var items []json.RawMessage
	list := raw[0] == '['
	if list {
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, fmt.Errorf("hosting: %v", err)
		}
	} else {
		items = []json.RawMessage{raw}
	}
	var out []*SiteConfig
	seen := map[string]bool{}
	for i, item := range items {
		where := "hosting"
		if list {
			where = fmt.Sprintf("hosting[%d]", i)
		}
		c, err := parseSite(item, dir, project, where)
		if err != nil {
			return nil, err
		}
		if list && c.Site == "" && c.Target == "" {
			return nil, fmt.Errorf("%s: a site in a list needs \"site\" or \"target\"", where)
		}
		if seen[c.Name] {
			return nil, fmt.Errorf("%s: site %q appears twice", where, c.Name)
		}
		seen[c.Name] = true
		out = append(out, c)
	}
	return out, nil
}

type rawSite struct {
	Site          *string           `json:"site"`
	Target        *string           `json:"target"`
	Public        *string           `json:"public"`
	Source        *string           `json:"source"`
	Ignore        []string          `json:"ignore"`
	CleanURLs     *bool             `json:"cleanUrls"`
	TrailingSlash *bool             `json:"trailingSlash"`
	Redirects     []json.RawMessage `json:"redirects"`
	Rewrites      []json.RawMessage `json:"rewrites"`
	Headers       []json.RawMessage `json:"headers"`
	I18n          *struct {
		Root string `json:"root"`
	} `json:"i18n"`
	AppAssociation *string `json:"appAssociation"`
}

func parseSite(item json.RawMessage, dir, project, where string) (*SiteConfig, error) {
	var rs rawSite
	if err := json.Unmarshal(item, &rs); err != nil {
		return nil, fmt.Errorf("%s: %v", where, err)
	}
	c := &SiteConfig{AppAssociation: "AUTO"}
	if rs.Site != nil {
		c.Site = *rs.Site
	}
	if rs.Target != nil {
		c.Target = *rs.Target
	}
	if c.Site != "" && c.Target != "" {
		return nil, fmt.Errorf("%s: give either \"site\" or \"target\", not both", where)
	}
	c.Name = firstOf(c.Site, c.Target, project)
	if rs.Source != nil {
		return nil, fmt.Errorf("%s.source: web frameworks (\"source\") are not emulated by pyric; build the app and serve its output with \"public\"", where)
	}
	if rs.Public != nil && *rs.Public != "" {
		c.Public = *rs.Public
		if !filepath.IsAbs(c.Public) {
			c.Public = filepath.Join(dir, c.Public)
		}
		c.Public = filepath.Clean(c.Public)
	}
	c.Ignore = rs.Ignore
	for _, ig := range rs.Ignore {
		g, err := compileGlob(ig, true)
		if err != nil {
			return nil, fmt.Errorf("%s.ignore: %q: %v", where, ig, err)
		}
		c.ignore = append(c.ignore, g)
	}
	if rs.CleanURLs != nil {
		c.CleanURLs = *rs.CleanURLs
	}
	c.TrailingSlash = rs.TrailingSlash
	if rs.AppAssociation != nil {
		switch *rs.AppAssociation {
		case "AUTO", "NONE":
			c.AppAssociation = *rs.AppAssociation
		default:
			return nil, fmt.Errorf("%s.appAssociation: want \"AUTO\" or \"NONE\", got %q", where, *rs.AppAssociation)
		}
	}
	if rs.I18n != nil {
		if rs.I18n.Root == "" {
			return nil, fmt.Errorf("%s.i18n: \"root\" is required", where)
		}
		if c.Public == "" {
			return nil, fmt.Errorf("%s.i18n: needs a \"public\" directory", where)
		}
		c.I18nRoot = "/" + strings.Trim(rs.I18n.Root, "/")
	}
	hasDestRewrite := false
	for i, raw := range rs.Redirects {
		rd, err := parseRedirect(raw)
		if err != nil {
			return nil, fmt.Errorf("%s.redirects[%d]: %v", where, i, err)
		}
		c.Redirects = append(c.Redirects, rd)
	}
	for i, raw := range rs.Rewrites {
		rw, err := parseRewrite(raw)
		if err != nil {
			return nil, fmt.Errorf("%s.rewrites[%d]: %v", where, i, err)
		}
		if rw.Destination != "" {
			hasDestRewrite = true
		}
		c.Rewrites = append(c.Rewrites, rw)
	}
	for i, raw := range rs.Headers {
		h, err := parseHeaderRule(raw)
		if err != nil {
			return nil, fmt.Errorf("%s.headers[%d]: %v", where, i, err)
		}
		c.Headers = append(c.Headers, h)
	}
	if c.Public == "" && hasDestRewrite {
		return nil, fmt.Errorf("%s: rewrites to a \"destination\" need a \"public\" directory", where)
	}
	if c.Public == "" && len(c.Rewrites) == 0 && len(c.Redirects) == 0 {
		return nil, fmt.Errorf("%s: give a \"public\" directory, or at least one rewrite or redirect", where)
	}
	return c, nil
}

// compileSource compiles a rule's "source" (or legacy "glob") or "regex".
func compileSource(source, regex string) (matcher, error) {
	switch {
	case source != "" && regex != "":
		return matcher{}, fmt.Errorf("give either \"source\" or \"regex\", not both")
	case source != "":
		g, err := compileGlob(slashed(source), false)
		if err != nil {
			return matcher{}, fmt.Errorf("source %q: %v", source, err)
		}
		return matcher{glob: g}, nil
	case regex != "":
		re, err := regexp.Compile(regex)
		if err != nil {
			return matcher{}, fmt.Errorf("regex %q is not RE2 syntax: %v", regex, err)
		}
		return matcher{re: re}, nil
	}
	return matcher{}, fmt.Errorf("\"source\" or \"regex\" is required")
}

// slashed is the emulator's glob-slash, applied to sources and to the
// request path that headers and rewrites match: joined to "/" and
// normalized (repeated slashes collapse, "." and ".." segments resolve,
// a trailing slash stays); a leading "!" is kept in front.
func slashed(s string) string {
	if rest, ok := strings.CutPrefix(s, "!"); ok {
		return "!" + normalizePath(rest)
	}
	return normalizePath(s)
}

func normalizePath(s string) string {
	c := path.Clean("/" + s)
	if strings.HasSuffix(s, "/") && c != "/" {
		c += "/"
	}
	return c
}

type rawRule struct {
	Source       *string         `json:"source"`
	Glob         *string         `json:"glob"`
	Regex        *string         `json:"regex"`
	Destination  *string         `json:"destination"`
	Type         *int            `json:"type"`
	Function     json.RawMessage `json:"function"`
	Region       *string         `json:"region"`
	Run          json.RawMessage `json:"run"`
	DynamicLinks *bool           `json:"dynamicLinks"`
	Headers      []struct {
		Key   *string `json:"key"`
		Value *string `json:"value"`
	} `json:"headers"`
}

func (r rawRule) source() (string, string) {
	s := ""
	if r.Source != nil {
		s = *r.Source
	} else if r.Glob != nil {
		s = *r.Glob
	}
	re := ""
	if r.Regex != nil {
		re = *r.Regex
	}
	return s, re
}

func parseRedirect(raw json.RawMessage) (Redirect, error) {
	var r rawRule
	if err := json.Unmarshal(raw, &r); err != nil {
		return Redirect{}, err
	}
	src, re := r.source()
	m, err := compileSource(src, re)
	if err != nil {
		return Redirect{}, err
	}
	rd := Redirect{Source: src, Regex: re, m: m, Type: 301}
	if r.Destination == nil || *r.Destination == "" {
		return Redirect{}, fmt.Errorf("\"destination\" is required")
	}
	rd.Destination = *r.Destination
	if r.Type != nil {
		switch *r.Type {
		case 301, 302:
			rd.Type = *r.Type
		default:
			return Redirect{}, fmt.Errorf("\"type\" must be 301 or 302, got %d", *r.Type)
		}
	}
	if hasCaptureRefs(rd.Destination) {
		rd.dest = parseRoute(rd.Destination)
		if src != "" {
			rd.capture, rd.keys, err = compileRoute(slashed(src))
		} else {
			rd.capture = m.re
		}
		if err != nil {
			return Redirect{}, err
		}
	}
	return rd, nil
}

func parseRewrite(raw json.RawMessage) (Rewrite, error) {
	var r rawRule
	if err := json.Unmarshal(raw, &r); err != nil {
		return Rewrite{}, err
	}
	src, re := r.source()
	m, err := compileSource(src, re)
	if err != nil {
		return Rewrite{}, err
	}
	rw := Rewrite{Source: src, Regex: re, m: m}
	kinds := 0
	if r.Destination != nil {
		kinds++
		rw.Destination = *r.Destination
		if rw.Destination == "" {
			return Rewrite{}, fmt.Errorf("\"destination\" is empty")
		}
		if !strings.HasPrefix(rw.Destination, "/") {
			rw.Destination = "/" + rw.Destination
		}
	}
	if len(r.Function) > 0 && string(r.Function) != "null" {
		kinds++
		ft := &FunctionTarget{}
		if r.Function[0] == '"' {
			if err := json.Unmarshal(r.Function, &ft.FunctionID); err != nil {
				return Rewrite{}, fmt.Errorf("function: %v", err)
			}
			if r.Region != nil {
				ft.Region = *r.Region
			}
		} else {
			if r.Region != nil {
				return Rewrite{}, fmt.Errorf("a top-level \"region\" is allowed only when \"function\" is a string; put it in \"function\": {\"functionId\", \"region\"}")
			}
			var fo struct {
				FunctionID *string `json:"functionId"`
				Region     *string `json:"region"`
				PinTag     *bool   `json:"pinTag"`
			}
			if err := json.Unmarshal(r.Function, &fo); err != nil {
				return Rewrite{}, fmt.Errorf("function: %v", err)
			}
			if fo.FunctionID != nil {
				ft.FunctionID = *fo.FunctionID
			}
			if fo.Region != nil {
				ft.Region = *fo.Region
			}
			ft.Pinned = fo.PinTag != nil && *fo.PinTag
		}
		if ft.FunctionID == "" {
			return Rewrite{}, fmt.Errorf("function: \"functionId\" is required")
		}
		if ft.Region == "" {
			ft.Region = DefaultRegion
		}
		rw.Function = ft
	} else if r.Region != nil {
		return Rewrite{}, fmt.Errorf("a top-level \"region\" is allowed only when \"function\" is a string")
	}
	if len(r.Run) > 0 && string(r.Run) != "null" {
		kinds++
		var ro struct {
			ServiceID string `json:"serviceId"`
			Region    string `json:"region"`
		}
		if err := json.Unmarshal(r.Run, &ro); err != nil {
			return Rewrite{}, fmt.Errorf("run: %v", err)
		}
		if ro.ServiceID == "" {
			return Rewrite{}, fmt.Errorf("run: \"serviceId\" is required")
		}
		rw.Run = &RunTarget{ServiceID: ro.ServiceID, Region: firstOf(ro.Region, DefaultRegion)}
	}
	if r.DynamicLinks != nil {
		kinds++
		rw.DynamicLinks = *r.DynamicLinks
		if !rw.DynamicLinks {
			return Rewrite{}, fmt.Errorf("\"dynamicLinks\" can only be true")
		}
	}
	switch {
	case kinds == 0:
		return Rewrite{}, fmt.Errorf("one of \"destination\", \"function\", \"run\" or \"dynamicLinks\" is required")
	case kinds > 1:
		return Rewrite{}, fmt.Errorf("give only one of \"destination\", \"function\", \"run\" or \"dynamicLinks\"")
	}
	return rw, nil
}

func parseHeaderRule(raw json.RawMessage) (HeaderRule, error) {
	var r rawRule
	if err := json.Unmarshal(raw, &r); err != nil {
		return HeaderRule{}, err
	}
	src, re := r.source()
	m, err := compileSource(src, re)
	if err != nil {
		return HeaderRule{}, err
	}
	h := HeaderRule{Source: src, Regex: re, m: m}
	if len(r.Headers) == 0 {
		return HeaderRule{}, fmt.Errorf("\"headers\" needs at least one {\"key\", \"value\"}")
	}
	for i, kv := range r.Headers {
		if kv.Key == nil || *kv.Key == "" || !validHeaderName(*kv.Key) {
			return HeaderRule{}, fmt.Errorf("headers[%d]: \"key\" must be a header name", i)
		}
		if kv.Value == nil {
			return HeaderRule{}, fmt.Errorf("headers[%d]: \"value\" is required", i)
		}
		if strings.ContainsAny(*kv.Value, "\r\n\x00") {
			return HeaderRule{}, fmt.Errorf("headers[%d]: \"value\" cannot hold a line break", i)
		}
		h.Headers = append(h.Headers, Header{Key: *kv.Key, Value: *kv.Value})
	}
	return h, nil
}

func validHeaderName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

func firstOf(xs ...string) string {
	for _, x := range xs {
		if x != "" {
			return x
		}
	}
	return ""
}
