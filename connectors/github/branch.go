package github

import (
	"context"
	"net/http"
)

// branchCreate creates a branch.
type branchCreate struct {
	named
	branchCreateArgs
	SHA  string `json:"sha,omitempty"`  // the commit it starts at
	Page string `json:"page,omitempty"` // the repository's page
}

type branchCreateArgs struct {
	Repo   string `json:"repo,omitempty"`
	Branch string `json:"branch,omitempty"`
	From   string `json:"from,omitempty"` // a branch or a commit id; prepare sets the default branch
}

func (w *branchCreate) args() any { return &w.branchCreateArgs }

func (w *branchCreate) scope() scope { return scope{repo: w.Repo, branch: w.Branch} }

func (w *branchCreate) check() error {
	return firstError(checkRepo(w.Repo), checkBranch("branch", w.Branch), checkFrom(w.From))
}

func (w *branchCreate) prepare(ctx context.Context, cl *client) (map[string]*string, error) {
	r, err := getRepo(ctx, cl, w.Repo)
	if err != nil {
		return nil, err
	}
	w.Page = r.HTMLURL
	from := w.From
	if from == "" {
		from, w.From = r.DefaultBranch, r.DefaultBranch
	}
	if isSHA(from) {
		var c gitCommit
		if _, err := cl.do(ctx, http.MethodGet, repoAt(w.Repo, "git", "commits", from), nil, &c, http.StatusOK); err != nil {
			return nil, refusal(err, "reading the commit "+from)
		}
		w.SHA = c.SHA
	} else if w.SHA, err = headOf(ctx, cl, w.Repo, from); err != nil {
		return nil, err
	}
	return nil, nil
}

func (w *branchCreate) show(d *display, _ map[string]*string) {
	agent(d, "New branch", w.Branch)
	agent(d, "From", w.From)
	project(d, "Starts at commit", w.SHA)
}

func (w *branchCreate) summary(map[string]*string) line {
	l := line{words("create the branch "), name(w.Branch), words(" in "), name(w.Repo), words(" at " + short(w.SHA))}
	if !isSHA(w.From) {
		l = append(l, words(", the head of "), name(w.From))
	}
	return append(l, words("; it can be deleted"))
}

func (w *branchCreate) execute(ctx context.Context, cl *client) (map[string]any, error) {
	var ref gitRef
	if _, err := cl.do(ctx, http.MethodPost, repoAt(w.Repo, "git", "refs"), map[string]string{"ref": "refs/heads/" + w.Branch, "sha": w.SHA}, &ref, http.StatusCreated); err != nil {
		return nil, err
	}
	return map[string]any{"ref": ref.Ref, "sha": ref.Object.SHA, "html_url": treeURL(w.Page, w.Branch)}, nil
}

func (w *branchCreate) outcome(res answered) line {
	return line{words("Created the branch "), name(w.Branch), words(" in "), name(w.Repo), words(" at " + short(res.str("sha")))}
}

func (w *branchCreate) doing() string { return "creating the branch " + w.Branch }
