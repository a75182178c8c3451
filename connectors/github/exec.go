package github

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"countersign"
	"countersign/connectors"
	"countersign/policy"
)

// execute carries out a prepared write and returns what GitHub answered.
func execute(ctx context.Context, cl *client, w *write) (map[string]any, error) {
	num := strconv.Itoa(w.Number)
	switch w.Op {
	case "branch_create":
		var ref gitRef
		if _, err := cl.do(ctx, http.MethodPost, repoAt(w.Repo, "git", "refs"), map[string]string{"ref": "refs/heads/" + w.Branch, "sha": w.SHA}, &ref, http.StatusCreated); err != nil {
			return nil, err
		}
		return map[string]any{"ref": ref.Ref, "sha": ref.Object.SHA, "html_url": treeURL(w.Page, w.Branch)}, nil
	case "file_put":
		body := map[string]any{"message": w.Message, "content": base64.StdEncoding.EncodeToString([]byte(*w.Content)), "branch": w.Branch}
		if w.SHA != "" {
			body["sha"] = w.SHA
		}
		var out struct {
			Content struct {
				Path    string `json:"path"`
				SHA     string `json:"sha"`
				HTMLURL string `json:"html_url"`
			} `json:"content"`
			Commit gitCommit `json:"commit"`
		}
		if _, err := cl.do(ctx, http.MethodPut, repoAt(w.Repo, append([]string{"contents"}, parts(w.Path)...)...), body, &out, http.StatusOK, http.StatusCreated); err != nil {
			return nil, err
		}
		return map[string]any{"path": out.Content.Path, "blob_sha": out.Content.SHA, "html_url": out.Content.HTMLURL, "sha": out.Commit.SHA, "commit_url": out.Commit.HTMLURL}, nil
	case "commit":
		var base gitCommit
		if _, err := cl.do(ctx, http.MethodGet, repoAt(w.Repo, "git", "commits", w.SHA), nil, &base, http.StatusOK); err != nil {
			return nil, err
		}
		type item struct {
			Path string  `json:"path"`
			Mode string  `json:"mode"`
			Type string  `json:"type"`
			SHA  *string `json:"sha"`
		}
		var tree []item
		for _, ch := range w.Changes {
			// A file keeps the mode it had when the task was made.
			mode := w.Modes[ch.Path]
			if mode == "" {
				mode = modeFile
			}
			if ch.Delete {
				tree = append(tree, item{Path: ch.Path, Mode: mode, Type: "blob"})
				continue
			}
			var blob struct {
				SHA string `json:"sha"`
			}
			if _, err := cl.do(ctx, http.MethodPost, repoAt(w.Repo, "git", "blobs"), map[string]string{"content": base64.StdEncoding.EncodeToString([]byte(*ch.Content)), "encoding": "base64"}, &blob, http.StatusCreated); err != nil {
				return nil, err
			}
			tree = append(tree, item{Path: ch.Path, Mode: mode, Type: "blob", SHA: &blob.SHA})
		}
		var t struct {
			SHA string `json:"sha"`
		}
		if _, err := cl.do(ctx, http.MethodPost, repoAt(w.Repo, "git", "trees"), map[string]any{"base_tree": base.Tree.SHA, "tree": tree}, &t, http.StatusCreated); err != nil {
			return nil, err
		}
		var c gitCommit
		if _, err := cl.do(ctx, http.MethodPost, repoAt(w.Repo, "git", "commits"), map[string]any{"message": w.Message, "tree": t.SHA, "parents": []string{w.SHA}}, &c, http.StatusCreated); err != nil {
			return nil, err
		}
		var ref gitRef
		if _, err := cl.do(ctx, http.MethodPatch, repoAt(w.Repo, append([]string{"git", "refs", "heads"}, parts(w.Branch)...)...), map[string]any{"sha": c.SHA, "force": false}, &ref, http.StatusOK); err != nil {
			return nil, err
		}
		return map[string]any{"sha": c.SHA, "html_url": c.HTMLURL, "branch": w.Branch, "parent": w.SHA}, nil
	case "issue_create":
		return issueResult(ctx, cl, http.MethodPost, repoAt(w.Repo, "issues"), issueBody(w), http.StatusCreated)
	case "issue_update":
		return issueResult(ctx, cl, http.MethodPatch, repoAt(w.Repo, "issues", num), issueBody(w), http.StatusOK)
	case "issue_comment":
		var out struct {
			ID      int64  `json:"id"`
			HTMLURL string `json:"html_url"`
		}
		if _, err := cl.do(ctx, http.MethodPost, repoAt(w.Repo, "issues", num, "comments"), map[string]string{"body": *w.Body}, &out, http.StatusCreated); err != nil {
			return nil, err
		}
		return map[string]any{"id": out.ID, "html_url": out.HTMLURL, "number": w.Number}, nil
	case "pr_create":
		body := map[string]any{"title": *w.Title, "head": w.Head, "base": w.Base, "draft": w.Draft}
		if w.Body != nil {
			body["body"] = *w.Body
		}
		var p pullRequest
		if _, err := cl.do(ctx, http.MethodPost, repoAt(w.Repo, "pulls"), body, &p, http.StatusCreated); err != nil {
			return nil, err
		}
		return map[string]any{"number": p.Number, "html_url": p.HTMLURL, "head_sha": p.Head.SHA, "state": p.State}, nil
	case "pr_review":
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
		if _, err := cl.do(ctx, http.MethodPost, repoAt(w.Repo, "pulls", num, "reviews"), body, &out, http.StatusOK); err != nil {
			return nil, err
		}
		return map[string]any{"id": out.ID, "state": out.State, "commit_id": out.CommitID, "html_url": out.HTMLURL}, nil
	case "pr_merge":
		body := map[string]any{"sha": w.SHA, "merge_method": method(w)}
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
		if _, err := cl.do(ctx, http.MethodPut, repoAt(w.Repo, "pulls", num, "merge"), body, &out, http.StatusOK); err != nil {
			return nil, err
		}
		return map[string]any{"sha": out.SHA, "merged": out.Merged, "message": out.Message, "number": w.Number, "html_url": w.Page}, nil
	case "gist_create", "gist_update":
		files := map[string]any{}
		for name, c := range w.Files {
			if c == nil {
				files[name] = nil
			} else {
				files[name] = map[string]string{"content": *c}
			}
		}
		body := map[string]any{"files": files}
		if w.Description != nil {
			body["description"] = *w.Description
		}
		var out gistJSON
		var err error
		if w.Op == "gist_create" {
			body["public"] = w.Public
			_, err = cl.do(ctx, http.MethodPost, at{"gists"}, body, &out, http.StatusCreated)
		} else {
			_, err = cl.do(ctx, http.MethodPatch, at{"gists", w.GistID}, body, &out, http.StatusOK)
		}
		if err != nil {
			return nil, err
		}
		return map[string]any{"id": out.ID, "html_url": out.HTMLURL}, nil
	case "repo_star", "repo_unstar":
		m := http.MethodPut
		if w.Op == "repo_unstar" {
			m = http.MethodDelete
		}
		o, n, _ := strings.Cut(w.Repo, "/")
		if _, err := cl.do(ctx, m, at{"user", "starred", o, n}, nil, nil, http.StatusNoContent); err != nil {
			return nil, err
		}
		return map[string]any{"repo": w.Repo, "starred": w.Op == "repo_star", "html_url": w.Page}, nil
	}
	return nil, fmt.Errorf("no write %s", w.Op)
}

// issueBody is what an issue write sends: the members the agent gave
// (issue_create's schema requires a title and has no state).
func issueBody(w *write) map[string]any {
	body := map[string]any{}
	for k, v := range map[string]*string{"title": w.Title, "body": w.Body, "state": w.State, "state_reason": w.StateReason} {
		if v != nil {
			body[k] = *v
		}
	}
	for k, v := range map[string]*[]string{"labels": w.Labels, "assignees": w.Assignees} {
		if v != nil {
			body[k] = *v
		}
	}
	return body
}

func issueResult(ctx context.Context, cl *client, m string, path at, body any, want int) (map[string]any, error) {
	var is issueJSON
	if _, err := cl.do(ctx, m, path, body, &is, want); err != nil {
		return nil, err
	}
	return map[string]any{"number": is.Number, "html_url": is.HTMLURL, "state": is.State}, nil
}

func method(w *write) string {
	if w.Method == "" {
		return "merge"
	}
	return w.Method
}

// confirm carries out an approved write: the policy as it is now, the
// day's count, then the sealed write and nothing else (but for an
// approving review, which reads the head again).
func (g *GitHub) confirm(ctx context.Context, a *connectors.AnswerCall) (connectors.Report, error) {
	w, err := parseState(a.State)
	if err != nil {
		return connectors.Report{}, connectors.Refused(countersign.TaskUnreadable, false, "The sealed write does not read.")
	}
	if d := a.Decide(w.Op, w.facts()); d.Outcome == policy.Refuse {
		return connectors.Report{}, connectors.Refused(countersign.Code(d.Code), false, "%s.", d.Sentence)
	}
	if err := bounded(a.Policy, w); err != nil {
		return connectors.Report{}, notWritten(err)
	}
	cl, err := g.client(a.Credentials)
	if err != nil {
		return connectors.Report{}, notWritten(err)
	}
	if w.Op == "pr_review" && w.Event == "APPROVE" {
		p, err := getPull(ctx, cl, w.Repo, w.Number)
		if err != nil {
			return connectors.Report{}, notWritten(err)
		}
		if p.Head.SHA != w.SHA {
			return connectors.Report{}, connectors.Refused(countersign.Conflict, false, "the pull request's head moved from %s to %s: the owner approved %s only.", w.SHA, p.Head.SHA, w.SHA)
		}
	}
	if ok, err := a.Reserve(ctx, writesPerDay(a.Policy)); err != nil {
		return connectors.Report{}, err
	} else if !ok {
		return connectors.Report{}, connectors.Refused(countersign.PolicyDenied, false, "The day's %d confirmed writes of this agent in this project are made.", writesPerDay(a.Policy))
	}
	res, err := execute(ctx, cl, w)
	if err != nil {
		return connectors.Report{}, failed(w, err)
	}
	res["ok"] = true
	return connectors.Report{Result: res, Outcome: g.outcome(w, res)}, nil
}

// failed words a write GitHub did not make after the approval.
func failed(w *write, err error) error {
	var e *apiError
	if !errors.As(err, &e) {
		return connectors.Refused(countersign.Internal, false, "The write failed before GitHub was asked.")
	}
	r := refusal(err, doing(w))
	if e.Unknown {
		// Only a 4xx proves nothing happened; the task still fails.
		return connectors.RefusedUnknown(countersign.Internal, "%s; the write may or may not have happened: look on GitHub before preparing it again.", countersign.ErrorMessage(r))
	}
	switch {
	case w.Op == "pr_merge" && e.Status == http.StatusConflict:
		return connectors.Refused(countersign.Conflict, false, "The pull request's head moved from %s after it was shown for approval, so GitHub merged nothing (GitHub: %s).", w.SHA, e.what())
	case w.Op == "pr_merge" && e.Status == http.StatusMethodNotAllowed:
		return connectors.Refused(countersign.Conflict, false, "GitHub would not merge the pull request (GitHub: %s).", e.what())
	case w.Op == "file_put" && (e.Status == http.StatusConflict || e.Status == http.StatusUnprocessableEntity && w.SHA == ""):
		return connectors.Refused(countersign.Conflict, false, "%s changed on %s after it was shown for approval (GitHub: %s).", w.Path, w.Branch, e.what())
	case w.Op == "commit" && e.Status == http.StatusUnprocessableEntity:
		return connectors.Refused(countersign.Conflict, false, "%s moved on from %s after it was shown for approval, so the commit was not added to it (GitHub: %s).", w.Branch, w.SHA, e.what())
	}
	return notWritten(r)
}

// notWritten is a refusal before anything was written, in err's words.
func notWritten(err error) error {
	return connectors.Refused(countersign.ErrorCode(err), false, "%s.", countersign.ErrorMessage(err))
}
