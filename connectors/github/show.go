package github

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"countersign"
	"countersign/connectors"
)

// parseState reads a sealed write strictly: its "op" names a write,
// and every member is one of that write's.
func parseState(b []byte) (write, error) {
	var sealed named
	if err := json.Unmarshal(b, &sealed); err != nil {
		return nil, err
	}
	w, ok := newWrite(sealed.Op)
	if !ok {
		return nil, errors.New("no such write")
	}
	if err := countersign.DecodeStrict(b, w); err != nil {
		return nil, err
	}
	return w, nil
}

// title is the title of w's task.
func title(w write) string {
	d, _ := declared(w.name())
	return d.title
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

// taskSpec builds what the owner sees of a prepared write: its
// repository, then every value it will use (write.show).
func taskSpec(w write, old map[string]*string) connectors.TaskSpec {
	d := &display{}
	if repo := w.scope().repo; repo != "" {
		agent(d, "Repository", repo)
	}
	w.show(d, old)
	return connectors.TaskSpec{Display: countersign.Display{Title: title(w), Summary: w.summary(old).String(), Fields: d.fields}, Files: d.files}
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
