package github_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"countersign/connectors/connectortest"
	"countersign/connectors/github"
	"countersign/connectors/github/githubtest"
	"countersign/egress"
	"countersign/egress/egresstest"
)

// A project's base_url is checked by the egress rules before any request,
// and refused with a sentence the owner can act on; nothing reaches the
// loopback listener it names.
func TestBaseURLRefusals(t *testing.T) {
	t.Parallel()
	srv := egresstest.NewServer(t, true, http.NotFoundHandler())
	port := mustPort(t, srv.URL)
	const fix = ": the owner must correct the project's credentials"
	for _, tt := range []struct{ base, want string }{
		{"http://api.github.com", "the project's base_url must use https" + fix},
		{"ftp://api.github.com", "the project's base_url must use https" + fix},
		{"https://user:pass@api.github.com", "the project's base_url must not contain a user name or password" + fix},
		{"https://api.github.com/?per_page=1", "the project's base_url must not have a query (?…)" + fix},
		{"https://api.github.com/#x", "the project's base_url must not have a fragment (#…)" + fix},
		{"https://api.github.com/v3/../x", "the project's base_url's path must not have empty, . or .. segments" + fix},
		{"https://127.0.0.1:" + port, "the project's base_url must name a public host" + fix},
		{"https://127.0.0.2:" + port, "the project's base_url must name a public host" + fix},
		{"https://[::1]:" + port, "the project's base_url must name a public host" + fix},
		{"https://localhost:" + port, "the project's base_url must name a public host" + fix},
		{"https://10.1.2.3", "the project's base_url must name a public host" + fix},
		{"https://192.168.0.1", "the project's base_url must name a public host" + fix},
		{"https://169.254.169.254/latest/meta-data", "the project's base_url must name a public host" + fix},
		{"https://[fd00::1]", "the project's base_url must name a public host" + fix},
		{"https://2130706433:" + port, "the project's base_url must name a public host" + fix},
		{"https://api.github.com:22", "the project's base_url's port must be 443 or from 1024 to 65535" + fix},
	} {
		h := connectortest.New(t, github.New(github.Options{}))
		h.Credentials = []byte(`{"token": "` + token + `", "base_url": "` + tt.base + `"}`)
		_, err := h.Call(ctx, `{"operation": "repo_get", "repo": "octocat/hello"}`)
		if got := connectortest.Text(err); got != "invalid_request: "+tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.base, got, "invalid_request: "+tt.want)
		}
	}
	if srv.Conns() != 0 {
		t.Fatalf("the loopback listener got %d connections", srv.Conns())
	}
}

// Names that pass the URL rules but resolve to addresses that are not
// public are refused when dialed, on every address, whatever they resolved
// to before; the connector's own base URL goes through the same guard.
func TestDialGuard(t *testing.T) {
	t.Parallel()
	srv := egresstest.NewServer(t, true, http.NotFoundHandler())
	port := mustPort(t, srv.URL)
	dns := egresstest.NewDNS(t, egresstest.Hostile)
	if first, err := dns.Resolver().LookupNetIP(context.Background(), "ip4", "rebind.example.com"); err != nil || first[0].String() != "1.1.1.1" {
		t.Fatalf("the rebinding name's first answer: %v, %v", first, err)
	}
	conn := github.New(github.Options{Egress: egress.Options{Resolver: dns.Resolver(), Timeout: 5 * time.Second}})
	const notPublic = "invalid_request: the project's base_url leads to an address that is not public (loopback, private, link-local or reserved), so GitHub was not asked: the owner must correct the project's credentials"
	for _, host := range egresstest.Refused {
		h := connectortest.New(t, conn)
		h.Credentials = []byte(`{"token": "` + token + `", "base_url": "https://` + host + `:` + port + `/api/v3"}`)
		h.Policy = []byte(`{"actions": ["issue_create"]}`)
		for _, body := range []string{`{"operation": "repo_get", "repo": "octocat/hello"}`, `{"operation": "issue_create", "repo": "octocat/hello", "title": "T"}`} {
			_, err := h.Call(ctx, body)
			if got := connectortest.Text(err); got != notPublic {
				t.Errorf("%s: %q", host, got)
			}
		}
	}
	if n := dns.Count("rebind.example.com", egresstest.TypeA); n < 2 {
		t.Fatalf("the rebinding name was looked up %d times", n)
	}
	// The service's own base URL, when its name leads to loopback.
	h := connectortest.New(t, github.New(github.Options{BaseURL: "https://loopback.example.com:" + port, Egress: egress.Options{Resolver: dns.Resolver()}}))
	h.Credentials = []byte(`{"token": "` + token + `"}`)
	_, err := h.Call(ctx, `{"operation": "repo_get", "repo": "octocat/hello"}`)
	if got := connectortest.Text(err); got != "internal_error: GitHub's host resolves to an address that is not public, so it was not asked" {
		t.Errorf("the default base: %q", got)
	}
	if srv.Conns() != 0 {
		t.Fatalf("the loopback listener got %d connections", srv.Conns())
	}
}

// A redirect to another host is not followed, even where loopback may be
// reached (serve --dev): the other listener hears nothing.
func TestNoRedirectToAnotherHost(t *testing.T) {
	t.Parallel()
	h, fake, repo := world(t, `{"actions": ["issue_create"]}`)
	other := egresstest.NewServer(t, false, http.NotFoundHandler())
	to := "http://localhost:" + mustPort(t, other.URL) + "/repos/" + repo
	fake.FailNext("GET", "/repos/"+repo, http.StatusFound, http.Header{"Location": {to}}, "Found")
	fake.FailNext("POST", "/repos/"+repo+"/issues", http.StatusTemporaryRedirect, http.Header{"Location": {to + "/issues"}}, "Moved")
	if _, err := h.Call(ctx, `{"operation": "repo_get", "repo": "`+repo+`"}`); !strings.HasPrefix(connectortest.Text(err), "internal_error: GitHub failed reading octocat/hello (302: Found)") {
		t.Fatalf("repo_get: %v", err)
	}
	if _, err := h.Call(ctx, `{"operation": "issue_create", "repo": "`+repo+`", "title": "T"}`); !strings.HasPrefix(connectortest.Text(err), "internal_error: GitHub failed opening the issue (307: Moved)") {
		t.Fatalf("issue_create: %v", err)
	}
	if other.Conns() != 0 {
		t.Fatalf("the other host got %d connections", other.Conns())
	}
}

// wire is a fake GitHub behind a listener that keeps each request's target
// exactly as it arrived.
type wire struct {
	fake *githubtest.Server
	mu   sync.Mutex
	uris []string
}

func newWire(t *testing.T, policy string) (*connectortest.Harness, *wire, string) {
	t.Helper()
	w := &wire{fake: githubtest.New(token, "octocat")}
	srv := egresstest.NewServer(t, false, http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.mu.Lock()
		w.uris = append(w.uris, r.Method+" "+r.RequestURI)
		w.mu.Unlock()
		w.fake.ServeHTTP(rw, r)
	}))
	w.fake.URL = srv.URL
	recorded(t, w.fake)
	repo := w.fake.Seed()
	h := connectortest.New(t, github.New(github.Options{BaseURL: srv.URL, Egress: egress.Options{AllowPrivate: true}}))
	h.Credentials = []byte(`{"token": "` + token + `"}`)
	h.Policy = []byte(policy)
	return h, w, repo
}

func (w *wire) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.uris
	w.uris = nil
	return out
}

// Names go on the wire escaped, one segment per part: a space, "#", "%",
// "?" and non-ASCII letters escaped in paths, and a query value escaped
// whole (RFC 3986), so "+" is never read as a space nor "&" as a separator.
func TestNamesOnTheWire(t *testing.T) {
	t.Parallel()
	h, w, repo := newWire(t, `{"actions": ["commit"]}`)
	const file = "docs/a b+c&d#e%f?g é.md"
	const branch = "feat/a&b+c#d%e=é"
	w.fake.Push(repo, "docs+notes", "Notes", map[string]string{file: "notes\n"})
	w.fake.Push(repo, branch, "Start", map[string]string{"x.txt": "x\n"})
	w.take()

	out := call(t, h, `{"operation": "file_get", "repo": "`+repo+`", "path": "`+file+`", "ref": "docs+notes"}`)
	if out["content"] != "notes\n" {
		t.Fatalf("file_get: %v", out)
	}
	if got := w.take(); len(got) != 1 || got[0] != "GET /repos/octocat/hello/contents/docs/a%20b+c&d%23e%25f%3Fg%20%C3%A9.md?ref=docs%2Bnotes" {
		t.Fatalf("file_get sent %q", got)
	}
	for _, ref := range []string{"a&b", "a=b", "a%b", "é"} {
		w.fake.Push(repo, ref, "Branch", map[string]string{"README.md": ref})
		w.take()
		out := call(t, h, `{"operation": "file_get", "repo": "`+repo+`", "path": "README.md", "ref": "`+ref+`"}`)
		if out["content"] != ref {
			t.Errorf("file_get at %q read %v", ref, out["content"])
		}
		if got := w.take(); len(got) != 1 || got[0] != "GET /repos/octocat/hello/contents/README.md?ref="+url.QueryEscape(ref) {
			t.Errorf("file_get at %q sent %q", ref, got)
		}
	}

	call(t, h, `{"operation": "commit", "repo": "`+repo+`", "branch": "`+branch+`", "message": "m", "changes": [{"path": "`+file+`", "content": "new\n"}]}`)
	if got, _ := w.fake.File(repo, branch, file); got != "new\n" {
		t.Fatalf("the commit wrote %q", got)
	}
	sent := w.take()
	head := "GET /repos/octocat/hello/git/ref/heads/feat/a&b+c%23d%25e=%C3%A9"
	move := "PATCH /repos/octocat/hello/git/refs/heads/feat/a&b+c%23d%25e=%C3%A9"
	if len(sent) < 2 || sent[0] != head || sent[len(sent)-1] != move {
		t.Fatalf("the commit sent %q", sent)
	}
	for _, s := range sent {
		if _, target, _ := strings.Cut(s, " "); strings.ContainsAny(target, " #é") {
			t.Errorf("sent unescaped: %q", s)
		}
	}
}

// Names GitHub would not take, or that would move a request elsewhere,
// are refused before GitHub is asked, whatever the policy allows.
func TestNamesRefusedBeforeGitHub(t *testing.T) {
	t.Parallel()
	h, w, repo := newWire(t, `{"actions": `+allWrites+`, "branches": ["feature/**"]}`)
	w.take()
	const (
		branch = "invalid_request: `branch` is not a valid branch name: git's rules"
		ref    = "invalid_request: `ref` is not a valid branch, tag or commit: git's rules"
		path   = "invalid_request: a path is a relative file path without empty, . or .. segments"
		repoIs = "invalid_request: `repo` is owner/name: an account name, and a repository name of letters, digits, ., _ and - that is not . or .."
		schema = "invalid_request: "
	)
	commit := func(b string) string {
		return `{"operation": "commit", "repo": "` + repo + `", "branch": "` + b + `", "message": "m", "changes": [{"path": "a", "content": "x"}]}`
	}
	for _, tt := range []struct{ body, want string }{
		{commit("feature/../main"), branch},
		{commit("feature/./x"), branch},
		{commit("feature//x"), branch},
		{commit("feature/.x"), branch},
		{commit("feature/x.lock"), branch},
		{commit("feature/x/"), branch},
		{commit("feature/x."), branch},
		{commit("feature/x@{1}"), branch},
		{commit("feature/a..b"), branch},
		{commit("-feature"), branch},
		{commit("HEAD"), branch},
		{commit("@"), branch},
		{commit(`feature/\u0001`), branch},
		{commit("feature/a b"), schema},
		{commit("feature/a~1"), schema},
		{commit("feature/a^"), schema},
		{commit("feature/a:b"), schema},
		{commit("feature/a?"), schema},
		{commit("feature/a*"), schema},
		{commit("feature/a[b"), schema},
		{commit(`feature/a\\b`), schema},
		{`{"operation": "branch_create", "repo": "` + repo + `", "branch": "feature/../main"}`, branch},
		{`{"operation": "branch_create", "repo": "` + repo + `", "branch": "feature/x", "from": "main/../x"}`, "invalid_request: `from` is not a valid branch, tag or commit"},
		{`{"operation": "file_put", "repo": "` + repo + `", "branch": "feature/../main", "path": "a", "content": "x", "message": "m"}`, branch},
		{`{"operation": "pr_create", "repo": "` + repo + `", "title": "T", "head": "x/../y"}`, "invalid_request: `head` is not a valid branch name"},
		{`{"operation": "pr_create", "repo": "` + repo + `", "title": "T", "head": "-x:y"}`, "invalid_request: `head` is not a valid branch name"},
		{`{"operation": "pr_create", "repo": "` + repo + `", "title": "T", "head": "y", "base": "main."}`, "invalid_request: `base` is not a valid branch name"},
		{`{"operation": "file_get", "repo": "` + repo + `", "path": "README.md", "ref": "x/../main"}`, ref},
		{`{"operation": "file_get", "repo": "` + repo + `", "path": "a/./b"}`, path},
		{`{"operation": "file_get", "repo": "` + repo + `", "path": "a//b"}`, path},
		{`{"operation": "file_get", "repo": "` + repo + `", "path": "../x"}`, path},
		{`{"operation": "file_put", "repo": "` + repo + `", "branch": "feature/x", "path": "a/../../x", "content": "x", "message": "m"}`, path},
		{`{"operation": "commit", "repo": "` + repo + `", "branch": "feature/x", "message": "m", "changes": [{"path": "a/..", "content": "x"}]}`, path},
		{`{"operation": "repo_star", "repo": "sandbox/.."}`, repoIs},
		{`{"operation": "repo_star", "repo": "sandbox/."}`, repoIs},
		{`{"operation": "repo_get", "repo": "sandbox/.."}`, repoIs},
		{`{"operation": "issue_create", "repo": "sandbox/..", "title": "T"}`, repoIs},
	} {
		_, err := h.Call(ctx, tt.body)
		if got := connectortest.Text(err); err == nil || !strings.HasPrefix(got, tt.want) {
			t.Errorf("%s:\n got %q\nwant %q", tt.body, got, tt.want)
		}
	}
	if got := w.take(); len(got) != 0 {
		t.Fatalf("GitHub was asked %q", got)
	}
}

func mustPort(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Port()
}
