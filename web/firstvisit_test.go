package web_test

// A first-time owner in a real Chromium against the whole service
// (servicetest on PostgreSQL): the landing page says in one sentence what
// this is; the empty inbox says what happens next and leads to giving an
// agent a project; each section of Settings has its own address, reached
// directly, and the browser's Back goes back through them.

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"countersign/servicetest"
	"countersign/store/storetest"
)

func TestInboxPageFirstVisit(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.Postgres(t))

	ctx := blankTab(t, 120*time.Second)
	do(t, ctx, "open the page", chromedp.EmulateViewport(1280, 900), chromedp.Navigate(w.URL+"/"), chromedp.WaitVisible(named("Sign in")))
	if got := textOf(t, ctx, "what this is", "#what-this-is"); !strings.HasPrefix(got, "Countersign holds what your AI agents want to do until you approve it") {
		t.Fatalf("the landing page says %q", got)
	}
	signInPage(t, ctx, w)
	waitJS(t, ctx, "the empty inbox", `!document.getElementById("tasks-empty").hidden`)
	if got := textOf(t, ctx, "the empty inbox", "#tasks-empty"); !strings.Contains(got, "Nothing is waiting for you.") || !strings.Contains(got, "nothing happens until you do") {
		t.Fatalf("the empty inbox says %q", got)
	}
	if got := run(t, ctx, "the title", chromedp.Evaluate[string](`document.title`)); got != "Countersign" {
		t.Fatalf("with nothing waiting the title is %q", got)
	}
	screen(t, ctx, "inbox-empty")

	// Give an agent a project: Settings → Projects, at its own address.
	do(t, ctx, "give a project", chromedp.Click(chromedp.ID("give-a-project")))
	waitJS(t, ctx, "the projects", `location.hash === "#/settings/projects" && !!document.getElementById("catalogue") && document.activeElement?.id === "settings-title"`)
	screen(t, ctx, "settings-projects")

	// Each section is reached directly by its address, and is marked as
	// where the owner is.
	for _, s := range []struct{ id, name, ready string }{
		{"devices", "Devices", "#devices-list"},
		{"mutes", "Mutes", "#mute-form"},
		{"webhook", "Webhook", "#webhook-current"},
	} {
		do(t, ctx, "go to "+s.id, chromedp.Navigate(w.URL+"/#/settings/"+s.id))
		waitJS(t, ctx, s.id, `!!document.querySelector("`+s.ready+`") && document.getElementById("settings-title").textContent === "`+s.name+`"`)
		if cur := textOf(t, ctx, "the current section", `nav a[aria-current="page"]`); cur != s.name {
			t.Errorf("at #/settings/%s the section marked current is %q", s.id, cur)
		}
		if n := run(t, ctx, "the other sections", chromedp.Evaluate[int](`document.querySelectorAll("#settings-box > div[id$='-box']").length`)); n != 1 {
			t.Errorf("at #/settings/%s the view holds %d sections", s.id, n)
		}
		screen(t, ctx, "settings-"+s.id)
	}
	// Back goes back through them, to the projects, then the inbox.
	for _, want := range []string{"#/settings/mutes", "#/settings/devices", "#/settings/projects"} {
		do(t, ctx, "Back", chromedp.Evaluate[chromedp.Void](`history.back()`))
		waitJS(t, ctx, "back to "+want, `location.hash === "`+want+`" && !document.getElementById("settings").hidden`)
	}
	do(t, ctx, "Back", chromedp.Evaluate[chromedp.Void](`history.back()`))
	waitJS(t, ctx, "the inbox", `!document.getElementById("list").hidden && document.getElementById("settings").hidden`)
}
