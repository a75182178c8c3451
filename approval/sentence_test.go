package approval_test

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"countersign/approval"
)

const (
	deviceKey  = "p256:BGD-1LolWp0xyWHrdMY1bWjASbiSO2H6bOZpYi5g8p-2eQP-EAi4vJmkGunpVii8ZPLxsgwtfp9Rd6PClNRGIpk"
	hashA      = "0556596a4d022a868cfa6aaa320e9473993dffeec65b84b4943988c18efb76a1"
	hashB      = "93121736c33115cb57757d3d5c09b430c4a03d2c3fa06dbbda48a466620b5799"
	signInText = "Sign in to Countersign as alice.near. Device key: " + deviceKey + ". Valid until 2026-12-29T12:00:00Z."
)

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func TestSignInSentence(t *testing.T) {
	t.Parallel()
	s := approval.SignIn{Account: "alice.near", DeviceKey: deviceKey, ValidUntil: time.Date(2026, 12, 29, 12, 0, 0, 0, time.UTC)}
	got, err := s.Sentence()
	if err != nil {
		t.Fatal(err)
	}
	if got != signInText {
		t.Fatalf("got %q", got)
	}
	p, err := approval.ParseSignIn(got)
	if err != nil {
		t.Fatal(err)
	}
	if p.Account != s.Account || p.DeviceKey != s.DeviceKey || !p.ValidUntil.Equal(s.ValidUntil) {
		t.Fatalf("parsed %+v", p)
	}
	// A time in another zone renders as UTC.
	s.ValidUntil = s.ValidUntil.In(time.FixedZone("X", 3600))
	if again, _ := s.Sentence(); again != signInText {
		t.Fatalf("zone changed the sentence: %q", again)
	}
}

func TestConfirmationSentences(t *testing.T) {
	t.Parallel()
	cases := []struct {
		action approval.Action
		words  string
	}{
		{approval.ActionWithdrawDevice("dev_01HZX-9.a"), "withdraw the device dev_01HZX-9.a"},
		{approval.ActionNameWebhook("https://example.com/hook"), "name the webhook " + sha256hex("https://example.com/hook")},
		{approval.ActionRemoveWebhook(), "remove the webhook"},
		{approval.ActionSetProject("github", `{"connector":"github"}`), "set the project github to " + sha256hex(`{"connector":"github"}`)},
		{approval.ActionRemoveProject("mercury.main"), "remove the project mercury.main"},
	}
	for _, c := range cases {
		t.Run(c.words, func(t *testing.T) {
			conf := approval.Confirmation{Account: "bob.testnet", Action: c.action, At: t0}
			got, err := conf.Sentence()
			if err != nil {
				t.Fatal(err)
			}
			want := "Confirm in Countersign as bob.testnet: " + c.words + ". At 2026-11-29T12:00:00Z."
			if got != want {
				t.Fatalf("got  %q\nwant %q", got, want)
			}
			p, err := approval.ParseConfirmation(got)
			if err != nil {
				t.Fatal(err)
			}
			if p.Account != conf.Account || p.Action != c.action || !p.At.Equal(t0) {
				t.Fatalf("parsed %+v", p)
			}
		})
	}
	// The contract vector's action.
	a, err := approval.ParseAction("name the webhook fff209dd34a654f9a00ddcf70bca85b25aad53bee1e450668c0be0e0f755dd62")
	if err != nil || a.Kind != approval.NameWebhook {
		t.Fatalf("ParseAction: %+v %v", a, err)
	}
}

func TestApprovalSentence(t *testing.T) {
	t.Parallel()
	a := approval.Approval{Account: "alice.near", TaskID: "r7k2m9q4x1z8c3v6b5n0p2w4s6-1", TaskHash: hashA, SupplyHash: hashB, At: t0}
	got, err := a.Sentence()
	if err != nil {
		t.Fatal(err)
	}
	want := "Approve in Countersign as alice.near: task r7k2m9q4x1z8c3v6b5n0p2w4s6-1 with hash " + hashA + " and supply " + hashB + ". At 2026-11-29T12:00:00Z."
	if got != want {
		t.Fatalf("got %q", got)
	}
	p, err := approval.ParseApproval(got)
	if err != nil {
		t.Fatal(err)
	}
	if p != a {
		t.Fatalf("parsed %+v", p)
	}
}

// A summary is the owner's words for the write and may read like the
// sentence's own parts: it is read back whole, whatever it begins with.
func TestApprovalSentenceSummaryRoundTrip(t *testing.T) {
	t.Parallel()
	for _, summary := range []string{
		"Pay $120.00 by ACH to Acme Supplies",
		"task list: close the three stale issues",
		"Task 7 with hash rotation",
		"task r7k2m9q4x1z8c3v6b5n0p2w4s6-1 with hash " + hashA,
	} {
		a := approval.Approval{Account: "alice.near", Summary: summary, TaskID: "r7k2m9q4x1z8c3v6b5n0p2w4s6-1", TaskHash: hashA, SupplyHash: hashB, At: t0}
		s, err := a.Sentence()
		if err != nil {
			t.Fatalf("%q: %v", summary, err)
		}
		p, err := approval.ParseApproval(s)
		if err != nil || p != a {
			t.Fatalf("%q read back as %+v, %v", summary, p, err)
		}
	}
}

func TestSentenceBuildRefusals(t *testing.T) {
	t.Parallel()
	good := approval.SignIn{Account: "alice.near", DeviceKey: deviceKey, ValidUntil: t0}
	point := make([]byte, 65)
	point[0] = 4
	signIns := map[string]approval.SignIn{
		"bad account":          {Account: "Alice", DeviceKey: deviceKey, ValidUntil: t0},
		"device without p256":  {Account: "alice.near", DeviceKey: strings.TrimPrefix(deviceKey, "p256:"), ValidUntil: t0},
		"device padded":        {Account: "alice.near", DeviceKey: "p256:" + base64.URLEncoding.EncodeToString(point), ValidUntil: t0},
		"device std alphabet":  {Account: "alice.near", DeviceKey: "p256:" + strings.ReplaceAll(strings.ReplaceAll(deviceKey[5:], "-", "+"), "_", "/"), ValidUntil: t0},
		"device 64 bytes":      {Account: "alice.near", DeviceKey: "p256:" + base64.RawURLEncoding.EncodeToString(point[:64]), ValidUntil: t0},
		"device compressed":    {Account: "alice.near", DeviceKey: "p256:" + base64.RawURLEncoding.EncodeToString(append([]byte{2}, point[1:]...)), ValidUntil: t0},
		"fractional second":    {Account: "alice.near", DeviceKey: deviceKey, ValidUntil: t0.Add(time.Millisecond)},
		"year 10000":           {Account: "alice.near", DeviceKey: deviceKey, ValidUntil: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
		"year 1969":            {Account: "alice.near", DeviceKey: deviceKey, ValidUntil: time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC)},
		"zero time":            {Account: "alice.near", DeviceKey: deviceKey},
		"device upper prefix":  {Account: "alice.near", DeviceKey: "P256:" + deviceKey[5:], ValidUntil: t0},
		"device trailing char": {Account: "alice.near", DeviceKey: deviceKey + "A", ValidUntil: t0},
	}
	if _, err := good.Sentence(); err != nil {
		t.Fatal(err)
	}
	for name, s := range signIns {
		if _, err := s.Sentence(); approval.KindOf(err) != approval.Malformed {
			t.Errorf("sign-in %s: want a malformed refusal, got %v", name, err)
		}
	}
	actions := map[string]approval.Action{
		"no kind":                 {},
		"unknown kind":            {Kind: 99},
		"device id empty":         approval.ActionWithdrawDevice(""),
		"device id with space":    approval.ActionWithdrawDevice("a b"),
		"device id with slash":    approval.ActionWithdrawDevice("a/b"),
		"device id too long":      approval.ActionWithdrawDevice(strings.Repeat("a", 129)),
		"device id non-ascii":     approval.ActionWithdrawDevice("dévice"),
		"device with hash":        {Kind: approval.WithdrawDevice, Subject: "d", Hash: hashA},
		"webhook bad hash":        {Kind: approval.NameWebhook, Hash: strings.ToUpper(hashA)},
		"webhook short hash":      {Kind: approval.NameWebhook, Hash: hashA[:63]},
		"webhook with subject":    {Kind: approval.NameWebhook, Subject: "x", Hash: hashA},
		"remove webhook + extra":  {Kind: approval.RemoveWebhook, Subject: "x"},
		"remove webhook + hash":   {Kind: approval.RemoveWebhook, Hash: hashA},
		"project empty name":      approval.ActionSetProject("", "{}"),
		"project name with space": approval.ActionSetProject("my project", "{}"),
		"project no hash":         {Kind: approval.SetProject, Subject: "p"},
		"remove project empty":    approval.ActionRemoveProject(""),
		"remove project + hash":   {Kind: approval.RemoveProject, Subject: "p", Hash: hashA},
	}
	for name, a := range actions {
		c := approval.Confirmation{Account: "alice.near", Action: a, At: t0}
		if _, err := c.Sentence(); approval.KindOf(err) != approval.Malformed {
			t.Errorf("confirmation %s: want a malformed refusal, got %v", name, err)
		}
	}
	if _, err := (approval.Confirmation{Account: "a", Action: approval.ActionRemoveWebhook(), At: t0}).Sentence(); approval.KindOf(err) != approval.Malformed {
		t.Error("confirmation with a one-letter account built")
	}
	approvals := map[string]approval.Approval{
		"task id upper":      {Account: "alice.near", TaskID: "Task-1", TaskHash: hashA, SupplyHash: hashB, At: t0},
		"task id empty":      {Account: "alice.near", TaskID: "", TaskHash: hashA, SupplyHash: hashB, At: t0},
		"task id too long":   {Account: "alice.near", TaskID: strings.Repeat("a", 81), TaskHash: hashA, SupplyHash: hashB, At: t0},
		"task id underscore": {Account: "alice.near", TaskID: "a_b", TaskHash: hashA, SupplyHash: hashB, At: t0},
		"task hash short":    {Account: "alice.near", TaskID: "t-1", TaskHash: hashA[1:], SupplyHash: hashB, At: t0},
		"supply hash upper":  {Account: "alice.near", TaskID: "t-1", TaskHash: hashA, SupplyHash: strings.ToUpper(hashB), At: t0},
		"bad account":        {Account: "alice..near", TaskID: "t-1", TaskHash: hashA, SupplyHash: hashB, At: t0},
		"fractional second":  {Account: "alice.near", TaskID: "t-1", TaskHash: hashA, SupplyHash: hashB, At: t0.Add(time.Nanosecond)},
	}
	for name, a := range approvals {
		if _, err := a.Sentence(); approval.KindOf(err) != approval.Malformed {
			t.Errorf("approval %s: want a malformed refusal, got %v", name, err)
		}
	}
}

func TestSentenceParseRefusals(t *testing.T) {
	t.Parallel()
	conf := "Confirm in Countersign as alice.near: remove the webhook. At 2026-11-29T12:00:00Z."
	appr := "Approve in Countersign as alice.near: task t-1 with hash " + hashA + " and supply " + hashB + ". At 2026-11-29T12:00:00Z."
	for _, good := range []string{conf, appr, signInText} {
		if _, err := parseAny(good); err != nil {
			t.Fatalf("%q: %v", good, err)
		}
	}
	cases := map[string]string{
		"empty":                      "",
		"sign-in double space":       strings.Replace(signInText, "as alice", "as  alice", 1),
		"sign-in lower case":         strings.Replace(signInText, "Sign in", "sign in", 1),
		"sign-in no final dot":       strings.TrimSuffix(signInText, "."),
		"sign-in trailing newline":   signInText + "\n",
		"sign-in leading space":      " " + signInText,
		"sign-in time no Z":          strings.Replace(signInText, "12:00:00Z", "12:00:00", 1),
		"sign-in time offset":        strings.Replace(signInText, "12:00:00Z", "12:00:00+00:00", 1),
		"sign-in time fraction":      strings.Replace(signInText, "12:00:00Z", "12:00:00.5Z", 1),
		"sign-in time 24h":           strings.Replace(signInText, "12:00:00Z", "24:00:00Z", 1),
		"sign-in Feb 30":             strings.Replace(signInText, "2026-12-29", "2026-02-30", 1),
		"sign-in short month":        strings.Replace(signInText, "2026-12-29", "2026-1-29", 1),
		"sign-in lower t":            strings.Replace(signInText, "29T12", "29t12", 1),
		"sign-in bad device":         strings.Replace(signInText, "p256:BGD", "p256:AGD", 1),
		"sign-in bad account":        strings.Replace(signInText, "alice.near", "Alice.near", 1),
		"sign-in device twice":       strings.Replace(signInText, ". Valid", ". Device key: "+deviceKey+". Valid", 1),
		"sign-in CRLF":               strings.Replace(signInText, ". Device", ".\r\nDevice", 1),
		"confirm unknown action":     strings.Replace(conf, "remove the webhook", "delete the webhook", 1),
		"confirm double space":       strings.Replace(conf, "remove the", "remove  the", 1),
		"confirm no action":          "Confirm in Countersign as alice.near: . At 2026-11-29T12:00:00Z.",
		"confirm no account colon":   strings.Replace(conf, "alice.near:", "alice.near", 1),
		"confirm space before colon": strings.Replace(conf, "alice.near:", "alice.near :", 1),
		"confirm bad time":           strings.Replace(conf, "2026-11-29T12:00:00Z", "2026-11-29 12:00:00Z", 1),
		"confirm hash upper":         "Confirm in Countersign as alice.near: name the webhook " + strings.ToUpper(hashA) + ". At 2026-11-29T12:00:00Z.",
		"confirm project no to":      "Confirm in Countersign as alice.near: set the project p " + hashA + ". At 2026-11-29T12:00:00Z.",
		"confirm device with space":  "Confirm in Countersign as alice.near: withdraw the device a b. At 2026-11-29T12:00:00Z.",
		"confirm trailing text":      conf + " ok",
		"approve missing supply":     strings.Replace(appr, " and supply "+hashB, "", 1),
		"approve bad task id":        strings.Replace(appr, "task t-1", "task T-1", 1),
		"approve short hash":         strings.Replace(appr, hashA, hashA[:60], 1),
		"approve swapped order":      strings.Replace(appr, "with hash "+hashA+" and supply "+hashB, "and supply "+hashB+" with hash "+hashA, 1),
		"approve tab":                strings.Replace(appr, "task t-1", "task\tt-1", 1),
		"approve nbsp":               strings.Replace(appr, "task t-1", "task\u00a0t-1", 1),
		"approve year 0001":          strings.Replace(appr, "2026-11-29", "0001-11-29", 1),
		"other product":              strings.Replace(conf, "Countersign", "Countersigned", 1),
	}
	for name, text := range cases {
		t.Run(name, func(t *testing.T) {
			for _, parse := range []func(string) error{
				func(s string) error { _, err := approval.ParseSignIn(s); return err },
				func(s string) error { _, err := approval.ParseConfirmation(s); return err },
				func(s string) error { _, err := approval.ParseApproval(s); return err },
			} {
				if err := parse(text); approval.KindOf(err) != approval.Malformed {
					t.Fatalf("want a malformed refusal, got %v", err)
				}
			}
		})
	}
}

func parseAny(s string) (string, error) {
	if x, err := approval.ParseSignIn(s); err == nil {
		return x.Sentence()
	}
	if x, err := approval.ParseConfirmation(s); err == nil {
		return x.Sentence()
	}
	x, err := approval.ParseApproval(s)
	if err != nil {
		return "", err
	}
	return x.Sentence()
}

func TestTimeFormat(t *testing.T) {
	t.Parallel()
	got, err := approval.FormatTime(t0)
	if err != nil || got != "2026-11-29T12:00:00Z" {
		t.Fatalf("%q %v", got, err)
	}
	back, err := approval.ParseTime(got)
	if err != nil || !back.Equal(t0) || back.Location() != time.UTC {
		t.Fatalf("%v %v", back, err)
	}
	for _, bad := range []string{"", "2026-11-29T12:00:00", "2026-11-29T12:00:00z", "2026-11-29T12:00:60Z", "2026-13-01T00:00:00Z", "1969-12-31T23:59:59Z", "+2026-11-29T12:00:00Z"} {
		if _, err := approval.ParseTime(bad); approval.KindOf(err) != approval.Malformed {
			t.Errorf("%q: want a malformed refusal, got %v", bad, err)
		}
	}
	if err := approval.ValidateDeviceKey(deviceKey); err != nil {
		t.Fatal(err)
	}
}
