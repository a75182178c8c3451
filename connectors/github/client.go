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
	"countersign/egress"
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
func parseCredentials(raw []byte) (credentials, error) {
	var c credentials
	bad := countersign.Errorf(countersign.InvalidRequest, "the project's credentials are not {\"token\": …, \"base_url\"?: …}: the owner must set them")
	if len(raw) == 0 {
		return c, countersign.Errorf(countersign.InvalidRequest, "the project has no GitHub token: the owner must set its credentials")
	}
	if countersign.DecodeStrict(raw, &c) != nil || c.Token == "" || strings.ContainsAny(c.Token, " \t\r\n") {
		return c, bad
	}
	return c, nil
}

// client talks to one GitHub API with one token.
type client struct {
	base  string // scheme, host and path, no trailing slash
	token string
	http  *http.Client
	// own: the base came from the project's credentials.
	own bool
}

// client is the API client for a project's credentials: the base URL they
// name, or the connector's, checked by the egress rules (https, no
// userinfo, query or fragment, a public host, no dot segments) before any
// request.
func (g *GitHub) client(raw []byte) (*client, error) {
	c, err := parseCredentials(raw)
	if err != nil {
		return nil, err
	}
	base, own := g.opts.BaseURL, c.BaseURL != ""
	if own {
		base = c.BaseURL
	}
	u, err := egress.CheckBaseURL(base, g.opts.Egress.AllowPrivate)
	if err != nil {
		ue := egress.ErrURLSyntax
		errors.As(err, &ue)
		if own {
			return nil, countersign.Errorf(countersign.InvalidRequest, "%s: the owner must correct the project's credentials", ue.Of("the project's base_url"))
		}
		return nil, countersign.Errorf(countersign.Internal, "the service's GitHub base URL is refused: %s", ue.Of("it"))
	}
	return &client{base: u.String(), token: c.Token, http: g.httpc, own: own}, nil
}

// apiError is what GitHub answered when it did not answer the success
// expected, or why it was not asked.
type apiError struct {
	Status     int
	Message    string
	Errors     []string
	RetryAfter time.Duration
	RateLimit  bool
	// Unknown: no answer came back (transport failure, 5xx, unreadable
	// answer): a write may have happened.
	Unknown bool
	// Before: refused before the request left (a name that would make a
	// dot segment, a host that is not public): nothing was sent, and Code
	// says why.
	Before bool
	Code   countersign.Code
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

// at is a request's path: its segments, each escaped whole when the
// request is made (egress.Path), so no value can add or remove a level.
type at []string

// repoAt is the path of repo's resource rest.
func repoAt(repo string, rest ...string) at {
	owner, name, _ := strings.Cut(repo, "/")
	return append(at{"repos", owner, name}, rest...)
}

// parts are the "/"-separated parts of a branch name or a file path, each
// a segment of its own.
func parts(name string) []string { return strings.Split(name, "/") }

// do sends one request and decodes a success answer into out (nil: ignore
// the body). want lists the success statuses.
func (c *client) do(ctx context.Context, method string, path at, in, out any, want ...int) (int, error) {
	return c.send(ctx, method, path, nil, in, out, want...)
}

// send is do with a query.
func (c *client) send(ctx context.Context, method string, path at, query url.Values, in, out any, want ...int) (int, error) {
	p, err := egress.Path(path...)
	if err != nil {
		return 0, &apiError{Before: true, Code: countersign.InvalidRequest, Message: "a name would make an empty, . or .. segment of GitHub's URL path"}
	}
	if len(query) > 0 {
		p += "?" + egress.Query(query)
	}
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return 0, err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+p, body)
	if err != nil {
		return 0, &apiError{Before: true, Code: countersign.InvalidRequest, Message: "the request to GitHub could not be made"}
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
	switch {
	case egress.Refused(err) && c.own:
		return 0, &apiError{Before: true, Code: countersign.InvalidRequest,
			Message: "the project's base_url leads to an address that is not public (loopback, private, link-local or reserved), so GitHub was not asked: the owner must correct the project's credentials"}
	case egress.Refused(err):
		return 0, &apiError{Before: true, Code: countersign.Internal, Message: "GitHub's host resolves to an address that is not public, so it was not asked"}
	case err != nil:
		// The error may quote the URL but never the token, which travels
		// in a header only; it is not repeated.
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
	case e.Before:
		return countersign.Errorf(e.Code, "%s", e.Message)
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
// only a 4xx answer, or a refusal before the request left, proves it did
// not.
func mayHaveWritten(err error) bool {
	var e *apiError
	return !errors.As(err, &e) || e.Unknown
}
