package github

import (
	"slices"
	"strings"

	"countersign/connectors"
)

// Schema fragments.
const (
	sRepo    = `"repo": {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9-]{0,38}/[A-Za-z0-9._-]{1,100}$", "description": "the repository, owner/name"}`
	sBranch  = `"branch": {"type": "string", "minLength": 1, "maxLength": 250, "pattern": "^[^\\s~^:?*\\[\\\\]+$", "description": "a branch name (default: the repository's default branch)"}`
	sNumber  = `"number": {"type": "integer", "minimum": 1, "maximum": 2147483647, "description": "the issue's or pull request's number"}`
	sPath    = `"path": {"type": "string", "minLength": 1, "maxLength": 4096, "description": "the file's path in the repository, without a leading slash"}`
	sMessage = `"message": {"type": "string", "minLength": 1, "maxLength": 10000, "description": "the commit message"}`
	sTitle   = `"title": {"type": "string", "minLength": 1, "maxLength": 256}`
	sBody    = `"body": {"type": "string", "maxLength": 60000}`
	sLabels  = `"labels": {"type": "array", "maxItems": 20, "items": {"type": "string", "minLength": 1, "maxLength": 50}, "description": "replaces every label; [] removes them"}, ` +
		`"assignees": {"type": "array", "maxItems": 10, "items": {"type": "string", "minLength": 1, "maxLength": 39}, "description": "replaces every assignee; [] removes them"}`
	sFiles = `"files": {"type": "object", "minProperties": 1, "propertyNames": {"minLength": 1, "maxLength": 200, "pattern": "^[^/\\\\]+$"}, ` +
		`"additionalProperties": {"type": ["string", "null"]}, "description": "file name to new content; null deletes the file (gist_update)"}`
)

func obj(props string, required ...string) string {
	req := ""
	for i, r := range required {
		if i > 0 {
			req += ", "
		}
		req += `"` + r + `"`
	}
	return `{"type": "object", "properties": {` + props + `}, "required": [` + req + `], "additionalProperties": false}`
}

// declaration is one operation: what an agent is told of it, and the
// type that serves it.
type declaration struct {
	name, desc, schema, result string
	kind                       connectors.OpKind
	examples                   []string
	// A write's type, the title of its tasks and the conditions its
	// rules may name (scope gives their values).
	write   func() write
	title   string
	carries []string
	// A read's type.
	read func() read
}

// declared is the declaration of the operation op.
func declared(op string) (declaration, bool) {
	for _, d := range declarations {
		if d.name == op {
			return d, true
		}
	}
	return declaration{}, false
}

// The conditions a rule may name (Connector.Conditions), and the sets of
// them the writes carry: the repository of every write that has one, the
// branch of those that change one, the paths of those that change files
// in a repository. Gists carry none.
const (
	condRepo   = "repo"
	condBranch = "branch"
	condPath   = "path"
)

var (
	carriesRepo   = []string{condRepo}
	carriesBranch = []string{condRepo, condBranch}
	carriesPaths  = []string{condRepo, condBranch, condPath}
)

// Result fragments: what an operation answers when it opens no task.
const (
	rOK       = `"ok": {"const": true}`
	rSHA      = `{"type": "string", "pattern": "^[0-9a-f]{40}$"}`
	rURL      = `{"type": "string", "description": "the page on GitHub"}`
	rInt      = `{"type": "integer"}`
	rStr      = `{"type": "string"}`
	rNullable = `{"type": ["string", "null"]}`
)

// result is a closed object schema of members, every one required.
func result(members ...string) string {
	var props, names []string
	for _, m := range members {
		name, schema, _ := strings.Cut(m, "=")
		props = append(props, `"`+name+`": `+schema)
		names = append(names, name)
	}
	return obj(rOK+", "+strings.Join(props, ", "), append([]string{"ok"}, names...)...)
}

// The results of the writes, carried out at once or after approval.
var (
	resBranch  = result("ref="+rStr, "sha="+rSHA, "html_url="+rURL)
	resFile    = result("path="+rStr, "blob_sha="+rSHA, "html_url="+rURL, "sha="+rSHA, "commit_url="+rURL)
	resCommit  = result("sha="+rSHA, "html_url="+rURL, "branch="+rStr, "parent="+rSHA)
	resIssue   = result("number="+rInt, "html_url="+rURL, "state="+rStr)
	resComment = result("id="+rInt, "html_url="+rURL, "number="+rInt)
	resPull    = result("number="+rInt, "html_url="+rURL, "head_sha="+rSHA, "state="+rStr)
	resReview  = result("id="+rInt, "state="+rStr, "commit_id="+rSHA, "html_url="+rURL)
	resMerge   = result("sha="+rSHA, "merged="+`{"type": "boolean"}`, "message="+rStr, "number="+rInt, "html_url="+rURL)
	resGist    = result("id="+rStr, "html_url="+rURL)
	resStar    = result("repo="+rStr, "starred="+`{"type": "boolean"}`, "html_url="+rURL)
)

// The results of the reads.
var (
	resPRGet = result("number="+rInt, "state="+rStr, "title="+rStr, "body="+rNullable, "draft="+`{"type": "boolean"}`, "merged="+`{"type": "boolean"}`,
		"mergeable="+`{"type": ["boolean", "null"], "description": "null while GitHub works it out"}`,
		"head="+obj(`"ref": `+rStr+`, "sha": `+rSHA, "ref", "sha"), "base="+obj(`"ref": `+rStr+`, "sha": `+rSHA, "ref", "sha"), "html_url="+rURL)
	resIssueGet = result("number="+rInt, "state="+rStr, "title="+rStr, "body="+rNullable, "labels="+`{"type": "array", "items": {"type": "string"}}`,
		"is_pull_request="+`{"type": "boolean"}`, "html_url="+rURL)
	resRepoGet = result("full_name="+rStr, "private="+`{"type": "boolean"}`, "default_branch="+rStr, "archived="+`{"type": "boolean"}`,
		"description="+rNullable, "html_url="+rURL)
	resFileGet = result("path="+rStr, "sha="+rSHA, "size="+rInt, "content="+rStr, "html_url="+rURL)
)

// confirmResult is what an approved write reports: its result as if it
// had been carried out at once (each shape once: several writes answer
// alike).
var confirmResult = func() string {
	var writes []string
	for _, d := range declarations {
		if d.kind == connectors.Write && !slices.Contains(writes, d.result) {
			writes = append(writes, d.result)
		}
	}
	return `{"anyOf": [` + strings.Join(writes, ", ") + `]}`
}()

var declarations = []declaration{
	{name: "branch_create", title: "Create a branch", write: func() write { return new(branchCreate) }, carries: carriesBranch,
		result: resBranch, kind: connectors.Write, desc: "Creates a branch from another branch or commit (default: the default branch's head), at the commit read when prepared.",
		schema:   obj(sRepo+`, `+sBranch+`, "from": {"type": "string", "minLength": 1, "maxLength": 250, "description": "a branch or a 40-hex commit id"}`, "repo", "branch"),
		examples: []string{`{"repo": "octocat/hello", "branch": "fix-typo"}`, `{"repo": "octocat/hello", "branch": "fix-typo", "from": "main"}`}},
	{name: "file_put", title: "Write a file", write: func() write { return new(filePut) }, carries: carriesPaths,
		result: resFile, kind: connectors.Write, desc: "Writes one file on a branch in one commit, shown as a diff; fails if the file changes before it is written.",
		schema:   obj(sRepo+`, `+sBranch+`, `+sPath+`, `+sMessage+`, "content": {"type": "string", "maxLength": 60000, "description": "the file's whole new content (UTF-8 text)"}`, "repo", "path", "content", "message"),
		examples: []string{`{"repo": "octocat/hello", "path": "README.md", "content": "# hello\n", "message": "Shorten the README"}`}},
	{name: "commit", title: "Commit files", write: func() write { return new(commit) }, carries: carriesPaths,
		result: resCommit, kind: connectors.Write, desc: "Commits up to 20 file changes to a branch in one commit, moving it only forward from the commit shown.",
		schema: obj(sRepo+`, `+sBranch+`, `+sMessage+`, "changes": {"type": "array", "minItems": 1, "items": {"type": "object", "properties": {`+sPath+`, `+
			`"content": {"type": "string", "maxLength": 60000}, "delete": {"const": true}}, "required": ["path"], "additionalProperties": false}, `+
			`"description": "each change: path and content, or path and \"delete\": true"}`, "repo", "message", "changes"),
		examples: []string{`{"repo": "octocat/hello", "branch": "fix-typo", "message": "Fix typos", "changes": [{"path": "a.md", "content": "a\n"}, {"path": "b.md", "delete": true}]}`}},
	{name: "issue_create", title: "Open an issue", write: func() write { return new(issueCreate) }, carries: carriesRepo,
		result: resIssue, kind: connectors.Write, desc: "Opens an issue.",
		schema: obj(sRepo+`, `+sTitle+`, `+sBody+`, `+sLabels, "repo", "title"), examples: []string{`{"repo": "octocat/hello", "title": "It breaks", "body": "Steps: …"}`}},
	{name: "issue_comment", title: "Comment on an issue or pull request", write: func() write { return new(issueComment) }, carries: carriesRepo,
		result: resComment, kind: connectors.Write, desc: "Comments on an issue or a pull request.",
		schema: obj(sRepo+`, `+sNumber+`, "body": {"type": "string", "minLength": 1, "maxLength": 60000}`, "repo", "number", "body"), examples: []string{`{"repo": "octocat/hello", "number": 1, "body": "Thanks!"}`}},
	{name: "issue_update", title: "Change an issue", write: func() write { return new(issueUpdate) }, carries: carriesRepo,
		result: resIssue, kind: connectors.Write, desc: "Changes an issue's title, body, state, labels or assignees.",
		schema:   obj(sRepo+`, `+sNumber+`, `+sTitle+`, `+sBody+`, "state": {"enum": ["open", "closed"]}, "state_reason": {"enum": ["completed", "not_planned", "duplicate", "reopened"]}, `+sLabels, "repo", "number"),
		examples: []string{`{"repo": "octocat/hello", "number": 2, "state": "closed", "state_reason": "completed"}`}},
	{name: "pr_create", title: "Open a pull request", write: func() write { return new(prCreate) }, carries: carriesRepo,
		result: resPull, kind: connectors.Write, desc: "Opens a pull request of a branch into another (default: the default branch).",
		schema:   obj(sRepo+`, `+sTitle+`, `+sBody+`, "head": {"type": "string", "minLength": 1, "maxLength": 250}, "base": {"type": "string", "minLength": 1, "maxLength": 250}, "draft": {"type": "boolean"}`, "repo", "title", "head"),
		examples: []string{`{"repo": "octocat/hello", "title": "Fix typos", "head": "fix-typo"}`}},
	{name: "pr_review", title: "Review a pull request", write: func() write { return new(prReview) }, carries: carriesRepo,
		result: resReview, kind: connectors.Write, desc: "Reviews a pull request at the head commit shown; an approval is refused if the head moved.",
		schema:   obj(sRepo+`, `+sNumber+`, "event": {"enum": ["APPROVE", "REQUEST_CHANGES", "COMMENT"]}, `+sBody, "repo", "number", "event"),
		examples: []string{`{"repo": "octocat/hello", "number": 1, "event": "APPROVE"}`}},
	{name: "pr_merge", title: "Merge a pull request", write: func() write { return new(prMerge) }, carries: carriesBranch,
		result: resMerge, kind: connectors.Write, desc: "Merges a pull request at the head commit shown; GitHub refuses if it moved.",
		schema: obj(sRepo+`, `+sNumber+`, "method": {"enum": ["merge", "squash", "rebase"]}, "title": {"type": "string", "minLength": 1, "maxLength": 256, "description": "the merge commit's title"}, `+
			`"message": {"type": "string", "maxLength": 10000, "description": "the merge commit's message"}`, "repo", "number"),
		examples: []string{`{"repo": "octocat/hello", "number": 1, "method": "squash"}`}},
	{name: "gist_create", title: "Create a gist", write: func() write { return new(gistCreate) },
		result: resGist, kind: connectors.Write, desc: "Creates a gist of up to 20 files, secret unless public is true.",
		schema: obj(`"description": {"type": "string", "maxLength": 1000}, "public": {"type": "boolean"}, `+
			`"files": {"type": "object", "minProperties": 1, "propertyNames": {"minLength": 1, "maxLength": 200, "pattern": "^[^/\\\\]+$"}, "additionalProperties": {"type": "string", "minLength": 1, "maxLength": 60000}}`, "files"),
		examples: []string{`{"description": "notes", "files": {"notes.md": "# notes\n"}}`}},
	{name: "gist_update", title: "Change a gist", write: func() write { return new(gistUpdate) },
		result: resGist, kind: connectors.Write, desc: "Changes a gist's description or files (null deletes a file).",
		schema:   obj(`"gist_id": {"type": "string", "pattern": "^[0-9a-f]{1,64}$"}, "description": {"type": "string", "maxLength": 1000}, `+sFiles, "gist_id"),
		examples: []string{`{"gist_id": "aa5a315d61ae9438b18d", "files": {"notes.md": "# notes, again\n"}}`}},
	{name: "repo_star", title: "Star a repository", write: func() write { return &star{on: true} }, carries: carriesRepo,
		result: resStar, kind: connectors.Write, desc: "Stars a repository as the token's user.", schema: obj(sRepo, "repo"), examples: []string{`{"repo": "octocat/hello"}`}},
	{name: "repo_unstar", title: "Unstar a repository", write: func() write { return &star{on: false} }, carries: carriesRepo,
		result: resStar, kind: connectors.Write, desc: "Unstars a repository as the token's user.", schema: obj(sRepo, "repo"), examples: []string{`{"repo": "octocat/hello"}`}},
	{name: "pr_get", read: func() read { return new(prGet) },
		result: resPRGet, kind: connectors.Read, desc: "Reads a pull request: state, branches, head commit, mergeability.",
		schema: obj(sRepo+`, `+sNumber, "repo", "number"), examples: []string{`{"repo": "octocat/hello", "number": 1}`}},
	{name: "issue_get", read: func() read { return new(issueGet) },
		result: resIssueGet, kind: connectors.Read, desc: "Reads an issue.", schema: obj(sRepo+`, `+sNumber, "repo", "number"), examples: []string{`{"repo": "octocat/hello", "number": 2}`}},
	{name: "repo_get", read: func() read { return new(repoGet) },
		result: resRepoGet, kind: connectors.Read, desc: "Reads a repository: its default branch, visibility, whether it is archived.",
		schema: obj(sRepo, "repo"), examples: []string{`{"repo": "octocat/hello"}`}},
	{name: "file_get", read: func() read { return new(fileGet) },
		result: resFileGet, kind: connectors.Read, desc: "Reads a file (up to 1 MB) at a branch, tag or commit (default: the default branch).",
		schema:   obj(sRepo+`, `+sPath+`, "ref": {"type": "string", "minLength": 1, "maxLength": 250}`, "repo", "path"),
		examples: []string{`{"repo": "octocat/hello", "path": "README.md"}`}},
}
