package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"countersign"
	"countersign/connectors"
	"countersign/connectors/connectortest"
	"countersign/connectors/github/githubtest"
	"countersign/connectors/gmail/gmailtest"
	"countersign/connectors/mercury/mercurytest"
	"countersign/store"
)

// startSandbox runs `countersign sandbox NAME` in process and returns its
// base URL and what it printed.
func startSandbox(t *testing.T, name string) (string, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb syncBuffer
	a := &app{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	done := make(chan int, 1)
	go func() { done <- a.main(ctx, []string{"sandbox", name, "--listen", "127.0.0.1:0"}) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("the sandbox did not stop")
		}
	})
	re := regexp.MustCompile(`listening on (http://[0-9.:]+)\n`)
	if !errb.await(func(s string) bool { return re.MatchString(s) && strings.Contains(s, "credentials") }, 10*time.Second) {
		t.Fatalf("the sandbox did not start: %s", errb.String())
	}
	return re.FindStringSubmatch(errb.String())[1], errb.String()
}

func get(t *testing.T, url, token string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func TestSandboxMercury(t *testing.T) {
	t.Parallel()
	base, said := startSandbox(t, "mercury")
	if !strings.Contains(said, `"token":"`+mercurytest.Token+`"`) || !strings.Contains(said, `"base_url":"`+base+`/api/v1"`) {
		t.Fatalf("the sandbox said: %s", said)
	}
	code, body := get(t, base+"/api/v1/accounts", mercurytest.Token)
	if code != 200 || !strings.Contains(string(body), mercurytest.CheckingID) {
		t.Fatalf("%d %s", code, body)
	}
	if code, _ := get(t, base+"/api/v1/accounts", "wrong"); code != 401 {
		t.Fatalf("a wrong token: %d", code)
	}
}

func TestSandboxGmail(t *testing.T) {
	t.Parallel()
	base, said := startSandbox(t, "gmail")
	if !strings.Contains(said, gmailtest.RefreshToken) {
		t.Fatalf("the sandbox said: %s", said)
	}
	resp, err := http.PostForm(base+"/token", map[string][]string{"grant_type": {"refresh_token"}, "client_id": {gmailtest.ClientID},
		"client_secret": {gmailtest.ClientSecret}, "refresh_token": {gmailtest.RefreshToken}})
	if err != nil {
		t.Fatal(err)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&tok)
	resp.Body.Close()
	code, body := get(t, base+"/gmail/v1/users/me/messages", tok.AccessToken)
	if code != 200 || !strings.Contains(string(body), "18c0000000000001") {
		t.Fatalf("%d %s", code, body)
	}
}

// serve --dev runs Mercury and Gmail against its own fakes: a project
// without credentials pays and sends there.
func TestServeDevSandboxConnectors(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	s := startServe(t, map[string]string{"COUNTERSIGN_DATA_DIR": dir}, "--dev")
	key := regexp.MustCompile(`\(shown once\): (ak_[A-Za-z0-9_-]+)`).FindStringSubmatch(s.log.String())
	if key == nil || !strings.Contains(s.log.String(), "dev: sandbox Mercury at http://127.0.0.1:") {
		t.Fatalf("serve --dev said: %s", s.log.String())
	}
	now := time.Now().UTC()
	err := s.db.Tx(context.Background(), func(tx store.Tx) error {
		for _, p := range []struct{ name, conn, policy string }{{"bank", "mercury", `{"max_spend_usd_month": 1000}`}, {"mail", "gmail", `{}`}} {
			if err := tx.PutProject(context.Background(), store.Project{Owner: "alice.near", Name: p.name, UUID: countersign.NewProjectUUID(), Connector: p.conn,
				Policy: []byte(p.policy), Agents: []string{DemoAgent}, CreatedAt: now, UpdatedAt: now}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	call := func(project, body string) map[string]any {
		req, _ := http.NewRequest(http.MethodPost, s.base+"/call/alice.near/"+project, bytes.NewReader([]byte(body)))
		req.Header.Set("Authorization", "Bearer "+key[1])
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&m)
		return m
	}
	out := call("bank", `{"operation": "pay_invoice", "recipient_id": "`+mercurytest.AcmeID+`", "amount_usd": 120, "method": "ach"}`)
	if out["sent_via"] != "direct" || out["amount_usd"] != 120.0 {
		t.Fatalf("pay_invoice: %v", out)
	}
	out = call("mail", `{"operation": "send", "to": ["dana@example.com"], "subject": "Hi", "body": "Hello"}`)
	if out["sent"] != true {
		t.Fatalf("send: %v", out)
	}
}

// The connectors reach only public hosts over https, but for serve --dev,
// whose wiring alone lets them reach loopback over http (its fakes), and
// never link-local addresses (cloud metadata).
func TestConnectorEgressWiring(t *testing.T) {
	t.Parallel()
	gm := gmailtest.New().Start()
	t.Cleanup(gm.Close)
	me := mercurytest.New().Start()
	t.Cleanup(me.Close)
	gh := githubtest.New("ghp_wiring", "octocat").Start()
	t.Cleanup(gh.Close)
	gh.Seed()
	creds := map[string]func(base string) string{
		"github": func(base string) string { return `{"token": "ghp_wiring", "base_url": "` + base + `"}` },
		"gmail":  func(base string) string { return gmailCredentials(base) },
		"mercury": func(base string) string {
			return `{"token": "` + mercurytest.Token + `", "base_url": "` + base + `/api/v1"}`
		},
	}
	bases := map[string]string{"github": gh.URL, "gmail": gm.URL(), "mercury": strings.TrimSuffix(me.URL(), "/api/v1")}
	reads := map[string]string{"github": `{"operation": "repo_get", "repo": "octocat/hello"}`, "gmail": `{"operation": "messages_list"}`, "mercury": `{"operation": "accounts"}`}

	prod, err := catalogue()
	if err != nil {
		t.Fatal(err)
	}
	dev, _, stop, err := devCatalogue(anyPorts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	for name, read := range reads {
		for _, tt := range []struct {
			cat  connectors.Catalogue
			base string
			want string // "" for an answer
		}{
			{prod, bases[name], "must use https"},
			{prod, strings.Replace(bases[name], "http:", "https:", 1), "must name a public host"},
			{dev, bases[name], ""},
			{dev, "http://169.254.169.254", "must name a public host"},
		} {
			h := connectortest.New(t, tt.cat[name])
			h.Credentials = []byte(creds[name](tt.base))
			_, err := h.Call(context.Background(), read)
			got := ""
			if err != nil {
				got = connectortest.Text(err)
			}
			if tt.want == "" && err != nil || tt.want != "" && (!strings.HasPrefix(got, "invalid_request: ") || !strings.Contains(got, tt.want)) {
				t.Errorf("%s at %s: %q, want %q", name, tt.base, got, tt.want)
			}
		}
	}
}

// TestServeDevSandboxPorts: serve --dev puts its fakes where the flags say
// and prints, for each, its address and the credentials a project needs.
func TestServeDevSandboxPorts(t *testing.T) {
	t.Parallel()
	free := func() string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		return ln.Addr().String()
	}
	gh, gm, me := free(), free(), free()
	srv := startServe(t, map[string]string{"COUNTERSIGN_DATA_DIR": filepath.Join(t.TempDir(), "data")},
		"--dev", "--sandbox-github", gh, "--sandbox-gmail", gm, "--sandbox-mercury", me)
	res := srv.stop()
	for _, want := range []string{
		"a sandbox GitHub at http://" + gh,
		"sandbox Gmail at http://" + gm + " ",
		`"base_url":"http://` + gm + `"`,
		"sandbox Mercury at http://" + me + "/api/v1 ",
		`"token":"` + mercurytest.Token + `"`,
	} {
		if !strings.Contains(res.stderr, want) {
			t.Errorf("serve --dev does not say %q:\n%s", want, res.stderr)
		}
	}
	// A fake's address that cannot be listened on stops serve, saying which.
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	r := runIn(t, "", "serve", "--dev", "--listen", "127.0.0.1:0", "--data-dir", filepath.Join(t.TempDir(), "d2"), "--sandbox-gmail", busy.Addr().String())
	if r.code == 0 || !strings.Contains(r.stderr, "cannot listen on "+busy.Addr().String()+" for a sandbox fake") {
		t.Errorf("a busy sandbox port: %+v", r)
	}
}
