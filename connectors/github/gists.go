package github

import (
	"context"
	"net/http"
	"sort"
	"strings"

	"countersign"
)

// gistCreate creates a gist.
type gistCreate struct {
	named
	gistCreateArgs
}

type gistCreateArgs struct {
	Description *string            `json:"description,omitempty"`
	Public      bool               `json:"public,omitempty"`
	Files       map[string]*string `json:"files,omitempty"`
}

func (w *gistCreate) args() any     { return &w.gistCreateArgs }
func (w *gistCreate) scope() scope  { return scope{files: len(w.Files)} }
func (w *gistCreate) check() error  { return nil }
func (w *gistCreate) doing() string { return "creating the gist" }

func (w *gistCreate) prepare(context.Context, *client) (map[string]*string, error) {
	return nil, nil
}

func (w *gistCreate) show(d *display, old map[string]*string) {
	agent(d, "Visibility", map[bool]string{true: "public", false: "secret"}[w.Public])
	gistFiles(d, w.Description, w.Files, old)
}

func (w *gistCreate) summary(map[string]*string) line {
	names := sortedFiles(w.Files)
	seen := map[bool]string{true: "a public gist", false: "a secret gist"}[w.Public]
	l := few(line{words("create " + seen + " of " + plural(len(names), "file") + ": ")}, each(names, quoted))
	return append(l, words(map[bool]string{true: "; anyone can find it", false: "; anyone with its link can read it"}[w.Public]+", and it can be deleted"))
}

func (w *gistCreate) execute(ctx context.Context, cl *client) (map[string]any, error) {
	body := gistBody(w.Description, w.Files)
	body["public"] = w.Public
	var out gistJSON
	if _, err := cl.do(ctx, http.MethodPost, at{"gists"}, body, &out, http.StatusCreated); err != nil {
		return nil, err
	}
	return gistResult(out), nil
}

func (w *gistCreate) outcome(answered) line {
	return line{words("Created " + map[bool]string{true: "a public gist", false: "a secret gist"}[w.Public] + " of " + plural(len(w.Files), "file"))}
}

// gistUpdate changes a gist's description or files.
type gistUpdate struct {
	named
	gistUpdateArgs
}

type gistUpdateArgs struct {
	GistID      string             `json:"gist_id,omitempty"`
	Description *string            `json:"description,omitempty"`
	Files       map[string]*string `json:"files,omitempty"` // nil content deletes the file
}

func (w *gistUpdate) args() any     { return &w.gistUpdateArgs }
func (w *gistUpdate) scope() scope  { return scope{files: len(w.Files)} }
func (w *gistUpdate) doing() string { return "changing the gist" }

func (w *gistUpdate) check() error {
	if w.Description == nil && len(w.Files) == 0 {
		return countersign.Errorf(countersign.InvalidRequest, "gist_update changes the description or files")
	}
	return nil
}

func (w *gistUpdate) prepare(ctx context.Context, cl *client) (map[string]*string, error) {
	var gj gistJSON
	if _, err := cl.do(ctx, http.MethodGet, at{"gists", w.GistID}, nil, &gj, http.StatusOK); err != nil {
		return nil, refusal(err, "reading the gist")
	}
	old := map[string]*string{}
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
	return old, nil
}

func (w *gistUpdate) show(d *display, old map[string]*string) {
	agent(d, "Gist", w.GistID)
	gistFiles(d, w.Description, w.Files, old)
}

func (w *gistUpdate) summary(old map[string]*string) line {
	l := line{words("change the gist "), name(w.GistID), words(": ")}
	var acts []line
	for _, n := range sortedFiles(w.Files) {
		verb := "replace "
		switch {
		case w.Files[n] == nil:
			verb = "delete "
		case old[n] == nil:
			verb = "add "
		}
		acts = append(acts, line{words(verb), quoted(n)})
	}
	if w.Description != nil {
		acts = append(acts, line{words("set its description")})
	}
	l = few(l, acts)
	return append(l, words("; its earlier versions stay in its history"))
}

func (w *gistUpdate) execute(ctx context.Context, cl *client) (map[string]any, error) {
	var out gistJSON
	if _, err := cl.do(ctx, http.MethodPatch, at{"gists", w.GistID}, gistBody(w.Description, w.Files), &out, http.StatusOK); err != nil {
		return nil, err
	}
	return gistResult(out), nil
}

func (w *gistUpdate) outcome(answered) line {
	return line{words("Changed the gist "), name(w.GistID)}
}

// gistFiles shows a gist write's description and files: each file's
// change, and the diff of whole files.
func gistFiles(d *display, description *string, files map[string]*string, old map[string]*string) {
	if description != nil {
		agent(d, "Description", *description)
	}
	var list []string
	var diff strings.Builder
	for i, n := range sortedFiles(files) {
		list = append(list, changeLine(i, n, old[n], files[n]))
		diff.WriteString(Unified(n, old[n], files[n], Whole))
	}
	if len(list) > 0 {
		listField(d, "Files", list, countersign.WrittenByAgent)
		d.long("Diff, whole files", "changes.diff", diff.String(), countersign.WrittenByProject)
	}
}

// gistBody is what a gist write sends: its files (null deletes one) and
// its description.
func gistBody(description *string, files map[string]*string) map[string]any {
	fs := map[string]any{}
	for name, c := range files {
		if c == nil {
			fs[name] = nil
		} else {
			fs[name] = map[string]string{"content": *c}
		}
	}
	body := map[string]any{"files": fs}
	if description != nil {
		body["description"] = *description
	}
	return body
}

// gistResult is what a gist write answers.
func gistResult(out gistJSON) map[string]any {
	return map[string]any{"id": out.ID, "html_url": out.HTMLURL}
}

func sortedFiles(files map[string]*string) []string {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
