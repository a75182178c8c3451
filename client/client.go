// Package client is the Go client of Countersign's HTTP API, for agents (the
// /call API), owners (the /inbox API), anyone reading the public connector
// catalogue and run keys, and tests. It speaks the same protocol a browser
// does and depends on the standard library only; its JSON types are copies
// of the service's, held to them by wire_test.go.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Client talks to one Countersign service.
type Client struct {
	// BaseURL is the service's origin, e.g. http://127.0.0.1:8080.
	BaseURL string
	// HTTP is the client to use (nil: a client with a 90-second timeout,
	// long enough for task_wait's long poll).
	HTTP *http.Client
	// Session is the owner's session token (os_…), for the inbox API.
	Session string
	// AgentKey is the agent's key (ak_…), for the call API.
	AgentKey string
	// EventsIdle is how long an event stream (Events) may stay silent
	// before it is taken for dead (0: DefaultEventsIdle).
	EventsIdle time.Duration
}

var defaultHTTP = &http.Client{Timeout: 90 * time.Second}

// Error is a refusal from the service.
type Error struct {
	Status int
	// Reason is the refusal code (invalid_request, task_closed, …).
	Reason string
	// Message is the service's sentence.
	Message string
	// Terminal is false for transient failures worth retrying.
	Terminal bool
	// State is the task's state, for task_closed.
	State string
	// TaskID names the task a refusal of a batch approval is about.
	TaskID string
	// RetryAfter is the service's Retry-After, if it sent one.
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	if e.Reason == "" {
		return fmt.Sprintf("HTTP %d: %s", e.Status, e.Message)
	}
	return fmt.Sprintf("%s: %s", e.Reason, e.Message)
}

// Reason returns the refusal code of err, or "" when err is not a refusal.
func Reason(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ""
}

// do sends a JSON request and decodes a JSON answer into out.
func (c *Client) do(ctx context.Context, method, path, auth string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(c.BaseURL, "/")+path, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if auth != "" {
		req.Header.Set("Authorization", "Bearer "+auth)
	}
	return c.send(req, out)
}

func (c *Client) send(req *http.Request, out any) error {
	hc := c.HTTP
	if hc == nil {
		hc = defaultHTTP
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode >= 300 {
		return decodeError(resp, raw)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("the service answered HTTP %d with a body that is not the expected JSON: %w", resp.StatusCode, err)
	}
	return nil
}

func decodeError(resp *http.Response, raw []byte) error {
	e := &Error{Status: resp.StatusCode}
	var owner struct {
		Error    string `json:"error"`
		Reason   string `json:"reason"`
		Terminal *bool  `json:"terminal"`
		State    string `json:"state"`
		TaskID   string `json:"task_id"`
		Success  *bool  `json:"success"`
	}
	if json.Unmarshal(raw, &owner) == nil {
		switch {
		case owner.Reason != "":
			e.Reason, e.Message, e.State, e.TaskID = owner.Reason, owner.Error, owner.State, owner.TaskID
			e.Terminal = owner.Terminal == nil || *owner.Terminal
		case owner.Success != nil:
			// An agent-facing transport refusal: "<code>: <sentence>".
			code, msg, _ := strings.Cut(owner.Error, ": ")
			e.Reason, e.Message, e.Terminal = code, msg, resp.StatusCode < 500
		default:
			e.Message = owner.Error
		}
	}
	if e.Message == "" && e.Reason == "" {
		e.Message = http.StatusText(resp.StatusCode)
	}
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
		e.RetryAfter = time.Duration(s) * time.Second
	}
	return e
}
