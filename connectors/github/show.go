package github

import (
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"
	"unicode/utf8"

	"countersign"
	"countersign/connectors"
)

// parseState reads a sealed write strictly.
func parseState(b []byte) (*write, error) {
	var w write
	if err := countersign.DecodeStrict(b, &w); err != nil {
		return nil, err
	}
	if _, ok := titles[w.Op]; !ok {
		return nil, errors.New("no such write")
	}
	return &w, nil
}

var titles = map[string]string{
	"branch_create": "Create a branch", "file_put": "Write a file", "commit": "Commit files",
	"issue_create": "Open an issue", "issue_comment": "Comment on an issue or pull request", "issue_update": "Change an issue",
	"pr_create": "Open a pull request", "pr_review": "Review a pull request", "pr_merge": "Merge a pull request",
	"gist_create": "Create a gist", "gist_update": "Change a gist", "repo_star": "Star a repository", "repo_unstar": "Unstar a repository",
}

// display gathers what a task shows, within the contract's limits.
type display struct {
	fields []countersign.Field
	files  []connectors.File
	shown  int // bytes of text shown in fields
}

func (d *display) text(label, value string, by countersign.WrittenBy) {
	if value == "" {
		value = "(empty)"
	}
	if utf8.RuneCountInString(value) > countersign.MaxTextChars || strings.ContainsAny(value, "\n\t") {
		d.long(label, "", value, by)
		return
	}
	d.add(countersign.Field{Kind: countersign.FieldText, Label: label, Values: []string{value}, WrittenBy: by})
}

func (d *display) add(f countersign.Field) {
	d.fields = append(d.fields, f)
	for _, v := range f.Values {
		d.shown += len(v)
	}
}

// long shows text in a long_text field when it fits and may be shown;
// otherwise as a file called name, which a field names.
func (d *display) long(label, name, text string, by countersign.WrittenBy) {
	f := countersign.Field{Kind: countersign.FieldLongText, Label: label, Values: []string{text}, WrittenBy: by}
	if text == "" {
		d.add(countersign.Field{Kind: countersign.FieldText, Label: label, Values: []string{"(empty)"}, WrittenBy: by})
		return
	}
	if utf8.RuneCountInString(text) <= countersign.MaxLongTextChars && d.shown+len(text) <= MaxShownBytes && showable(f) {
		d.add(f)
		return
	}
	if name == "" {
		name = strings.ToLower(strings.ReplaceAll(label, " ", "-")) + ".txt"
	}
	name = d.fileName(name)
	ct := "text/plain"
	if !utf8.ValidString(text) {
		ct = "application/octet-stream"
	}
	d.files = append(d.files, connectors.File{Name: name, ContentType: ct, Data: []byte(text)})
	d.text(label, fmt.Sprintf("in the file %s (%d bytes)", name, len(text)), countersign.WrittenByProject)
}

// fileName makes name a file name the contract takes, unique in the task.
func (d *display) fileName(name string) string {
	// The number before the first "-" makes every name of the task unique:
	// only the name's own rules need checking.
	n := fmt.Sprintf("%d-%s", len(d.files)+1, name)
	if countersign.ValidateFiles([]countersign.File{{Name: n, ContentType: "text/plain", SHA256: strings.Repeat("0", 64)}}) == nil {
		return n
	}
	return fmt.Sprintf("%d-content.txt", len(d.files)+1)
}

func showable(f countersign.Field) bool {
	return countersign.ValidateDisplay(countersign.Display{Title: "t", Fields: []countersign.Field{f}}) == nil
}

func agent(d *display, label, value string) { d.text(label, value, countersign.WrittenByAgent) }
func project(d *display, label, value string) {
	d.text(label, value, countersign.WrittenByProject)
}

func opt(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// show builds what the owner sees of a prepared write: every value it
// will use, the agent's marked, and for file writes the diff against what
// was read and the new content.
func show(w *write, old map[string]*string) connectors.TaskSpec {
	d := &display{}
	if w.Repo != "" {
		agent(d, "Repository", w.Repo)
	}
	switch w.Op {
	case "branch_create":
		agent(d, "New branch", w.Branch)
		agent(d, "From", w.From)
		project(d, "Starts at commit", w.SHA)
	case "file_put":
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
	case "commit":
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
	case "issue_create":
		agent(d, "Title", opt(w.Title))
		if w.Body != nil {
			d.long("Body", "body.md", *w.Body, countersign.WrittenByAgent)
		}
		issueLists(d, w)
	case "issue_comment", "issue_update":
		project(d, "Issue", fmt.Sprintf("#%d %s", w.Number, w.Title0))
		if w.Op == "issue_comment" {
			d.long("Comment", "comment.md", opt(w.Body), countersign.WrittenByAgent)
			break
		}
		if w.Title != nil {
			agent(d, "New title", *w.Title)
		}
		if w.Body != nil {
			d.long("New body", "body.md", *w.Body, countersign.WrittenByAgent)
		}
		if w.State != nil {
			s := *w.State
			if w.StateReason != nil {
				s += " (" + *w.StateReason + ")"
			}
			agent(d, "New state", s)
		}
		issueLists(d, w)
	case "pr_create":
		agent(d, "Title", opt(w.Title))
		agent(d, "Branches", w.Head+" into "+w.Base)
		if w.Body != nil {
			d.long("Body", "body.md", *w.Body, countersign.WrittenByAgent)
		}
		if w.Draft {
			agent(d, "Draft", "yes")
		}
	case "pr_review":
		project(d, "Pull request", fmt.Sprintf("#%d %s", w.Number, w.Title0))
		project(d, "Branches", w.Head+" into "+w.Base)
		project(d, "Reviewed commit", w.SHA)
		agent(d, "Verdict", map[string]string{"APPROVE": "approve", "REQUEST_CHANGES": "request changes", "COMMENT": "comment"}[w.Event])
		if w.Body != nil {
			d.long("Summary", "review.md", *w.Body, countersign.WrittenByAgent)
		}
	case "pr_merge":
		project(d, "Pull request", fmt.Sprintf("#%d %s", w.Number, w.Title0))
		project(d, "Branches", w.Head+" into "+w.Base)
		project(d, "Head commit", w.SHA)
		agent(d, "Method", method(w))
		if w.Title != nil {
			agent(d, "Commit title", *w.Title)
		}
		if w.Message != "" {
			d.long("Commit message", "message.txt", w.Message, countersign.WrittenByAgent)
		}
	case "gist_create", "gist_update":
		if w.Op == "gist_update" {
			agent(d, "Gist", w.GistID)
		} else {
			agent(d, "Visibility", map[bool]string{true: "public", false: "secret"}[w.Public])
		}
		if w.Description != nil {
			agent(d, "Description", *w.Description)
		}
		names := make([]string, 0, len(w.Files))
		for n := range w.Files {
			names = append(names, n)
		}
		sort.Strings(names)
		var list []string
		var diff strings.Builder
		for i, n := range names {
			list = append(list, changeLine(i, n, old[n], w.Files[n]))
			diff.WriteString(Unified(n, old[n], w.Files[n], Whole))
		}
		if len(list) > 0 {
			listField(d, "Files", list, countersign.WrittenByAgent)
			d.long("Diff, whole files", "changes.diff", diff.String(), countersign.WrittenByProject)
		}
	}
	return connectors.TaskSpec{Display: countersign.Display{Title: titles[w.Op], Summary: summary(w, old), Fields: d.fields}, Files: d.files}
}

// changeLine is the i-th line of a list of changed files: old nil is a
// new file, new nil a deleted one.
func changeLine(i int, name string, old, new *string) string {
	switch {
	case new == nil:
		return fmt.Sprintf("%d. %s: deleted", i+1, name)
	case old == nil:
		return fmt.Sprintf("%d. %s: new, %d bytes", i+1, name, len(*new))
	}
	return fmt.Sprintf("%d. %s: replaced, %d bytes", i+1, name, len(*new))
}

// listField shows a list, or when a value cannot be a list value, the
// list as a long text.
func listField(d *display, label string, list []string, by countersign.WrittenBy) {
	f := countersign.Field{Kind: countersign.FieldList, Label: label, Values: list, WrittenBy: by}
	if len(list) > 0 && len(list) <= countersign.MaxListValues && showable(f) {
		d.add(f)
		return
	}
	d.long(label, strings.ToLower(label)+".txt", strings.Join(list, "\n"), by)
}

func issueLists(d *display, w *write) {
	for _, l := range []struct {
		label string
		v     *[]string
	}{{"Labels", w.Labels}, {"Assignees", w.Assignees}} {
		if l.v == nil {
			continue
		}
		if len(*l.v) == 0 {
			agent(d, l.label, "none: every one is removed")
			continue
		}
		listField(d, l.label, *l.v, countersign.WrittenByAgent)
	}
}
