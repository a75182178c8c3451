package github_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"

	"countersign/connectors/github/githubtest"
)

// GitHub's REST API description: the whole api.github.com document that
// @octokit/openapi publishes, at one exact version. The tests fetch it with
// npm (npm pack, which checks the registry's integrity too) into the
// user's cache directory, outside the repository, and check both the
// package's and the document's digests before reading it.
const (
	octokitPackage    = "@octokit/openapi"
	octokitVersion    = "23.0.2"
	octokitIntegrity  = "sha512-pV8M7L9GY23AybNvTmo2nyjmpmnt6+2sRE/tqr0ZLQcPS4lnw7u5eZGNmwRNkBC3D7gZXbFx5AHzLUVRBXGDhg=="
	octokitDocument   = "package/generated/api.github.com.json"
	descriptionSHA256 = "829b4bebb19a53133289f7b0bc819f4f1118115821db2ca9f25e9ee995a7da2a"
	// fallbackDescription holds the operations the connector uses, taken
	// from the same document by testdata/extract-openapi.mjs. It is read
	// only when the npm registry cannot be reached, and never under CI,
	// where a missing document fails the tests.
	fallbackDescription = "testdata/github-openapi.json"
)

// publishedVersions are the REST API versions GitHub publishes
// (docs.github.com/rest/about-the-rest-api/api-versions); a request's
// X-GitHub-Api-Version names one.
var publishedVersions = []string{"2022-11-28", "2026-03-10"}

var (
	descOnce sync.Once
	desc     *description
	descErr  error
)

// githubDescription is GitHub's description, read once.
func githubDescription(t testing.TB) *description {
	t.Helper()
	descOnce.Do(func() { desc, descErr = loadDescription() })
	if descErr != nil {
		t.Fatal(descErr)
	}
	return desc
}

func loadDescription() (*description, error) {
	raw, err := fetchDescription()
	if err == nil {
		return parseDescription(raw, "api.github.com.json of "+octokitPackage+"@"+octokitVersion+", whole")
	}
	if os.Getenv("CI") != "" {
		return nil, fmt.Errorf("GitHub's OpenAPI description (%s@%s) could not be fetched, and under CI the tests need it: %v", octokitPackage, octokitVersion, err)
	}
	raw, ferr := os.ReadFile(fallbackDescription)
	if ferr != nil {
		return nil, errors.Join(err, ferr)
	}
	return parseDescription(raw, fallbackDescription+", the connector's operations only, since the npm registry was not reached ("+err.Error()+")")
}

// fetchDescription reads the document from the cache, or fetches it there.
func fetchDescription() ([]byte, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	dir = filepath.Join(dir, "countersign-tests", "octokit-openapi-"+octokitVersion)
	file := filepath.Join(dir, "api.github.com.json")
	if raw, err := os.ReadFile(file); err == nil && sha256Hex(raw) == descriptionSHA256 {
		return raw, nil
	}
	if _, err := exec.LookPath("npm"); err != nil {
		return nil, fmt.Errorf("npm is not installed: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(dir, "pack-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "pack", octokitPackage+"@"+octokitVersion, "--pack-destination", tmp, "--json", "--loglevel=error")
	cmd.Dir = tmp
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("npm pack %s@%s: %v: %s", octokitPackage, octokitVersion, err, strings.TrimSpace(stderr.String()))
	}
	var packed []struct {
		Filename string `json:"filename"`
	}
	if err := json.Unmarshal(out, &packed); err != nil || len(packed) != 1 {
		return nil, fmt.Errorf("npm pack answered %q", out)
	}
	tgz, err := os.ReadFile(filepath.Join(tmp, filepath.Base(packed[0].Filename)))
	if err != nil {
		return nil, err
	}
	if sum := sha512.Sum512(tgz); "sha512-"+base64.StdEncoding.EncodeToString(sum[:]) != octokitIntegrity {
		return nil, fmt.Errorf("%s@%s is not the package pinned (integrity differs)", octokitPackage, octokitVersion)
	}
	raw, err := fileInTarball(tgz, octokitDocument)
	if err != nil {
		return nil, err
	}
	if sha256Hex(raw) != descriptionSHA256 {
		return nil, fmt.Errorf("%s in %s@%s is not the document pinned", octokitDocument, octokitPackage, octokitVersion)
	}
	part := filepath.Join(tmp, "api.github.com.json")
	if err := os.WriteFile(part, raw, 0o644); err != nil {
		return nil, err
	}
	return raw, os.Rename(part, file)
}

func fileInTarball(tgz []byte, name string) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err != nil {
			return nil, fmt.Errorf("%s is not in the package: %w", name, err)
		}
		if h.Name == name {
			return io.ReadAll(io.LimitReader(tr, 64<<20))
		}
	}
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// description is an OpenAPI document indexed for routing: every operation
// of every path, each loaded for validation (with the components it
// reaches) the first time a request is routed to it.
type description struct {
	from       string
	openapi    json.RawMessage
	info       json.RawMessage
	paths      map[string]map[string]json.RawMessage
	components map[string]map[string]json.RawMessage
	routes     []template

	mu  sync.Mutex
	ops map[string]*operation
}

// template is one operation's path template, cut into segments.
type template struct {
	method, path string
	segs         []tseg
	literals     int
	multis       int
}

// tseg is a literal segment, or a parameter; a multi-segment one
// (x-multi-segment) takes one segment or more.
type tseg struct {
	lit, param string
	multi      bool
}

type param struct {
	Ref   string `json:"$ref"`
	Name  string `json:"name"`
	In    string `json:"in"`
	Multi bool   `json:"x-multi-segment"`
}

var methods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

func parseDescription(raw []byte, from string) (*description, error) {
	var top struct {
		OpenAPI    json.RawMessage                       `json:"openapi"`
		Info       json.RawMessage                       `json:"info"`
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components map[string]map[string]json.RawMessage `json:"components"`
	}
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, fmt.Errorf("%s: %w", from, err)
	}
	d := &description{from: from, openapi: top.OpenAPI, info: top.Info, paths: top.Paths, components: top.Components, ops: map[string]*operation{}}
	resolve := func(p param) param {
		if name, ok := strings.CutPrefix(p.Ref, "#/components/parameters/"); ok {
			var q param
			_ = json.Unmarshal(d.components["parameters"][name], &q)
			return q
		}
		return p
	}
	for path, item := range d.paths {
		var shared []param
		if raw, ok := item["parameters"]; ok {
			_ = json.Unmarshal(raw, &shared)
		}
		for _, m := range methods {
			raw, ok := item[m]
			if !ok {
				continue
			}
			var op struct {
				Parameters []param `json:"parameters"`
			}
			if err := json.Unmarshal(raw, &op); err != nil {
				return nil, fmt.Errorf("%s %s: %w", m, path, err)
			}
			multi := map[string]bool{}
			for _, p := range append(slices.Clone(shared), op.Parameters...) {
				if p = resolve(p); p.In == "path" && p.Multi {
					multi[p.Name] = true
				}
			}
			t := template{method: strings.ToUpper(m), path: path}
			for _, s := range strings.Split(strings.TrimPrefix(path, "/"), "/") {
				if name, ok := strings.CutPrefix(s, "{"); ok && strings.HasSuffix(name, "}") {
					name = strings.TrimSuffix(name, "}")
					t.segs = append(t.segs, tseg{param: name, multi: multi[name]})
					if multi[name] {
						t.multis++
					}
					continue
				}
				t.segs = append(t.segs, tseg{lit: s})
				t.literals++
			}
			d.routes = append(d.routes, t)
		}
	}
	sort.Slice(d.routes, func(i, j int) bool { return d.routes[i].method+d.routes[i].path < d.routes[j].method+d.routes[j].path })
	return d, nil
}

// route finds the operation a request is for, and its path parameters as
// sent (still escaped); of several, the one with the most literal
// segments and then the fewest multi-segment parameters.
func (d *description) route(method, rawPath string) (*template, map[string]string) {
	segs := strings.Split(strings.TrimPrefix(rawPath, "/"), "/")
	var best *template
	var bestParams map[string]string
	for i := range d.routes {
		t := &d.routes[i]
		if t.method != method {
			continue
		}
		params := map[string]string{}
		if !match(t.segs, segs, params) {
			continue
		}
		if best == nil || t.literals > best.literals || t.literals == best.literals && t.multis < best.multis {
			best, bestParams = t, params
		}
	}
	return best, bestParams
}

func match(ts []tseg, segs []string, params map[string]string) bool {
	switch {
	case len(ts) == 0:
		return len(segs) == 0
	case len(segs) == 0:
		return false
	case ts[0].param == "":
		return ts[0].lit == segs[0] && match(ts[1:], segs[1:], params)
	case !ts[0].multi:
		params[ts[0].param] = segs[0]
		return match(ts[1:], segs[1:], params)
	}
	for n := 1; n <= len(segs); n++ {
		if match(ts[1:], segs[n:], params) {
			params[ts[0].param] = strings.Join(segs[:n], "/")
			return true
		}
	}
	return false
}

// operation is one operation loaded for validation.
type operation struct {
	route *routers.Route
	query map[string]bool // its query parameters
	err   error
}

// operation loads t's operation: a document of that operation alone with
// every component it reaches, as the whole document declares them.
func (d *description) operation(t *template) *operation {
	key := t.method + " " + t.path
	d.mu.Lock()
	defer d.mu.Unlock()
	if op, ok := d.ops[key]; ok {
		return op
	}
	op := &operation{query: map[string]bool{}}
	d.ops[key] = op
	item := map[string]json.RawMessage{strings.ToLower(t.method): d.paths[t.path][strings.ToLower(t.method)]}
	if p, ok := d.paths[t.path]["parameters"]; ok {
		item["parameters"] = p
	}
	// GitHub answers 401 to any request whose token it does not take
	// (docs.github.com/rest/authentication), which the description says
	// of some operations only: every one is held to that answer.
	components := map[string]map[string]json.RawMessage{}
	todo := []json.RawMessage{item[strings.ToLower(t.method)], item["parameters"]}
	if raw, ok := d.components["responses"]["requires_authentication"]; ok {
		components["responses"] = map[string]json.RawMessage{"requires_authentication": raw}
		todo = append(todo, raw)
	}
	for len(todo) > 0 {
		raw := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		var v any
		if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
			continue
		}
		for _, ref := range refs(v, nil) {
			parts := strings.Split(ref, "/")
			if len(parts) != 4 || parts[0] != "#" || parts[1] != "components" {
				op.err = fmt.Errorf("%s: a $ref outside the components: %s", key, ref)
				return op
			}
			kind, name := parts[2], parts[3]
			if _, done := components[kind][name]; done {
				continue
			}
			c, ok := d.components[kind][name]
			if !ok {
				op.err = fmt.Errorf("%s: no component %s", key, ref)
				return op
			}
			if components[kind] == nil {
				components[kind] = map[string]json.RawMessage{}
			}
			components[kind][name] = c
			todo = append(todo, c)
		}
	}
	sub, err := json.Marshal(map[string]any{"openapi": d.openapi, "info": d.info, "paths": map[string]any{t.path: item}, "components": components})
	if err != nil {
		op.err = err
		return op
	}
	doc, err := openapi3.NewLoader().LoadFromData(sub)
	if err != nil {
		op.err = fmt.Errorf("%s: %w", key, err)
		return op
	}
	pi := doc.Paths.Value(t.path)
	o := pi.GetOperation(t.method)
	if unauthorized := doc.Components.Responses["requires_authentication"]; o.Responses.Value("401") == nil && unauthorized != nil {
		o.Responses.Set("401", unauthorized)
	}
	op.route = &routers.Route{Spec: doc, Path: t.path, PathItem: pi, Method: t.method, Operation: o}
	for _, p := range append(slices.Clone(pi.Parameters), o.Parameters...) {
		if p.Value != nil && p.Value.In == "query" {
			op.query[p.Value.Name] = true
		}
	}
	return op
}

// refs lists every "$ref" in v.
func refs(v any, out []string) []string {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if s, ok := x.(string); ok && k == "$ref" {
				out = append(out, s)
			} else {
				out = refs(x, out)
			}
		}
	case []any:
		for _, x := range v {
			out = refs(x, out)
		}
	}
	return out
}

// RFC 3986's characters, as regular expression pieces.
const (
	unreserved = `A-Za-z0-9\-._~`
	subDelims  = `!$&'()*+,;=`
	pctEncoded = `%[0-9A-Fa-f]{2}`
	pchar      = `(?:[` + unreserved + subDelims + `:@]|` + pctEncoded + `)`
)

var (
	// uriSyntax is RFC 3986's URI (section 3): scheme ":" hier-part
	// ["?" query] ["#" fragment].
	uriSyntax = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+\-.]*:` +
		`(?://(?:(?:[` + unreserved + subDelims + `:]|` + pctEncoded + `)*@)?` +
		`(\[[0-9A-Fa-f:.]+\]|(?:[` + unreserved + subDelims + `]|` + pctEncoded + `)*)(?::[0-9]*)?` +
		`(?:/` + pchar + `*)*` +
		`|/(?:` + pchar + `+(?:/` + pchar + `*)*)?` +
		`|` + pchar + `+(?:/` + pchar + `*)*` +
		`|)` +
		`(?:\?(?:` + pchar + `|[/?])*)?` +
		`(?:#(?:` + pchar + `|[/?])*)?$`)
	segmentSyntax = regexp.MustCompile(`^` + pchar + `*$`)
	// A query name or value of OpenAPI's default style (form, allowReserved
	// false): unreserved characters, every other byte percent-encoded.
	queryPartSyntax = regexp.MustCompile(`^(?:[` + unreserved + `]|` + pctEncoded + `)*$`)
	percent         = regexp.MustCompile(pctEncoded)
)

// checkURI holds s to RFC 3986's URI, strictly: an absolute URI whose every
// character is one its part allows, and whose percent-encodings are
// normal (upper-case hex, no unreserved character encoded).
func checkURI(s string) error {
	m := uriSyntax.FindStringSubmatch(s)
	if m == nil {
		return fmt.Errorf("not a URI by RFC 3986")
	}
	if host := m[1]; strings.HasPrefix(host, "[") {
		if _, err := netip.ParseAddr(strings.Trim(host, "[]")); err != nil {
			return fmt.Errorf("not a URI by RFC 3986: the IP literal %s", host)
		}
	}
	return normalEncoding(s)
}

// normalEncoding refuses a percent-encoding RFC 3986 (6.2.2) does not
// write: lower-case hex, or an unreserved character encoded.
func normalEncoding(s string) error {
	for _, e := range percent.FindAllString(s, -1) {
		b, _ := hex.DecodeString(e[1:])
		if e != strings.ToUpper(e) || strings.ContainsRune(`ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~`, rune(b[0])) {
			return fmt.Errorf("%s is not a normal percent-encoding", e)
		}
	}
	return nil
}

// strictURI is kin-openapi's validator of `format: uri`, by checkURI.
var strictURI = openapi3.NewCallbackValidator(checkURI)

// pctDecode decodes percent-encodings only (a "+" stays a "+").
func pctDecode(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		if i+2 >= len(s) {
			return "", fmt.Errorf("a cut percent-encoding")
		}
		v, err := hex.DecodeString(s[i+1 : i+3])
		if err != nil {
			return "", err
		}
		b.Write(v)
		i += 2
	}
	return b.String(), nil
}

// check says what in an exchange does not hold to the description: the
// request's method and path template, its path parameters and query as
// escaped on the wire, its headers and body, and, unless the test put it
// there (FailNext), the fake's answer, every `format: uri` checked
// strictly. It returns the operation and status the exchange exercised.
func (d *description) check(x githubtest.Exchange) (string, []string) {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	rawPath, rawQuery, _ := strings.Cut(x.RequestURI, "?")
	t, rawParams := d.route(x.Method, rawPath)
	if t == nil {
		return "", []string{fmt.Sprintf("%s %s is in no operation of GitHub's description", x.Method, rawPath)}
	}
	key := fmt.Sprintf("%s %s %d", t.method, t.path, x.Status)
	// The path: RFC 3986 segments, each parameter decoded as GitHub will
	// read it; a parameter of one segment holds no "/", and no segment is
	// empty, . or ..
	params := map[string]string{}
	for _, s := range t.segs {
		if s.param == "" {
			continue
		}
		var dec []string
		for _, seg := range strings.Split(rawParams[s.param], "/") {
			v, err := pctDecode(seg)
			switch {
			case !segmentSyntax.MatchString(seg) || err != nil:
				bad("{%s} is sent as %q, not RFC 3986 path characters", s.param, seg)
			case normalEncoding(seg) != nil:
				bad("{%s} is sent as %q: %v", s.param, seg, normalEncoding(seg))
			case v == "" || v == "." || v == "..":
				bad("{%s} has an empty, . or .. segment", s.param)
			case !s.multi && strings.Contains(v, "/"):
				bad("{%s} holds a /, and is one segment", s.param)
			}
			dec = append(dec, v)
		}
		params[s.param] = strings.Join(dec, "/")
	}
	op := d.operation(t)
	if op.err != nil {
		return key, append(problems, op.err.Error())
	}
	// The query: form style, every reserved character percent-encoded.
	if rawQuery != "" {
		for _, pair := range strings.Split(rawQuery, "&") {
			name, value, ok := strings.Cut(pair, "=")
			switch {
			case !ok || !queryPartSyntax.MatchString(name) || !queryPartSyntax.MatchString(value):
				bad("the query %q is not names and values with every reserved character percent-encoded", pair)
			case normalEncoding(pair) != nil:
				bad("the query %q: %v", pair, normalEncoding(pair))
			case !op.query[name]:
				bad("the query names %q, which %s does not take", name, t.path)
			}
		}
	}
	// The headers GitHub asks for.
	h := x.Header
	if h.Get("Accept") != "application/vnd.github+json" {
		bad("Accept is %q, not application/vnd.github+json", h.Get("Accept"))
	}
	if v := h.Get("X-GitHub-Api-Version"); !slices.Contains(publishedVersions, v) {
		bad("X-GitHub-Api-Version is %q, not a version GitHub publishes", v)
	}
	if h.Get("User-Agent") == "" {
		bad("no User-Agent")
	}
	if !strings.HasPrefix(h.Get("Authorization"), "Bearer ") {
		bad("no Authorization: Bearer")
	}
	if len(x.Body) > 0 && h.Get("Content-Type") != "application/json" {
		bad("a body of type %q", h.Get("Content-Type"))
	}
	if len(x.Body) == 0 && (x.Method == http.MethodPut || x.Method == http.MethodPost || x.Method == http.MethodPatch) && x.ContentLength != 0 {
		bad("a %s without a body and without Content-Length: 0", x.Method)
	}
	// Parameters, body and answer, by kin-openapi.
	req, err := http.NewRequest(x.Method, "http://github.test"+x.RequestURI, bytes.NewReader(x.Body))
	if err != nil {
		return key, append(problems, err.Error())
	}
	req.Header = x.Header.Clone()
	strict := []openapi3.SchemaValidationOption{openapi3.WithStringFormatValidator("uri", strictURI)}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: op.route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, SchemaValidationOptions: strict}}
	if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
		bad("the request: %s", shortErr(err))
	}
	if x.Injected {
		return key, problems
	}
	err = openapi3filter.ValidateResponse(context.Background(), &openapi3filter.ResponseValidationInput{RequestValidationInput: in,
		Status: x.Status, Header: x.RespHeader, Body: io.NopCloser(bytes.NewReader(x.RespBody)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true, SchemaValidationOptions: strict}})
	// GitHub's 409 and 422 bodies fit both basic-error and
	// repository-rule-violation-error, which the description offers as a
	// oneOf: matching more than one is not a misfit.
	if err != nil && !strings.Contains(err.Error(), "input matches more than one oneOf schemas") {
		bad("the answer %d: %s", x.Status, shortErr(err))
	}
	return key, problems
}

// recorded has fake keep every exchange, and when the test ends checks each
// against GitHub's description.
func recorded(t *testing.T, fake *githubtest.Server) {
	t.Helper()
	fake.Record()
	t.Cleanup(func() {
		d := githubDescription(t)
		for _, x := range fake.Exchanges() {
			if _, problems := d.check(x); len(problems) > 0 {
				t.Errorf("%s %s, answered %d, does not hold to GitHub's description:\n\t%s", x.Method, x.RequestURI, x.Status, strings.Join(problems, "\n\t"))
			}
		}
	})
}

func shortErr(err error) string {
	s := strings.Join(strings.Fields(err.Error()), " ")
	if len(s) > 600 {
		s = s[:600] + "…"
	}
	return s
}
