package github

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"path"
	"strings"

	"countersign"
	"countersign/connectors"
)

// filePut writes one file through the contents API.
type filePut struct {
	named
	filePutArgs
	SHA string `json:"sha,omitempty"` // the blob it replaces; "" for a new file
}

type filePutArgs struct {
	Repo    string  `json:"repo,omitempty"`
	Branch  string  `json:"branch,omitempty"` // prepare sets the default branch
	Path    string  `json:"path,omitempty"`
	Content *string `json:"content,omitempty"`
	Message string  `json:"message,omitempty"`
}

func (w *filePut) args() any { return &w.filePutArgs }

func (w *filePut) scope() scope {
	return scope{repo: w.Repo, branch: w.Branch, paths: []string{w.Path}, files: 1}
}

func (w *filePut) check() error {
	return firstError(checkRepo(w.Repo), checkBranch("branch", w.Branch), checkPaths(w.Path))
}

func (w *filePut) fromTask(shown func(string) string) { w.Branch = shown("Branch") }

func (w *filePut) prepare(ctx context.Context, cl *client) (map[string]*string, error) {
	head, err := branchHead(ctx, cl, w.Repo, &w.Branch)
	if err != nil {
		return nil, err
	}
	modes, err := readModes(ctx, cl, w.Repo, w.Branch, head, []string{w.Path})
	if err != nil {
		return nil, err
	}
	if modes[w.Path] == modeExecutable {
		// The contents API takes no mode: it would write the file as a
		// plain one, a change the task could not show.
		return nil, countersign.Errorf(countersign.InvalidRequest, "%s is executable (mode 100755) on %s, and file_put would make it a plain file: use commit, which keeps its mode", w.Path, w.Branch)
	}
	f, content, err := readFile(ctx, cl, w.Repo, w.Path, head)
	if err != nil {
		return nil, err
	}
	if f != nil {
		w.SHA = f.SHA
	}
	return map[string]*string{w.Path: content}, nil
}

func (w *filePut) show(d *display, old map[string]*string) {
	agent(d, "Branch", w.Branch)
	agent(d, "Path", w.Path)
	agent(d, "Commit message", w.Message)
	if w.SHA == "" {
		project(d, "Replaces", "nothing: a new file")
	} else {
		project(d, "Replaces the file at blob", w.SHA)
	}
	base := path.Base(w.Path)
	if diff := Unified(w.Path, old[w.Path], w.Content, 3); diff != "" {
		d.long("Diff", base+".diff", diff, countersign.WrittenByProject)
	} else {
		project(d, "Diff", "none: the content is the same")
	}
	d.long("New content", base, *w.Content, countersign.WrittenByAgent)
}

func (w *filePut) summary(map[string]*string) line {
	verb, prep := "replace ", " on "
	if w.SHA == "" {
		verb, prep = "add ", " to "
	}
	return append(append(line{words(verb), quoted(w.Path), words(prep)}, onBranch(w.Branch, w.Repo)...), words(" in one commit"+undoCommit))
}

func (w *filePut) execute(ctx context.Context, cl *client) (map[string]any, error) {
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
}

func (w *filePut) outcome(res answered) line {
	verb := ": replaced "
	if w.SHA == "" {
		verb = ": added "
	}
	return append(append(line{words("Committed " + short(res.str("sha")) + " to "), name(w.Branch)}, of(w.Repo)...), words(verb), quoted(w.Path))
}

// link is the commit's page.
func (w *filePut) link(res answered) string { return res.str("commit_url") }

func (w *filePut) doing() string { return "writing " + w.Path }

func (w *filePut) conflict(e *apiError) error {
	if e.Status == http.StatusConflict || e.Status == http.StatusUnprocessableEntity && w.SHA == "" {
		return connectors.Refused(countersign.Conflict, false, "%s changed on %s after it was shown for approval (GitHub: %s).", w.Path, w.Branch, e.what())
	}
	return nil
}

// commit commits up to 20 file changes through the git data API, moving
// its branch only forward.
type commit struct {
	named
	commitArgs
	SHA string `json:"sha,omitempty"` // the commit it starts at
	// Modes are the git modes of its paths that exist at SHA (100644 or
	// 100755), kept by the commit.
	Modes map[string]string `json:"modes,omitempty"`
}

type commitArgs struct {
	Repo    string   `json:"repo,omitempty"`
	Branch  string   `json:"branch,omitempty"` // prepare sets the default branch
	Message string   `json:"message,omitempty"`
	Changes []change `json:"changes,omitempty"`
}

// change is one file of a commit: new content, or a deletion.
type change struct {
	Path    string  `json:"path"`
	Content *string `json:"content,omitempty"`
	Delete  bool    `json:"delete,omitempty"`
}

func (w *commit) args() any { return &w.commitArgs }

func (w *commit) paths() []string {
	var out []string
	for _, ch := range w.Changes {
		out = append(out, ch.Path)
	}
	return out
}

func (w *commit) scope() scope {
	return scope{repo: w.Repo, branch: w.Branch, paths: w.paths(), files: len(w.Changes)}
}

func (w *commit) check() error {
	if err := firstError(checkRepo(w.Repo), checkBranch("branch", w.Branch), checkPaths(w.paths()...)); err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, p := range w.paths() {
		if seen[p] {
			return countersign.Errorf(countersign.InvalidRequest, "the path %s is changed twice", p)
		}
		seen[p] = true
	}
	for _, ch := range w.Changes {
		if (ch.Content == nil) == !ch.Delete {
			return countersign.Errorf(countersign.InvalidRequest, "each change has either content or \"delete\": true")
		}
	}
	return nil
}

func (w *commit) fromTask(shown func(string) string) { w.Branch = shown("Branch") }

func (w *commit) prepare(ctx context.Context, cl *client) (map[string]*string, error) {
	head, err := branchHead(ctx, cl, w.Repo, &w.Branch)
	if err != nil {
		return nil, err
	}
	modes, err := readModes(ctx, cl, w.Repo, w.Branch, head, w.paths())
	if err != nil {
		return nil, err
	}
	w.SHA, w.Modes = head, modes
	old := map[string]*string{}
	for _, p := range w.paths() {
		_, content, err := readFile(ctx, cl, w.Repo, p, head)
		if err != nil {
			return nil, err
		}
		old[p] = content
	}
	for _, ch := range w.Changes {
		if ch.Delete && old[ch.Path] == nil {
			return nil, countersign.Errorf(countersign.InvalidRequest, "%s is not on %s: there is nothing to delete", ch.Path, w.Branch)
		}
	}
	return old, nil
}

func (w *commit) show(d *display, old map[string]*string) {
	agent(d, "Branch", w.Branch)
	project(d, "Starts at commit", w.SHA)
	agent(d, "Commit message", w.Message)
	var list []string
	var diff strings.Builder
	for i, ch := range w.Changes {
		var nc *string
		if !ch.Delete {
			nc = ch.Content
		}
		line := changeLine(i, ch.Path, old[ch.Path], nc)
		if nc != nil && w.Modes[ch.Path] == modeExecutable {
			line += ", stays executable (mode 100755)"
		}
		list = append(list, line)
		diff.WriteString(Unified(ch.Path, old[ch.Path], nc, Whole))
	}
	listField(d, "Changes", list, countersign.WrittenByAgent)
	if diff.Len() > 0 {
		d.long("Diff, whole files", "changes.diff", diff.String(), countersign.WrittenByProject)
	} else {
		project(d, "Diff", "none: every file is the same")
	}
}

func (w *commit) summary(old map[string]*string) line {
	var l line
	var add, rep, del int
	for _, ch := range w.Changes {
		switch {
		case ch.Delete:
			del++
		case old[ch.Path] == nil:
			add++
		default:
			rep++
		}
	}
	if len(w.Changes) == 1 {
		what := map[bool]string{true: "replaced", false: "new"}[old[w.Changes[0].Path] != nil]
		if w.Changes[0].Delete {
			what = "deleted"
		}
		l = line{words("commit "), quoted(w.Changes[0].Path), words(" (" + what + ") to ")}
	} else {
		var kinds []string
		for _, k := range []struct {
			n    int
			what string
		}{{add, "new"}, {rep, "replaced"}, {del, "deleted"}} {
			if k.n > 0 {
				kinds = append(kinds, fmt.Sprintf("%d %s", k.n, k.what))
			}
		}
		l = line{words(fmt.Sprintf("commit %d files (%s) to ", len(w.Changes), strings.Join(kinds, ", ")))}
	}
	return append(append(l, onBranch(w.Branch, w.Repo)...), words(" after "+short(w.SHA)+undoCommit))
}

func (w *commit) execute(ctx context.Context, cl *client) (map[string]any, error) {
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
}

func (w *commit) outcome(res answered) line {
	l := append(line{words("Committed " + short(res.str("sha")) + " to "), name(w.Branch)}, of(w.Repo)...)
	if len(w.Changes) == 1 {
		return append(l, words(", changing "), quoted(w.Changes[0].Path))
	}
	return append(l, words(fmt.Sprintf(", changing %d files", len(w.Changes))))
}

func (w *commit) doing() string { return "committing to " + w.Branch }

func (w *commit) conflict(e *apiError) error {
	if e.Status == http.StatusUnprocessableEntity {
		return connectors.Refused(countersign.Conflict, false, "%s moved on from %s after it was shown for approval, so the commit was not added to it (GitHub: %s).", w.Branch, w.SHA, e.what())
	}
	return nil
}

// branchHead reads the head of *branch, first setting it to the
// repository's default branch when it is "".
func branchHead(ctx context.Context, cl *client, repo string, branch *string) (string, error) {
	if *branch == "" {
		b, err := defaultBranch(ctx, cl, repo)
		if err != nil {
			return "", err
		}
		*branch = b
	}
	return headOf(ctx, cl, repo, *branch)
}

// readModes reads, from the tree of the commit head, the mode of each path
// in paths that exists there, walking down one directory at a time (each
// read once). A path that is a symbolic link, a submodule or a directory
// is refused: a write changes regular files only, and a commit keeps
// their modes.
func readModes(ctx context.Context, cl *client, repo, branch, head string, paths []string) (map[string]string, error) {
	var c gitCommit
	if _, err := cl.do(ctx, http.MethodGet, repoAt(repo, "git", "commits", head), nil, &c, http.StatusOK); err != nil {
		return nil, refusal(err, "reading the commit "+head)
	}
	trees := map[string]*gitTree{}
	tree := func(sha string) (*gitTree, error) {
		if t, ok := trees[sha]; ok {
			return t, nil
		}
		var t gitTree
		if _, err := cl.do(ctx, http.MethodGet, repoAt(repo, "git", "trees", sha), nil, &t, http.StatusOK); err != nil {
			return nil, refusal(err, "reading the tree of "+branch)
		}
		if t.Truncated {
			return nil, countersign.Errorf(countersign.InvalidRequest, "a directory on %s has too many entries for GitHub to list", branch)
		}
		trees[sha] = &t
		return &t, nil
	}
	modes := map[string]string{}
	for _, p := range paths {
		sha, segs := c.Tree.SHA, parts(p)
	walk:
		for i, seg := range segs {
			t, err := tree(sha)
			if err != nil {
				return nil, err
			}
			for _, e := range t.Tree {
				if e.Path != seg {
					continue
				}
				if i == len(segs)-1 {
					modes[p] = e.Mode
				} else if e.Type == "tree" {
					sha = e.SHA
					continue walk
				}
				break walk
			}
			break // not there: a new file
		}
		switch modes[p] {
		case "", modeFile, modeExecutable:
		case modeSymlink:
			return nil, countersign.Errorf(countersign.InvalidRequest, "%s is a symbolic link on %s: a write changes regular files only", p, branch)
		case modeSubmodule:
			return nil, countersign.Errorf(countersign.InvalidRequest, "%s is a submodule on %s: a write changes regular files only", p, branch)
		case modeTree:
			return nil, countersign.Errorf(countersign.InvalidRequest, "%s is a directory on %s: a write changes files only", p, branch)
		default:
			return nil, countersign.Errorf(countersign.InvalidRequest, "%s has the mode %s on %s, which a write does not change", p, modes[p], branch)
		}
	}
	return modes, nil
}
