package github

import (
	"context"
	"fmt"

	"countersign"
	"countersign/connectors"
)

// read is one of the four reads, a type of its own holding the agent's
// call; decl.go's table says which.
type read interface {
	// check refuses names GitHub would not take, before it is asked.
	check() error
	// run asks GitHub and answers the agent.
	run(ctx context.Context, cl *client) (map[string]any, error)
}

// read serves the four reads.
func (g *GitHub) read(ctx context.Context, c *connectors.Call) (any, error) {
	d, ok := declared(c.Operation)
	if !ok || d.read == nil {
		return nil, fmt.Errorf("no read %s", c.Operation)
	}
	r := d.read()
	if err := c.Decode(r); err != nil {
		return nil, err
	}
	if err := r.check(); err != nil {
		return nil, err
	}
	cl, err := g.client(c.Credentials)
	if err != nil {
		return nil, err
	}
	return r.run(ctx, cl)
}

// prGet reads a pull request.
type prGet struct {
	Repo   string `json:"repo,omitempty"`
	Number int    `json:"number,omitempty"`
}

func (r *prGet) check() error { return checkRepo(r.Repo) }

func (r *prGet) run(ctx context.Context, cl *client) (map[string]any, error) {
	p, err := getPull(ctx, cl, r.Repo, r.Number)
	if err != nil {
		return nil, err
	}
	return map[string]any{"ok": true, "number": p.Number, "state": p.State, "title": p.Title, "body": p.Body, "draft": p.Draft, "merged": p.Merged,
		"mergeable": p.Mergeable, "head": map[string]string{"ref": p.Head.Ref, "sha": p.Head.SHA}, "base": map[string]string{"ref": p.Base.Ref, "sha": p.Base.SHA}, "html_url": p.HTMLURL}, nil
}

// issueGet reads an issue.
type issueGet struct {
	Repo   string `json:"repo,omitempty"`
	Number int    `json:"number,omitempty"`
}

func (r *issueGet) check() error { return checkRepo(r.Repo) }

func (r *issueGet) run(ctx context.Context, cl *client) (map[string]any, error) {
	is, err := getIssue(ctx, cl, r.Repo, r.Number)
	if err != nil {
		return nil, err
	}
	labels := []string{}
	for _, l := range is.Labels {
		labels = append(labels, l.Name)
	}
	return map[string]any{"ok": true, "number": is.Number, "state": is.State, "title": is.Title, "body": is.Body, "labels": labels,
		"is_pull_request": is.PullRequest != nil, "html_url": is.HTMLURL}, nil
}

// repoGet reads a repository.
type repoGet struct {
	Repo string `json:"repo,omitempty"`
}

func (r *repoGet) check() error { return checkRepo(r.Repo) }

func (r *repoGet) run(ctx context.Context, cl *client) (map[string]any, error) {
	rp, err := getRepo(ctx, cl, r.Repo)
	if err != nil {
		return nil, err
	}
	return map[string]any{"ok": true, "full_name": rp.FullName, "private": rp.Private, "default_branch": rp.DefaultBranch, "archived": rp.Archived,
		"description": rp.Description, "html_url": rp.HTMLURL}, nil
}

// fileGet reads a file at a branch, tag or commit.
type fileGet struct {
	Repo string `json:"repo,omitempty"`
	Path string `json:"path,omitempty"`
	Ref  string `json:"ref,omitempty"`
}

func (r *fileGet) check() error {
	return firstError(checkRepo(r.Repo), checkRef(r.Ref), checkPaths(r.Path))
}

func (r *fileGet) run(ctx context.Context, cl *client) (map[string]any, error) {
	f, content, err := readFile(ctx, cl, r.Repo, r.Path, r.Ref)
	if err != nil {
		return nil, err
	}
	if f == nil {
		return nil, countersign.Errorf(countersign.InvalidRequest, "there is no file %s", r.Path)
	}
	return map[string]any{"ok": true, "path": f.Path, "sha": f.SHA, "size": f.Size, "content": *content, "html_url": f.HTMLURL}, nil
}
