package countersign_test

// docs/contract.md is the contract in the repository. This test holds the
// parts of it the code states too — the signed sentences, the refusal codes,
// the limits — to the code, so that the two cannot drift apart unseen.

import (
	"crypto/ecdh"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"countersign"
	"countersign/approval"
)

func contract(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("docs/contract.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestContractMatchesTheCode(t *testing.T) {
	t.Parallel()
	doc := contract(t)

	t.Run("sentences", func(t *testing.T) {
		at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
		hash := strings.Repeat("a", 64)
		k, err := ecdh.P256().GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		device := approval.DeviceKeyPrefix + base64.RawURLEncoding.EncodeToString(k.PublicKey().Bytes())
		signIn, err := approval.SignIn{Account: "alice.near", DeviceKey: device, ValidUntil: at}.Sentence()
		if err != nil {
			t.Fatal(err)
		}
		confirm, err := approval.Confirmation{Account: "alice.near", Action: approval.ActionRemoveWebhook(), At: at}.Sentence()
		if err != nil {
			t.Fatal(err)
		}
		approve, err := approval.Approval{Account: "alice.near", TaskID: "r1-1", TaskHash: hash, SupplyHash: hash, At: at}.Sentence()
		if err != nil {
			t.Fatal(err)
		}
		fill := strings.NewReplacer("{account}", "alice.near", "{device_pubkey}", device, "{time}", "2026-12-01T12:00:00Z",
			"{action}", "remove the webhook", "{id}", "r1-1", "{task_hash}", hash, "{supply_hash}", hash)
		for _, want := range []string{signIn, confirm, approve} {
			found := false
			for _, line := range strings.Split(doc, "\n") {
				if strings.Contains(line, "{account}") && fill.Replace(line) == want {
					found = true
				}
			}
			if !found {
				t.Errorf("the contract has no sentence that reads %q", want)
			}
		}
		// The batch sentence: two tasks, their summaries in the
		// place of "{summary 1}; {summary 2}; …", the lines' hash in the
		// place of its description.
		lines := []approval.BatchLine{{ID: "r1-1", TaskHash: hash, SupplyHash: hash}, {ID: "r1-2", TaskHash: hash, SupplyHash: hash}}
		batch, err := approval.BatchApproval{Account: "alice.near", Project: "bank", Tasks: lines, Summaries: []string{"pay $1", "pay $2"}, At: at}.Sentence()
		if err != nil {
			t.Fatal(err)
		}
		fillBatch := strings.NewReplacer("{account}", "alice.near", "{n}", "2", "{project}", "bank", "{summary 1}; {summary 2}; …", "pay $1; pay $2",
			`{sha256 hex of the lines "{id} {task_hash} {supply_hash}\n" in the order given}`, approval.LinesHash(lines), "{time}", "2026-12-01T12:00:00Z")
		found := false
		for _, line := range strings.Split(doc, "\n") {
			if strings.Contains(line, "{n} tasks of") && fillBatch.Replace(line) == batch {
				found = true
			}
		}
		if !found {
			t.Errorf("the contract has no batch sentence that reads %q", batch)
		}
		actions := map[string]approval.Action{
			"withdraw the device {id}":                            approval.ActionWithdrawDevice("d1"),
			"name the webhook {sha256hex(url)}":                   approval.ActionNameWebhook("https://x.example/hook"),
			"remove the webhook":                                  approval.ActionRemoveWebhook(),
			"set the project {name} to {sha256hex(project text)}": approval.ActionSetProject("payments", "{}"),
			"remove the project {name}":                           approval.ActionRemoveProject("payments"),
		}
		for shown, a := range actions {
			if !strings.Contains(doc, "`"+shown+"`") {
				t.Errorf("the contract does not name the action %q", shown)
			}
			text, err := a.Text()
			if err != nil {
				t.Fatal(err)
			}
			prefix := strings.SplitN(shown, " {", 2)[0]
			if !strings.HasPrefix(text, prefix) {
				t.Errorf("the action %q reads %q in the code", shown, text)
			}
		}
	})

	t.Run("refusal codes", func(t *testing.T) {
		var inDoc []string
		section := doc[strings.Index(doc, "## 4. Refusals"):strings.Index(doc, "## 5.")]
		for _, m := range regexp.MustCompile("`([a-z_]+)`").FindAllStringSubmatch(section, -1) {
			if m[1] != "false" && m[1] != "terminal" && m[1] != "state" && !slices.Contains(inDoc, m[1]) {
				inDoc = append(inDoc, m[1])
			}
		}
		codes := countersign.Codes()
		for _, c := range inDoc {
			if !slices.Contains(codes, countersign.Code(c)) {
				t.Errorf("the contract's refusal %q is no code of the service", c)
			}
		}
		for _, c := range codes {
			if !slices.Contains(inDoc, string(c)) {
				t.Errorf("the service's code %q is not in the contract's §4", c)
			}
		}
	})

	t.Run("limits", func(t *testing.T) {
		section := doc[strings.Index(doc, "## 12. Limits"):strings.Index(doc, "## 13.")]
		for _, want := range []string{
			fmt.Sprintf("| title | %d characters |", countersign.MaxTitleChars),
			fmt.Sprintf("| fields | %d; label %d characters |", countersign.MaxFields, countersign.MaxLabelChars),
			fmt.Sprintf("`long_text` %s chars", group(countersign.MaxLongTextChars)),
			fmt.Sprintf("`text` %d; others %d; `list` 1–%d values", countersign.MaxTextChars, countersign.MaxValueChars, countersign.MaxListValues),
			fmt.Sprintf("more than %d combining marks", countersign.MaxCombiningRun),
			fmt.Sprintf("≤ %d per task, ≤ 6 MiB (%s bytes) together; name ≤ %d chars", countersign.MaxFiles, group(countersign.MaxFilesBytes), countersign.MaxFileNameChars),
			fmt.Sprintf("`type/subtype` ≤ %d chars", countersign.MaxContentTypeChars),
			fmt.Sprintf("sealed state | %d KiB; envelope %d KiB; policy %d KiB; supplied/note/reason %d KiB each; result %d KiB",
				countersign.MaxSealedStateBytes>>10, countersign.MaxEnvelopeBytes>>10, countersign.MaxPolicyBytes>>10,
				countersign.MaxSuppliedBytes>>10, countersign.MaxResultBytes>>10),
			fmt.Sprintf("open tasks per owner | %d; per preparer per owner (open + approved) %d; tasks opened per run %d; waiting content per owner %d MiB",
				countersign.MaxOpenTasksPerOwner, countersign.MaxActiveTasksPerPreparer, countersign.MaxTasksPerRun, countersign.MaxWaitingContentBytes>>20),
			fmt.Sprintf("| devices per account | %d;", countersign.MaxDevicesPerAccount),
		} {
			if !strings.Contains(section, want) {
				t.Errorf("the contract's §12 does not say %q", want)
			}
		}
		if countersign.MaxNoteBytes != countersign.MaxSuppliedBytes || countersign.MaxReasonBytes != countersign.MaxSuppliedBytes {
			t.Error("supplied, note and reason have one limit in the contract, several in the code")
		}
	})
}

// group writes n with thousands separators, as the contract does.
func group(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
