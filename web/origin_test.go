package web_test

// The page's receipt check against Go's: the bytes a receipt's signature
// covers, the run keys' base58, and the ed25519 signature checked by
// WebCrypto; and the approval sentence as approval writes it.

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"countersign/approval"
	"countersign/origin"
)

func TestReceiptAsGo(t *testing.T) {
	t.Parallel()
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	r := origin.Receipt{Agent: "bot.near", At: "2026-11-29T12:00:00Z", Build: "probe@1.0.0", Connector: "probe",
		InputSHA256: "aa", Operation: "guess <start> & \u2028\u2029 \x01\t\"\\ é 🤖", OutputSHA256: "bb", Owner: "alice.near", Run: "run1"}
	withTask := r
	withTask.TaskID, withTask.TaskHash = "run1-1", "hh"
	var cases []map[string]string
	for _, rr := range []origin.Receipt{r, withTask} {
		s, _ := json.Marshal(origin.Sign(priv, 7, rr))
		cases = append(cases, map[string]string{"signed": string(s), "bytes": base64.StdEncoding.EncodeToString(rr.Bytes())})
	}
	in, _ := json.Marshal(map[string]any{"cases": cases, "key": origin.FormatKey(pub)})
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	want, err := approval.Approval{Account: "alice.near", TaskID: "run1-1", TaskHash: strings.Repeat("ab", 32), SupplyHash: strings.Repeat("cd", 32), At: at}.Sentence()
	if err != nil {
		t.Fatal(err)
	}
	ctx := tab(t)
	script := `(async () => {
  const cs = await import(window.BUNDLE);
  const input = ` + string(in) + `;
  const keys = cs.runKeys({algorithm: "ed25519", key_id: 7, public_key: input.key, keys: {"7": input.key}});
  const out = {};
  out.bytes = input.cases.map((c) => cs.toBase64(cs.receiptBytes(cs.readSigned(JSON.parse(c.signed)).receipt)) === c.bytes);
  out.verify = [];
  for (const c of input.cases) {
    const s = cs.readSigned(JSON.parse(c.signed));
    const key = await crypto.subtle.importKey("raw", keys.get(7), {name: "Ed25519"}, false, ["verify"]);
    out.verify.push(await crypto.subtle.verify({name: "Ed25519"}, key, s.signature, cs.receiptBytes(s.receipt)));
  }
  out.sentence = cs.approvalSentence("alice.near", "run1-1", "ab".repeat(32), "cd".repeat(32), cs.sentenceTime(Date.UTC(2030, 0, 2, 3, 4, 5)));
  try { cs.readSigned({receipt: {}, key_id: 7, signature: "", extra: 1}); out.strict = false; } catch { out.strict = true; }
  out.run = cs.preparingRun("run1-12") + "|" + cs.preparingRun("run1-01");
  return out;
})()`
	type result struct {
		Bytes    []bool `json:"bytes"`
		Verify   []bool `json:"verify"`
		Sentence string `json:"sentence"`
		Strict   bool   `json:"strict"`
		Run      string `json:"run"`
	}
	got := run(t, ctx, "the receipt check", chromedp.Evaluate[result](script, chromedp.EvalAwaitPromise))
	for i := range cases {
		if len(got.Bytes) <= i || !got.Bytes[i] || len(got.Verify) <= i || !got.Verify[i] {
			t.Fatalf("case %d: the page's receipt bytes %v, verified %v", i, got.Bytes, got.Verify)
		}
	}
	if got.Sentence != want {
		t.Fatalf("the page's approval sentence %q, want %q", got.Sentence, want)
	}
	if !got.Strict {
		t.Fatal("a signed receipt with an unknown member was read")
	}
	if got.Run != "run1|null" {
		t.Fatalf("preparingRun: %s", got.Run)
	}
}

// TestApprovalSentenceVectors: the page builds the contract's approval
// sentences byte for byte, the one naming the task's summary (SPEC §7)
// and the one without, from their parts.
func TestApprovalSentenceVectors(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(vectorFile)
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		NEP413 struct {
			Signed []struct {
				Sentence string `json:"sentence"`
				Message  string `json:"message"`
			} `json:"signed"`
		} `json:"nep413"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	type parts struct {
		Account    string `json:"account"`
		TaskID     string `json:"task_id"`
		TaskHash   string `json:"task_hash"`
		SupplyHash string `json:"supply_hash"`
		AtMs       int64  `json:"at_ms"`
		Summary    string `json:"summary"`
	}
	var in []parts
	var want []string
	withSummary := false
	for _, s := range v.NEP413.Signed {
		if s.Sentence != "approval" && s.Sentence != "approve_with_summary" {
			continue
		}
		a, err := approval.ParseApproval(s.Message)
		if err != nil {
			t.Fatalf("the vector %s: %v", s.Sentence, err)
		}
		withSummary = withSummary || a.Summary != ""
		in = append(in, parts{a.Account, a.TaskID, a.TaskHash, a.SupplyHash, a.At.UnixMilli(), a.Summary})
		want = append(want, s.Message)
	}
	if len(in) != 2 || !withSummary {
		t.Fatalf("the vectors hold %d approval sentences (one with a summary: %v), want both forms", len(in), withSummary)
	}
	b, _ := json.Marshal(in)
	ctx := tab(t)
	got := run(t, ctx, "the sentences", chromedp.Evaluate[[]string](`(async () => {
  const cs = await import(window.BUNDLE);
  return `+string(b)+`.map((p) => cs.approvalSentence(p.account, p.task_id, p.task_hash, p.supply_hash, cs.sentenceTime(p.at_ms), p.summary));
})()`, chromedp.EvalAwaitPromise))
	for i := range want {
		if i >= len(got) || got[i] != want[i] {
			t.Errorf("the page's sentence %q, the vector's %q", got, want[i])
		}
	}
}
