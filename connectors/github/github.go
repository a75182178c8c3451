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
			policy.Names(condRepo, keyRepos, true),
			policy.Names(condBranch, keyBranch, false),
			policy.Names(condPath, keyPaths, false),
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
			op.Carries = slices.Clone(d.carries)
		}
		c.Operations = append(c.Operations, op)
	}
	c.Operations = append(c.Operations, connectors.Operation{Name: "confirm", Kind: connectors.Answer, Answer: g.confirm,
		Description: "Carries out a GitHub write the owner approved, exactly as it was shown.", Result: json.RawMessage(confirmResult)})
	return c
}

// write is one of the thirteen writes: the agent's call, then, once
// prepared, what was read for it, sealed in its task as one JSON object
// whose "op" names the write. Each write is a type of its own (branch.go,
// files.go, issues.go, pulls.go, gists.go, stars.go), and decl.go's table
// says which.
type write interface {
	// name is the write's operation; setName is called once, by newWrite.
	name() string
	setName(op string)
	// args is what the agent's call decodes into: its arguments alone,
	// so a call cannot set what prepare reads.
	args() any
	// scope is what the write changes, for the policy and the limits.
	scope() scope
	// check refuses, before GitHub is asked, what the schema cannot say:
	// names GitHub would not take (names.go), then the write's own rules.
	check() error
	// prepare reads what the write is built from and fills it in; it
	// returns the old contents of the files it changes (nil: no such
	// file).
	prepare(ctx context.Context, cl *client) (map[string]*string, error)
	// show adds every value the write will use, after its repository, to
	// what the task shows, the agent's marked; for file writes the diff
	// against old, and the new content.
	show(d *display, old map[string]*string)
	// summary is the one line of what approving does (summary.go).
	summary(old map[string]*string) line
	// execute carries out the prepared write and returns what GitHub
	// answered.
	execute(ctx context.Context, cl *client) (map[string]any, error)
	// outcome tells the owner's history what the write did, from what
	// execute returned.
	outcome(res answered) line
	// doing names the write in a refusal.
	doing() string
}

// Some writes do more at one step; each says so by one of these.
type (
	// linked is a write whose outcome links to another page than the
	// html_url GitHub answered.
	linked interface{ link(res answered) string }
	// conflicting words, after an approval, the refusals of GitHub that
	// mean what the owner saw changed; nil for any other.
	conflicting interface{ conflict(e *apiError) error }
	// rechecked reads again, after an approval, what the write is bound
	// to and GitHub does not check itself.
	rechecked interface {
		recheck(ctx context.Context, cl *client) error
	}
	// shownBranch is a write whose branch only its task shows (the default
	// branch, a merge's base): taskFacts reads it there.
	shownBranch interface {
		fromTask(shown func(label string) string)
	}
)

// named is the first member of every sealed write: its operation.
type named struct {
	Op string `json:"op"`
}

func (n *named) name() string      { return n.Op }
func (n *named) setName(op string) { n.Op = op }

// scope is what a write changes.
type scope struct {
	repo   string   // "" for a gist
	branch string   // the branch it changes, "" for none
	paths  []string // the repository paths it changes
	files  int      // how many files it changes (a gist's too)
}

// newWrite is a new write of the operation op; false when op is no write.
func newWrite(op string) (write, bool) {
	d, ok := declared(op)
	if !ok || d.write == nil {
		return nil, false
	}
	w := d.write()
	w.setName(op)
	return w, true
}

// args decodes a call into a write.
func args(c *connectors.Call) (write, error) {
	w, ok := newWrite(c.Operation)
	if !ok {
		return nil, fmt.Errorf("no write %s", c.Operation)
	}
	if err := c.Decode(w.args()); err != nil {
		return nil, err
	}
	return w, nil
}

// Git's modes of a tree's entries.
const (
	modeFile       = "100644"
	modeExecutable = "100755"
	modeSymlink    = "120000"
	modeSubmodule  = "160000"
	modeTree       = "040000"
)

// facts are the values of the conditions a write carries (its
// declaration's carries), as the policy reads them: the repository, the
// branch it changes, the paths it changes.
func facts(w write) policy.Facts {
	f := policy.Facts{Names: map[string][]string{}}
	s := w.scope()
	d, _ := declared(w.name())
	for _, c := range d.carries {
		switch c {
		case condRepo:
			f.Names[c] = []string{s.repo}
		case condBranch:
			f.Names[c] = []string{s.branch}
		case condPath:
			f.Names[c] = s.paths
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
	w, ok := newWrite(op)
	if !ok {
		return "", policy.Facts{}, fmt.Errorf("the task asks about %s, which is no write", op)
	}
	if err := json.Unmarshal(request, w.args()); err != nil {
		return "", policy.Facts{}, err
	}
	if sb, ok := w.(shownBranch); ok {
		sb.fromTask(func(label string) string {
			for _, f := range env.Display.Fields {
				if f.Label == label && len(f.Values) == 1 {
					return f.Values[0]
				}
			}
			return ""
		})
	}
	if d, _ := declared(op); slices.Contains(d.carries, condBranch) && w.scope().branch == "" {
		return "", policy.Facts{}, errors.New("the task does not show the branch it changes")
	}
	return op, facts(w), nil
}

// bounded checks a write against the policy's globs, `repos`,
// `branches` and `paths`, which only ever refuse. `actions` is the
// policy's own gate (Connector.Allowed): Decide refuses a write it does
// not name. The write is checked first (its names among the rest), so
// the globs only ever match names GitHub takes as they are.
func bounded(p *policy.Policy, w write) error {
	if err := w.check(); err != nil {
		return err
	}
	s := w.scope()
	if repos, set := p.List(keyRepos); set && s.repo != "" && !matchAny(repos, s.repo, true) {
		return countersign.Errorf(countersign.PolicyDenied, "the owner's policy does not allow writes to %s (not in `repos`)", s.repo)
	}
	if b := s.branch; b != "" {
		if branches, set := p.List(keyBranch); set && !matchAny(branches, b, false) {
			return countersign.Errorf(countersign.PolicyDenied, "the owner's policy does not allow writes to the branch %s (not in `branches`)", b)
		}
	}
	if paths, set := p.List(keyPaths); set {
		for _, path := range s.paths {
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
