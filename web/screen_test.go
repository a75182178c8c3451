package web_test

// What every screen of the page is checked for, where a test reaches it:
// one column at 360 px wide (the page's scrollWidth no more than the
// window's, and nothing cut off or scrolled sideways), no serious or
// critical accessibility violation by axe-core (shipped in testdata,
// injected into the page) in light and in dark, and exactly one live
// region. With COUNTERSIGN_SCREENSHOTS set to a folder, the screen is
// photographed at 1280 and 360 px, light and dark, into it.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

var axe struct {
	once sync.Once
	src  string
	err  error
}

// axeSource is axe-core's script, shipped in testdata (axe.min.js, MPL-2.0,
// its licence header kept), so the accessibility checks run on a machine
// that never ran npm.
func axeSource(t testing.TB) string {
	t.Helper()
	axe.once.Do(func() {
		b, err := os.ReadFile("testdata/axe.min.js")
		axe.src, axe.err = string(b), err
	})
	if axe.err != nil {
		t.Fatal("axe-core is not in testdata: " + axe.err.Error())
	}
	return axe.src
}

type violation struct {
	ID     string `json:"id"`
	Impact string `json:"impact"`
	Help   string `json:"help"`
	Nodes  []struct {
		Target []any `json:"target"`
	} `json:"nodes"`
}

// axeViolations runs axe-core on the page; its serious and critical findings.
func axeViolations(t testing.TB, ctx context.Context) []violation {
	t.Helper()
	src := axeSource(t)
	if loaded := run(t, ctx, "axe loaded", chromedp.Evaluate[bool](`typeof window.axe === "object"`)); !loaded {
		do(t, ctx, "load axe", chromedp.Evaluate[chromedp.Void](src))
	}
	raw := run(t, ctx, "axe", chromedp.Evaluate[[]byte](`axe.run(document, {resultTypes: ["violations"]}).then((r) => r.violations)`, chromedp.EvalAwaitPromise))
	var all []violation
	if err := json.Unmarshal(raw, &all); err != nil {
		t.Fatalf("axe answered %s: %v", raw, err)
	}
	var bad []violation
	for _, v := range all {
		if v.Impact == "serious" || v.Impact == "critical" {
			bad = append(bad, v)
		}
	}
	return bad
}

func scheme(t testing.TB, ctx context.Context, dark bool) {
	t.Helper()
	v := "light"
	if dark {
		v = "dark"
	}
	if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: v}}}); err != nil {
		t.Fatal(err)
	}
}

// cutJS lists the shown elements whose content is wider than they are
// and is cut off or scrolled sideways (form controls aside), and those that
// reach past the window's right edge.
const cutJS = `[...document.querySelectorAll("body *")].filter((e) => {
  if (["TEXTAREA", "INPUT", "SELECT", "OPTION"].includes(e.tagName) || e.closest(".sr-only, .hot-connector-popup")) return false;
  const r = e.getBoundingClientRect();
  if (!r.width && !r.height) return false;
  const cs = getComputedStyle(e);
  if (cs.visibility === "hidden") return false;
  return (e.scrollWidth > e.clientWidth + 1 && cs.overflowX !== "visible") || r.right > window.innerWidth + 1;
}).map((e) => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") + (e.className && typeof e.className === "string" ? "." + e.className.split(" ").join(".") : "") + " " + e.scrollWidth + "/" + e.clientWidth)`

// screen checks the screen the tab shows now (see the file's comment) and
// leaves the tab at 1280 px, light.
func screen(t testing.TB, ctx context.Context, name string) {
	t.Helper()
	if n := run(t, ctx, "the live regions", chromedp.Evaluate[int](
		`document.querySelectorAll('[aria-live]:not([aria-live="off"]), [role="status"], [role="alert"], [role="log"]').length`)); n != 1 {
		t.Errorf("%s: %d live regions, want the one", name, n)
	}
	dir := os.Getenv("COUNTERSIGN_SCREENSHOTS")
	defer func() {
		scheme(t, ctx, false)
		do(t, ctx, "back to 1280 px", chromedp.EmulateViewport(1280, 900))
	}()
	for _, width := range []int64{1280, 360} {
		do(t, ctx, "the width", chromedp.EmulateViewport(width, 900))
		if width == 360 {
			if w := run(t, ctx, "the page's width", chromedp.Evaluate[[]int](`[document.documentElement.scrollWidth, window.innerWidth]`)); w[0] > w[1] {
				t.Errorf("%s at 360 px: the page is %d px wide, the window %d", name, w[0], w[1])
			}
			if cut := run(t, ctx, "what is cut", chromedp.Evaluate[[]string](cutJS)); len(cut) > 0 {
				t.Errorf("%s at 360 px: cut or scrolled sideways: %q", name, cut)
			}
		}
		for _, dark := range []bool{false, true} {
			scheme(t, ctx, dark)
			if width == 1280 {
				for _, v := range axeViolations(t, ctx) {
					var where []string
					for _, n := range v.Nodes {
						where = append(where, fmt.Sprint(n.Target...))
					}
					t.Errorf("%s (dark %v): axe %s %s: %s at %s", name, dark, v.Impact, v.ID, v.Help, strings.Join(where, ", "))
				}
			}
			if dir == "" {
				continue
			}
			mode := "light"
			if dark {
				mode = "dark"
			}
			var png []byte
			if width == 360 {
				png = run(t, ctx, "a screenshot", chromedp.FullScreenshot(100))
			} else {
				png = run(t, ctx, "a screenshot", chromedp.CaptureScreenshot())
			}
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%d-%s.png", name, width, mode)), png, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}
