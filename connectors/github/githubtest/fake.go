// Package githubtest is a faithful fake of the part of GitHub's REST API
// the github connector uses: real refs, commits, trees and blobs (object
// ids as git computes them, so a moved head is a real new commit; files
// with git's modes, 100644, 100755 and 120000 for a symbolic link, which
// the trees API lists, a tree write sets and the contents API, taking no
// mode, writes as 100644), pull
// requests, issues, comments, reviews, gists and stars, answered with
// GitHub's documented statuses and error bodies ({"message",
// "documentation_url"}, and errors[] on 422), every URL in an answer
// written as RFC 3986 requires (a branch or a path escaped one segment
// per part, a ref in a query percent-encoded). Tests, `serve --dev` and
// `countersign sandbox github` use it; everything it holds can be read back
// over the same REST API.
package githubtest

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

const docs = "https://docs.github.com/rest"

// Server is the fake GitHub. Its methods are safe for concurrent use.
type Server struct {
	// Token is the one token it accepts ("Authorization: Bearer <Token>").
	Token string
	// Login is the account the token belongs to.
	Login string
	// URL is where it listens, once started with Start (or set by the
	// caller that serves Handler itself).
	URL string

	mu     sync.Mutex
	repos  map[string]*repo // by lower-case full name
	gists  map[string]*gist
	stars  map[string]bool // lower-case full names the user starred
	nextID int64
	clock  func() time.Time
	fails  []failure
	// Requests counts the requests served, by "METHOD path".
	requests map[string]int
	srv      *httptest.Server
	// record keeps every exchange in log (Record).
	record bool
	log    []Exchange
}

// Exchange is one request the fake answered, as it arrived, and the
// answer it gave.
type Exchange struct {
	Method string
	// RequestURI is the request's target exactly as sent: its path as
	// escaped on the wire, and its query.
	RequestURI    string
	Header        http.Header
	ContentLength int64
	Body          []byte
	Status        int
	RespHeader    http.Header
	RespBody      []byte
	// Injected: the answer is one FailNext set, not the fake's own.
	Injected bool
}

type failure struct {
	method, path string
	status       int
	header       http.Header
	body         string
}

type repo struct {
	ID            int64
	Owner, Name   string
	DefaultBranch string
	Private       bool
	refs          map[string]string // branch → commit sha
	blobs         map[string][]byte
	trees         map[string]map[string]entry
	commits       map[string]commit
	issues        map[int]*issue
	next          int
}

type issue struct {
	ID        int64
	Number    int
	Title     string
	Body      *string
	State     string
	Reason    *string
	Labels    []string
	Assignees []string
	Created   time.Time
	Comments  []comment
	Pull      *pull
}

type comment struct {
	ID      int64
	Body    string
	Created time.Time
}

type pull struct {
	Head, Base     string // branch names
	HeadSHA        string // head commit when merged or closed
	Draft          bool
	Merged         bool
	MergeCommitSHA string
	Reviews        []review
}

type review struct {
	ID       int64
	State    string
	Body     string
	CommitID string
}

type gist struct {
	ID          string
	Description *string
	Public      bool
	Files       map[string]string
	Created     time.Time
	History     int
}

// New is an empty fake that accepts token for login.
func New(token, login string) *Server {
	return &Server{Token: token, Login: login, repos: map[string]*repo{}, gists: map[string]*gist{}, stars: map[string]bool{},
		nextID: 1000, clock: time.Now, requests: map[string]int{}}
}

// Start serves the fake on a loopback port until Close.
func (s *Server) Start() *Server {
	s.srv = httptest.NewServer(s)
	s.URL = s.srv.URL
	return s
}

// Close stops a started fake.
func (s *Server) Close() {
	if s.srv != nil {
		s.srv.Close()
	}
}

// SetClock sets the fake's clock.
func (s *Server) SetClock(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clock = now
}

// FailNext makes the next request with method whose path starts with path
// answer status with header and a body {"message": message, …} instead.
func (s *Server) FailNext(method, path string, status int, header http.Header, message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	body, _ := json.Marshal(map[string]string{"message": message, "documentation_url": docs})
	s.fails = append(s.fails, failure{method, path, status, header, string(body)})
}

// Record makes the fake keep every exchange from now on, for Exchanges.
// The sandbox does not: what it keeps would only grow.
func (s *Server) Record() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.record = true
}

// Exchanges are the exchanges kept since Record, in order.
func (s *Server) Exchanges() []Exchange {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.log)
}

// recorder keeps what an answer writes.
type recorder struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (r *recorder) WriteHeader(status int) {
	r.status = status
	r.ResponseWriter.WriteHeader(status)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	r.body.Write(b)
	return r.ResponseWriter.Write(b)
}

// Served is how many requests "METHOD /path" the fake answered.
func (s *Server) Served(method, path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[method+" "+path]
}

func (s *Server) id() int64 { s.nextID++; return s.nextID }

func (s *Server) now() time.Time { return s.clock().UTC().Truncate(time.Second) }

// CreateRepo adds a repository with a first commit on its default branch
// holding files.
func (s *Server) CreateRepo(owner, name, defaultBranch string, files map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := &repo{ID: s.id(), Owner: owner, Name: name, DefaultBranch: defaultBranch, refs: map[string]string{},
		blobs: map[string][]byte{}, trees: map[string]map[string]entry{}, commits: map[string]commit{}, issues: map[int]*issue{}, next: 1}
	s.repos[strings.ToLower(owner+"/"+name)] = r
	r.refs[defaultBranch] = s.commitFiles(r, "", "Initial commit", files)
}

// commitFiles writes a commit on parent ("" for a root commit) changing
// files (a nil value deletes) and returns its id; it moves no ref.
func (s *Server) commitFiles(r *repo, parent, message string, files map[string]string) string {
	snap := map[string]entry{}
	var parents []string
	if parent != "" {
		for p, e := range r.trees[r.commits[parent].Tree] {
			snap[p] = e
		}
		parents = []string{parent}
	}
	for p, c := range files {
		b := []byte(c)
		sha := gitSHA("blob", b)
		r.blobs[sha] = b
		// A file written again keeps its mode, as git keeps it.
		mode := ModeFile
		if old, ok := snap[p]; ok {
			mode = old.Mode
		}
		snap[p] = entry{Mode: mode, Blob: sha}
	}
	return s.commitTree(r, parents, message, snap)
}

// commitTree writes snap as a tree, and a commit of it on parents, and
// returns the commit's id; it moves no ref.
func (s *Server) commitTree(r *repo, parents []string, message string, snap map[string]entry) string {
	tree := putTree(r, snap)
	c := commit{Tree: tree, Parents: parents, Message: message, Author: s.Login, When: strconv.FormatInt(s.now().Unix(), 10)}
	c.SHA = commitSHA(c)
	r.commits[c.SHA] = c
	return c.SHA
}

// Push adds a commit changing files on branch (making the branch from
// the default branch if it does not exist) and returns its id.
func (s *Server) Push(fullName, branch, message string, files map[string]string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[strings.ToLower(fullName)]
	head, ok := r.refs[branch]
	if !ok {
		head = r.refs[r.DefaultBranch]
	}
	sha := s.commitFiles(r, head, message, files)
	r.refs[branch] = sha
	return sha
}

// OpenPull opens a pull request of head into base and returns its number.
func (s *Server) OpenPull(fullName, head, base, title, body string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[strings.ToLower(fullName)]
	return s.newIssue(r, title, &body, &pull{Head: head, Base: base}).Number
}

// OpenIssue opens an issue and returns its number.
func (s *Server) OpenIssue(fullName, title, body string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[strings.ToLower(fullName)]
	return s.newIssue(r, title, &body, nil).Number
}

func (s *Server) newIssue(r *repo, title string, body *string, p *pull) *issue {
	is := &issue{ID: s.id(), Number: r.next, Title: title, Body: body, State: "open", Labels: []string{}, Assignees: []string{}, Created: s.now(), Pull: p}
	r.issues[is.Number] = is
	r.next++
	return is
}

// File is a file's content on a branch, and whether it exists.
func (s *Server) File(fullName, branch, path string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[strings.ToLower(fullName)]
	if r == nil {
		return "", false
	}
	e, ok := r.trees[r.commits[r.refs[branch]].Tree][path]
	if !ok {
		return "", false
	}
	return string(r.blobs[e.Blob]), true
}

// Head is a branch's head commit ("" when there is no such branch).
func (s *Server) Head(fullName, branch string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.repos[strings.ToLower(fullName)]; r != nil {
		return r.refs[branch]
	}
	return ""
}

// Mode is a path's mode on a branch ("" when there is no such file).
func (s *Server) Mode(fullName, branch, path string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.repos[strings.ToLower(fullName)]; r != nil {
		return r.trees[r.commits[r.refs[branch]].Tree][path].Mode
	}
	return ""
}

// Chmod adds a commit on branch giving an existing file mode (ModeFile or
// ModeExecutable) and returns its id.
func (s *Server) Chmod(fullName, branch, path, mode string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[strings.ToLower(fullName)]
	head := r.refs[branch]
	snap := maps.Clone(r.trees[r.commits[head].Tree])
	e := snap[path]
	e.Mode = mode
	snap[path] = e
	sha := s.commitTree(r, []string{head}, "Change the mode of "+path, snap)
	r.refs[branch] = sha
	return sha
}

// Symlink adds a commit on branch making path a symbolic link to target,
// and returns its id.
func (s *Server) Symlink(fullName, branch, path, target string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[strings.ToLower(fullName)]
	head := r.refs[branch]
	snap := maps.Clone(r.trees[r.commits[head].Tree])
	sha := gitSHA("blob", []byte(target))
	r.blobs[sha] = []byte(target)
	snap[path] = entry{Mode: ModeSymlink, Blob: sha}
	c := s.commitTree(r, []string{head}, "Link "+path, snap)
	r.refs[branch] = c
	return c
}

// Seed fills the fake with the sandbox's sample data: the repository
// LOGIN/hello with a README on main, a branch add-greeting one commit
// ahead, pull request 1 from it and issue 2, and returns the repository's
// full name.
func (s *Server) Seed() string {
	full := s.Login + "/hello"
	s.CreateRepo(s.Login, "hello", "main", map[string]string{
		"README.md":     "# hello\n\nA sample repository of the Countersign sandbox.\n\nTry a change through your inbox.\n",
		"docs/usage.md": "# Usage\n\nRun `hello` to be greeted.\n",
	})
	s.Push(full, "add-greeting", "Add a greeting", map[string]string{"greeting.txt": "Hello, world!\n"})
	s.OpenPull(full, "add-greeting", "main", "Add a greeting", "Adds greeting.txt.")
	s.OpenIssue(full, "Say hello in more languages", "Only English so far.")
	return full
}

// ServeHTTP answers the REST API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests[r.Method+" "+r.URL.EscapedPath()]++
	fails := len(s.fails)
	if s.record {
		x := Exchange{Method: r.Method, RequestURI: r.RequestURI, Header: r.Header.Clone(), ContentLength: r.ContentLength}
		x.Body, _ = io.ReadAll(io.LimitReader(r.Body, 100<<20))
		r.Body = io.NopCloser(bytes.NewReader(x.Body))
		rec := &recorder{ResponseWriter: w}
		w = rec
		defer func() {
			x.Status, x.RespHeader, x.RespBody = cmp.Or(rec.status, http.StatusOK), rec.Header().Clone(), rec.body.Bytes()
			x.Injected = len(s.fails) < fails
			s.log = append(s.log, x)
		}()
	}
	for i, f := range s.fails {
		if f.method == r.Method && strings.HasPrefix(r.URL.Path, f.path) {
			s.fails = append(s.fails[:i], s.fails[i+1:]...)
			for k, v := range f.header {
				w.Header()[k] = v
			}
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.WriteHeader(f.status)
			io.WriteString(w, f.body)
			return
		}
	}
	if r.Header.Get("Authorization") != "Bearer "+s.Token || s.Token == "" {
		writeError(w, http.StatusUnauthorized, "Bad credentials")
		return
	}
	var body map[string]json.RawMessage
	if r.Method == http.MethodPost || r.Method == http.MethodPatch || (r.Method == http.MethodPut && r.ContentLength != 0) {
		if err := json.NewDecoder(io.LimitReader(r.Body, 100<<20)).Decode(&body); err != nil && !(err == io.EOF && r.Method == http.MethodPut) {
			writeError(w, http.StatusBadRequest, "Problems parsing JSON")
			return
		}
	}
	seg := strings.Split(strings.TrimPrefix(r.URL.EscapedPath(), "/"), "/")
	for i := range seg {
		seg[i], _ = url.PathUnescape(seg[i])
	}
	s.route(w, r, seg, body)
}

func (s *Server) route(w http.ResponseWriter, r *http.Request, seg []string, body map[string]json.RawMessage) {
	m := r.Method
	switch {
	case len(seg) == 4 && seg[0] == "user" && seg[1] == "starred":
		s.star(w, m, seg[2]+"/"+seg[3])
		return
	case len(seg) == 1 && seg[0] == "gists" && m == http.MethodPost:
		s.gistCreate(w, body)
		return
	case len(seg) == 2 && seg[0] == "gists":
		s.gist(w, m, seg[1], body)
		return
	case len(seg) >= 3 && seg[0] == "repos":
	default:
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	rp := s.repos[strings.ToLower(seg[1]+"/"+seg[2])]
	if rp == nil {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	rest := seg[3:]
	switch {
	case len(rest) == 0 && m == http.MethodGet:
		writeJSON(w, 200, s.repoJSON(rp))
	case len(rest) >= 4 && rest[0] == "git" && rest[1] == "ref" && rest[2] == "heads" && m == http.MethodGet:
		s.refGet(w, rp, strings.Join(rest[3:], "/"))
	case len(rest) == 2 && rest[0] == "git" && rest[1] == "refs" && m == http.MethodPost:
		s.refCreate(w, rp, body)
	case len(rest) >= 4 && rest[0] == "git" && rest[1] == "refs" && rest[2] == "heads" && m == http.MethodPatch:
		s.refUpdate(w, rp, strings.Join(rest[3:], "/"), body)
	case len(rest) == 3 && rest[0] == "git" && rest[1] == "commits" && m == http.MethodGet:
		c, ok := rp.commits[rest[2]]
		if !ok {
			writeError(w, 404, "Not Found")
			return
		}
		writeJSON(w, 200, s.commitJSON(rp, c))
	case len(rest) == 2 && rest[0] == "git" && rest[1] == "blobs" && m == http.MethodPost:
		s.blobCreate(w, rp, body)
	case len(rest) == 2 && rest[0] == "git" && rest[1] == "trees" && m == http.MethodPost:
		s.treeCreate(w, rp, body)
	case len(rest) == 3 && rest[0] == "git" && rest[1] == "trees" && m == http.MethodGet:
		_, recursive := r.URL.Query()["recursive"]
		s.treeGet(w, rp, rest[2], recursive)
	case len(rest) == 2 && rest[0] == "git" && rest[1] == "commits" && m == http.MethodPost:
		s.commitCreate(w, rp, body)
	case len(rest) >= 2 && rest[0] == "contents" && m == http.MethodGet:
		s.contentGet(w, rp, strings.Join(rest[1:], "/"), r.URL.Query().Get("ref"))
	case len(rest) >= 2 && rest[0] == "contents" && m == http.MethodPut:
		s.contentPut(w, rp, strings.Join(rest[1:], "/"), body)
	case len(rest) == 1 && rest[0] == "issues" && m == http.MethodPost:
		s.issueCreate(w, rp, body)
	case len(rest) >= 2 && (rest[0] == "issues" || rest[0] == "pulls"):
		n, err := strconv.Atoi(rest[1])
		is := rp.issues[n]
		if err != nil || is == nil || (rest[0] == "pulls" && is.Pull == nil) {
			writeError(w, 404, "Not Found")
			return
		}
		s.numbered(w, m, rp, is, rest[0], rest[2:], body)
	case len(rest) == 1 && rest[0] == "pulls" && m == http.MethodPost:
		s.pullCreate(w, rp, body)
	default:
		writeError(w, 404, "Not Found")
	}
}

func (s *Server) numbered(w http.ResponseWriter, m string, rp *repo, is *issue, kind string, rest []string, body map[string]json.RawMessage) {
	switch {
	case kind == "issues" && len(rest) == 0 && m == http.MethodGet:
		writeJSON(w, 200, s.issueJSON(rp, is))
	case kind == "issues" && len(rest) == 0 && m == http.MethodPatch:
		s.issueUpdate(w, rp, is, body)
	case kind == "issues" && len(rest) == 1 && rest[0] == "comments" && m == http.MethodPost:
		var text *string
		if !str(body, "body", &text) || text == nil {
			validation(w, "Issue comment", "body", "missing_field")
			return
		}
		c := comment{ID: s.id(), Body: *text, Created: s.now()}
		is.Comments = append(is.Comments, c)
		w.Header().Set("Location", s.api(rp, fmt.Sprintf("issues/comments/%d", c.ID)))
		writeJSON(w, 201, s.commentJSON(rp, is, c))
	case kind == "issues" && len(rest) == 1 && rest[0] == "comments" && m == http.MethodGet:
		out := []any{}
		for _, c := range is.Comments {
			out = append(out, s.commentJSON(rp, is, c))
		}
		writeJSON(w, 200, out)
	case kind == "pulls" && len(rest) == 0 && m == http.MethodGet:
		writeJSON(w, 200, s.pullJSON(rp, is))
	case kind == "pulls" && len(rest) == 1 && rest[0] == "reviews" && m == http.MethodPost:
		s.reviewCreate(w, rp, is, body)
	case kind == "pulls" && len(rest) == 1 && rest[0] == "reviews" && m == http.MethodGet:
		out := []any{}
		for _, rv := range is.Pull.Reviews {
			out = append(out, s.reviewJSON(rp, is, rv))
		}
		writeJSON(w, 200, out)
	case kind == "pulls" && len(rest) == 1 && rest[0] == "merge" && m == http.MethodPut:
		s.merge(w, rp, is, body)
	case kind == "pulls" && len(rest) == 1 && rest[0] == "merge" && m == http.MethodGet:
		if is.Pull.Merged {
			w.WriteHeader(204)
			return
		}
		writeError(w, 404, "Not Found")
	default:
		writeError(w, 404, "Not Found")
	}
}

// --- refs and objects

func (s *Server) refJSON(rp *repo, branch, sha string) map[string]any {
	return map[string]any{"ref": "refs/heads/" + branch, "node_id": nodeID("REF", branch), "url": s.api(rp, "git/refs/heads/"+escape(branch)),
		"object": map[string]any{"type": "commit", "sha": sha, "url": s.api(rp, "git/commits/"+sha)}}
}

func (s *Server) refGet(w http.ResponseWriter, rp *repo, branch string) {
	sha, ok := rp.refs[branch]
	if !ok {
		writeError(w, 404, "Not Found")
		return
	}
	writeJSON(w, 200, s.refJSON(rp, branch, sha))
}

func (s *Server) refCreate(w http.ResponseWriter, rp *repo, body map[string]json.RawMessage) {
	var ref, sha *string
	if !str(body, "ref", &ref) || !str(body, "sha", &sha) || ref == nil || sha == nil {
		validation(w, "Reference", "ref", "missing_field")
		return
	}
	if !strings.HasPrefix(*ref, "refs/") || strings.Count(*ref, "/") < 2 {
		writeError(w, 422, "Reference name is not well formed")
		return
	}
	branch, ok := strings.CutPrefix(*ref, "refs/heads/")
	if !ok {
		writeError(w, 422, "Reference update failed")
		return
	}
	if _, exists := rp.refs[branch]; exists {
		writeError(w, 422, "Reference already exists")
		return
	}
	if _, ok := rp.commits[*sha]; !ok {
		writeError(w, 422, "Object does not exist")
		return
	}
	rp.refs[branch] = *sha
	w.Header().Set("Location", s.api(rp, "git/refs/heads/"+escape(branch)))
	writeJSON(w, 201, s.refJSON(rp, branch, *sha))
}

func (s *Server) refUpdate(w http.ResponseWriter, rp *repo, branch string, body map[string]json.RawMessage) {
	var sha *string
	var force bool
	if !str(body, "sha", &sha) || sha == nil {
		validation(w, "Reference", "sha", "missing_field")
		return
	}
	if raw, ok := body["force"]; ok && json.Unmarshal(raw, &force) != nil {
		validation(w, "Reference", "force", "invalid")
		return
	}
	old, ok := rp.refs[branch]
	if !ok {
		writeError(w, 422, "Reference does not exist")
		return
	}
	if _, ok := rp.commits[*sha]; !ok {
		writeError(w, 422, "Object does not exist")
		return
	}
	if !force && !ancestor(rp, old, *sha) {
		writeError(w, 422, "Update is not a fast forward")
		return
	}
	rp.refs[branch] = *sha
	writeJSON(w, 200, s.refJSON(rp, branch, *sha))
}

// ancestor reports whether a is b or one of b's ancestors.
func ancestor(rp *repo, a, b string) bool {
	seen := map[string]bool{}
	todo := []string{b}
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		if c == a {
			return true
		}
		if seen[c] {
			continue
		}
		seen[c] = true
		todo = append(todo, rp.commits[c].Parents...)
	}
	return false
}

func (s *Server) commitJSON(rp *repo, c commit) map[string]any {
	parents := []any{}
	for _, p := range c.Parents {
		parents = append(parents, map[string]any{"sha": p, "url": s.api(rp, "git/commits/"+p), "html_url": s.html(rp, "commit/"+p)})
	}
	sec, _ := strconv.ParseInt(c.When, 10, 64)
	who := map[string]any{"name": c.Author, "email": c.Author + "@users.noreply.github.com", "date": time.Unix(sec, 0).UTC().Format(time.RFC3339)}
	return map[string]any{"sha": c.SHA, "node_id": nodeID("C", c.SHA), "url": s.api(rp, "git/commits/"+c.SHA), "html_url": s.html(rp, "commit/"+c.SHA),
		"author": who, "committer": who, "message": c.Message, "tree": map[string]any{"sha": c.Tree, "url": s.api(rp, "git/trees/"+c.Tree)},
		"parents": parents, "verification": map[string]any{"verified": false, "reason": "unsigned", "signature": nil, "payload": nil, "verified_at": nil}}
}

func (s *Server) blobCreate(w http.ResponseWriter, rp *repo, body map[string]json.RawMessage) {
	var content, enc *string
	if !str(body, "content", &content) || !str(body, "encoding", &enc) || content == nil {
		validation(w, "Blob", "content", "missing_field")
		return
	}
	data := []byte(*content)
	if enc != nil && *enc == "base64" {
		var err error
		if data, err = base64.StdEncoding.DecodeString(*content); err != nil {
			validation(w, "Blob", "content", "invalid")
			return
		}
	} else if enc != nil && *enc != "utf-8" {
		validation(w, "Blob", "encoding", "invalid")
		return
	}
	sha := gitSHA("blob", data)
	rp.blobs[sha] = data
	writeJSON(w, 201, map[string]any{"sha": sha, "url": s.api(rp, "git/blobs/"+sha)})
}

func (s *Server) treeCreate(w http.ResponseWriter, rp *repo, body map[string]json.RawMessage) {
	var base *string
	var items []struct {
		Path    string  `json:"path"`
		Mode    string  `json:"mode"`
		Type    string  `json:"type"`
		SHA     *string `json:"sha"`
		Content *string `json:"content"`
	}
	if !str(body, "base_tree", &base) || json.Unmarshal(body["tree"], &items) != nil {
		validation(w, "Tree", "tree", "invalid")
		return
	}
	snap := map[string]entry{}
	if base != nil {
		bt, ok := rp.trees[*base]
		if !ok {
			validation(w, "Tree", "base_tree", "invalid")
			return
		}
		for p, e := range bt {
			snap[p] = e
		}
	}
	for _, it := range items {
		switch {
		// Subtrees (040000) and submodules (160000) are not modelled.
		case it.Path == "" || it.Type != "blob" || (it.Mode != ModeFile && it.Mode != ModeExecutable && it.Mode != ModeSymlink):
			validation(w, "Tree", "tree", "invalid")
			return
		case it.Content != nil:
			b := []byte(*it.Content)
			sha := gitSHA("blob", b)
			rp.blobs[sha] = b
			snap[it.Path] = entry{Mode: it.Mode, Blob: sha}
		case it.SHA == nil:
			delete(snap, it.Path)
		default:
			if _, ok := rp.blobs[*it.SHA]; !ok {
				validation(w, "Tree", "sha", "invalid")
				return
			}
			snap[it.Path] = entry{Mode: it.Mode, Blob: *it.SHA}
		}
	}
	sha := putTree(rp, snap)
	var out []any
	paths := make([]string, 0, len(snap))
	for p := range snap {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		e := snap[p]
		out = append(out, map[string]any{"path": p, "mode": e.Mode, "type": "blob", "sha": e.Blob, "size": len(rp.blobs[e.Blob]), "url": s.api(rp, "git/blobs/"+e.Blob)})
	}
	writeJSON(w, 201, map[string]any{"sha": sha, "url": s.api(rp, "git/trees/"+sha), "truncated": false, "tree": out})
}

func (s *Server) commitCreate(w http.ResponseWriter, rp *repo, body map[string]json.RawMessage) {
	var msg, tree *string
	var parents []string
	if !str(body, "message", &msg) || !str(body, "tree", &tree) || msg == nil || tree == nil {
		validation(w, "Commit", "message", "missing_field")
		return
	}
	if raw, ok := body["parents"]; ok && json.Unmarshal(raw, &parents) != nil {
		validation(w, "Commit", "parents", "invalid")
		return
	}
	if _, ok := rp.trees[*tree]; !ok {
		validation(w, "Commit", "tree", "invalid")
		return
	}
	for _, p := range parents {
		if _, ok := rp.commits[p]; !ok {
			validation(w, "Commit", "parents", "invalid")
			return
		}
	}
	c := commit{Tree: *tree, Parents: parents, Message: *msg, Author: s.Login, When: strconv.FormatInt(s.now().Unix(), 10)}
	c.SHA = commitSHA(c)
	rp.commits[c.SHA] = c
	writeJSON(w, 201, s.commitJSON(rp, c))
}

// putTree stores the tree snap makes, and each of its subtrees, and
// returns its id.
func putTree(rp *repo, snap map[string]entry) string {
	return writeTree(snap, func(sha string, files map[string]entry) { rp.trees[sha] = files })
}

// treeGet answers a tree by its id or a branch's name: its entries, each
// subtree as one entry, or with recursive every file and subtree under it.
func (s *Server) treeGet(w http.ResponseWriter, rp *repo, id string, recursive bool) {
	if head, ok := rp.refs[id]; ok {
		id = rp.commits[head].Tree
	}
	snap, ok := rp.trees[id]
	if !ok {
		writeError(w, 404, "Not Found")
		return
	}
	type item struct{ path, mode, kind, sha string }
	var items []item
	dirs := map[string]bool{}
	for p, e := range snap {
		parts := strings.Split(p, "/")
		if !recursive && len(parts) > 1 {
			dirs[parts[0]] = true
			continue
		}
		for i := 1; i < len(parts); i++ {
			dirs[strings.Join(parts[:i], "/")] = true
		}
		items = append(items, item{p, e.Mode, "blob", e.Blob})
	}
	for d := range dirs {
		sub := map[string]entry{}
		for p, e := range snap {
			if rest, ok := strings.CutPrefix(p, d+"/"); ok {
				sub[rest] = e
			}
		}
		items = append(items, item{d, "040000", "tree", putTree(rp, sub)})
	}
	sort.Slice(items, func(i, j int) bool { return items[i].path < items[j].path })
	out := []any{}
	for _, it := range items {
		e := map[string]any{"path": it.path, "mode": it.mode, "type": it.kind, "sha": it.sha}
		if it.kind == "blob" {
			e["size"] = len(rp.blobs[it.sha])
			e["url"] = s.api(rp, "git/blobs/"+it.sha)
		} else {
			e["url"] = s.api(rp, "git/trees/"+it.sha)
		}
		out = append(out, e)
	}
	writeJSON(w, 200, map[string]any{"sha": id, "url": s.api(rp, "git/trees/"+id), "tree": out, "truncated": false})
}

// --- contents

func (s *Server) contentJSON(rp *repo, path, ref string, e entry) map[string]any {
	data := rp.blobs[e.Blob]
	name := path[strings.LastIndex(path, "/")+1:]
	self := s.api(rp, "contents/"+escape(path)+"?ref="+queryEscape(ref))
	html := s.html(rp, "blob/"+escape(ref)+"/"+escape(path))
	return map[string]any{"type": "file", "encoding": "base64", "size": len(data), "name": name, "path": path,
		"content": base64.StdEncoding.EncodeToString(data), "sha": e.Blob, "url": self,
		"git_url": s.api(rp, "git/blobs/"+e.Blob), "html_url": html,
		"download_url": s.URL + "/raw/" + rp.Owner + "/" + rp.Name + "/" + escape(ref) + "/" + escape(path),
		"_links":       map[string]any{"self": self, "git": s.api(rp, "git/blobs/"+e.Blob), "html": html}}
}

func (s *Server) resolve(rp *repo, ref string) (string, bool) {
	if ref == "" {
		ref = rp.DefaultBranch
	}
	if sha, ok := rp.refs[ref]; ok {
		return sha, true
	}
	_, ok := rp.commits[ref]
	return ref, ok
}

func (s *Server) contentGet(w http.ResponseWriter, rp *repo, p, ref string) {
	sha, ok := s.resolve(rp, ref)
	if !ok {
		writeError(w, 404, "No commit found for the ref "+ref)
		return
	}
	if ref == "" {
		ref = rp.DefaultBranch
	}
	snap := rp.trees[rp.commits[sha].Tree]
	if e, ok := snap[p]; ok {
		if e.Mode != ModeSymlink {
			writeJSON(w, 200, s.contentJSON(rp, p, ref, e))
			return
		}
		// A link to a file of the repository answers that file; any
		// other link, the link itself.
		target := string(rp.blobs[e.Blob])
		to := path.Join(path.Dir(p), target)
		if t, ok := snap[to]; ok && !strings.HasPrefix(target, "/") && t.Mode != ModeSymlink {
			writeJSON(w, 200, s.contentJSON(rp, to, ref, t))
			return
		}
		out := s.contentJSON(rp, p, ref, e)
		delete(out, "content")
		delete(out, "encoding")
		out["type"], out["target"] = "symlink", target
		writeJSON(w, 200, out)
		return
	}
	for q := range snap {
		if strings.HasPrefix(q, p+"/") {
			writeJSON(w, 200, []any{}) // a directory: the connector reads files only
			return
		}
	}
	writeError(w, 404, "Not Found")
}

func (s *Server) contentPut(w http.ResponseWriter, rp *repo, path string, body map[string]json.RawMessage) {
	var msg, content, sha, branch *string
	if !str(body, "message", &msg) || !str(body, "content", &content) || !str(body, "sha", &sha) || !str(body, "branch", &branch) {
		writeError(w, 422, "Invalid request.\n\nInvalid input.")
		return
	}
	if msg == nil || content == nil {
		writeError(w, 422, "Invalid request.\n\n\"message\", \"content\" weren't supplied.")
		return
	}
	data, err := base64.StdEncoding.DecodeString(*content)
	if err != nil {
		writeError(w, 422, "content is not valid Base64")
		return
	}
	b := rp.DefaultBranch
	if branch != nil {
		b = *branch
	}
	head, ok := rp.refs[b]
	if !ok {
		writeError(w, 404, "Branch "+b+" not found")
		return
	}
	old, exists := rp.trees[rp.commits[head].Tree][path]
	switch {
	case exists && sha == nil:
		writeError(w, 422, "Invalid request.\n\n\"sha\" wasn't supplied.")
		return
	case exists && *sha != old.Blob:
		writeError(w, 409, path+" does not match "+*sha)
		return
	}
	// The contents API takes no mode: the file is written as a plain one.
	snap := maps.Clone(rp.trees[rp.commits[head].Tree])
	blob := gitSHA("blob", data)
	rp.blobs[blob] = data
	snap[path] = entry{Mode: ModeFile, Blob: blob}
	c := s.commitTree(rp, []string{head}, *msg, snap)
	rp.refs[b] = c
	status := 201
	if exists {
		status = 200
	}
	e := rp.trees[rp.commits[c].Tree][path]
	writeJSON(w, status, map[string]any{"content": s.contentJSON(rp, path, b, e), "commit": s.commitJSON(rp, rp.commits[c])})
}

// --- issues and pulls

func (s *Server) user() map[string]any { return s.userOf(s.Login) }

// userOf is GitHub's simple-user of login.
func (s *Server) userOf(login string) map[string]any {
	u := s.URL + "/users/" + login
	return map[string]any{"login": login, "id": 1, "node_id": "U_1", "avatar_url": s.URL + "/avatars/" + login, "gravatar_id": "",
		"url": u, "html_url": s.URL + "/" + login, "type": "User", "site_admin": false,
		"events_url": u + "/events{/privacy}", "followers_url": u + "/followers", "following_url": u + "/following{/other_user}",
		"gists_url": u + "/gists{/gist_id}", "organizations_url": u + "/orgs", "received_events_url": u + "/received_events",
		"repos_url": u + "/repos", "starred_url": u + "/starred{/owner}{/repo}", "subscriptions_url": u + "/subscriptions"}
}

func (s *Server) issueJSON(rp *repo, is *issue) map[string]any {
	labels := []any{}
	for i, l := range is.Labels {
		labels = append(labels, map[string]any{"id": i + 1, "name": l, "color": "ededed", "default": false})
	}
	assignees := []any{}
	for _, a := range is.Assignees {
		assignees = append(assignees, s.userOf(a))
	}
	kind := "issues"
	if is.Pull != nil {
		kind = "pull"
	}
	out := map[string]any{"id": is.ID, "node_id": nodeID("I", strconv.FormatInt(is.ID, 10)), "number": is.Number, "title": is.Title, "body": is.Body,
		"state": is.State, "state_reason": is.Reason, "labels": labels, "assignees": assignees, "assignee": nil, "milestone": nil,
		"locked": false, "comments": len(is.Comments), "user": s.user(), "created_at": is.Created.Format(time.RFC3339),
		"updated_at": is.Created.Format(time.RFC3339), "closed_at": nil, "author_association": "OWNER",
		"url": s.api(rp, fmt.Sprintf("issues/%d", is.Number)), "repository_url": s.api(rp, ""),
		"labels_url": s.api(rp, fmt.Sprintf("issues/%d/labels{/name}", is.Number)), "comments_url": s.api(rp, fmt.Sprintf("issues/%d/comments", is.Number)),
		"events_url": s.api(rp, fmt.Sprintf("issues/%d/events", is.Number)), "html_url": s.html(rp, fmt.Sprintf("%s/%d", kind, is.Number))}
	if is.Pull != nil {
		out["pull_request"] = map[string]any{"url": s.api(rp, fmt.Sprintf("pulls/%d", is.Number)), "html_url": s.html(rp, fmt.Sprintf("pull/%d", is.Number)), "diff_url": nil, "patch_url": nil}
	}
	return out
}

func (s *Server) commentJSON(rp *repo, is *issue, c comment) map[string]any {
	t := c.Created.Format(time.RFC3339)
	return map[string]any{"id": c.ID, "node_id": nodeID("IC", strconv.FormatInt(c.ID, 10)), "body": c.Body, "user": s.user(),
		"created_at": t, "updated_at": t, "author_association": "OWNER", "url": s.api(rp, fmt.Sprintf("issues/comments/%d", c.ID)),
		"html_url": s.html(rp, fmt.Sprintf("issues/%d#issuecomment-%d", is.Number, c.ID)), "issue_url": s.api(rp, fmt.Sprintf("issues/%d", is.Number))}
}

func (s *Server) issueCreate(w http.ResponseWriter, rp *repo, body map[string]json.RawMessage) {
	var title, text *string
	if !str(body, "title", &title) || title == nil || *title == "" {
		validation(w, "Issue", "title", "missing_field")
		return
	}
	if !str(body, "body", &text) {
		validation(w, "Issue", "body", "invalid")
		return
	}
	is := s.newIssue(rp, *title, text, nil)
	if !lists(body, is) {
		validation(w, "Issue", "labels", "invalid")
		return
	}
	w.Header().Set("Location", s.api(rp, fmt.Sprintf("issues/%d", is.Number)))
	writeJSON(w, 201, s.issueJSON(rp, is))
}

func lists(body map[string]json.RawMessage, is *issue) bool {
	for name, dst := range map[string]*[]string{"labels": &is.Labels, "assignees": &is.Assignees} {
		if raw, ok := body[name]; ok {
			var v []string
			if json.Unmarshal(raw, &v) != nil || v == nil {
				return false
			}
			*dst = v
		}
	}
	return true
}

func (s *Server) issueUpdate(w http.ResponseWriter, rp *repo, is *issue, body map[string]json.RawMessage) {
	var title, text, state, reason *string
	if !str(body, "title", &title) || !str(body, "body", &text) || !str(body, "state", &state) || !str(body, "state_reason", &reason) {
		validation(w, "Issue", "title", "invalid")
		return
	}
	if state != nil && *state != "open" && *state != "closed" {
		validation(w, "Issue", "state", "invalid")
		return
	}
	if title != nil {
		is.Title = *title
	}
	if _, ok := body["body"]; ok {
		is.Body = text
	}
	if state != nil {
		is.State = *state
		is.Reason = reason
	}
	if !lists(body, is) {
		validation(w, "Issue", "labels", "invalid")
		return
	}
	writeJSON(w, 200, s.issueJSON(rp, is))
}

func (s *Server) pullJSON(rp *repo, is *issue) map[string]any {
	p := is.Pull
	headSHA := rp.refs[p.Head]
	if p.Merged || headSHA == "" {
		headSHA = p.HeadSHA
	}
	_, clean := mergedTree(rp, rp.refs[p.Base], headSHA)
	mergeable := !p.Merged && is.State == "open" && clean
	branch := func(ref, sha string) map[string]any {
		return map[string]any{"label": rp.Owner + ":" + ref, "ref": ref, "sha": sha, "user": s.user(), "repo": s.repoJSON(rp)}
	}
	out := s.issueJSON(rp, is)
	for _, k := range []string{"pull_request", "repository_url", "events_url", "labels_url", "assignees", "state_reason", "author_association"} {
		delete(out, k)
	}
	state := is.State
	out["url"] = s.api(rp, fmt.Sprintf("pulls/%d", is.Number))
	out["state"] = state
	out["head"] = branch(p.Head, headSHA)
	out["base"] = branch(p.Base, rp.refs[p.Base])
	out["draft"] = p.Draft
	out["merged"] = p.Merged
	out["mergeable"] = mergeable
	out["mergeable_state"] = map[bool]string{true: "clean", false: "dirty"}[mergeable]
	out["merge_commit_sha"] = nilIfEmpty(p.MergeCommitSHA)
	out["assignees"] = []any{}
	out["requested_reviewers"] = []any{}
	out["merged_at"] = nil
	out["author_association"] = "OWNER"
	out["html_url"] = s.html(rp, fmt.Sprintf("pull/%d", is.Number))
	api := s.api(rp, fmt.Sprintf("pulls/%d", is.Number))
	out["issue_url"] = s.api(rp, fmt.Sprintf("issues/%d", is.Number))
	out["diff_url"] = out["html_url"].(string) + ".diff"
	out["patch_url"] = out["html_url"].(string) + ".patch"
	out["commits_url"] = api + "/commits"
	out["review_comments_url"] = api + "/comments"
	out["review_comment_url"] = s.api(rp, "pulls/comments{/number}")
	out["comments_url"] = s.api(rp, fmt.Sprintf("issues/%d/comments", is.Number))
	out["statuses_url"] = s.api(rp, "statuses/"+headSHA)
	out["_links"] = map[string]any{}
	for k, v := range map[string]string{"self": api, "html": out["html_url"].(string), "issue": out["issue_url"].(string), "comments": out["comments_url"].(string),
		"review_comments": api + "/comments", "review_comment": s.api(rp, "pulls/comments{/number}"), "commits": api + "/commits", "statuses": out["statuses_url"].(string)} {
		out["_links"].(map[string]any)[k] = map[string]any{"href": v}
	}
	out["auto_merge"] = nil
	out["merged_by"] = nil
	if p.Merged {
		out["merged_by"] = s.user()
		out["merged_at"] = s.now().Format(time.RFC3339)
	}
	out["maintainer_can_modify"] = false
	out["additions"], out["deletions"], out["changed_files"], out["commits"] = 0, 0, 0, 1
	out["comments"], out["review_comments"] = len(is.Comments), 0
	out["labels"] = []any{}
	return out
}

func (s *Server) pullCreate(w http.ResponseWriter, rp *repo, body map[string]json.RawMessage) {
	var title, text, head, base *string
	var draft bool
	if !str(body, "title", &title) || !str(body, "body", &text) || !str(body, "head", &head) || !str(body, "base", &base) {
		validation(w, "PullRequest", "title", "invalid")
		return
	}
	if raw, ok := body["draft"]; ok && json.Unmarshal(raw, &draft) != nil {
		validation(w, "PullRequest", "draft", "invalid")
		return
	}
	if head == nil || base == nil || title == nil {
		validation(w, "PullRequest", "head", "missing_field")
		return
	}
	hs, ok1 := rp.refs[*head]
	bs, ok2 := rp.refs[*base]
	switch {
	case !ok1:
		validation(w, "PullRequest", "head", "invalid")
		return
	case !ok2:
		validation(w, "PullRequest", "base", "invalid")
		return
	case hs == bs || ancestor(rp, hs, bs):
		writeJSON(w, 422, map[string]any{"message": "Validation Failed", "documentation_url": docs,
			"errors": []any{map[string]any{"resource": "PullRequest", "code": "custom", "message": "No commits between " + *base + " and " + *head}}})
		return
	}
	for _, is := range rp.issues {
		if is.Pull != nil && is.State == "open" && is.Pull.Head == *head && is.Pull.Base == *base {
			writeJSON(w, 422, map[string]any{"message": "Validation Failed", "documentation_url": docs,
				"errors": []any{map[string]any{"resource": "PullRequest", "code": "custom", "message": "A pull request already exists for " + rp.Owner + ":" + *head + "."}}})
			return
		}
	}
	is := s.newIssue(rp, *title, text, &pull{Head: *head, Base: *base, Draft: draft})
	w.Header().Set("Location", s.api(rp, fmt.Sprintf("pulls/%d", is.Number)))
	writeJSON(w, 201, s.pullJSON(rp, is))
}

func (s *Server) reviewJSON(rp *repo, is *issue, rv review) map[string]any {
	return map[string]any{"id": rv.ID, "node_id": nodeID("PRR", strconv.FormatInt(rv.ID, 10)), "user": s.user(), "body": rv.Body, "state": rv.State,
		"commit_id": rv.CommitID, "submitted_at": s.now().Format(time.RFC3339), "author_association": "OWNER",
		"html_url": s.html(rp, fmt.Sprintf("pull/%d#pullrequestreview-%d", is.Number, rv.ID)), "pull_request_url": s.api(rp, fmt.Sprintf("pulls/%d", is.Number)),
		"_links": map[string]any{"html": map[string]any{"href": s.html(rp, fmt.Sprintf("pull/%d#pullrequestreview-%d", is.Number, rv.ID))},
			"pull_request": map[string]any{"href": s.api(rp, fmt.Sprintf("pulls/%d", is.Number))}}}
}

func (s *Server) reviewCreate(w http.ResponseWriter, rp *repo, is *issue, body map[string]json.RawMessage) {
	var event, text, commitID *string
	if !str(body, "event", &event) || !str(body, "body", &text) || !str(body, "commit_id", &commitID) {
		simple(w, "Invalid request")
		return
	}
	rv := review{ID: s.id(), State: "PENDING"}
	if text != nil {
		rv.Body = *text
	}
	rv.CommitID = rp.refs[is.Pull.Head]
	if commitID != nil {
		if _, ok := rp.commits[*commitID]; !ok {
			simple(w, "Commit id is not part of the pull request")
			return
		}
		rv.CommitID = *commitID
	}
	if event != nil {
		switch *event {
		case "APPROVE":
			rv.State = "APPROVED"
		case "REQUEST_CHANGES", "COMMENT":
			if rv.Body == "" {
				simple(w, "Review body is required for "+*event)
				return
			}
			rv.State = map[string]string{"REQUEST_CHANGES": "CHANGES_REQUESTED", "COMMENT": "COMMENTED"}[*event]
		default:
			simple(w, "Invalid event")
			return
		}
	}
	is.Pull.Reviews = append(is.Pull.Reviews, rv)
	writeJSON(w, 200, s.reviewJSON(rp, is, rv))
}

func (s *Server) merge(w http.ResponseWriter, rp *repo, is *issue, body map[string]json.RawMessage) {
	var sha, method, title, msg *string
	if !str(body, "sha", &sha) || !str(body, "merge_method", &method) || !str(body, "commit_title", &title) || !str(body, "commit_message", &msg) {
		validation(w, "PullRequest", "sha", "invalid")
		return
	}
	p := is.Pull
	head := rp.refs[p.Head]
	tree, ok := mergedTree(rp, rp.refs[p.Base], head)
	if p.Merged || is.State != "open" || !ok {
		writeError(w, 405, "Pull Request is not mergeable")
		return
	}
	if sha != nil && *sha != head {
		writeError(w, 409, "Head branch was modified. Review and try the merge again.")
		return
	}
	m := "merge"
	if method != nil {
		m = *method
	}
	message := fmt.Sprintf("Merge pull request #%d from %s/%s", is.Number, rp.Owner, p.Head)
	if title != nil {
		message = *title
	}
	if msg != nil {
		message += "\n\n" + *msg
	}
	base := rp.refs[p.Base]
	c := commit{Tree: tree, Message: message, Author: s.Login, When: strconv.FormatInt(s.now().Unix(), 10)}
	switch m {
	case "merge":
		c.Parents = []string{base, head}
	case "squash", "rebase":
		c.Parents = []string{base}
	default:
		validation(w, "PullRequest", "merge_method", "invalid")
		return
	}
	c.SHA = commitSHA(c)
	rp.commits[c.SHA] = c
	rp.refs[p.Base] = c.SHA
	p.Merged, p.HeadSHA, p.MergeCommitSHA = true, head, c.SHA
	is.State = "closed"
	writeJSON(w, 200, map[string]any{"sha": c.SHA, "merged": true, "message": "Pull Request successfully merged"})
}

// --- repository, stars, gists

func (s *Server) repoJSON(rp *repo) map[string]any {
	full := rp.Owner + "/" + rp.Name
	api := s.URL + "/repos/" + full
	out := map[string]any{"id": rp.ID, "node_id": nodeID("R", full), "name": rp.Name, "full_name": full, "private": rp.Private,
		"owner": s.user(), "html_url": s.URL + "/" + full, "description": nil, "fork": false, "url": api,
		"default_branch": rp.DefaultBranch, "archived": false, "disabled": false, "visibility": map[bool]string{true: "private", false: "public"}[rp.Private],
		"permissions": map[string]any{"admin": true, "maintain": true, "push": true, "triage": true, "pull": true},
		"clone_url":   s.URL + "/" + full + ".git", "git_url": "git://" + strings.TrimPrefix(strings.TrimPrefix(s.URL, "http://"), "https://") + "/" + full + ".git",
		"ssh_url": "git@localhost:" + full + ".git", "svn_url": s.URL + "/" + full, "mirror_url": nil, "homepage": nil, "language": nil, "license": nil,
		"forks": 0, "forks_count": 0, "stargazers_count": 0, "watchers": 0, "watchers_count": 0, "open_issues": len(rp.issues), "open_issues_count": len(rp.issues),
		"size": 1, "network_count": 0, "subscribers_count": 0,
		"has_issues": true, "has_projects": false, "has_wiki": false, "has_pages": false, "has_discussions": false, "has_downloads": false,
		"pushed_at": s.now().Format(time.RFC3339), "created_at": s.now().Format(time.RFC3339), "updated_at": s.now().Format(time.RFC3339)}
	for name, rest := range map[string]string{"archive_url": "/{archive_format}{/ref}", "assignees_url": "/assignees{/user}", "blobs_url": "/git/blobs{/sha}",
		"branches_url": "/branches{/branch}", "collaborators_url": "/collaborators{/collaborator}", "comments_url": "/comments{/number}",
		"commits_url": "/commits{/sha}", "compare_url": "/compare/{base}...{head}", "contents_url": "/contents/{+path}", "contributors_url": "/contributors",
		"deployments_url": "/deployments", "downloads_url": "/downloads", "events_url": "/events", "forks_url": "/forks", "git_commits_url": "/git/commits{/sha}",
		"git_refs_url": "/git/refs{/sha}", "git_tags_url": "/git/tags{/sha}", "hooks_url": "/hooks", "issue_comment_url": "/issues/comments{/number}",
		"issue_events_url": "/issues/events{/number}", "issues_url": "/issues{/number}", "keys_url": "/keys{/key_id}", "labels_url": "/labels{/name}",
		"languages_url": "/languages", "merges_url": "/merges", "milestones_url": "/milestones{/number}", "notifications_url": "/notifications{?since,all,participating}",
		"pulls_url": "/pulls{/number}", "releases_url": "/releases{/id}", "stargazers_url": "/stargazers", "statuses_url": "/statuses/{sha}",
		"subscribers_url": "/subscribers", "subscription_url": "/subscription", "tags_url": "/tags", "teams_url": "/teams", "trees_url": "/git/trees{/sha}"} {
		out[name] = api + rest
	}
	return out
}

func (s *Server) star(w http.ResponseWriter, m, full string) {
	key := strings.ToLower(full)
	if s.repos[key] == nil {
		writeError(w, 404, "Not Found")
		return
	}
	switch m {
	case http.MethodPut:
		s.stars[key] = true
	case http.MethodDelete:
		delete(s.stars, key)
	case http.MethodGet:
		if !s.stars[key] {
			writeError(w, 404, "Not Found")
			return
		}
	default:
		writeError(w, 404, "Not Found")
		return
	}
	w.WriteHeader(204)
}

// Starred reports whether the user starred the repository.
func (s *Server) Starred(full string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stars[strings.ToLower(full)]
}

func (s *Server) gistJSON(g *gist) map[string]any {
	files := map[string]any{}
	for name, c := range g.Files {
		files[name] = map[string]any{"filename": name, "type": "text/plain", "language": "Text", "raw_url": s.URL + "/gist-raw/" + g.ID + "/" + url.PathEscape(name),
			"size": len(c), "truncated": false, "content": c}
	}
	t := g.Created.Format(time.RFC3339)
	return map[string]any{"id": g.ID, "node_id": nodeID("G", g.ID), "url": s.URL + "/gists/" + g.ID, "html_url": s.URL + "/gist/" + g.ID,
		"files": files, "public": g.Public, "description": g.Description, "owner": s.user(), "created_at": t, "updated_at": t,
		"comments": 0, "truncated": false, "history": []any{map[string]any{"version": fmt.Sprintf("v%d", g.History)}}}
}

func (s *Server) gistCreate(w http.ResponseWriter, body map[string]json.RawMessage) {
	var desc *string
	var files map[string]struct {
		Content *string `json:"content"`
	}
	var public bool
	if !str(body, "description", &desc) || json.Unmarshal(body["files"], &files) != nil || len(files) == 0 {
		validation(w, "Gist", "files", "missing_field")
		return
	}
	if raw, ok := body["public"]; ok && json.Unmarshal(raw, &public) != nil {
		validation(w, "Gist", "public", "invalid")
		return
	}
	g := &gist{ID: fmt.Sprintf("%032x", s.id()), Description: desc, Public: public, Files: map[string]string{}, Created: s.now(), History: 1}
	for name, f := range files {
		if f.Content == nil || *f.Content == "" {
			validation(w, "Gist", "files", "missing_field")
			return
		}
		g.Files[name] = *f.Content
	}
	s.gists[g.ID] = g
	w.Header().Set("Location", s.URL+"/gists/"+g.ID)
	writeJSON(w, 201, s.gistJSON(g))
}

func (s *Server) gist(w http.ResponseWriter, m, id string, body map[string]json.RawMessage) {
	g := s.gists[id]
	if g == nil {
		writeError(w, 404, "Not Found")
		return
	}
	switch m {
	case http.MethodGet:
		writeJSON(w, 200, s.gistJSON(g))
	case http.MethodPatch:
		var desc *string
		var files map[string]*struct {
			Content *string `json:"content"`
		}
		if !str(body, "description", &desc) || (body["files"] != nil && json.Unmarshal(body["files"], &files) != nil) {
			validation(w, "Gist", "files", "invalid")
			return
		}
		if _, ok := body["description"]; ok {
			g.Description = desc
		}
		for name, f := range files {
			switch {
			case f == nil:
				delete(g.Files, name)
			case f.Content != nil:
				g.Files[name] = *f.Content
			}
		}
		g.History++
		writeJSON(w, 200, s.gistJSON(g))
	default:
		writeError(w, 404, "Not Found")
	}
}

// CreateGist adds a secret gist of files and returns its id.
func (s *Server) CreateGist(files map[string]string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := &gist{ID: fmt.Sprintf("%032x", s.id()), Files: maps.Clone(files), Created: s.now(), History: 1}
	s.gists[g.ID] = g
	return g.ID
}

// Gist is a gist's files and whether it exists.
func (s *Server) Gist(id string) (map[string]string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.gists[id]
	if g == nil {
		return nil, false
	}
	out := map[string]string{}
	for k, v := range g.Files {
		out[k] = v
	}
	return out, true
}

// --- helpers

func (s *Server) api(rp *repo, rest string) string {
	u := s.URL + "/repos/" + rp.Owner + "/" + rp.Name
	if rest != "" {
		u += "/" + rest
	}
	return u
}

func (s *Server) html(rp *repo, rest string) string {
	return s.URL + "/" + rp.Owner + "/" + rp.Name + "/" + rest
}

// escape writes a branch or a file path in a URL as GitHub does: each
// "/"-separated part escaped as a path segment (RFC 3986), so a space, a
// "#", a "%" or a letter beyond ASCII is percent-encoded.
func escape(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return strings.Join(parts, "/")
}

// queryEscape writes a query value leaving only RFC 3986's unreserved
// characters as they are.
func queryEscape(v string) string { return strings.ReplaceAll(url.QueryEscape(v), "+", "%20") }

func nodeID(kind, s string) string {
	return kind + "_" + base64.RawURLEncoding.EncodeToString([]byte(s))
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// str reads an optional string member into *dst (nil when absent or null);
// false when it is present and not a string.
func str(body map[string]json.RawMessage, name string, dst **string) bool {
	raw, ok := body[name]
	if !ok || string(raw) == "null" {
		*dst = nil
		return true
	}
	var v string
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	*dst = &v
	return true
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-GitHub-Api-Version-Selected", "2022-11-28")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError answers GitHub's basic-error body.
func writeError(w http.ResponseWriter, status int, message string) {
	writeJSON(w, status, map[string]any{"message": message, "documentation_url": docs, "status": strconv.Itoa(status)})
}

// validation answers GitHub's 422 validation-error body.
func validation(w http.ResponseWriter, resource, field, code string) {
	writeJSON(w, 422, map[string]any{"message": "Validation Failed", "documentation_url": docs,
		"errors": []any{map[string]any{"resource": resource, "field": field, "code": code}}})
}

// simple answers the 422 validation-error-simple body of reviews.
func simple(w http.ResponseWriter, message string) {
	writeJSON(w, 422, map[string]any{"message": "Unprocessable Entity", "documentation_url": docs, "errors": []string{message}})
}

// mergeBase is the nearest commit both base and head come from.
func mergeBase(rp *repo, base, head string) string {
	seen := map[string]bool{}
	todo := []string{head}
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		if seen[c] {
			continue
		}
		seen[c] = true
		if ancestor(rp, c, base) {
			return c
		}
		todo = append(todo, rp.commits[c].Parents...)
	}
	return ""
}

// mergedTree is the tree a merge of head into base makes, and false when
// both changed one path differently (a conflict).
func mergedTree(rp *repo, base, head string) (string, bool) {
	mb := mergeBase(rp, base, head)
	if mb == "" {
		return "", false
	}
	from, ours, theirs := rp.trees[rp.commits[mb].Tree], rp.trees[rp.commits[base].Tree], rp.trees[rp.commits[head].Tree]
	out := map[string]entry{}
	for p, e := range ours {
		out[p] = e
	}
	paths := map[string]bool{}
	for p := range from {
		paths[p] = true
	}
	for p := range theirs {
		paths[p] = true
	}
	for p := range paths {
		f, inFrom := from[p]
		t, inTheirs := theirs[p]
		if inFrom == inTheirs && f == t {
			continue // head did not change it
		}
		o, inOurs := ours[p]
		if (inOurs != inFrom || o != f) && (inOurs != inTheirs || o != t) {
			return "", false // both changed it, differently
		}
		if inTheirs {
			out[p] = t
		} else {
			delete(out, p)
		}
	}
	return putTree(rp, out), true
}
