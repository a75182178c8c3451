package github

import (
	"context"
	"net/http"
	"strings"
)

// star stars a repository (repo_star) or unstars it (repo_unstar) as the
// token's user.
type star struct {
	named
	starArgs
	Page string `json:"page,omitempty"` // the repository's page
	on   bool   // repo_star
}

type starArgs struct {
	Repo string `json:"repo,omitempty"`
}

func (w *star) args() any    { return &w.starArgs }
func (w *star) scope() scope { return scope{repo: w.Repo} }
func (w *star) check() error { return checkRepo(w.Repo) }

func (w *star) prepare(ctx context.Context, cl *client) (map[string]*string, error) {
	r, err := getRepo(ctx, cl, w.Repo)
	if err != nil {
		return nil, err
	}
	w.Page = r.HTMLURL
	return nil, nil
}

// show shows the repository alone, as every write does.
func (w *star) show(*display, map[string]*string) {}

func (w *star) summary(map[string]*string) line {
	if w.on {
		return line{words("star "), name(w.Repo), words(" as the token's user; it can be unstarred")}
	}
	return line{words("unstar "), name(w.Repo), words(" as the token's user; it can be starred again")}
}

func (w *star) execute(ctx context.Context, cl *client) (map[string]any, error) {
	m := http.MethodPut
	if !w.on {
		m = http.MethodDelete
	}
	o, n, _ := strings.Cut(w.Repo, "/")
	if _, err := cl.do(ctx, m, at{"user", "starred", o, n}, nil, nil, http.StatusNoContent); err != nil {
		return nil, err
	}
	return map[string]any{"repo": w.Repo, "starred": w.on, "html_url": w.Page}, nil
}

func (w *star) outcome(answered) line {
	if w.on {
		return line{words("Starred "), name(w.Repo)}
	}
	return line{words("Unstarred "), name(w.Repo)}
}

func (w *star) doing() string {
	if w.on {
		return "starring " + w.Repo
	}
	return "unstarring " + w.Repo
}
