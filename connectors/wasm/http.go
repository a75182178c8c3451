package wasm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/tetratelabs/wazero/api"

	"countersign"
	"countersign/connectors/wasm/abi"
	"countersign/egress"
)

type httpDoer interface {
	Do(*http.Request) (*http.Response, error)
}

func newClient(opts Options) httpDoer { return egress.NewClient(opts.Egress) }

var methods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// redacted stands in an answer for a credential's value.
const redacted = "[credential]"

// hostHTTP serves http_do: one request to one of the manifest's hosts,
// through the egress guard, with the project's credentials attached.
func hostHTTP(ctx context.Context, mod api.Module, stack []uint64) {
	st := stateOf(ctx)
	if st == nil {
		panic("countersign.http_do outside a call")
	}
	b, ok := readMessage(mod, api.DecodeU32(stack[0]), api.DecodeU32(stack[1]))
	if !ok {
		panic("countersign.http_do: the message is outside the module's memory or too large")
	}
	stack[0] = api.EncodeU32(st.hold(st.httpDo(ctx, b)))
}

// refused is http_do's refusal of a request that did not leave.
func refused(code countersign.Code, format string, args ...any) abi.HTTPResponse {
	return abi.HTTPResponse{Error: &abi.Error{Code: string(code), Message: fmt.Sprintf(format, args...)}}
}

func (st *callState) httpDo(ctx context.Context, b []byte) abi.HTTPResponse {
	m := st.module
	var in abi.HTTPRequest
	if err := json.Unmarshal(b, &in); err != nil {
		return refused(countersign.Internal, "the connector's request does not read")
	}
	st.mu.Lock()
	st.requests++
	n := st.requests
	st.mu.Unlock()
	if n > MaxRequests {
		return refused(countersign.Internal, "the connector made more than %d requests in one run", MaxRequests)
	}
	if !slices.Contains(methods, in.Method) {
		return refused(countersign.Internal, "the connector's request has a method the service does not send")
	}
	if len(in.Body) > MaxRequestBodyBytes {
		return refused(countersign.Internal, "the connector's request body is larger than %d bytes", MaxRequestBodyBytes)
	}
	// The module's URL: https, well formed, to a host of its manifest.
	u, err := egress.CheckURL(in.URL, m.host.opts.Egress.AllowPrivate)
	if err != nil || u.Scheme != "https" {
		return refused(countersign.Internal, "the connector asked for a URL the service does not send to (https to one of its manifest's hosts, at a public address)")
	}
	hp, ok := urlHost(u)
	if !ok || !slices.Contains(m.hosts, hp) {
		return refused(countersign.Internal, "the connector asked to reach a host its manifest does not name")
	}
	target := *u
	if to, ok := m.host.redirect(hp); ok {
		target.Scheme, target.Host = to.Scheme, to.Host
		if _, err := egress.CheckURL(target.String(), m.host.opts.Egress.AllowPrivate); err != nil {
			return refused(countersign.Internal, "the service's redirect of this host is refused by its egress rules")
		}
	}
	if m.host.opts.Dry || m.dry {
		return refused(countersign.InvalidRequest, "countersign connector check sends no requests")
	}
	secrets, err := st.attach(&target)
	if err != nil {
		return abi.HTTPResponse{Error: abi.ErrorOf(err)}
	}
	req, err := http.NewRequestWithContext(ctx, in.Method, target.String(), bytes.NewReader(in.Body))
	if err != nil {
		return refused(countersign.Internal, "the connector's request cannot be made")
	}
	for name, values := range in.Header {
		if !headerNameRE.MatchString(name) || slices.Contains(headersNotSet, strings.ToLower(name)) {
			return refused(countersign.Internal, "the connector's request sets a header the service does not let it set")
		}
		for _, v := range values {
			if strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f }) {
				return refused(countersign.Internal, "the connector's request has a header value with a control character")
			}
			req.Header.Add(name, v)
		}
	}
	if len(in.Body) == 0 {
		req.Body, req.ContentLength = http.NoBody, 0
	}
	if cr := m.Manifest.Egress.Credentials; cr != nil {
		for name, tmpl := range cr.Header {
			req.Header.Set(name, fill(tmpl, secrets))
		}
	}
	st.mu.Lock()
	st.sent = true
	st.mu.Unlock()
	resp, err := m.host.client.Do(req)
	if err != nil {
		if egress.Refused(err) {
			return refused(countersign.Internal, "the connector's host resolves to an address that is not public, so it was not asked")
		}
		out := refused(countersign.Internal, "the connector's host gave no answer")
		if ctx.Err() != nil {
			out = refused(countersign.Internal, "the connector's host gave no answer within the run's compute limit")
		}
		out.Sent = true
		return out
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes+1))
	if err != nil {
		out := refused(countersign.Internal, "the connector's host's answer broke off")
		out.Sent = true
		return out
	}
	if len(body) > MaxResponseBytes {
		out := refused(countersign.Internal, "the connector's host answered more than %d bytes", MaxResponseBytes)
		out.Sent = true
		return out
	}
	out := abi.HTTPResponse{Status: resp.StatusCode, Header: map[string][]string{}, Body: redact(body, secrets)}
	for name, values := range resp.Header {
		for _, v := range values {
			out.Header[name] = append(out.Header[name], string(redact([]byte(v), secrets)))
		}
	}
	return out
}

// urlHost is a URL's host as a manifest writes it.
func urlHost(u *url.URL) (hostPort, bool) {
	port := 443
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil {
			return hostPort{}, false
		}
		port = n
	}
	host := strings.ToLower(u.Hostname())
	if ip := net.ParseIP(host); ip != nil {
		host = ip.String()
	}
	return hostPort{host: host, port: port}, true
}

// redirect is where wiring sends a host's requests instead, if anywhere.
func (h *Host) redirect(hp hostPort) (*url.URL, bool) {
	for from, to := range h.opts.Redirect {
		f, ok := parseHost(from)
		if !ok || f != hp {
			continue
		}
		u, err := url.Parse(to)
		if err != nil || u.Host == "" {
			return nil, false
		}
		return u, true
	}
	return nil, false
}

// attach reads the project's credentials as the manifest declares them
// and sets the query templates on u; it returns the members' values, for
// the header templates and for redacting answers.
func (st *callState) attach(u *url.URL) (map[string]string, error) {
	cr := st.module.Manifest.Egress.Credentials
	if cr == nil {
		return nil, nil
	}
	shape := "{" + strings.Join(quoted(cr.Members), ", ") + "}"
	if len(st.creds) == 0 {
		return nil, countersign.Errorf(countersign.InvalidRequest, "the project has no credentials: the owner must set them (%s)", shape)
	}
	var raw map[string]json.RawMessage
	if err := countersign.DecodeStrict(st.creds, &raw); err != nil {
		return nil, countersign.Errorf(countersign.InvalidRequest, "the project's credentials are not %s: the owner must correct them", shape)
	}
	values := map[string]string{}
	for _, m := range cr.Members {
		var s string
		if json.Unmarshal(raw[m], &s) != nil || s == "" || strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			return nil, countersign.Errorf(countersign.InvalidRequest, "the project's credentials are not %s: the owner must correct them", shape)
		}
		values[m] = s
	}
	for name := range raw {
		if !slices.Contains(cr.Members, name) {
			return nil, countersign.Errorf(countersign.InvalidRequest, "the project's credentials are not %s: the owner must correct them", shape)
		}
	}
	if len(cr.Query) > 0 {
		q := u.Query()
		for name, tmpl := range cr.Query {
			q.Set(name, fill(tmpl, values))
		}
		u.RawQuery = egress.Query(q)
	}
	return values, nil
}

func quoted(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = strconv.Quote(n) + ": …"
	}
	return out
}

// fill writes a template with the members' values.
func fill(tmpl string, values map[string]string) string {
	return templateRE.ReplaceAllStringFunc(tmpl, func(m string) string { return values[m[1:len(m)-1]] })
}

// redact replaces every credential value in b, as sent, as a query or a
// path escapes it, and as any JSON encoder may write it inside a string
// ("\/", "\uXXXX" in either case, surrogate pairs), so that an answer
// echoing what it was sent does not hand the module the credentials.
func redact(b []byte, secrets map[string]string) []byte {
	for _, s := range secrets {
		if s == "" {
			continue
		}
		for _, form := range []string{url.QueryEscape(s), strings.ReplaceAll(url.QueryEscape(s), "+", "%20"), url.PathEscape(s)} {
			b = bytes.ReplaceAll(b, []byte(form), []byte(redacted))
		}
		b = jsonForms(s).ReplaceAll(b, []byte(redacted))
	}
	return b
}

// jsonForms matches s written as is or as a JSON string's contents in any
// of the escapes JSON allows for each of its characters.
func jsonForms(s string) *regexp.Regexp {
	var re strings.Builder
	for _, c := range s {
		alts := []string{regexp.QuoteMeta(string(c))}
		if c < 0x10000 {
			alts = append(alts, fmt.Sprintf(`\\u(?i:%04x)`, c))
		} else {
			hi, lo := utf16.EncodeRune(c)
			alts = append(alts, fmt.Sprintf(`\\u(?i:%04x)\\u(?i:%04x)`, hi, lo))
		}
		if short, ok := jsonShort[c]; ok {
			alts = append(alts, regexp.QuoteMeta(short))
		}
		re.WriteString("(?:" + strings.Join(alts, "|") + ")")
	}
	return regexp.MustCompile(re.String())
}

// jsonShort is JSON's two-character escapes.
var jsonShort = map[rune]string{'"': `\"`, '\\': `\\`, '/': `\/`, '\b': `\b`, '\f': `\f`, '\n': `\n`, '\r': `\r`, '\t': `\t`}
