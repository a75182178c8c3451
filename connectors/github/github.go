// Package github is the GitHub connector of SPEC §14: thirteen writes that
// ask first when the owner's policy says so, shown whole (a file write as a
// unified diff against what was read when the task was made, beside the new
// content), and bound to what the owner saw (a merge sends the head commit
// shown, an approving review re-reads the head, a file write sends the blob
// it replaces, a commit moves its branch only forward from the commit
// shown). Four reads serve at once.
//
// It talks to GitHub's REST API (version 2022-11-28) with plain net/http at
// a configurable base URL, with the project's token from its sealed
// credentials, {"token": "…", "base_url"?: "…"}. The token travels in the
// Authorization header only: it is never logged, in a result or in a task.
// Every request goes through the egress guard (SPEC §14, connector
// egress): a base_url is https (http only when wiring allows private
// hosts, for serve --dev and tests) without userinfo, query, fragment or
// dot segments, refused invalid_request before any request when it is
// not; every address dialed is public; a redirect is followed only to the
// same host, at most three.
//
// # Choices where the contract is silent
//
//   - `actions` is the policy's gate (Connector.Allowed): policy.Decide
//     refuses a write it does not name, and policy.Explain tells the owner
//     so. Absent, it allows no write: asking allows nothing by itself, and
//     an owner who set no actions has allowed none. `repos`, `branches` and
//     `paths` (absent: any) and `max_writes_per_day` are limits the
//     connector applies after the policy's decision: they only ever
//     refuse, and Explain lists them. Repository globs compare ignoring
//     case (as GitHub does), branch and path globs exactly; "*" stays
//     within one segment, "**" crosses any number.
//   - Rules (SPEC §13) may name `repos` (compared ignoring case),
//     `branches` and `paths` (exactly, not as globs) in their `when`: a
//     write matches when its repository, the branch it changes and every
//     path it changes are listed. Gists carry none of them. The branch is
//     known once the write is prepared (the default branch, a merge's
//     base), so `actions` is asked before GitHub is and the rules after
//     what prepared the write was read. "Always allow this" names the
//     task's repository, branch and paths (from the request, and the
//     branch as the task shows it).
//   - `branches` bounds the branch a write changes: branch_create's new
//     branch, file_put's and commit's branch, pr_merge's base. pr_create,
//     pr_review and the issue, gist and star writes change no branch.
//     `paths` bounds file_put's path and every path of a commit.
//   - `max_writes_per_day` absent is 100; it bounds direct and confirmed
//     writes each (SPEC §13). A write is counted just before GitHub is
//     asked, and a count is never given back.
//   - A commit or gist write names at most 20 files (task_too_large, before
//     GitHub is asked). A commit's diff shows every line of every file (its
//     context is the whole file), so its new contents are read whole in
//     it; file_put shows a three-line-context diff beside the new content.
//     Text over 50,000 characters, text a field may not show (control
//     characters, say), or text past 128 KiB of shown text in all goes in
//     a task file instead, and a field names the file.
//   - Names are checked before GitHub is asked, and the policy's globs
//     match only names that pass: a branch (and pr_create's head and base,
//     branch_create's from) by git's rules for branch names
//     (check-ref-format --branch: no empty, . or .. component, no
//     component starting with . or ending with .lock, no .., @{, control
//     character, space or ~^:?*[\, no trailing / or ., not @, HEAD or
//     starting with -), file_get's ref by the same rules for any ref (or a
//     commit id), a repository as owner/name with neither part . or .., a
//     path as relative segments none empty, . or ... Request paths are
//     built from escaped segments (a branch or a path one segment per
//     part) and queries percent-encoded as RFC 3986 requires, so
//     "docs+notes" is sent as docs%2Bnotes.
//   - A commit keeps each file's mode (100644 or 100755), read from the
//     tree of the commit the task starts at, one directory at a time; the
//     task says when a replaced file stays executable. A path that is a
//     symbolic link, a submodule or a directory there is refused (by
//     file_put too): what the task would show of a link is its target's
//     content. file_put, through the contents API, which takes no mode,
//     refuses an executable file rather than make it a plain one.
//   - A task's summary is one line of what approving does: the verb, the
//     repository, the branch or number, the commit it starts at or the
//     head it merges, and whether it can be undone ("merge pull request
//     #12 of octo/app into main at 3f2a9c1 by a merge commit; it cannot be
//     undone, only reverted"). Titles and paths are quoted as Go quotes a
//     string, names only when they are not one plain word; the longest
//     values are cut first, ending in "…", to keep the line to 200
//     characters, and a line no quoting makes shown text is escaped to
//     ASCII.
//   - A write carried out at once tells the owner's history its title,
//     the summary a task of it would have shown, and what it did; an
//     approved write reports the same outcome ("Committed 3f2a9c1 to main
//     of octo/app, changing 2 files"). Its link is the page GitHub
//     answered: the commit's (file_put, commit), the branch's tree
//     (branch_create), the issue's, the comment's, the pull request's
//     (pr_create, pr_merge), the review's, the gist's, or the repository's
//     (repo_star, repo_unstar), which branch_create and the star writes read
//     when they are prepared. Only an https link is passed on (http where
//     wiring allows private hosts).
//   - Every operation declares the JSON Schema of its result; an approved
//     write's (the confirm operation's) is any of the writes' results.
//   - GitHub's refusals: 401 and 403 are policy_denied (the token may not),
//     404, 405, 410 and 422 invalid_request, 409 conflict, a rate limit
//     (429, or 403 with x-ratelimit-remaining 0 or Retry-After) rate_limited
//     quoting the wait GitHub asks for, 5xx and no answer internal_error.
//     Nothing is retried: the agent may prepare the write again.
package github

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"countersign"
	"countersign/connectors"
	"countersign/egress"
	"countersign/policy"
)

// The connector's declaration.
const (
	Name    = "github"
	Version = "1.0.0"
	// DefaultBaseURL is GitHub's API; GitHub Enterprise changes it.
	DefaultBaseURL = "https://api.github.com"
	APIVersion     = "2022-11-28"
	UserAgent      = "countersign-github/" + Version
	// WritePrice and ReadPrice are in micro-USD.
	WritePrice = 10_000
	ReadPrice  = 1_000
	// DefaultWritesPerDay is max_writes_per_day when the policy sets none.
	DefaultWritesPerDay = 100
	// MaxChangedFiles is the most files one task may change.
	MaxChangedFiles = 20
	// MaxShownBytes is the most text the fields of a task show together.
	MaxShownBytes = 128 << 10
)

// Options configure the connector.
type Options struct {
	// BaseURL is the API's base (default DefaultBaseURL); a project's
	// credentials may name another. Either is checked by egress's rules
	// and reached through its guard.
	BaseURL string
	// Egress is how the API is reached: only public addresses over https,
	// unless wiring sets AllowPrivate (serve --dev and tests, whose fakes
	// listen on loopback http).
	Egress egress.Options
	// Timeout bounds each request (default 20 s).
	Timeout time.Duration
}

// GitHub is the connector's runtime.
type GitHub struct {
	opts  Options
	httpc *http.Client
}

// Policy keys.
const (
	keyActions = "actions"
	keyRepos   = "repos"
	keyBranch  = "branches"
	keyPaths   = "paths"
	keyMax     = "max_writes_per_day"
)

// New returns the GitHub connector.
func New(o Options) *connectors.Connector {
	if o.BaseURL == "" {
		o.BaseURL = DefaultBaseURL
	}
	if o.Timeout == 0 {
		o.Timeout = 20 * time.Second
	}
	// At most three redirects, to the same host only.
	e := o.Egress
	e.Timeout, e.Redirects = o.Timeout, 3
	g := &GitHub{opts: o, httpc: egress.NewClient(e)}
	c := &connectors.Connector{
		Name: Name, Version: Version, Tasks: true,
		PolicyKeys: map[string]policy.KeyKind{keyActions: policy.WriteList, keyRepos: policy.List, keyBranch: policy.List, keyPaths: policy.List, keyMax: policy.Count},
		// The policy refuses a write `actions` does not name, and tells
		// the owner so.
		Allowed: keyActions,
		// What a rule may name: the repository (compared ignoring case,
		// as GitHub does), the branch a write changes and the paths it
		// changes (exactly).
		Conditions: []policy.Condition{
			policy.Names("repo", keyRepos, true),
			policy.Names("branch", keyBranch, false),
			policy.Names("path", keyPaths, false),
		},
		TaskFacts: taskFacts,
	}
	for _, d := range declarations {
		op := connectors.Operation{Name: d.name, Kind: d.kind, Description: d.desc, Schema: json.RawMessage(d.schema), Result: json.RawMessage(d.result)}
		for _, ex := range d.examples {
			op.Examples = append(op.Examples, json.RawMessage(ex))
		}
		if d.kind == connectors.Read {
			op.Price = ReadPrice
			op.Run = g.read
		} else {
			op.Price = WritePrice
			op.Run = g.write
			op.Carries = carries(d.name)
		}
		c.Operations = append(c.Operations, op)
	}
	c.Operations = append(c.Operations, connectors.Operation{Name: "confirm", Kind: connectors.Answer, Answer: g.confirm,
		Description: "Carries out a GitHub write the owner approved, exactly as it was shown.", Result: json.RawMessage(confirmResult)})
	return c
}

// write is an agent's write, as called and then as sealed in the task,
// with what was read when it was prepared.
type write struct {
	Op string `json:"op"`
	callArgs

	// Read when the task was made.
	SHA    string `json:"sha,omitempty"` // start, head or replaced blob
	Title0 string `json:"shown_title,omitempty"`
	// Page is the web page of what the write changes, as GitHub answered
	// it: the repository's (branch_create, repo_star, repo_unstar) or the
	// pull request's (pr_merge).
	Page string `json:"page,omitempty"`
	// Modes are the git modes of a commit's paths that exist at SHA
	// (100644 or 100755), kept by the commit.
	Modes map[string]string `json:"modes,omitempty"`
}

// Git's modes of a tree's entries.
const (
	modeFile       = "100644"
	modeExecutable = "100755"
	modeSymlink    = "120000"
	modeSubmodule  = "160000"
	modeTree       = "040000"
)

// callArgs are the members of an agent's call, of every operation.
type callArgs struct {
	Repo        string             `json:"repo,omitempty"`
	Branch      string             `json:"branch,omitempty"`
	From        string             `json:"from,omitempty"`
	Path        string             `json:"path,omitempty"`
	Content     *string            `json:"content,omitempty"`
	Message     string             `json:"message,omitempty"`
	Changes     []change           `json:"changes,omitempty"`
	Number      int                `json:"number,omitempty"`
	Title       *string            `json:"title,omitempty"`
	Body        *string            `json:"body,omitempty"`
	State       *string            `json:"state,omitempty"`
	StateReason *string            `json:"state_reason,omitempty"`
	Labels      *[]string          `json:"labels,omitempty"`
	Assignees   *[]string          `json:"assignees,omitempty"`
	Head        string             `json:"head,omitempty"`
	Base        string             `json:"base,omitempty"`
	Draft       bool               `json:"draft,omitempty"`
	Event       string             `json:"event,omitempty"`
	Method      string             `json:"method,omitempty"`
	GistID      string             `json:"gist_id,omitempty"`
	Description *string            `json:"description,omitempty"`
	Public      bool               `json:"public,omitempty"`
	Files       map[string]*string `json:"files,omitempty"`
	Ref         string             `json:"ref,omitempty"` // file_get's
}

// change is one file of a commit: new content, or a deletion.
type change struct {
	Path    string  `json:"path"`
	Content *string `json:"content,omitempty"`
	Delete  bool    `json:"delete,omitempty"`
}

// args decodes a call into a write.
func args(c *connectors.Call) (*write, error) {
	w := &write{Op: c.Operation}
	if err := c.Decode(&w.callArgs); err != nil {
		return nil, err
	}
	return w, nil
}

// changed counts the files a write changes.
func (w *write) changed() int {
	switch w.Op {
	case "file_put":
		return 1
	case "commit":
		return len(w.Changes)
	case "gist_create", "gist_update":
		return len(w.Files)
	}
	return 0
}

// paths lists the repository paths a write changes.
func (w *write) paths() []string {
	switch w.Op {
	case "file_put":
		return []string{w.Path}
	case "commit":
		var out []string
		for _, ch := range w.Changes {
			out = append(out, ch.Path)
		}
		return out
	}
	return nil
}

// branch is the branch a write changes, "" for none.
func (w *write) branch() string {
	switch w.Op {
	case "branch_create", "file_put", "commit":
		return w.Branch
	case "pr_merge":
		return w.Base
	}
	return ""
}

// carries lists the rule conditions a write carries: the repository of
// every write that has one, the branch of those that change one
// (write.branch), the paths of those that change files in a repository
// (write.paths).
func carries(op string) []string {
	var out []string
	switch op {
	case "gist_create", "gist_update":
		return nil
	}
	out = append(out, "repo")
	switch op {
	case "branch_create", "file_put", "commit", "pr_merge":
		out = append(out, "branch")
	}
	switch op {
	case "file_put", "commit":
		out = append(out, "path")
	}
	return out
}

// facts are the values of the conditions a write carries, as the policy
// reads them: the repository, the branch it changes, the paths it changes.
func (w *write) facts() policy.Facts {
	f := policy.Facts{Names: map[string][]string{}}
	for _, c := range carries(w.Op) {
		switch c {
		case "repo":
			f.Names[c] = []string{w.Repo}
		case "branch":
			f.Names[c] = []string{w.branch()}
		case "path":
			f.Names[c] = w.paths()
		}
	}
	return f
}

// taskFacts reads the write a task asks about, for "Always allow this":
// its operation, repository and paths from the agent's request, and the
// branch it changes as the task shows it (a write to the default branch,
// or a merge, names it only there: "Branch", or pr_merge's "Branches",
// "{head} into {base}").
func taskFacts(request []byte, env countersign.Envelope) (string, policy.Facts, error) {
	op, err := connectors.RequestOperation(request)
	if err != nil {
		return "", policy.Facts{}, err
	}
	w := &write{Op: op}
	if err := json.Unmarshal(request, &w.callArgs); err != nil {
		return "", policy.Facts{}, err
	}
	shown := func(label string) string {
		for _, f := range env.Display.Fields {
			if f.Label == label && len(f.Values) == 1 {
				return f.Values[0]
			}
		}
		return ""
	}
	switch op {
	case "file_put", "commit":
		w.Branch = shown("Branch")
	case "pr_merge":
		if _, base, ok := strings.Cut(shown("Branches"), " into "); ok {
			w.Base = base
		}
	}
	if b := w.branch(); slices.Contains(carries(op), "branch") && b == "" {
		return "", policy.Facts{}, errors.New("the task does not show the branch it changes")
	}
	return op, w.facts(), nil
}

// bounded checks a write against the policy's globs, `repos`,
// `branches` and `paths`, which only ever refuse. `actions` is the
// policy's own gate (Connector.Allowed): Decide refuses a write it does
// not name. The write's names are checked first (names), so the globs
// only ever match names GitHub takes as they are.
func bounded(p *policy.Policy, w *write) error {
	if err := names(w); err != nil {
		return err
	}
	if repos, set := p.List(keyRepos); set && w.Repo != "" && !matchAny(repos, w.Repo, true) {
		return countersign.Errorf(countersign.PolicyDenied, "the owner's policy does not allow writes to %s (not in `repos`)", w.Repo)
	}
	if b := w.branch(); b != "" {
		if branches, set := p.List(keyBranch); set && !matchAny(branches, b, false) {
			return countersign.Errorf(countersign.PolicyDenied, "the owner's policy does not allow writes to the branch %s (not in `branches`)", b)
		}
	}
	if paths, set := p.List(keyPaths); set {
		for _, path := range w.paths() {
			if !matchAny(paths, path, false) {
				return countersign.Errorf(countersign.PolicyDenied, "the owner's policy does not allow writes to the path %s (not in `paths`)", path)
			}
		}
	}
	return nil
}

func writesPerDay(p *policy.Policy) int {
	if n, ok := p.Count(keyMax); ok {
		return n
	}
	return DefaultWritesPerDay
}

// write serves the thirteen writes.
func (g *GitHub) write(ctx context.Context, c *connectors.Call) (any, error) {
	w, err := args(c)
	if err != nil {
		return nil, err
	}
	if n := w.changed(); n > MaxChangedFiles {
		return nil, countersign.Errorf(countersign.TaskTooLarge, "this write changes %d files; a task covers at most %d: split it", n, MaxChangedFiles)
	}
	if err := check(w); err != nil {
		return nil, err
	}
	// What refuses without the write's values comes before GitHub is
	// asked anything; the rules need the branch, which may be the default
	// one, known once prepared.
	if d := c.Policy.Gate(c.Operation); d.Outcome == policy.Refuse {
		return nil, countersign.Errorf(countersign.Code(d.Code), "%s", d.Sentence)
	}
	if err := bounded(c.Policy, w); err != nil {
		return nil, err
	}
	cl, err := g.client(c.Credentials)
	if err != nil {
		return nil, err
	}
	old, err := prepare(ctx, cl, w)
	if err != nil {
		return nil, err
	}
	// The default branch is known now: check the branch again.
	if err := bounded(c.Policy, w); err != nil {
		return nil, err
	}
	d := c.Decide(w.facts())
	if d.Outcome == policy.Refuse {
		return nil, countersign.Errorf(countersign.Code(d.Code), "%s", d.Sentence)
	}
	if d.Outcome == policy.Ask {
		spec := show(w, old)
		state, err := json.Marshal(w)
		if err != nil {
			return nil, err
		}
		spec.Kind, spec.State = countersign.KindConfirm, state
		spec.AnswerBy = &countersign.AnswerBy{Operation: "confirm", Supplies: countersign.SuppliesNone}
		task, err := c.OpenTask(ctx, spec)
		if err != nil {
			return nil, err
		}
		return connectors.AwaitingOwner(task), nil
	}
	if ok, err := c.Reserve(ctx, policy.Direct, writesPerDay(c.Policy)); err != nil {
		return nil, err
	} else if !ok {
		return nil, countersign.Errorf(countersign.PolicyDenied, "the day's %d direct writes of this agent in this project are made", writesPerDay(c.Policy))
	}
	res, err := execute(ctx, cl, w)
	if err != nil {
		e := refusal(err, doing(w))
		if mayHaveWritten(err) {
			return nil, countersign.Errorf(countersign.Internal, "%s; the write may or may not have happened: read before writing again", countersign.ErrorMessage(e))
		}
		return nil, e
	}
	res["ok"] = true
	c.Did(connectors.Did{Title: titles[w.Op], Summary: summary(w, old), Outcome: g.outcome(w, res)})
	return res, nil
}

// check refuses what the schema cannot say.
func check(w *write) error {
	if err := names(w); err != nil {
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
	if w.Op == "gist_update" && w.Description == nil && len(w.Files) == 0 {
		return countersign.Errorf(countersign.InvalidRequest, "gist_update changes the description or files")
	}
	if w.Op == "issue_update" && w.Title == nil && w.Body == nil && w.State == nil && w.Labels == nil && w.Assignees == nil {
		return countersign.Errorf(countersign.InvalidRequest, "issue_update changes at least one of title, body, state, labels, assignees")
	}
	return nil
}

// doing names a write in a refusal.
func doing(w *write) string {
	switch w.Op {
	case "branch_create":
		return "creating the branch " + w.Branch
	case "file_put":
		return "writing " + w.Path
	case "commit":
		return "committing to " + w.Branch
	case "issue_create":
		return "opening the issue"
	case "issue_comment":
		return fmt.Sprintf("commenting on #%d", w.Number)
	case "issue_update":
		return fmt.Sprintf("changing #%d", w.Number)
	case "pr_create":
		return "opening the pull request"
	case "pr_review":
		return fmt.Sprintf("reviewing #%d", w.Number)
	case "pr_merge":
		return fmt.Sprintf("merging #%d", w.Number)
	case "gist_create":
		return "creating the gist"
	case "gist_update":
		return "changing the gist"
	case "repo_star":
		return "starring " + w.Repo
	case "repo_unstar":
		return "unstarring " + w.Repo
	}
	return w.Op
}

// Wire types of the answers the connector reads.
type (
	gitRef struct {
		Ref    string `json:"ref"`
		Object struct {
			SHA string `json:"sha"`
		} `json:"object"`
	}
	gitCommit struct {
		SHA     string `json:"sha"`
		HTMLURL string `json:"html_url"`
		Tree    struct {
			SHA string `json:"sha"`
		} `json:"tree"`
	}
	repository struct {
		FullName      string  `json:"full_name"`
		Private       bool    `json:"private"`
		DefaultBranch string  `json:"default_branch"`
		Archived      bool    `json:"archived"`
		HTMLURL       string  `json:"html_url"`
		Description   *string `json:"description"`
	}
	contentFile struct {
		Type     string `json:"type"`
		Encoding string `json:"encoding"`
		Size     int    `json:"size"`
		Path     string `json:"path"`
		Content  string `json:"content"`
		SHA      string `json:"sha"`
		HTMLURL  string `json:"html_url"`
	}
	gitTree struct {
		SHA       string `json:"sha"`
		Truncated bool   `json:"truncated"`
		Tree      []struct {
			Path string `json:"path"`
			Mode string `json:"mode"`
			Type string `json:"type"`
			SHA  string `json:"sha"`
		} `json:"tree"`
	}
	pullRequest struct {
		Number    int     `json:"number"`
		State     string  `json:"state"`
		Title     string  `json:"title"`
		Body      *string `json:"body"`
		Draft     bool    `json:"draft"`
		Merged    bool    `json:"merged"`
		Mergeable *bool   `json:"mergeable"`
		HTMLURL   string  `json:"html_url"`
		Head      struct {
			Ref string `json:"ref"`
			SHA string `json:"sha"`
		} `json:"head"`
		Base struct {
			Ref string `json:"ref"`
			SHA string `json:"sha"`
		} `json:"base"`
	}
	issueJSON struct {
		Number  int     `json:"number"`
		State   string  `json:"state"`
		Title   string  `json:"title"`
		Body    *string `json:"body"`
		HTMLURL string  `json:"html_url"`
		Labels  []struct {
			Name string `json:"name"`
		} `json:"labels"`
		PullRequest *struct{} `json:"pull_request"`
	}
	gistJSON struct {
		ID      string `json:"id"`
		HTMLURL string `json:"html_url"`
		Files   map[string]struct {
			Content   string `json:"content"`
			Truncated bool   `json:"truncated"`
		} `json:"files"`
	}
)

// readFile reads a file at ref: its content and blob, or nil when there
// is no such file.
func readFile(ctx context.Context, cl *client, repo, path, ref string) (*contentFile, *string, error) {
	var f contentFile
	var raw json.RawMessage
	var q url.Values
	if ref != "" {
		q = url.Values{"ref": {ref}}
	}
	status, err := cl.send(ctx, http.MethodGet, repoAt(repo, append([]string{"contents"}, parts(path)...)...), q, nil, &raw, http.StatusOK)
	if status == http.StatusNotFound {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, refusal(err, "reading "+path)
	}
	if json.Unmarshal(raw, &f) != nil || f.Type != "file" {
		return nil, nil, countersign.Errorf(countersign.InvalidRequest, "%s is not a file", path)
	}
	if f.Encoding != "base64" {
		return nil, nil, countersign.Errorf(countersign.InvalidRequest, "%s is too large for GitHub's contents API (over 1 MB)", path)
	}
	data, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(f.Content, "\n", ""))
	if err != nil {
		return nil, nil, countersign.Errorf(countersign.Internal, "GitHub's copy of %s does not decode", path)
	}
	s := string(data)
	return &f, &s, nil
}

// readModes reads, from the tree of the commit head, the mode of each path
// w changes that exists there, walking down one directory at a time (each
// read once). A path that is a symbolic link, a submodule or a directory
// is refused: a write changes regular files only, and a commit keeps
// their modes.
func readModes(ctx context.Context, cl *client, w *write, head string) (map[string]string, error) {
	var c gitCommit
	if _, err := cl.do(ctx, http.MethodGet, repoAt(w.Repo, "git", "commits", head), nil, &c, http.StatusOK); err != nil {
		return nil, refusal(err, "reading the commit "+head)
	}
	trees := map[string]*gitTree{}
	tree := func(sha string) (*gitTree, error) {
		if t, ok := trees[sha]; ok {
			return t, nil
		}
		var t gitTree
		if _, err := cl.do(ctx, http.MethodGet, repoAt(w.Repo, "git", "trees", sha), nil, &t, http.StatusOK); err != nil {
			return nil, refusal(err, "reading the tree of "+w.Branch)
		}
		if t.Truncated {
			return nil, countersign.Errorf(countersign.InvalidRequest, "a directory on %s has too many entries for GitHub to list", w.Branch)
		}
		trees[sha] = &t
		return &t, nil
	}
	modes := map[string]string{}
	for _, p := range w.paths() {
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
			return nil, countersign.Errorf(countersign.InvalidRequest, "%s is a symbolic link on %s: a write changes regular files only", p, w.Branch)
		case modeSubmodule:
			return nil, countersign.Errorf(countersign.InvalidRequest, "%s is a submodule on %s: a write changes regular files only", p, w.Branch)
		case modeTree:
			return nil, countersign.Errorf(countersign.InvalidRequest, "%s is a directory on %s: a write changes files only", p, w.Branch)
		default:
			return nil, countersign.Errorf(countersign.InvalidRequest, "%s has the mode %s on %s, which a write does not change", p, modes[p], w.Branch)
		}
	}
	return modes, nil
}

func headOf(ctx context.Context, cl *client, repo, branch string) (string, error) {
	var ref gitRef
	if _, err := cl.do(ctx, http.MethodGet, repoAt(repo, append([]string{"git", "ref", "heads"}, parts(branch)...)...), nil, &ref, http.StatusOK); err != nil {
		return "", refusal(err, "reading the branch "+branch)
	}
	return ref.Object.SHA, nil
}

func getRepo(ctx context.Context, cl *client, repo string) (*repository, error) {
	var r repository
	if _, err := cl.do(ctx, http.MethodGet, repoAt(repo), nil, &r, http.StatusOK); err != nil {
		return nil, refusal(err, "reading "+repo)
	}
	return &r, nil
}

func defaultBranch(ctx context.Context, cl *client, repo string) (string, error) {
	r, err := getRepo(ctx, cl, repo)
	if err != nil {
		return "", err
	}
	return r.DefaultBranch, nil
}

func getIssue(ctx context.Context, cl *client, repo string, n int) (*issueJSON, error) {
	var is issueJSON
	if _, err := cl.do(ctx, http.MethodGet, repoAt(repo, "issues", strconv.Itoa(n)), nil, &is, http.StatusOK); err != nil {
		return nil, refusal(err, fmt.Sprintf("reading #%d", n))
	}
	return &is, nil
}

func getPull(ctx context.Context, cl *client, repo string, n int) (*pullRequest, error) {
	var p pullRequest
	if _, err := cl.do(ctx, http.MethodGet, repoAt(repo, "pulls", strconv.Itoa(n)), nil, &p, http.StatusOK); err != nil {
		return nil, refusal(err, fmt.Sprintf("reading the pull request #%d", n))
	}
	return &p, nil
}

// prepare reads what a write is built from and fills it in; it returns the
// old contents of the files it changes (nil: no such file).
func prepare(ctx context.Context, cl *client, w *write) (map[string]*string, error) {
	old := map[string]*string{}
	var err error
	switch w.Op {
	case "branch_create":
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
	case "file_put", "commit":
		if w.Branch == "" {
			if w.Branch, err = defaultBranch(ctx, cl, w.Repo); err != nil {
				return nil, err
			}
		}
		head, err := headOf(ctx, cl, w.Repo, w.Branch)
		if err != nil {
			return nil, err
		}
		modes, err := readModes(ctx, cl, w, head)
		if err != nil {
			return nil, err
		}
		if w.Op == "commit" {
			w.SHA, w.Modes = head, modes
		} else if modes[w.Path] == modeExecutable {
			// The contents API takes no mode: it would write the file as
			// a plain one, a change the task could not show.
			return nil, countersign.Errorf(countersign.InvalidRequest, "%s is executable (mode 100755) on %s, and file_put would make it a plain file: use commit, which keeps its mode", w.Path, w.Branch)
		}
		for _, p := range w.paths() {
			f, content, err := readFile(ctx, cl, w.Repo, p, head)
			if err != nil {
				return nil, err
			}
			old[p] = content
			if w.Op == "file_put" && f != nil {
				w.SHA = f.SHA
			}
		}
		if w.Op == "commit" {
			for _, ch := range w.Changes {
				if ch.Delete && old[ch.Path] == nil {
					return nil, countersign.Errorf(countersign.InvalidRequest, "%s is not on %s: there is nothing to delete", ch.Path, w.Branch)
				}
			}
		}
	case "pr_create":
		if w.Base == "" {
			if w.Base, err = defaultBranch(ctx, cl, w.Repo); err != nil {
				return nil, err
			}
		}
	case "pr_review", "pr_merge":
		p, err := getPull(ctx, cl, w.Repo, w.Number)
		if err != nil {
			return nil, err
		}
		if p.State != "open" || p.Merged {
			return nil, countersign.Errorf(countersign.InvalidRequest, "the pull request #%d is %s", w.Number, map[bool]string{true: "merged", false: "closed"}[p.Merged])
		}
		w.SHA, w.Title0, w.Head, w.Base = p.Head.SHA, p.Title, p.Head.Ref, p.Base.Ref
		if w.Op == "pr_merge" {
			w.Page = p.HTMLURL
		}
	case "repo_star", "repo_unstar":
		r, err := getRepo(ctx, cl, w.Repo)
		if err != nil {
			return nil, err
		}
		w.Page = r.HTMLURL
	case "issue_comment", "issue_update":
		is, err := getIssue(ctx, cl, w.Repo, w.Number)
		if err != nil {
			return nil, err
		}
		w.Title0 = is.Title
	case "gist_update":
		var gj gistJSON
		if _, err := cl.do(ctx, http.MethodGet, at{"gists", w.GistID}, nil, &gj, http.StatusOK); err != nil {
			return nil, refusal(err, "reading the gist")
		}
		for name := range w.Files {
			if f, ok := gj.Files[name]; ok {
				if f.Truncated {
					return nil, countersign.Errorf(countersign.InvalidRequest, "the gist's file %s is too large to show", name)
				}
				s := f.Content
				old[name] = &s
			} else if w.Files[name] == nil {
				return nil, countersign.Errorf(countersign.InvalidRequest, "the gist has no file %s to delete", name)
			}
		}
	}
	return old, nil
}
