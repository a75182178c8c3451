package web_test

// An input task's answer box fits its answer: the guessing game's guess is
// one line with a numeric keyboard, and a text that is not a number is told
// next to the box before the wallet is asked, which signs nothing; the page
// reads the connector's shape of supplied text as the service's validator
// (argschema) does.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"countersign"
	"countersign/approval"
	"countersign/argschema"
	"countersign/connectors/probe"
	"countersign/servicetest"
	"countersign/store/storetest"
)

// TestAnswerShapeAsGo: for every shape and text, the page's check says
// what argschema's says (the terminal inbox's check, and the validator
// that loads the connector), and the box it draws for the shape is one
// line (with a numeric keyboard for digits) or several.
func TestAnswerShapeAsGo(t *testing.T) {
	t.Parallel()
	shapes := []struct {
		schema           string
		oneLine, numeric bool
	}{
		{probe.GuessShape, true, true},
		{`{"type": "string", "pattern": "^[0-9]+$", "description": "digits", "examples": ["1"]}`, true, true},
		{`{"type": "string", "pattern": "^\\d{1,4}$", "description": "up to four digits", "examples": ["1"]}`, true, true},
		{`{"type": "string", "pattern": "^[A-Z]{2}[0-9]+$", "description": "an account", "examples": ["DE12"]}`, true, false},
		{`{"type": "string", "pattern": "^(?:yes|no)$", "description": "yes or no", "examples": ["yes"]}`, true, false},
		{`{"type": "string", "pattern": "[0-9]", "description": "a text with a digit", "examples": ["a1"]}`, true, false},
		{`{"type": "string", "minLength": 1, "maxLength": 2, "description": "one or two characters", "examples": ["é"]}`, true, false},
		{`{"type": "string", "maxLength": 5000, "description": "a message", "examples": ["Hello"]}`, false, false},
		{`{"type": "string", "minLength": 3, "description": "at least three characters", "examples": ["abc"]}`, false, false},
		{`{"type": "string", "pattern": "^[^x]*$", "description": "lines without x", "examples": ["a\nb"]}`, false, false},
		{`{"type": "string", "pattern": "^\\w+\\W\\w+\\.$", "description": "two words and a dot", "examples": ["ab cd."]}`, true, false},
	}
	texts := []string{"", " ", "7", "42", "0042", " 42 ", "42\n", "\t50\r\n", "-3", "+3", "4 2", "4.2", "abc", "a1", "1a", "yes", "no", "yesno",
		"DE12", "de12", "DE", "é", "éé", "ééé", "😀", "😀😀", "😀😀😀", "a\nb", "x", "ax", "Hello", "ab cd.", "ab  cd.", "٤٢", "１２", "\u00a042",
		strings.Repeat("9", 20), strings.Repeat("a", 5001)}
	type verdict struct {
		OK      bool   `json:"ok"`
		OneLine bool   `json:"oneLine"`
		Numeric bool   `json:"numeric"`
		Fits    []bool `json:"fits"`
	}
	var schemas []string
	for _, s := range shapes {
		schemas = append(schemas, s.schema)
	}
	in, _ := json.Marshal(map[string]any{"shapes": schemas, "texts": texts})
	ctx := tab(t)
	var got []verdict
	raw := run(t, ctx, "the page's checks", chromedp.Evaluate[string](`(async () => {
  const cs = await import(window.BUNDLE);
  const input = `+string(in)+`;
  return JSON.stringify(input.shapes.map((s) => {
    const shape = cs.readTextShape(JSON.parse(s));
    if (!shape) return {ok: false, oneLine: false, numeric: false, fits: []};
    return {ok: true, oneLine: shape.oneLine, numeric: shape.numeric, fits: input.texts.map((x) => cs.fitsShape(shape, x))};
  }));
})()`, chromedp.EvalAwaitPromise))
	if err := json.Unmarshal([]byte(raw), &got); err != nil || len(got) != len(shapes) {
		t.Fatalf("the page answered %s: %v", raw, err)
	}
	for i, s := range shapes {
		shape, err := argschema.CompileTextShape("test", json.RawMessage(s.schema))
		if err != nil {
			t.Fatalf("shape %d: %v", i, err)
		}
		g := got[i]
		if !g.OK || g.OneLine != s.oneLine || g.Numeric != s.numeric || len(g.Fits) != len(texts) {
			t.Errorf("shape %s: the page reads %+v, want one line %v, numeric %v", s.schema, g, s.oneLine, s.numeric)
			continue
		}
		for j, text := range texts {
			if want := shape.Check([]byte(text)) == nil; g.Fits[j] != want {
				t.Errorf("shape %s, text %q: the page says fits %v, Go %v", s.schema, text, g.Fits[j], want)
			}
		}
	}
	// What the page does not read, it does not check.
	for _, bad := range []string{`null`, `"x"`, `{"type": "integer", "description": "n"}`, `{"type": "string"}`, `{"type": "string", "description": "d", "pattern": "(?<=a)["}`,
		`{"type": "string", "description": "d", "maxLength": -1}`, `{"type": "string", "description": "d", "minLength": 1.5}`} {
		if ok := run(t, ctx, "a shape not read", chromedp.Evaluate[bool](`(async () => {
  const cs = await import(window.BUNDLE);
  return cs.readTextShape(`+bad+`) === null;
})()`, chromedp.EvalAwaitPromise)); !ok {
			t.Errorf("the page reads %s", bad)
		}
	}
}

// TestInboxPageGuessShape: the guess's box is one line with a numeric
// keyboard and says what is expected; "abc" is told next to the box (and
// in the live region), the box marked invalid, the focus on it, and the
// wallet asked nothing; 42 is then signed once and the game goes on.
func TestInboxPageGuessShape(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.Postgres(t))
	followClock(t, w)
	w.StartJobs()
	ctx := blankTab(t, 120*time.Second)
	injectWallet(t, ctx, w)
	signInWithWallet(t, ctx, w)
	turn := w.Guess()
	waitJS(t, ctx, "the first turn", `!!document.querySelector('#tasks li[data-task="`+turn+`"]')`)
	openCard(t, ctx, turn)

	box := run(t, ctx, "the answer box", chromedp.Evaluate[[]string](`(() => {
  const b = document.getElementById("answer");
  return [b.tagName, b.type ?? "", b.getAttribute("inputmode") ?? "", b.getAttribute("aria-describedby") ?? "",
    document.getElementById("answer-help").textContent, b.labels[0]?.textContent ?? "", b.getAttribute("aria-invalid") ?? ""];
})()`))
	want := []string{"INPUT", "text", "numeric", "answer-help", "A whole number in digits, such as 7. Sent to the agent exactly as typed, sealed on this device.", "Your answer", ""}
	if fmt.Sprint(box) != fmt.Sprint(want) {
		t.Fatalf("the answer box is %q, want %q", box, want)
	}
	do(t, ctx, "the card at the top", chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
	screen(t, ctx, "inbox-card-answer")
	signedBefore := len(walletSigned(t, ctx))

	do(t, ctx, "type abc and approve", chromedp.SendKeys(chromedp.ID("answer"), "abc"), chromedp.Click(approveButton()))
	waitJS(t, ctx, "told", `document.getElementById("answer-error")?.hidden === false`)
	told := run(t, ctx, "what the page says", chromedp.Evaluate[[]string](`(() => {
  const b = document.getElementById("answer"), e = document.getElementById("answer-error");
  return [e.textContent, String(b.nextElementSibling === e), b.getAttribute("aria-invalid") ?? "", b.getAttribute("aria-describedby") ?? "",
    String(document.activeElement === b), document.getElementById("status").textContent, String(document.getElementById("approve-step").hidden)];
})()`))
	want = []string{"Expected: a whole number in digits, such as 7.", "true", "true", "answer-error answer-help", "true",
		"Expected: a whole number in digits, such as 7. Nothing was signed or sent: the task still waits for you.", "true"}
	if fmt.Sprint(told) != fmt.Sprint(want) {
		t.Fatalf("after abc the page shows %q, want %q", told, want)
	}
	// The wallet was not asked, and nothing reached the service.
	time.Sleep(300 * time.Millisecond)
	if n := len(walletSigned(t, ctx)); n != signedBefore {
		t.Fatalf("the wallet signed %d sentences for abc", n-signedBefore)
	}
	if st, err := w.AgentClient().Status(context.Background(), w.Owner.Account, "probe", turn, 0); err != nil || st.State != string(countersign.StateOpen) {
		t.Fatalf("after abc the turn is %+v %v", st, err)
	}
	do(t, ctx, "the card at the top", chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
	screen(t, ctx, "inbox-card-answer-expected")

	// Typing again takes the mark away once the text fits; Enter is not
	// Approve.
	do(t, ctx, "type 42", chromedp.Evaluate[chromedp.Void](`document.getElementById("answer").value = ""`), chromedp.SendKeys(chromedp.ID("answer"), "42"+kb.Enter))
	waitJS(t, ctx, "the mark gone", `document.getElementById("answer-error").hidden && !document.getElementById("answer").hasAttribute("aria-invalid")`)
	if n := len(walletSigned(t, ctx)); n != signedBefore {
		t.Fatal("Enter in the answer box asked the wallet")
	}
	do(t, ctx, "approve 42", chromedp.Click(approveButton()))
	waitApproved(t, ctx)
	signed := walletSigned(t, ctx)
	if len(signed) != signedBefore+1 {
		t.Fatalf("the wallet signed %d sentences for 42", len(signed)-signedBefore)
	}
	if ap, err := approval.ParseApproval(signed[len(signed)-1]); err != nil || ap.TaskID != turn {
		t.Fatalf("the wallet signed %q (%+v, %v)", signed[len(signed)-1], ap, err)
	}
	st := w.WaitState(turn, countersign.StateDone, countersign.StateFailed)
	if st.State != countersign.StateDone {
		t.Fatalf("the turn answered 42 is %s", st.State)
	}
	status, err := w.AgentClient().Status(context.Background(), w.Owner.Account, "probe", turn, 0)
	var res struct {
		Guess   json.RawMessage `json:"guess"`
		Attempt int             `json:"attempt"`
	}
	if err != nil || json.Unmarshal(status.Result, &res) != nil || string(res.Guess) != "42" || res.Attempt != 1 {
		t.Fatalf("the guess reported %+v %v", status, err)
	}
	// The game goes on: the next turn (or the notice of a win) arrives.
	next := status.NextTaskID + status.NoticeTaskID
	waitJS(t, ctx, "the next task", `!!document.querySelector('#tasks li[data-task="`+next+`"]')`)
}
