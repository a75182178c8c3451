package web_test

// Reading a change, in a real Chromium: a connector's unified diff drawn as
// a code review draws it (line numbers on both sides, hunk headers, each
// change marked by a sign and a word as well as a colour, long lines
// wrapped), git's extended headers said in words, and the agent's text
// shown as the plain text that will be posted, never formatted. Against the
// whole service (servicetest on PostgreSQL) with the GitHub connector on its
// fake, and the reader itself from the shipped bundle.

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"countersign/client"
	"countersign/connectors/github"
	"countersign/connectors/github/githubtest"
	"countersign/egress"
	"countersign/servicetest"
	"countersign/store/storetest"
)

const githubToken = "ghp_sandboxtoken0123456789"

// githubCall is the agent's call of the gh project: the task it opened.
func githubCall(t testing.TB, w *servicetest.World, op string, args map[string]any) string {
	t.Helper()
	raw, err := w.AgentClient().Call(context.Background(), w.Owner.Account, "gh", op, args, nil)
	if err != nil {
		t.Fatalf("%s: %v", op, err)
	}
	var a client.Awaiting
	if err := json.Unmarshal(raw, &a); err != nil || a.TaskID == "" {
		t.Fatalf("%s answered %s (%v)", op, raw, err)
	}
	return a.TaskID
}

func TestInboxPageDiff(t *testing.T) {
	t.Parallel()
	fake := githubtest.New(githubToken, "octocat").Start()
	t.Cleanup(fake.Close)
	repo := fake.Seed()
	w := servicetest.New(t, storetest.Postgres(t), servicetest.WithConnector(github.New(github.Options{BaseURL: fake.URL, Egress: egress.Options{AllowPrivate: true}})))
	w.PutProject("gh", "github", `{"actions": ["file_put", "issue_comment"], "confirm": ["file_put", "issue_comment"]}`, []byte(`{"token": "`+githubToken+`"}`))
	w.StartJobs()

	// The README was "# hello\n\nA sample repository of the Countersign
	// sandbox.\n\nTry a change through your inbox.\n": its third line
	// changes, a long line without a space is added, its last line goes.
	long := strings.Repeat("0123456789abcdef", 24)
	put := githubCall(t, w, "file_put", map[string]any{"repo": repo, "path": "README.md", "message": "Reword",
		"content": "# hello\n\nA sample repository of Countersign.\n\n" + long + "\n"})
	body := "**Hello** <b>there</b>\n\n- [link](https://example.com)\n"
	comment := githubCall(t, w, "issue_comment", map[string]any{"repo": repo, "number": 2, "body": body})

	ctx := blankTab(t, 120*time.Second)
	signInPage(t, ctx, w)
	openCard(t, ctx, put)

	type row struct {
		Class string `json:"class"`
		Old   string `json:"old"`
		New   string `json:"new"`
		Sign  string `json:"sign"`
		Said  string `json:"said"`
		Code  string `json:"code"`
		BG    string `json:"bg"`
	}
	rows := run(t, ctx, "the diff's rows", chromedp.Evaluate[[]row](`[...document.querySelectorAll("#fields table.diff-table tbody tr")].map((tr) => {
  const td = tr.querySelectorAll("td");
  if (td.length === 1) return { class: tr.className, old: "", new: "", sign: "", said: td[0].querySelector(".sr-only")?.textContent ?? "", code: td[0].querySelector("[aria-hidden]")?.textContent ?? td[0].textContent, bg: getComputedStyle(tr).backgroundColor };
  return { class: tr.className, old: td[0].textContent, new: td[1].textContent, sign: td[2].querySelector("[aria-hidden]").textContent, said: td[2].querySelector(".sr-only").textContent, code: td[3].textContent, bg: getComputedStyle(tr).backgroundColor };
})`))
	if len(rows) == 0 || rows[0].Class != "diff-hunk" || !strings.HasPrefix(rows[0].Code, "@@ -1,5 +1,5 @@") || rows[0].Said != "Before: lines 1 to 5; after: lines 1 to 5." {
		t.Fatalf("the diff begins %+v", rows)
	}
	want := []row{
		{Class: "diff-ctx", Old: "1", New: "1", Said: "unchanged", Code: "# hello"},
		{Class: "diff-ctx", Old: "2", New: "2", Said: "unchanged", Code: ""},
		{Class: "diff-del", Old: "3", Sign: "−", Said: "removed", Code: "A sample repository of the Countersign sandbox."},
		{Class: "diff-add", New: "3", Sign: "+", Said: "added", Code: "A sample repository of Countersign."},
		{Class: "diff-ctx", Old: "4", New: "4", Said: "unchanged", Code: ""},
		{Class: "diff-del", Old: "5", Sign: "−", Said: "removed", Code: "Try a change through your inbox."},
		{Class: "diff-add", New: "5", Sign: "+", Said: "added", Code: long},
	}
	if len(rows) != len(want)+1 {
		t.Fatalf("the diff has %d rows: %+v", len(rows), rows)
	}
	bg := map[string]string{}
	for i, w := range want {
		got := rows[i+1]
		bg[got.Class] = got.BG
		got.BG = ""
		if got != w {
			t.Errorf("row %d: %+v, want %+v", i+1, got, w)
		}
	}
	// Coloured too: added, removed and unchanged lines each look apart.
	if bg["diff-add"] == bg["diff-del"] || bg["diff-add"] == bg["diff-ctx"] || bg["diff-del"] == bg["diff-ctx"] {
		t.Errorf("the rows' colours: %v", bg)
	}
	// The connector's jargon in plain words, its own one click away.
	fields := textOf(t, ctx, "the fields", "#fields")
	if !strings.Contains(fields, "Replaces the file as the agent read it") || !strings.Contains(fields, "In the connector's words") || !strings.Contains(fields, "Replaces the file at blob: ") {
		t.Errorf("the fields read %q", fields)
	}
	// The new content, the agent's text, in monospace as it will be written.
	if f := run(t, ctx, "the new content", chromedp.Evaluate[[]string](`(() => { const p = [...document.querySelectorAll("#fields pre.long-text")].pop(); return [p.textContent, getComputedStyle(p).fontFamily]; })()`)); f[0] != "# hello\n\nA sample repository of Countersign.\n\n"+long+"\n" || !strings.Contains(f[1], "monospace") {
		t.Errorf("the new content reads %q in %q", f[0], f[1])
	}
	do(t, ctx, "the diff in view", chromedp.ScrollIntoView(chromedp.CSS("#fields table.diff-table")))
	screen(t, ctx, "inbox-card-diff")
	// At 360 px the long line wraps within its cell: nothing is cut.
	do(t, ctx, "360 px", chromedp.EmulateViewport(360, 900))
	wrapped := run(t, ctx, "the long line", chromedp.Evaluate[[]float64](`(() => { const td = [...document.querySelectorAll("td.diff-code")].find((c) => c.textContent.length > 300); const lh = parseFloat(getComputedStyle(td).lineHeight); return [td.scrollWidth, td.clientWidth, td.getBoundingClientRect().height / lh]; })()`))
	if wrapped[0] > wrapped[1] || wrapped[2] < 3 {
		t.Errorf("the long line at 360 px: %v wide in %v, %.1f lines", wrapped[0], wrapped[1], wrapped[2])
	}
	do(t, ctx, "1280 px", chromedp.EmulateViewport(1280, 900), chromedp.Click(named("Back to the list")))

	// A comment: exactly the text that will be posted, nothing formatted.
	openCard(t, ctx, comment)
	got := run(t, ctx, "the comment", chromedp.Evaluate[[]string](`(() => { const p = document.querySelector("#fields pre.long-text"); return [p.textContent, getComputedStyle(p).fontFamily, String(document.querySelectorAll("#fields b, #fields strong, #fields a, #fields li li").length)]; })()`))
	if got[0] != body || !strings.Contains(got[1], "monospace") || got[2] != "0" {
		t.Fatalf("the comment reads %q in %q, with %s formatted elements", got[0], got[1], got[2])
	}
	if note := textOf(t, ctx, "the card", "#card"); !strings.Contains(note, "Shown as the plain text that will be sent") {
		t.Errorf("the card does not say its text is shown as sent")
	}
	screen(t, ctx, "inbox-card-comment")
}

// The diff reader as shipped: git's extended headers in words, a binary
// file said so, a file without a final line break, a rename; a text that
// is not a unified diff, whole, is not read as one (and is shown as text).
func TestDiffReading(t *testing.T) {
	t.Parallel()
	ctx := tab(t)
	cases := []struct {
		name, diff string
		want       []string // each file: its names and notes, then each hunk's rows' kinds
	}{
		{"a mode change alone", "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n",
			[]string{"run.sh→run.sh: Its mode changes from a regular file (100644) to an executable file (100755)."}},
		{"a new executable file", "diff --git a/x.sh b/x.sh\nnew file mode 100755\nindex 0000000..e69de29\n--- /dev/null\n+++ b/x.sh\n@@ -0,0 +1,2 @@\n+#!/bin/sh\n+echo hi\n",
			[]string{"null→x.sh: New file: an executable file (100755).", "++"}},
		{"a deleted file", "--- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-gone\n", []string{"old.txt→null: Deleted file.", "-"}},
		{"a binary file", "diff --git a/logo.png b/logo.png\nindex 1111111..2222222 100644\nBinary files a/logo.png and b/logo.png differ\n",
			[]string{"logo.png→logo.png: binary"}},
		{"a git binary patch", "diff --git a/a.bin b/a.bin\nindex 1111111..2222222 100644\nGIT binary patch\nliteral 3\nKcmZQz00031\n\nliteral 0\nHcmV?d00001\n\n",
			[]string{"a.bin→a.bin: binary"}},
		{"a rename", "diff --git a/a.txt b/b.txt\nsimilarity index 90%\nrename from a.txt\nrename to b.txt\n--- a/a.txt\n+++ b/b.txt\n@@ -1,2 +1,2 @@\n same\n-old\n+new\n",
			[]string{"a.txt→b.txt: Renamed from a.txt.", " -+"}},
		{"no newline at the end", "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+a\n", []string{"f→f: ", "-\\+"}},
		{"a removed line that reads like a header", "--- a/f\n+++ b/f\n@@ -1,2 +1 @@\n--- a/g\n-x\n+y\n", []string{"f→f: ", "--+"}},
		{"two files", "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n--- a/g\n+++ b/g\n@@ -1 +1 @@\n-c\n+d\n", []string{"f→f: ", "-+", "g→g: ", "-+"}},
		{"prose", "Hello, world.\n", nil},
		{"empty", "", nil},
		{"a hunk longer than it says", "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n+c\n", nil},
		{"a hunk shorter than it says", "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n-a\n+b\n", nil},
		{"a hunk before any file", "@@ -1 +1 @@\n-a\n+b\n", nil},
		{"text after a hunk", "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\nand then some prose\n", nil},
	}
	in := make([]string, len(cases))
	for i, c := range cases {
		in[i] = c.diff
	}
	b, _ := json.Marshal(in)
	got := run(t, ctx, "parseDiff", chromedp.Evaluate[[][]string](`(async () => {
  const cs = await import(window.BUNDLE);
  return `+string(b)+`.map((d) => {
    const files = cs.parseDiff(d);
    if (files === null) return null;
    const out = [];
    for (const f of files) {
      out.push(String(f.from) + "→" + String(f.to) + ": " + (f.binary ? "binary" : f.notes.join(" ")));
      for (const h of f.hunks) out.push(h.lines.map((l) => l.kind).join(""));
    }
    return out;
  });
})()`, chromedp.EvalAwaitPromise))
	for i, c := range cases {
		if strings.Join(got[i], "|") != strings.Join(c.want, "|") || (got[i] == nil) != (c.want == nil) {
			t.Errorf("%s: read as %q, want %q", c.name, got[i], c.want)
		}
	}
	// Drawn: a binary file and a mode change are said in words.
	words := run(t, ctx, "diffView", chromedp.Evaluate[string](`(async () => {
  const cs = await import(window.BUNDLE);
  return cs.diffView(cs.parseDiff(`+jsString(cases[0].diff+cases[3].diff)+`), "Diff").textContent;
})()`, chromedp.EvalAwaitPromise))
	for _, s := range []string{"Its mode changes from a regular file (100644) to an executable file (100755).", "A binary file: its change is not shown as text."} {
		if !strings.Contains(words, s) {
			t.Errorf("the drawn diff lacks %q: %q", s, words)
		}
	}
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// A GitHub project's writes set row by row in Settings: GitHub's policy
// has an allow-list (`actions`), so Allowed and Ask me list a write there,
// Ask me names it in `confirm` too, and Refused leaves it out. The agent's
// next calls do as the rows say.
func TestSettingsGitHubRows(t *testing.T) {
	t.Parallel()
	fake := githubtest.New(githubToken, "octocat").Start()
	t.Cleanup(fake.Close)
	repo := fake.Seed()
	w := servicetest.New(t, storetest.Postgres(t), servicetest.WithConnector(github.New(github.Options{BaseURL: fake.URL, Egress: egress.Options{AllowPrivate: true}})))
	followClock(t, w)
	w.StartJobs()
	ctx := blankTab(t, 150*time.Second)
	injectWallet(t, ctx, w)
	signInWithWallet(t, ctx, w)
	settingsOpen(t, ctx, "projects")
	do(t, ctx, "set up gh", chromedp.SendKeys(chromedp.ID("project-new-name"), "gh"),
		chromedp.SetValue(chromedp.ID("project-new-connector"), "github"), chromedp.Click(named("Set it up")),
		chromedp.WaitVisible(chromedp.ID("project-gh-write-issue_comment-allow")))
	// Nothing is in `actions` yet: every row reads Refused.
	rows := run(t, ctx, "the rows", chromedp.Evaluate[map[string]string](`Object.fromEntries([...document.querySelectorAll('#project-gh-writes input:checked')].map((i) => [i.dataset.write, i.value]))`))
	if len(rows) != 13 {
		t.Fatalf("%d rows for GitHub's 13 writes: %v", len(rows), rows)
	}
	for op, r := range rows {
		if r != "refuse" {
			t.Errorf("before anything is allowed, %s reads %s", op, r)
		}
	}
	do(t, ctx, "choose", chromedp.Click(chromedp.ID("project-gh-write-issue_comment-allow")), chromedp.Click(chromedp.ID("project-gh-write-file_put-ask")),
		chromedp.SendKeys(chromedp.ID("project-gh-agents"), w.Agent), chromedp.SendKeys(chromedp.ID("project-gh-credentials"), `{"token": "`+githubToken+`"}`))
	do(t, ctx, "the rows in view", chromedp.ScrollIntoView(chromedp.ID("project-gh-writes")))
	screen(t, ctx, "settings-policy")
	do(t, ctx, "save", chromedp.Click(named("Save the new project")))
	waitJS(t, ctx, "saved", `!!document.querySelector('#projects-list li[data-project="gh"] [data-explained]')`)
	projects, err := w.Owner.Client.Projects(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var pol struct {
		Confirm []string `json:"confirm"`
		Actions []string `json:"actions"`
	}
	for _, p := range projects {
		if p.Name == "gh" {
			if err := json.Unmarshal([]byte(p.Policy), &pol); err != nil {
				t.Fatal(err)
			}
		}
	}
	if strings.Join(pol.Confirm, ",") != "file_put" || len(pol.Actions) != 2 || !slices.Contains(pol.Actions, "file_put") || !slices.Contains(pol.Actions, "issue_comment") {
		t.Fatalf("the saved policy: %+v", pol)
	}
	if got := textOf(t, ctx, "the project", `#projects-list li[data-project="gh"] [data-explained]`); !strings.Contains(got, "issue_comment: runs at once.") || !strings.Contains(got, "file_put: asks you first.") || !strings.Contains(got, "pr_merge: refused (it is not in `actions`).") {
		t.Errorf("the project reads %q", got)
	}

	// The agent: a comment goes at once, a file waits, a merge is refused.
	call := func(op string, args map[string]any) (map[string]any, error) {
		raw, err := w.AgentClient().Call(context.Background(), w.Owner.Account, "gh", op, args, nil)
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		return m, err
	}
	if m, err := call("issue_comment", map[string]any{"repo": repo, "number": 2, "body": "hi"}); err != nil || m["status"] == "awaiting_owner" {
		t.Errorf("an allowed comment: %v, %v", m, err)
	}
	if m, err := call("file_put", map[string]any{"repo": repo, "path": "a.md", "content": "a\n", "message": "A"}); err != nil || m["status"] != "awaiting_owner" {
		t.Errorf("a file_put that asks: %v, %v", m, err)
	}
	if _, err := call("pr_merge", map[string]any{"repo": repo, "number": 1}); err == nil || !strings.Contains(err.Error(), "policy_denied") {
		t.Errorf("a refused merge: %v", err)
	}
}
