package httpapi_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"countersign/approval"
	"countersign/client"
	"countersign/device"
	"countersign/httpapi"
	"countersign/servicetest"
	"countersign/store/storetest"
)

// countingAgents counts the agent keys looked up in the store.
type countingAgents struct {
	httpapi.Agents
	lookups atomic.Int64
}

func (c *countingAgents) Authenticate(ctx context.Context, key string) (context.Context, error) {
	c.lookups.Add(1)
	return c.Agents.Authenticate(ctx, key)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// TestRandomBearersLeaveNothingBehind: 100,000 calls from one address, each
// with a bearer never seen before (half of them shaped like agent keys),
// leave the heap within a few MiB of where it began; past the address's
// budget of failed attempts they are answered 429 without a look-up.
//
// Not parallel: it measures the heap, which other tests running at the same
// time would move.
func TestRandomBearersLeaveNothingBehind(t *testing.T) {
	w := servicetest.New(t, storetest.SQLite(t))
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	const budget = 10
	agents := &countingAgents{Agents: w.Enclave.Calls}
	srv := httpapi.New(httpapi.Options{Version: "test", Store: w.DB, Logger: quiet, Agents: agents,
		Limits: httpapi.Limits{FailedAuthPerMinute: budget}})
	path := "/call/" + w.Owner.Account + "/ledger"
	body := `{"operation":"tasks"}`
	codes := map[int]int{}
	call := func(bearer string) {
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body)) // from 192.0.2.1
		req.Header.Set("Authorization", "Bearer "+bearer)
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		codes[rec.Code]++
	}
	bearer := func(i int) string {
		if i%2 == 0 {
			return "ak_" + randomHex(24)
		}
		return randomHex(24)
	}
	start := time.Now()
	for i := 0; i < 2*budget; i++ { // the address's budget, and the answers' metrics
		call(bearer(i))
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	const n = 100_000
	for i := 0; i < n; i++ {
		call(bearer(i))
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(srv) // what it keeps is what is measured
	elapsed := time.Since(start)

	grew := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("heap %d → %d bytes (%+d) after %d calls in %v; answers %v; %d look-ups",
		before.HeapAlloc, after.HeapAlloc, grew, n, elapsed, codes, agents.lookups.Load())
	if grew > 4<<20 {
		t.Errorf("the heap grew by %d bytes over %d calls with random bearers", grew, n)
	}
	// The budget refills at its rate while the test runs.
	allowed := budget + int(elapsed.Minutes()*budget) + 1
	if codes[http.StatusUnauthorized] > allowed || codes[http.StatusTooManyRequests] < n+2*budget-allowed ||
		codes[http.StatusUnauthorized]+codes[http.StatusTooManyRequests] != n+2*budget {
		t.Errorf("answers %v: want at most %d 401s, every other call 429", codes, allowed)
	}
	if l := agents.lookups.Load(); l > int64(allowed) {
		t.Errorf("%d keys looked up; the budget allows %d", l, allowed)
	}
}

// TestFailedCredentialsLimitedPerAddress: calls without an agent key that
// authenticates use up their address's budget (an IPv6 address counts as
// its /64) and are then 429 with Retry-After; owners' requests without a
// session spend none of it and stay 401; another address is not held up,
// and credentials that authenticated lately are still served from the
// exhausted address.
func TestFailedCredentialsLimitedPerAddress(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.SQLite(t))
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	const budget = 5
	srv := httpapi.New(httpapi.Options{Version: "test", Store: w.DB, Logger: quiet, Agents: w.Enclave.Calls, Inbox: w.Inbox,
		Limits: httpapi.Limits{FailedAuthPerMinute: budget}})
	type answer struct {
		code  int
		retry string
		body  map[string]any
	}
	do := func(addr, method, path, auth string) answer {
		var body io.Reader
		if method == http.MethodPost {
			body = strings.NewReader(`{"operation":"tasks"}`)
		}
		req := httptest.NewRequest(method, path, body)
		req.RemoteAddr = addr
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		var out map[string]any
		_ = json.Unmarshal(rec.Body.Bytes(), &out)
		return answer{rec.Code, rec.Header().Get("Retry-After"), out}
	}
	call := "/call/" + w.Owner.Account + "/ledger"
	const bad, good, v6a, v6b, v6other = "192.0.2.7:1000", "192.0.2.8:1000", "[2001:db8::1]:1", "[2001:db8::2]:2", "[2001:db8:0:1::1]:1"
	// Known good before the flood.
	if a := do(bad, http.MethodPost, call, "Bearer "+w.AgentKey); a.code != 200 {
		t.Fatalf("the agent's call: %+v", a)
	}
	if a := do(bad, http.MethodGet, "/inbox/tasks", "Bearer "+w.Owner.Client.Session); a.code != 200 {
		t.Fatalf("the owner's list: %+v", a)
	}
	attempts := []struct{ method, path, auth string }{
		{http.MethodPost, call, ""},
		{http.MethodPost, call, "Bearer ak_" + randomHex(20)},
		{http.MethodPost, call, "Bearer " + randomHex(20)},
		{http.MethodPost, call, "Basic eA=="},
	}
	// Owners' bad session tokens spend nothing of it: they are refused by
	// their tag before any look-up.
	owners := []struct{ method, path, auth string }{
		{http.MethodGet, "/inbox/tasks", "Bearer os_" + randomHex(20)},
		{http.MethodGet, "/inbox/tasks", ""},
		{http.MethodDelete, "/inbox/session", "Basic eA=="},
	}
	var last answer
	for i := 0; i < 3*budget; i++ {
		a := owners[i%len(owners)]
		if last = do(bad, a.method, a.path, a.auth); last.code != http.StatusUnauthorized {
			t.Fatalf("an owner's failed attempt %d: %+v", i+1, last)
		}
	}
	for i := 0; i < budget; i++ {
		a := attempts[i%len(attempts)]
		if last = do(bad, a.method, a.path, a.auth); last.code != http.StatusUnauthorized {
			t.Fatalf("failed attempt %d within the budget: %+v", i+1, last)
		}
	}
	for _, a := range attempts {
		last = do(bad, a.method, a.path, a.auth)
		if last.code != http.StatusTooManyRequests || last.retry == "" {
			t.Fatalf("%s %s past the budget: %+v", a.method, a.path, last)
		}
	}
	if e, _ := last.body["error"].(string); !strings.HasPrefix(e, "rate_limited:") {
		t.Fatalf("the agent's refusal past the budget: %+v", last)
	}
	for _, a := range owners {
		if last = do(bad, a.method, a.path, a.auth); last.code != http.StatusUnauthorized {
			t.Fatalf("an owner's bad token from the exhausted address: %+v", last)
		}
	}
	// Credentials that authenticated lately are looked up still.
	if a := do(bad, http.MethodPost, call, "Bearer "+w.AgentKey); a.code != 200 {
		t.Fatalf("a good key from the exhausted address: %+v", a)
	}
	if a := do(bad, http.MethodGet, "/inbox/tasks", "Bearer "+w.Owner.Client.Session); a.code != 200 {
		t.Fatalf("a good session from the exhausted address: %+v", a)
	}
	// Another address has its own budget.
	if a := do(good, http.MethodPost, call, "Bearer ak_"+randomHex(20)); a.code != http.StatusUnauthorized {
		t.Fatalf("another address was held up: %+v", a)
	}
	// One IPv6 /64 is one address.
	for i := 0; i < budget; i++ {
		do([]string{v6a, v6b}[i%2], http.MethodPost, call, "Bearer ak_"+randomHex(20))
	}
	if a := do(v6b, http.MethodPost, call, "Bearer ak_"+randomHex(20)); a.code != http.StatusTooManyRequests {
		t.Fatalf("two addresses in one /64 are counted apart: %+v", a)
	}
	if a := do(v6other, http.MethodPost, call, "Bearer ak_"+randomHex(20)); a.code != http.StatusUnauthorized {
		t.Fatalf("another /64 was held up: %+v", a)
	}
}

// TestOddBytesAreRefused: on every route, a path segment, query value or
// header that breaks its id's rule (NUL, invalid UTF-8, too long, not in
// canonical form) is a clear 400 invalid_request, and nothing is logged as
// an error. PostgreSQL refuses NUL and invalid UTF-8, so a value that
// reached it would be a 500.
func TestOddBytesAreRefused(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.Postgres(t))
	owner := "Bearer " + w.Owner.Client.Session
	agent := "Bearer " + w.AgentKey
	call := "/call/" + w.Owner.Account + "/"
	long := func(n int) string { return strings.Repeat("a", n) }
	odd := []string{"%00", "a%00b", "%ff", "a%ff", "%C3%A9", "%0A", "%20"}
	taskIDs := append(odd, long(81), "ABC", "abc_def", "abc.def")
	deviceIDs := append(odd, long(27), long(25), strings.ToUpper(long(26)), "i"+long(25), "nosuch")
	accounts := append(odd, long(65), "Alice.near", "alice..near", "-alice.near", "a")
	projects := append(odd, long(65), "Savings", "-x", ".x")

	type req struct {
		method, path, auth string
		header             map[string]string
		body               string
	}
	var reqs []req
	for _, id := range taskIDs {
		for _, r := range []req{
			{method: "GET", path: "/inbox/tasks/" + id},
			{method: "DELETE", path: "/inbox/tasks/" + id},
			{method: "GET", path: "/inbox/tasks/" + id + "/files/0"},
			{method: "GET", path: "/inbox/tasks/" + id + "/origin"},
			{method: "GET", path: "/inbox/tasks/" + id + "/events"},
			{method: "POST", path: "/inbox/tasks/" + id + "/approve", body: "{}"},
			{method: "POST", path: "/inbox/tasks/" + id + "/reject", body: "{}"},
			{method: "POST", path: "/inbox/tasks/" + id + "/acknowledge"},
			{method: "GET", path: "/inbox/tasks?before=" + id},
		} {
			r.auth = owner
			reqs = append(reqs, r)
		}
	}
	for _, id := range deviceIDs {
		reqs = append(reqs, req{method: "DELETE", path: "/inbox/devices/" + id, auth: owner, body: "{}"})
	}
	for _, a := range accounts {
		reqs = append(reqs,
			req{method: "DELETE", path: "/inbox/tasks?preparer=" + a, auth: owner},
			req{method: "POST", path: "/call/" + a + "/ledger", auth: agent, body: `{"operation":"tasks"}`})
	}
	for _, p := range projects {
		reqs = append(reqs,
			req{method: "PUT", path: "/inbox/projects/" + p, auth: owner, body: "{}"},
			req{method: "DELETE", path: "/inbox/projects/" + p, auth: owner, body: "{}"},
			req{method: "DELETE", path: "/inbox/tasks?project=" + p, auth: owner},
			req{method: "POST", path: call + p, auth: agent, body: `{"operation":"tasks"}`})
	}
	for _, k := range []string{"\xff", "é", long(129), "a b", "a\tb"} {
		reqs = append(reqs, req{method: "POST", path: call + "ledger", auth: agent, body: `{"operation":"tasks"}`,
			header: map[string]string{"Idempotency-Key": k}})
	}
	for _, subject := range []string{`\u0000`, `a\u0000b`, `\u00ff`, `Alice.near`} {
		for _, method := range []string{"POST", "DELETE"} {
			reqs = append(reqs, req{method: method, path: "/inbox/mutes", auth: owner,
				body: `{"subject_is":"agent","subject":"` + subject + `"}`})
		}
	}
	reqs = append(reqs, req{method: "POST", path: "/inbox/session", body: `{"account_id":"\u0000"}`})

	for _, r := range reqs {
		hr, err := http.NewRequest(r.method, w.URL+r.path, strings.NewReader(r.body))
		if err != nil {
			t.Fatalf("%s %s: %v", r.method, r.path, err)
		}
		if r.auth != "" {
			hr.Header.Set("Authorization", r.auth)
		}
		for k, v := range r.header {
			hr.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(hr)
		if err != nil {
			t.Fatalf("%s %s: %v", r.method, r.path, err)
		}
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		code, _ := out["reason"].(string)
		if e, ok := out["error"].(string); ok && strings.HasPrefix(r.path, "/call/") {
			code, _, _ = strings.Cut(e, ":")
		}
		if resp.StatusCode != http.StatusBadRequest || code != "invalid_request" {
			t.Errorf("%s %s %v: %d %v, want 400 invalid_request", r.method, r.path, r.header, resp.StatusCode, out)
		}
	}
	if logs := w.Logs.String(); strings.Contains(logs, "level=ERROR") {
		t.Errorf("odd bytes were logged as errors:\n%s", logs)
	}
	// The same routes with good ids still answer.
	if _, err := w.Owner.Client.Tasks(ctx, "waiting", "", 0); err != nil {
		t.Fatal(err)
	}
	if _, err := w.AgentClient().CallRaw(ctx, w.Owner.Account, "ledger", []byte(`{"operation":"tasks"}`), nil); err != nil {
		t.Fatal(err)
	}
}

// TestFreshSessionIsNeverLockedOut: SPEC §6. From one address
// (as behind a shared proxy), well over the budget of bad session tokens —
// random ones, ones shaped like tokens of another deployment, a signed-out
// device's, an expired one's, none at all — are each refused 401, never
// 429; an owner who signs in from that address a moment later is served
// on every request; the attacker's tokens are still refused 401. The
// budget still bounds what it is for: agent keys, which are looked up in
// the store, guessed from that address.
func TestFreshSessionIsNeverLockedOut(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.SQLite(t))
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	const budget = 5
	srv := httpapi.New(httpapi.Options{Version: "test", Store: w.DB, Logger: quiet, Agents: w.Enclave.Calls, Inbox: w.Inbox,
		Limits: httpapi.Limits{FailedAuthPerMinute: budget}})
	const shared = "192.0.2.9:4000"
	do := func(method, path, auth string, body []byte) (int, map[string]any) {
		var rd io.Reader
		if body != nil {
			rd = strings.NewReader(string(body))
		}
		req := httptest.NewRequest(method, path, rd)
		req.RemoteAddr = shared
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		var out map[string]any
		_ = json.Unmarshal(rec.Body.Bytes(), &out)
		return rec.Code, out
	}
	wallet := w.Owner.Signer.(device.WalletSigner).Wallet
	// A device that signed out, and one whose session ran out.
	gone := w.Device(wallet)
	if _, err := gone.SignIn(ctx, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := gone.Client.SignOut(ctx); err != nil {
		t.Fatal(err)
	}
	late := w.Device(wallet)
	if _, err := late.SignIn(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	w.Clock.Add(2 * time.Minute)
	bad := []string{"Bearer os_" + randomHex(20), "Bearer os_" + base64.RawURLEncoding.EncodeToString(make([]byte, 32)),
		"Bearer os_" + base64.RawURLEncoding.EncodeToString(make([]byte, 52)), "Bearer " + gone.Client.Session,
		"Bearer " + late.Client.Session, "", "Basic eA=="}
	for i := 0; i < 10*budget; i++ {
		if code, body := do(http.MethodGet, "/inbox/tasks", bad[i%len(bad)], nil); code != http.StatusUnauthorized {
			t.Fatalf("bad token %d: %d %v, want 401", i, code, body)
		}
	}
	// The owner signs in from the same address, a moment later.
	fresh := w.Device(wallet)
	validUntil := w.Clock.Now().Add(time.Hour)
	sentence, err := approval.SignIn{Account: fresh.Account, DeviceKey: fresh.Pubkey(), ValidUntil: validUntil}.Sentence()
	if err != nil {
		t.Fatal(err)
	}
	signed, err := fresh.Signer.Sign(sentence, w.Inbox.Recipient())
	if err != nil {
		t.Fatal(err)
	}
	req, _ := json.Marshal(client.SignInRequest{AccountID: fresh.Account, DevicePubkey: fresh.Pubkey(),
		ValidUntil: validUntil.Format(approval.TimeLayout), Signed: signed})
	code, sess := do(http.MethodPost, "/inbox/session", "", req)
	if code != http.StatusOK {
		t.Fatalf("the sign-in: %d %v", code, sess)
	}
	owner := "Bearer " + sess["token"].(string)
	for i := 0; i < 20; i++ {
		path := []string{"/inbox/tasks", "/inbox/devices", "/inbox/tasks?show=closed", "/inbox/projects"}[i%4]
		if code, body := do(http.MethodGet, path, owner, nil); code != http.StatusOK {
			t.Fatalf("request %d of the fresh session (%s): %d %v", i, path, code, body)
		}
		if code, body := do(http.MethodGet, "/inbox/tasks", bad[i%len(bad)], nil); code != http.StatusUnauthorized {
			t.Fatalf("bad token after the sign-in: %d %v, want 401", code, body)
		}
	}
	// Agent keys from that address still spend its budget, untouched by the
	// owners' bad tokens above.
	call := "/call/" + w.Owner.Account + "/ledger"
	codes := map[int]int{}
	for i := 0; i < 2*budget; i++ {
		code, _ := do(http.MethodPost, call, "Bearer ak_"+randomHex(20), []byte(`{"operation":"tasks"}`))
		codes[code]++
	}
	if codes[http.StatusUnauthorized] != budget || codes[http.StatusTooManyRequests] != budget {
		t.Fatalf("guessed agent keys from the address: %v, want %d refused 401 then 429", codes, budget)
	}
}
