package github

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"countersign"
)

// issueCreate opens an issue.
type issueCreate struct {
	named
	issueCreateArgs
}

type issueCreateArgs struct {
	Repo      string    `json:"repo,omitempty"`
	Title     *string   `json:"title,omitempty"`
	Body      *string   `json:"body,omitempty"`
	Labels    *[]string `json:"labels,omitempty"`
	Assignees *[]string `json:"assignees,omitempty"`
}

func (w *issueCreate) args() any     { return &w.issueCreateArgs }
func (w *issueCreate) scope() scope  { return scope{repo: w.Repo} }
func (w *issueCreate) check() error  { return checkRepo(w.Repo) }
func (w *issueCreate) doing() string { return "opening the issue" }

func (w *issueCreate) prepare(context.Context, *client) (map[string]*string, error) {
	return nil, nil
}

func (w *issueCreate) show(d *display, _ map[string]*string) {
	agent(d, "Title", opt(w.Title))
	if w.Body != nil {
		d.long("Body", "body.md", *w.Body, countersign.WrittenByAgent)
	}
	issueLists(d, w.Labels, w.Assignees)
}

func (w *issueCreate) summary(map[string]*string) line {
	return line{words("open an issue "), quoted(opt(w.Title)), words(" in "), name(w.Repo), words("; it can be closed later" + undoNotify)}
}

func (w *issueCreate) execute(ctx context.Context, cl *client) (map[string]any, error) {
	return issueResult(ctx, cl, http.MethodPost, repoAt(w.Repo, "issues"), issueBody(w.Title, w.Body, nil, nil, w.Labels, w.Assignees), http.StatusCreated)
}

func (w *issueCreate) outcome(res answered) line {
	return line{words(fmt.Sprintf("Opened issue #%d ", res.num("number"))), quoted(opt(w.Title)), words(" in "), name(w.Repo)}
}

// issueComment comments on an issue or a pull request.
type issueComment struct {
	named
	issueCommentArgs
	Title0 string `json:"shown_title,omitempty"` // the issue's title
}

type issueCommentArgs struct {
	Repo   string  `json:"repo,omitempty"`
	Number int     `json:"number,omitempty"`
	Body   *string `json:"body,omitempty"`
}

func (w *issueComment) args() any     { return &w.issueCommentArgs }
func (w *issueComment) scope() scope  { return scope{repo: w.Repo} }
func (w *issueComment) check() error  { return checkRepo(w.Repo) }
func (w *issueComment) doing() string { return fmt.Sprintf("commenting on #%d", w.Number) }

func (w *issueComment) prepare(ctx context.Context, cl *client) (map[string]*string, error) {
	is, err := getIssue(ctx, cl, w.Repo, w.Number)
	if err != nil {
		return nil, err
	}
	w.Title0 = is.Title
	return nil, nil
}

func (w *issueComment) show(d *display, _ map[string]*string) {
	project(d, "Issue", fmt.Sprintf("#%d %s", w.Number, w.Title0))
	d.long("Comment", "comment.md", opt(w.Body), countersign.WrittenByAgent)
}

func (w *issueComment) summary(map[string]*string) line {
	return line{words(fmt.Sprintf("comment on #%d of ", w.Number)), name(w.Repo), words("; it can be deleted later" + undoNotify)}
}

func (w *issueComment) execute(ctx context.Context, cl *client) (map[string]any, error) {
	var out struct {
		ID      int64  `json:"id"`
		HTMLURL string `json:"html_url"`
	}
	if _, err := cl.do(ctx, http.MethodPost, repoAt(w.Repo, "issues", strconv.Itoa(w.Number), "comments"), map[string]string{"body": *w.Body}, &out, http.StatusCreated); err != nil {
		return nil, err
	}
	return map[string]any{"id": out.ID, "html_url": out.HTMLURL, "number": w.Number}, nil
}

func (w *issueComment) outcome(answered) line {
	return append(line{words(fmt.Sprintf("Commented on #%d", w.Number))}, of(w.Repo)...)
}

// issueUpdate changes an issue.
type issueUpdate struct {
	named
	issueUpdateArgs
	Title0 string `json:"shown_title,omitempty"` // the issue's title
}

type issueUpdateArgs struct {
	Repo        string    `json:"repo,omitempty"`
	Number      int       `json:"number,omitempty"`
	Title       *string   `json:"title,omitempty"`
	Body        *string   `json:"body,omitempty"`
	State       *string   `json:"state,omitempty"`
	StateReason *string   `json:"state_reason,omitempty"`
	Labels      *[]string `json:"labels,omitempty"`
	Assignees   *[]string `json:"assignees,omitempty"`
}

func (w *issueUpdate) args() any     { return &w.issueUpdateArgs }
func (w *issueUpdate) scope() scope  { return scope{repo: w.Repo} }
func (w *issueUpdate) doing() string { return fmt.Sprintf("changing #%d", w.Number) }

func (w *issueUpdate) check() error {
	if err := checkRepo(w.Repo); err != nil {
		return err
	}
	if w.Title == nil && w.Body == nil && w.State == nil && w.Labels == nil && w.Assignees == nil {
		return countersign.Errorf(countersign.InvalidRequest, "issue_update changes at least one of title, body, state, labels, assignees")
	}
	return nil
}

func (w *issueUpdate) prepare(ctx context.Context, cl *client) (map[string]*string, error) {
	is, err := getIssue(ctx, cl, w.Repo, w.Number)
	if err != nil {
		return nil, err
	}
	w.Title0 = is.Title
	return nil, nil
}

func (w *issueUpdate) show(d *display, _ map[string]*string) {
	project(d, "Issue", fmt.Sprintf("#%d %s", w.Number, w.Title0))
	if w.Title != nil {
		agent(d, "New title", *w.Title)
	}
	if w.Body != nil {
		d.long("New body", "body.md", *w.Body, countersign.WrittenByAgent)
	}
	if w.State != nil {
		s := *w.State
		if w.StateReason != nil {
			s += " (" + *w.StateReason + ")"
		}
		agent(d, "New state", s)
	}
	issueLists(d, w.Labels, w.Assignees)
}

func (w *issueUpdate) summary(map[string]*string) line {
	l := line{words(fmt.Sprintf("change issue #%d of ", w.Number)), name(w.Repo), words(": ")}
	var parts []line
	if w.State != nil {
		s := map[string]string{"open": "reopen it", "closed": "close it"}[*w.State]
		if w.StateReason != nil {
			s += " (" + strings.ReplaceAll(*w.StateReason, "_", " ") + ")"
		}
		parts = append(parts, line{words(s)})
	}
	if w.Title != nil {
		parts = append(parts, line{words("retitle it "), quoted(*w.Title)})
	}
	if w.Body != nil {
		parts = append(parts, line{words("replace its body")})
	}
	for _, set := range []struct {
		what string
		v    *[]string
	}{{"labels", w.Labels}, {"assignees", w.Assignees}} {
		switch {
		case set.v == nil:
		case len(*set.v) == 0:
			parts = append(parts, line{words("remove its " + set.what)})
		default:
			parts = append(parts, few(line{words("set its " + set.what + " to ")}, each(*set.v, quoted)))
		}
	}
	for i, p := range parts {
		if i > 0 {
			l = append(l, words(", "))
		}
		l = append(l, p...)
	}
	return append(l, words(undoRestore))
}

func (w *issueUpdate) execute(ctx context.Context, cl *client) (map[string]any, error) {
	return issueResult(ctx, cl, http.MethodPatch, repoAt(w.Repo, "issues", strconv.Itoa(w.Number)), issueBody(w.Title, w.Body, w.State, w.StateReason, w.Labels, w.Assignees), http.StatusOK)
}

func (w *issueUpdate) outcome(res answered) line {
	l := append(line{words(fmt.Sprintf("Changed issue #%d", w.Number))}, of(w.Repo)...)
	return append(l, words("; it is "+res.str("state")))
}

// issueBody is what an issue write sends: the members the agent gave
// (issue_create's schema requires a title and has no state).
func issueBody(title, body, state, stateReason *string, labels, assignees *[]string) map[string]any {
	out := map[string]any{}
	for k, v := range map[string]*string{"title": title, "body": body, "state": state, "state_reason": stateReason} {
		if v != nil {
			out[k] = *v
		}
	}
	for k, v := range map[string]*[]string{"labels": labels, "assignees": assignees} {
		if v != nil {
			out[k] = *v
		}
	}
	return out
}

func issueResult(ctx context.Context, cl *client, m string, path at, body any, want int) (map[string]any, error) {
	var is issueJSON
	if _, err := cl.do(ctx, m, path, body, &is, want); err != nil {
		return nil, err
	}
	return map[string]any{"number": is.Number, "html_url": is.HTMLURL, "state": is.State}, nil
}

// issueLists shows the labels and assignees an issue write sets.
func issueLists(d *display, labels, assignees *[]string) {
	for _, l := range []struct {
		label string
		v     *[]string
	}{{"Labels", labels}, {"Assignees", assignees}} {
		if l.v == nil {
			continue
		}
		if len(*l.v) == 0 {
			agent(d, l.label, "none: every one is removed")
			continue
		}
		listField(d, l.label, *l.v, countersign.WrittenByAgent)
	}
}
