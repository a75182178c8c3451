package client

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
)

// How an entry of the history came about.
const (
	ViaTask   = "task"   // a task the owner was asked (or told)
	ViaDirect = "direct" // a write carried out at once, not asked
)

// ActivityEntry is an entry of the owner's history (SPEC §6, GET
// /inbox/activity): one per write carried out, asked or not, and per task
// that ended. Only ids, names, states and times are in clear; the title,
// summary and result are Sealed, which device.OpenEntry opens with this
// device's copy of the entry's key.
type ActivityEntry struct {
	ID        string `json:"id"`
	At        string `json:"at"`
	Project   string `json:"project"`
	Connector string `json:"connector"`
	// Operation is what the agent called: the write carried out at once,
	// or the one whose run opened the task.
	Operation string `json:"operation"`
	Preparer  string `json:"preparer"`
	Via       string `json:"via"` // ViaTask or ViaDirect
	// TaskID is the entry's task; empty for a write carried out at once.
	TaskID        string `json:"task_id,omitempty"`
	State         string `json:"state"`
	FailureReason string `json:"failure_reason,omitempty"`
	Sealed        []byte `json:"sealed"`
	// DeviceCopy is the entry's key wrapped to this device; nil when this
	// device has none (Unlock wraps the last 30 days' to every current
	// device).
	DeviceCopy []byte `json:"device_copy"`
}

// ActivityPage is one page of the history.
type ActivityPage struct {
	Entries []ActivityEntry `json:"entries"`
	// More is true when older entries follow: ask again with Before set to
	// the last entry's id.
	More bool `json:"more"`
}

// ActivityQuery chooses a page of the history: entries older than Before
// (an entry's id), of one Project (by name) or Preparer (an agent), at most
// Limit (1 to 100); zero values leave them to the service.
type ActivityQuery struct {
	Before, Project, Preparer string
	Limit                     int
}

// Activity lists one page of the owner's history, newest first.
func (c *Client) Activity(ctx context.Context, q ActivityQuery) (ActivityPage, error) {
	v := url.Values{}
	for name, value := range map[string]string{"before": q.Before, "project": q.Project, "preparer": q.Preparer} {
		if value != "" {
			v.Set(name, value)
		}
	}
	if q.Limit != 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	path := "/inbox/activity"
	if len(v) > 0 {
		path += "?" + v.Encode()
	}
	var page ActivityPage
	if err := c.do(ctx, http.MethodGet, path, c.Session, nil, &page); err != nil {
		return ActivityPage{}, fmt.Errorf("list the history: %w", err)
	}
	return page, nil
}
