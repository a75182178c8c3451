package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// Refusal is a refusal answered to an agent with HTTP 200: a connector or
// the task layer said no ({"success": false, "error": "<code>: <sentence>"}).
type Refusal struct {
	Code    string
	Message string
}

func (r *Refusal) Error() string { return r.Code + ": " + r.Message }

// CallOptions are optional parts of a call.
type CallOptions struct {
	// IdempotencyKey makes a retried call return the first answer.
	IdempotencyKey string
}

// Call calls an operation of owner/project with args (a JSON object whose
// "operation" member is set from operation). It returns the operation's
// JSON answer, a *Refusal, or an *Error for a transport-level failure.
func (c *Client) Call(ctx context.Context, owner, project, operation string, args map[string]any, opts *CallOptions) (json.RawMessage, error) {
	body := map[string]any{}
	for k, v := range args {
		body[k] = v
	}
	body["operation"] = operation
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	return c.CallRaw(ctx, owner, project, raw, opts)
}

// CallRaw sends body, a JSON object, exactly as given.
func (c *Client) CallRaw(ctx context.Context, owner, project string, body []byte, opts *CallOptions) (json.RawMessage, error) {
	path := "/call/" + url.PathEscape(owner) + "/" + url.PathEscape(project)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(c.BaseURL, "/")+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if c.AgentKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.AgentKey)
	}
	if opts != nil && opts.IdempotencyKey != "" {
		req.Header.Set("Idempotency-Key", opts.IdempotencyKey)
	}
	var out json.RawMessage
	if err := c.send(req, &out); err != nil {
		return nil, err
	}
	var refused struct {
		Success *bool  `json:"success"`
		Error   string `json:"error"`
	}
	if json.Unmarshal(out, &refused) == nil && refused.Success != nil && !*refused.Success {
		code, msg, _ := strings.Cut(refused.Error, ": ")
		return out, &Refusal{Code: code, Message: msg}
	}
	return out, nil
}

// TaskStatus is what an agent learns of one of its tasks.
type TaskStatus struct {
	TaskID        string          `json:"task_id"`
	Kind          string          `json:"kind"`
	State         string          `json:"state"`
	Thread        string          `json:"thread"`
	CreatedAt     string          `json:"created_at"`
	ExpiresAt     string          `json:"expires_at"`
	OutcomeClass  string          `json:"outcome_class,omitempty"`
	Result        json.RawMessage `json:"result,omitempty"`
	Reason        *string         `json:"reason,omitempty"`
	Run           string          `json:"run,omitempty"`
	FailureReason string          `json:"failure_reason,omitempty"`
	NextTaskID    string          `json:"next_task_id,omitempty"`
	NoticeTaskID  string          `json:"notice_task_id,omitempty"`
	// Status ("awaiting_owner") and Approvals are set while a task that
	// needs the approvals of several accounts waits.
	Status    string          `json:"status,omitempty"`
	Approvals *ApprovalsCount `json:"approvals,omitempty"`
}

// ApprovalsCount is how many distinct accounts approved a task and how
// many must.
type ApprovalsCount struct {
	Have int `json:"have"`
	Need int `json:"need"`
}

// Awaiting is the answer of a call that opened a task.
type Awaiting struct {
	OK        bool   `json:"ok"`
	Status    string `json:"status"` // awaiting_owner or notified
	TaskID    string `json:"task_id"`
	TaskHash  string `json:"task_hash"`
	Thread    string `json:"thread"`
	ExpiresAt string `json:"expires_at"`
	Link      string `json:"link"`
}

// Status asks task_status; with waitSeconds > 0 it asks task_wait, which
// answers early when the task's state changes.
func (c *Client) Status(ctx context.Context, owner, project, taskID string, waitSeconds int) (TaskStatus, error) {
	op, args := "task_status", map[string]any{"task_id": taskID}
	if waitSeconds > 0 {
		op, args["timeout_s"] = "task_wait", waitSeconds
	}
	raw, err := c.Call(ctx, owner, project, op, args, nil)
	if err != nil {
		return TaskStatus{}, err
	}
	var st TaskStatus
	if err := json.Unmarshal(raw, &st); err != nil {
		return TaskStatus{}, fmt.Errorf("task_status answered %s: %w", raw, err)
	}
	return st, nil
}

// Grant is a project the agent key may call.
type Grant struct {
	Owner     string `json:"owner"`
	Project   string `json:"project"`
	Connector string `json:"connector"`
}

// AgentProjects lists the projects granted to the agent key
// (GET /agent/projects).
func (c *Client) AgentProjects(ctx context.Context) ([]Grant, error) {
	var out struct {
		Projects []Grant `json:"projects"`
	}
	if err := c.do(ctx, http.MethodGet, "/agent/projects", c.AgentKey, nil, &out); err != nil {
		return nil, err
	}
	return out.Projects, nil
}
