package github

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"countersign"
)

// MaxBody is the most of an answer the connector reads.
const MaxBody = 8 << 20

// credentials are a project's credentials: {"token": …, "base_url"?: …}.
type credentials struct {
	Token   string `json:"token"`
	BaseURL string `json:"base_url,omitempty"`
}

// parseCredentials reads a project's credentials strictly. The refusal
// never quotes them.
func parseCredentials(raw []byte, allowHTTP bool) (credentials, error) {
	var c credentials
	bad := countersign.Errorf(countersign.InvalidRequest, "the project's credentials are not {\"token\": …, \"base_url\"?: …}: the owner must set them")
	if len(raw) == 0 {
		return c, countersign.Errorf(countersign.InvalidRequest, "the project has no GitHub token: the owner must set its credentials")
	}
	if countersign.DecodeStrict(raw, &c) != nil || c.Token == "" || strings.ContainsAny(c.Token, " \t\r\n") {
		return c, bad
	}
	if c.BaseURL != "" {
		u, err := url.Parse(c.BaseURL)
		if err != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || !(u.Scheme == "https" || allowHTTP && u.Scheme == "http") {
			return c, countersign.Errorf(countersign.InvalidRequest, "the project's base_url is not an https URL without query: the owner must set it")
		}
		c.BaseURL = strings.TrimRight(c.BaseURL, "/")
	}
	return c, nil
}

// client talks to one GitHub API with one token.
type client struct {
	base  string
	token string
	http  *http.Client
}

func (g *GitHub) client(raw []byte) (*client, error) {
	c, err := parseCredentials(raw, g.opts.AllowHTTP)
	if err != nil {
		return nil, err
	}
	base := g.opts.BaseURL
	if c.BaseURL != "" {
		base = c.BaseURL
	}
	return &client{base: base, token: c.Token, http: g.httpc}, nil
}

// newHTTPClient follows no redirect to another host, and at most 3.
func newHTTPClient(rt http.RoundTripper, timeout time.Duration) *http.Client {
	return &http.Client{Transport: rt, Timeout: timeout, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= 3 || req.URL.Host != via[0].URL.Host || req.URL.Scheme != via[0].URL.Scheme {
			return http.ErrUseLastResponse
		}
		return nil
	}}
}

// apiError is what GitHub answered when it did not answer the success
// expected.
type apiError struct {
	Status     int
	Message    string
	Errors     []string
	RetryAfter time.Duration
	RateLimit  bool
	// Unknown: no answer came back (transport failure, 5xx, unreadable
	// answer): a write may have happened.
	Unknown bool
}

func (e *apiError) Error() string { return fmt.Sprintf("GitHub answered %d: %s", e.Status, e.Message) }

// what says GitHub's words briefly.
func (e *apiError) what() string {
	m := e.Message
	if len(e.Errors) > 0 {
		m += " (" + strings.Join(e.Errors, "; ") + ")"
	}
	m = strings.Join(strings.Fields(m), " ")
	if len(m) > 300 {
		m = m[:300] + "…"
	}
	return m
}

// do sends one request and decodes a success answer into out (nil: ignore
// the body). want lists the success statuses.
func (c *client) do(ctx context.Context, method, path string, in, out any, want ...int) (int, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return 0, err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("X-GitHub-Api-Version", APIVersion)
	req.Header.Set("User-Agent", UserAgent)
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	} else if method == http.MethodPut {
		req.ContentLength = 0
		req.Body = http.NoBody
	}
	resp, err := c.http.Do(req)
	if err != nil {
		// The error may quote the URL but never the token, which travels
		// in a header only.
		return 0, &apiError{Message: "GitHub could not be reached", Unknown: true}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, MaxBody+1))
	if err != nil || len(raw) > MaxBody {
		return resp.StatusCode, &apiError{Status: resp.StatusCode, Message: "GitHub's answer did not arrive whole", Unknown: true}
	}
	for _, w := range want {
		if resp.StatusCode == w {
			if out != nil && json.Unmarshal(raw, out) != nil {
				return resp.StatusCode, &apiError{Status: resp.StatusCode, Message: "GitHub's answer does not read", Unknown: true}
			}
			return resp.StatusCode, nil
		}
	}
	return resp.StatusCode, readError(resp, raw)
}

// readError reads GitHub's error body and rate-limit headers.
func readError(resp *http.Response, raw []byte) *apiError {
	e := &apiError{Status: resp.StatusCode}
	var body struct {
		Message string            `json:"message"`
		Errors  []json.RawMessage `json:"errors"`
	}
	if json.Unmarshal(raw, &body) == nil {
		e.Message = body.Message
		for _, item := range body.Errors {
			var s string
			var obj struct {
				Message, Code, Field, Resource string
			}
			switch {
			case json.Unmarshal(item, &s) == nil:
				e.Errors = append(e.Errors, s)
			case json.Unmarshal(item, &obj) == nil && obj.Message != "":
				e.Errors = append(e.Errors, obj.Message)
			case json.Unmarshal(item, &obj) == nil:
				e.Errors = append(e.Errors, strings.TrimSpace(obj.Field+" "+obj.Code))
			}
		}
	}
	if e.Message == "" {
		e.Message = http.StatusText(resp.StatusCode)
	}
	if e.Message == "" {
		e.Message = fmt.Sprintf("HTTP %d", resp.StatusCode)
	}
	if resp.StatusCode >= 500 {
		e.Unknown = true
	}
	if s := resp.Header.Get("Retry-After"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n >= 0 {
			e.RetryAfter, e.RateLimit = time.Duration(n)*time.Second, true
		}
	}
	if resp.Header.Get("X-RateLimit-Remaining") == "0" {
		e.RateLimit = true
		if n, err := strconv.ParseInt(resp.Header.Get("X-RateLimit-Reset"), 10, 64); err == nil && e.RetryAfter == 0 {
			if d := time.Until(time.Unix(n, 0)); d > 0 {
				e.RetryAfter = d.Round(time.Second)
			}
		}
	}
	if resp.StatusCode == http.StatusTooManyRequests || strings.Contains(strings.ToLower(e.Message), "rate limit") {
		e.RateLimit = true
	}
	return e
}

// refusal turns a failed request into the agent's refusal.
func refusal(err error, doing string) error {
	var e *apiError
	if !errors.As(err, &e) {
		return err
	}
	switch {
	case e.RateLimit:
		wait := ""
		if e.RetryAfter > 0 {
			wait = fmt.Sprintf("; GitHub asks to wait %s", e.RetryAfter)
		}
		ce := countersign.Errorf(countersign.RateLimited, "GitHub's rate limit stopped %s (%d: %s)%s", doing, e.Status, e.what(), wait)
		ce.RetryAfter = e.RetryAfter
		return ce
	case e.Status == http.StatusUnauthorized:
		return countersign.Errorf(countersign.PolicyDenied, "GitHub does not accept the project's token (401: %s): the owner must give the project a new one", e.what())
	case e.Status == http.StatusForbidden:
		return countersign.Errorf(countersign.PolicyDenied, "GitHub refused %s to the project's token (403: %s)", doing, e.what())
	case e.Status == http.StatusNotFound:
		return countersign.Errorf(countersign.InvalidRequest, "GitHub found nothing for %s (404: %s), or the token does not reach it", doing, e.what())
	case e.Status == http.StatusConflict:
		return countersign.Errorf(countersign.Conflict, "GitHub refused %s (409: %s)", doing, e.what())
	case e.Status == http.StatusUnprocessableEntity || e.Status == http.StatusGone || e.Status == http.StatusMethodNotAllowed || e.Status == http.StatusBadRequest:
		return countersign.Errorf(countersign.InvalidRequest, "GitHub refused %s (%d: %s)", doing, e.Status, e.what())
	case e.Unknown && e.Status == 0:
		return countersign.Errorf(countersign.Internal, "GitHub could not be reached for %s", doing)
	}
	return countersign.Errorf(countersign.Internal, "GitHub failed %s (%d: %s)", doing, e.Status, e.what())
}

// mayHaveWritten reports whether a failed write may still have happened:
// only a 4xx answer proves it did not.
func mayHaveWritten(err error) bool {
	var e *apiError
	return !errors.As(err, &e) || e.Unknown
}

// esc escapes one path segment; p escapes a path, keeping its slashes.
func esc(s string) string { return url.PathEscape(s) }

func escPath(p string) string {
	parts := strings.Split(p, "/")
	for i := range parts {
		parts[i] = url.PathEscape(parts[i])
	}
	return strings.Join(parts, "/")
}
