package github

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"countersign"
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

type declaration struct {
	name, desc, schema, result string
	kind                       connectors.OpKind
	examples                   []string
}

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
	{name: "branch_create", result: resBranch, kind: connectors.Write, desc: "Creates a branch from another branch or commit (default: the default branch's head), at the commit read when prepared.",
		schema:   obj(sRepo+`, `+sBranch+`, "from": {"type": "string", "minLength": 1, "maxLength": 250, "description": "a branch or a 40-hex commit id"}`, "repo", "branch"),
		examples: []string{`{"repo": "octocat/hello", "branch": "fix-typo"}`, `{"repo": "octocat/hello", "branch": "fix-typo", "from": "main"}`}},
	{name: "file_put", result: resFile, kind: connectors.Write, desc: "Writes one file on a branch in one commit, shown as a diff; fails if the file changes before it is written.",
		schema:   obj(sRepo+`, `+sBranch+`, `+sPath+`, `+sMessage+`, "content": {"type": "string", "maxLength": 60000, "description": "the file's whole new content (UTF-8 text)"}`, "repo", "path", "content", "message"),
		examples: []string{`{"repo": "octocat/hello", "path": "README.md", "content": "# hello\n", "message": "Shorten the README"}`}},
	{name: "commit", result: resCommit, kind: connectors.Write, desc: "Commits up to 20 file changes to a branch in one commit, moving it only forward from the commit shown.",
		schema: obj(sRepo+`, `+sBranch+`, `+sMessage+`, "changes": {"type": "array", "minItems": 1, "items": {"type": "object", "properties": {`+sPath+`, `+
			`"content": {"type": "string", "maxLength": 60000}, "delete": {"const": true}}, "required": ["path"], "additionalProperties": false}, `+
			`"description": "each change: path and content, or path and \"delete\": true"}`, "repo", "message", "changes"),
		examples: []string{`{"repo": "octocat/hello", "branch": "fix-typo", "message": "Fix typos", "changes": [{"path": "a.md", "content": "a\n"}, {"path": "b.md", "delete": true}]}`}},
	{name: "issue_create", result: resIssue, kind: connectors.Write, desc: "Opens an issue.",
		schema: obj(sRepo+`, `+sTitle+`, `+sBody+`, `+sLabels, "repo", "title"), examples: []string{`{"repo": "octocat/hello", "title": "It breaks", "body": "Steps: …"}`}},
	{name: "issue_comment", result: resComment, kind: connectors.Write, desc: "Comments on an issue or a pull request.",
		schema: obj(sRepo+`, `+sNumber+`, "body": {"type": "string", "minLength": 1, "maxLength": 60000}`, "repo", "number", "body"), examples: []string{`{"repo": "octocat/hello", "number": 1, "body": "Thanks!"}`}},
	{name: "issue_update", result: resIssue, kind: connectors.Write, desc: "Changes an issue's title, body, state, labels or assignees.",
		schema:   obj(sRepo+`, `+sNumber+`, `+sTitle+`, `+sBody+`, "state": {"enum": ["open", "closed"]}, "state_reason": {"enum": ["completed", "not_planned", "duplicate", "reopened"]}, `+sLabels, "repo", "number"),
		examples: []string{`{"repo": "octocat/hello", "number": 2, "state": "closed", "state_reason": "completed"}`}},
	{name: "pr_create", result: resPull, kind: connectors.Write, desc: "Opens a pull request of a branch into another (default: the default branch).",
		schema:   obj(sRepo+`, `+sTitle+`, `+sBody+`, "head": {"type": "string", "minLength": 1, "maxLength": 250}, "base": {"type": "string", "minLength": 1, "maxLength": 250}, "draft": {"type": "boolean"}`, "repo", "title", "head"),
		examples: []string{`{"repo": "octocat/hello", "title": "Fix typos", "head": "fix-typo"}`}},
	{name: "pr_review", result: resReview, kind: connectors.Write, desc: "Reviews a pull request at the head commit shown; an approval is refused if the head moved.",
		schema:   obj(sRepo+`, `+sNumber+`, "event": {"enum": ["APPROVE", "REQUEST_CHANGES", "COMMENT"]}, `+sBody, "repo", "number", "event"),
		examples: []string{`{"repo": "octocat/hello", "number": 1, "event": "APPROVE"}`}},
	{name: "pr_merge", result: resMerge, kind: connectors.Write, desc: "Merges a pull request at the head commit shown; GitHub refuses if it moved.",
		schema: obj(sRepo+`, `+sNumber+`, "method": {"enum": ["merge", "squash", "rebase"]}, "title": {"type": "string", "minLength": 1, "maxLength": 256, "description": "the merge commit's title"}, `+
			`"message": {"type": "string", "maxLength": 10000, "description": "the merge commit's message"}`, "repo", "number"),
		examples: []string{`{"repo": "octocat/hello", "number": 1, "method": "squash"}`}},
	{name: "gist_create", result: resGist, kind: connectors.Write, desc: "Creates a gist of up to 20 files, secret unless public is true.",
		schema: obj(`"description": {"type": "string", "maxLength": 1000}, "public": {"type": "boolean"}, `+
			`"files": {"type": "object", "minProperties": 1, "propertyNames": {"minLength": 1, "maxLength": 200, "pattern": "^[^/\\\\]+$"}, "additionalProperties": {"type": "string", "minLength": 1, "maxLength": 60000}}`, "files"),
		examples: []string{`{"description": "notes", "files": {"notes.md": "# notes\n"}}`}},
	{name: "gist_update", result: resGist, kind: connectors.Write, desc: "Changes a gist's description or files (null deletes a file).",
		schema:   obj(`"gist_id": {"type": "string", "pattern": "^[0-9a-f]{1,64}$"}, "description": {"type": "string", "maxLength": 1000}, `+sFiles, "gist_id"),
		examples: []string{`{"gist_id": "aa5a315d61ae9438b18d", "files": {"notes.md": "# notes, again\n"}}`}},
	{name: "repo_star", result: resStar, kind: connectors.Write, desc: "Stars a repository as the token's user.", schema: obj(sRepo, "repo"), examples: []string{`{"repo": "octocat/hello"}`}},
	{name: "repo_unstar", result: resStar, kind: connectors.Write, desc: "Unstars a repository as the token's user.", schema: obj(sRepo, "repo"), examples: []string{`{"repo": "octocat/hello"}`}},
	{name: "pr_get", result: resPRGet, kind: connectors.Read, desc: "Reads a pull request: state, branches, head commit, mergeability.",
		schema: obj(sRepo+`, `+sNumber, "repo", "number"), examples: []string{`{"repo": "octocat/hello", "number": 1}`}},
	{name: "issue_get", result: resIssueGet, kind: connectors.Read, desc: "Reads an issue.", schema: obj(sRepo+`, `+sNumber, "repo", "number"), examples: []string{`{"repo": "octocat/hello", "number": 2}`}},
	{name: "repo_get", result: resRepoGet, kind: connectors.Read, desc: "Reads a repository: its default branch, visibility, whether it is archived.",
		schema: obj(sRepo, "repo"), examples: []string{`{"repo": "octocat/hello"}`}},
	{name: "file_get", result: resFileGet, kind: connectors.Read, desc: "Reads a file (up to 1 MB) at a branch, tag or commit (default: the default branch).",
		schema:   obj(sRepo+`, `+sPath+`, "ref": {"type": "string", "minLength": 1, "maxLength": 250}`, "repo", "path"),
		examples: []string{`{"repo": "octocat/hello", "path": "README.md"}`}},
}

// read serves the four reads.
func (g *GitHub) read(ctx context.Context, c *connectors.Call) (any, error) {
	w, err := args(c)
	if err != nil {
		return nil, err
	}
	if err := names(w); err != nil {
		return nil, err
	}
	cl, err := g.client(c.Credentials)
	if err != nil {
		return nil, err
	}
	switch c.Operation {
	case "pr_get":
		p, err := getPull(ctx, cl, w.Repo, w.Number)
		if err != nil {
			return nil, err
		}
		return map[string]any{"ok": true, "number": p.Number, "state": p.State, "title": p.Title, "body": p.Body, "draft": p.Draft, "merged": p.Merged,
			"mergeable": p.Mergeable, "head": map[string]string{"ref": p.Head.Ref, "sha": p.Head.SHA}, "base": map[string]string{"ref": p.Base.Ref, "sha": p.Base.SHA}, "html_url": p.HTMLURL}, nil
	case "issue_get":
		is, err := getIssue(ctx, cl, w.Repo, w.Number)
		if err != nil {
			return nil, err
		}
		labels := []string{}
		for _, l := range is.Labels {
			labels = append(labels, l.Name)
		}
		return map[string]any{"ok": true, "number": is.Number, "state": is.State, "title": is.Title, "body": is.Body, "labels": labels,
			"is_pull_request": is.PullRequest != nil, "html_url": is.HTMLURL}, nil
	case "repo_get":
		r, err := getRepo(ctx, cl, w.Repo)
		if err != nil {
			return nil, err
		}
		return map[string]any{"ok": true, "full_name": r.FullName, "private": r.Private, "default_branch": r.DefaultBranch, "archived": r.Archived,
			"description": r.Description, "html_url": r.HTMLURL}, nil
	case "file_get":
		f, content, err := readFile(ctx, cl, w.Repo, w.Path, w.Ref)
		if err != nil {
			return nil, err
		}
		if f == nil {
			return nil, countersign.Errorf(countersign.InvalidRequest, "there is no file %s", w.Path)
		}
		return map[string]any{"ok": true, "path": f.Path, "sha": f.SHA, "size": f.Size, "content": *content, "html_url": f.HTMLURL}, nil
	}
	return nil, fmt.Errorf("no read %s", c.Operation)
}
