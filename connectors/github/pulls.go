package github

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"countersign"
	"countersign/connectors"
)

// prCreate opens a pull request.
type prCreate struct {
	named
	prCreateArgs
}

type prCreateArgs struct {
	Repo  string  `json:"repo,omitempty"`
	Title *string `json:"title,omitempty"`
	Body  *string `json:"body,omitempty"`
	Head  string  `json:"head,omitempty"`
	Base  string  `json:"base,omitempty"` // prepare sets the default branch
	Draft bool    `json:"draft,omitempty"`
}

func (w *prCreate) args() any     { return &w.prCreateArgs }
func (w *prCreate) scope() scope  { return scope{repo: w.Repo} } // it changes no branch
func (w *prCreate) doing() string { return "opening the pull request" }

func (w *prCreate) check() error {
	return firstError(checkRepo(w.Repo), checkBranch("base", w.Base), checkHead(w.Head))
}

func (w *prCreate) prepare(ctx context.Context, cl *client) (map[string]*string, error) {
	if w.Base == "" {
		b, err := defaultBranch(ctx, cl, w.Repo)
		if err != nil {
			return nil, err
		}
		w.Base = b
	}
	return nil, nil
}

func (w *prCreate) show(d *display, _ map[string]*string) {
	agent(d, "Title", opt(w.Title))
	agent(d, "Branches", w.Head+" into "+w.Base)
	if w.Body != nil {
		d.long("Body", "body.md", *w.Body, countersign.WrittenByAgent)
	}
	if w.Draft {
		agent(d, "Draft", "yes")
	}
}

func (w *prCreate) summary(map[string]*string) line {
	what := "open a pull request "
	if w.Draft {
		what = "open a draft pull request "
	}
	l := append(line{words(what), quoted(opt(w.Title)), words(" to merge "), name(w.Head), words(" into ")}, onBranch(w.Base, w.Repo)...)
	return append(l, words("; it can be closed later"+undoNotify))
}

func (w *prCreate) execute(ctx context.Context, cl *client) (map[string]any, error) {
	body := map[string]any{"title": *w.Title, "head": w.Head, "base": w.Base, "draft": w.Draft}
	if w.Body != nil {
		body["body"] = *w.Body
	}
	var p pullRequest
	if _, err := cl.do(ctx, http.MethodPost, repoAt(w.Repo, "pulls"), body, &p, http.StatusCreated); err != nil {
		return nil, err
	}
	return map[string]any{"number": p.Number, "html_url": p.HTMLURL, "head_sha": p.Head.SHA, "state": p.State}, nil
}

func (w *prCreate) outcome(res answered) line {
	l := line{words(fmt.Sprintf("Opened pull request #%d ", res.num("number"))), quoted(opt(w.Title)), words(" to merge "), name(w.Head), words(" into "), name(w.Base)}
	return append(l, of(w.Repo)...)
}

// pulled is what prepare reads of the pull request a review or a merge is
// bound to.
type pulled struct {
	Head   string `json:"head,omitempty"`
	Base   string `json:"base,omitempty"`
	SHA    string `json:"sha,omitempty"`         // the head commit
	Title0 string `json:"shown_title,omitempty"` // the pull request's title
}

// readPull reads the open pull request n of repo into p, and returns its
// page.
func (p *pulled) readPull(ctx context.Context, cl *client, repo string, n int) (string, error) {
	pr, err := getPull(ctx, cl, repo, n)
	if err != nil {
		return "", err
	}
	if pr.State != "open" || pr.Merged {
		return "", countersign.Errorf(countersign.InvalidRequest, "the pull request #%d is %s", n, map[bool]string{true: "merged", false: "closed"}[pr.Merged])
	}
	p.SHA, p.Title0, p.Head, p.Base = pr.Head.SHA, pr.Title, pr.Head.Ref, pr.Base.Ref
	return pr.HTMLURL, nil
}

// showPull shows the pull request as read.
func (p *pulled) showPull(d *display, n int, commit string) {
	project(d, "Pull request", fmt.Sprintf("#%d %s", n, p.Title0))
	project(d, "Branches", p.Head+" into "+p.Base)
	project(d, commit, p.SHA)
}

// prReview reviews a pull request at the head commit shown.
type prReview struct {
	named
	prReviewArgs
	pulled
}

type prReviewArgs struct {
	Repo   string  `json:"repo,omitempty"`
	Number int     `json:"number,omitempty"`
	Body   *string `json:"body,omitempty"`
	Event  string  `json:"event,omitempty"`
}

func (w *prReview) args() any     { return &w.prReviewArgs }
func (w *prReview) scope() scope  { return scope{repo: w.Repo} } // it changes no branch
func (w *prReview) doing() string { return fmt.Sprintf("reviewing #%d", w.Number) }

func (w *prReview) check() error {
	return firstError(checkRepo(w.Repo), checkBranch("base", w.Base), checkHead(w.Head))
}

func (w *prReview) prepare(ctx context.Context, cl *client) (map[string]*string, error) {
	_, err := w.readPull(ctx, cl, w.Repo, w.Number)
	return nil, err
}

func (w *prReview) show(d *display, _ map[string]*string) {
	w.showPull(d, w.Number, "Reviewed commit")
	agent(d, "Verdict", map[string]string{"APPROVE": "approve", "REQUEST_CHANGES": "request changes", "COMMENT": "comment"}[w.Event])
	if w.Body != nil {
		d.long("Summary", "review.md", *w.Body, countersign.WrittenByAgent)
	}
}

func (w *prReview) summary(map[string]*string) line {
	verb := map[string]string{"APPROVE": "approve", "REQUEST_CHANGES": "request changes on", "COMMENT": "comment on"}[w.Event]
	return line{words(fmt.Sprintf("%s pull request #%d of ", verb, w.Number)), name(w.Repo), words(" at " + short(w.SHA) + undoReview)}
}

// recheck refuses an approving review when the head moved: GitHub would
// approve the new head.
func (w *prReview) recheck(ctx context.Context, cl *client) error {
	if w.Event != "APPROVE" {
		return nil
	}
	p, err := getPull(ctx, cl, w.Repo, w.Number)
	if err != nil {
		return notWritten(err)
	}
	if p.Head.SHA != w.SHA {
		return connectors.Refused(countersign.Conflict, false, "the pull request's head moved from %s to %s: the owner approved %s only.", w.SHA, p.Head.SHA, w.SHA)
	}
	return nil
}

func (w *prReview) execute(ctx context.Context, cl *client) (map[string]any, error) {
	body := map[string]any{"event": w.Event, "commit_id": w.SHA}
	if w.Body != nil {
		body["body"] = *w.Body
	}
	var out struct {
		ID       int64  `json:"id"`
		State    string `json:"state"`
		CommitID string `json:"commit_id"`
		HTMLURL  string `json:"html_url"`
	}
	if _, err := cl.do(ctx, http.MethodPost, repoAt(w.Repo, "pulls", strconv.Itoa(w.Number), "reviews"), body, &out, http.StatusOK); err != nil {
		return nil, err
	}
	return map[string]any{"id": out.ID, "state": out.State, "commit_id": out.CommitID, "html_url": out.HTMLURL}, nil
}

func (w *prReview) outcome(res answered) line {
	verb := map[string]string{"APPROVE": "Approved", "REQUEST_CHANGES": "Requested changes on", "COMMENT": "Commented on"}[w.Event]
	l := append(line{words(fmt.Sprintf("%s pull request #%d", verb, w.Number))}, of(w.Repo)...)
	return append(l, words(" at "+short(res.str("commit_id"))))
}

// prMerge merges a pull request at the head commit shown.
type prMerge struct {
	named
	prMergeArgs
	pulled
	Page string `json:"page,omitempty"` // the pull request's page
}

type prMergeArgs struct {
	Repo    string  `json:"repo,omitempty"`
	Message string  `json:"message,omitempty"`
	Number  int     `json:"number,omitempty"`
	Title   *string `json:"title,omitempty"`
	Method  string  `json:"method,omitempty"`
}

func (w *prMerge) args() any     { return &w.prMergeArgs }
func (w *prMerge) scope() scope  { return scope{repo: w.Repo, branch: w.Base} }
func (w *prMerge) doing() string { return fmt.Sprintf("merging #%d", w.Number) }

func (w *prMerge) check() error {
	return firstError(checkRepo(w.Repo), checkBranch("base", w.Base), checkHead(w.Head))
}

func (w *prMerge) fromTask(shown func(string) string) {
	if _, base, ok := strings.Cut(shown("Branches"), " into "); ok {
		w.Base = base
	}
}

func (w *prMerge) prepare(ctx context.Context, cl *client) (map[string]*string, error) {
	page, err := w.readPull(ctx, cl, w.Repo, w.Number)
	w.Page = page
	return nil, err
}

// method is the merge's method, "merge" when the agent named none.
func (w *prMerge) method() string {
	if w.Method == "" {
		return "merge"
	}
	return w.Method
}

func (w *prMerge) show(d *display, _ map[string]*string) {
	w.showPull(d, w.Number, "Head commit")
	agent(d, "Method", w.method())
	if w.Title != nil {
		agent(d, "Commit title", *w.Title)
	}
	if w.Message != "" {
		d.long("Commit message", "message.txt", w.Message, countersign.WrittenByAgent)
	}
}

func (w *prMerge) summary(map[string]*string) line {
	how := map[string]string{"merge": " by a merge commit", "squash": " squashed into one commit", "rebase": " rebased"}[w.method()]
	return line{words(fmt.Sprintf("merge pull request #%d of ", w.Number)), name(w.Repo), words(" into "), name(w.Base), words(" at " + short(w.SHA) + how + undoMerge)}
}

func (w *prMerge) execute(ctx context.Context, cl *client) (map[string]any, error) {
	body := map[string]any{"sha": w.SHA, "merge_method": w.method()}
	if w.Title != nil {
		body["commit_title"] = *w.Title
	}
	if w.Message != "" {
		body["commit_message"] = w.Message
	}
	var out struct {
		SHA     string `json:"sha"`
		Merged  bool   `json:"merged"`
		Message string `json:"message"`
	}
	if _, err := cl.do(ctx, http.MethodPut, repoAt(w.Repo, "pulls", strconv.Itoa(w.Number), "merge"), body, &out, http.StatusOK); err != nil {
		return nil, err
	}
	return map[string]any{"sha": out.SHA, "merged": out.Merged, "message": out.Message, "number": w.Number, "html_url": w.Page}, nil
}

func (w *prMerge) outcome(res answered) line {
	l := append(line{words(fmt.Sprintf("Merged pull request #%d", w.Number))}, of(w.Repo)...)
	return append(l, words(" into "), name(w.Base), words(" as "+short(res.str("sha"))))
}

func (w *prMerge) conflict(e *apiError) error {
	switch e.Status {
	case http.StatusConflict:
		return connectors.Refused(countersign.Conflict, false, "The pull request's head moved from %s after it was shown for approval, so GitHub merged nothing (GitHub: %s).", w.SHA, e.what())
	case http.StatusMethodNotAllowed:
		return connectors.Refused(countersign.Conflict, false, "GitHub would not merge the pull request (GitHub: %s).", e.what())
	}
	return nil
}
