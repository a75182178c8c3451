package faults

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"countersign/approval"
	"countersign/client"
	"countersign/device"
	"countersign/store/storetest"
	"countersign/webhook"
)

// receiver is the owners' webhook: a loopback HTTP server that checks each
// delivery's signature with its owner's secret and keeps the events by id.
type receiver struct {
	t       *testing.T
	srv     *httptest.Server
	mu      sync.Mutex
	secrets map[string][]byte          // by path
	events  map[string]map[string]bool // task id → event types
	ids     map[string]bool            // event ids heard
	bad     []string
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{t: t, secrets: map[string][]byte{}, events: map[string]map[string]bool{}, ids: map[string]bool{}}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(req.Body, 64<<10))
	r.mu.Lock()
	defer r.mu.Unlock()
	key := r.secrets[req.URL.Path]
	mac := hmac.New(sha256.New, key)
	mac.Write(body)
	var ev struct {
		ID     string `json:"id"`
		Type   string `json:"type"`
		TaskID string `json:"task_id"`
	}
	if key == nil || req.Header.Get("X-Webhook-Signature") != hex.EncodeToString(mac.Sum(nil)) || json.Unmarshal(body, &ev) != nil {
		r.bad = append(r.bad, fmt.Sprintf("%s: a delivery that does not verify: %s", req.URL.Path, body))
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	r.ids[ev.ID] = true
	if r.events[ev.TaskID] == nil {
		r.events[ev.TaskID] = map[string]bool{}
	}
	r.events[ev.TaskID][ev.Type] = true
}

// answered reports whether the receiver heard task id answered.
func (r *receiver) answered(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.events[id]["task_answered"]
}

// name makes the receiver d's webhook, at a path of d's own.
func (r *receiver) name(t *testing.T, d *device.Device) {
	t.Helper()
	url := r.srv.URL + "/" + d.Account[:16]
	conf, err := d.Confirm(approval.ActionNameWebhook(url))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), requestLimit)
	defer cancel()
	wh, err := d.Client.PutWebhook(ctx, url, conf)
	if err != nil {
		t.Fatal(err)
	}
	key, err := webhook.DecodeSecret(wh.Secret)
	if err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	r.secrets["/"+d.Account[:16]] = key
	r.mu.Unlock()
}

// missing lists, per task, the event types among want the receiver has
// not heard.
func (r *receiver) missing(tasks []*task, want ...string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, k := range tasks {
		for _, typ := range want {
			if !r.events[k.id][typ] {
				out = append(out, k.id+" "+typ)
			}
		}
	}
	return out
}

// outcome is one request of the outage test: when it was sent and answered
// and how.
type outcome struct {
	kind        string
	sent, ended time.Time
	err         error
}

// TestPostgresRestartUnderLoad (R9): the service runs on a PostgreSQL of
// the test's own, which is stopped (fast shutdown) under load and started
// again. While it is down every request is answered 503 upstream_unavailable
// (task_store_unavailable to agents), none hangs or answers 500; the
// service recovers by itself; every approval accepted before, during or
// after the outage ends done with its comment posted once, and every
// task_created, task_approved and task_answered event reaches the owners'
// webhook.
func TestPostgresRestartUnderLoad(t *testing.T) {
	t.Parallel()
	pg, err := storetest.StartPostgres("127.0.0.1")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("a throwaway PostgreSQL is needed: %v", err)
		}
		t.Skipf("no throwaway PostgreSQL: %v", err)
	}
	t.Cleanup(pg.Stop)
	w := newWorld(t, pg.URL)
	name := "outage-agent.near"
	key := w.agent(name)
	srv := w.serveFresh()
	agent := &client.Client{BaseURL: srv.base, AgentKey: key, HTTP: httpClient("")}
	recv := newReceiver(t)
	var devices []*device.Device
	for i := range 4 {
		d := newOwner(t, srv.base, loopback(i))
		w.project(d.Account, name)
		recv.name(t, d)
		devices = append(devices, d)
	}

	var mu sync.Mutex
	var tasks []*task
	ready := map[*task]client.ApproveRequest{} // signed, not yet accepted
	var unsigned []*task                       // opened, not yet signed
	accepted := map[*task]bool{}
	var log []outcome
	record := func(kind string, sent time.Time, err error) {
		mu.Lock()
		log = append(log, outcome{kind, sent, time.Now(), err})
		mu.Unlock()
	}
	seq := 0
	step := func() {
		ctx, cancel := context.WithTimeout(context.Background(), requestLimit)
		defer cancel()
		d := devices[rand.IntN(len(devices))]
		switch n := rand.IntN(10); {
		case n < 3: // open a task and sign its approval
			// An agent may have 10 tasks open or approved for an owner:
			// the load keeps to 8 of those not heard answered, since an
			// accepted approval's answer may wait out the outage.
			mu.Lock()
			open := 0
			for _, k := range tasks {
				if k.owner == d && !recv.answered(k.id) {
					open++
				}
			}
			seq++
			k := &task{owner: d, agent: agent, body: fmt.Sprintf("outage #%d", seq)}
			mu.Unlock()
			if open >= 8 {
				return
			}
			sent := time.Now()
			id, err := openComment(ctx, agent, d.Account, k.body)
			record("call", sent, err)
			if err != nil {
				return
			}
			k.id = id
			sent = time.Now()
			req, err := approveRequest(ctx, k)
			record("task_view", sent, err)
			mu.Lock()
			defer mu.Unlock()
			tasks = append(tasks, k)
			if err != nil {
				unsigned = append(unsigned, k)
				return
			}
			ready[k] = req
		case n < 6: // approve a signed task
			mu.Lock()
			var k *task
			for c := range ready {
				k = c
				break
			}
			req := ready[k]
			delete(ready, k)
			mu.Unlock()
			if k == nil {
				return
			}
			sent := time.Now()
			_, err := k.owner.Client.Approve(ctx, k.id, req)
			record("approve", sent, err)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				accepted[k] = true
			case refusalCode(err) == "task_closed":
				accepted[k] = true // an earlier answerless attempt landed
			default:
				ready[k] = req // sent again later
			}
		case n < 8:
			sent := time.Now()
			_, err := d.Client.Tasks(ctx, client.ShowWaiting, "", 20)
			record("inbox", sent, err)
		default:
			mu.Lock()
			var k *task
			if len(tasks) > 0 {
				k = tasks[rand.IntN(len(tasks))]
			}
			mu.Unlock()
			if k == nil {
				return
			}
			sent := time.Now()
			_, err := agent.Status(ctx, k.owner.Account, project, k.id, 0)
			record("task_status", sent, err)
		}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				case <-time.After(time.Duration(50+rand.IntN(100)) * time.Millisecond):
				}
				step()
			}
		}()
	}

	time.Sleep(5 * time.Second)
	// A burst of approvals just before the stop, so that answer runs and
	// webhook deliveries are under way when PostgreSQL goes.
	// A few signed approvals are held back to be sent while it is down.
	mu.Lock()
	burst, held := map[*task]client.ApproveRequest{}, map[*task]client.ApproveRequest{}
	for k, req := range ready {
		switch {
		case len(held) < 6:
			held[k] = req
		case len(burst) < 8:
			burst[k] = req
		default:
			continue
		}
		delete(ready, k)
	}
	mu.Unlock()
	var bwg sync.WaitGroup
	for k, req := range burst {
		bwg.Add(1)
		go func() {
			defer bwg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), requestLimit)
			defer cancel()
			sent := time.Now()
			_, err := k.owner.Client.Approve(ctx, k.id, req)
			record("approve", sent, err)
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				accepted[k] = true
			} else {
				ready[k] = req
			}
		}()
	}
	bwg.Wait()
	t.Logf("%d approvals sent just before the stop, %d held back for the outage", len(burst), len(held))
	if err := pg.Halt(); err != nil {
		t.Fatal(err)
	}
	down := time.Now()
	mu.Lock()
	for k, req := range held {
		ready[k] = req
	}
	mu.Unlock()
	time.Sleep(5 * time.Second)
	up := time.Now()
	if err := pg.Resume(); err != nil {
		t.Fatal(err)
	}
	resumed := time.Now()
	t.Logf("PostgreSQL stopped for %s (started again in %s)", resumed.Sub(down).Round(time.Millisecond), resumed.Sub(up).Round(time.Millisecond))
	// The load goes on until every kind of request has succeeded again, and
	// a few seconds more.
	recovered := map[string]time.Time{}
	for deadline := time.Now().Add(2 * time.Minute); len(recovered) < 5; time.Sleep(200 * time.Millisecond) {
		mu.Lock()
		for _, o := range log {
			if o.sent.After(resumed) && o.err == nil && recovered[o.kind].IsZero() {
				recovered[o.kind] = o.ended
			}
		}
		mu.Unlock()
		if time.Now().After(deadline) {
			t.Errorf("two minutes after PostgreSQL came back, only %v succeed again", recovered)
			break
		}
	}
	for k, at := range recovered {
		t.Logf("%-12s succeeds again %s after PostgreSQL answers", k, at.Sub(resumed).Round(time.Millisecond))
	}
	time.Sleep(4 * time.Second)
	close(stop)
	wg.Wait()

	// What each request was answered, by phase.
	phases := map[string]map[string]int{}
	var wrong []string
	ownersRefused := 0
	for _, o := range log {
		phase := "before"
		switch {
		case o.sent.After(down) && o.ended.Before(up):
			phase = "down"
		case o.ended.After(down) && o.sent.Before(resumed):
			phase = "at the edges"
		case o.sent.After(resumed):
			phase = "after"
		}
		answer := "ok"
		if o.err != nil {
			answer = fmt.Sprintf("%d %s", status(o.err), refusalCode(o.err))
			if isTransport(o.err) {
				answer = "no answer"
			}
		}
		if phases[phase] == nil {
			phases[phase] = map[string]int{}
		}
		phases[phase][o.kind+": "+answer]++
		unavailable := status(o.err) == http.StatusServiceUnavailable &&
			(refusalCode(o.err) == "upstream_unavailable" || refusalCode(o.err) == "task_store_unavailable")
		if unavailable && refusalCode(o.err) == "upstream_unavailable" {
			ownersRefused++
		}
		switch {
		case isTransport(o.err):
			wrong = append(wrong, fmt.Sprintf("%s %s: no answer after %s: %v", phase, o.kind, o.ended.Sub(o.sent).Round(time.Millisecond), o.err))
		case phase == "down" && !unavailable:
			wrong = append(wrong, fmt.Sprintf("down %s: %s", o.kind, answer))
		case o.err != nil && !unavailable && refusalCode(o.err) != "task_closed":
			wrong = append(wrong, fmt.Sprintf("%s %s: %v", phase, o.kind, o.err))
		}
	}
	for _, p := range []string{"before", "at the edges", "down", "after"} {
		var lines []string
		for k, n := range phases[p] {
			lines = append(lines, fmt.Sprintf("%s ×%d", k, n))
		}
		sort.Strings(lines)
		t.Logf("%s: %s", p, strings.Join(lines, ", "))
	}
	if len(wrong) > 0 {
		t.Errorf("%d answers the outage may not give:\n%s", len(wrong), strings.Join(wrong[:min(len(wrong), 20)], "\n"))
	}
	if phases["down"] == nil {
		t.Error("no request was sent and answered while PostgreSQL was down")
	}
	// An owner told the store is unavailable is told no more; the
	// operator's log says what the store answered.
	if ownersRefused > 0 && !strings.Contains(srv.log.String(), "an owner's request was refused: the store is unavailable") {
		t.Errorf("%d owners' requests were refused upstream_unavailable and the service's log does not say why", ownersRefused)
	}

	// Approve what is still waiting, then every task ends done, once.
	for _, k := range unsigned {
		ctx, cancel := context.WithTimeout(context.Background(), requestLimit)
		req, err := approveRequest(ctx, k)
		cancel()
		if err != nil {
			t.Fatalf("sign %s after the outage: %v", k.id, err)
		}
		ready[k] = req
	}
	for k, req := range ready {
		ctx, cancel := context.WithTimeout(context.Background(), requestLimit)
		_, err := k.owner.Client.Approve(ctx, k.id, req)
		cancel()
		if err != nil && refusalCode(err) != "task_closed" {
			t.Errorf("approve %s after the outage: %v", k.id, err)
		}
	}
	final := finalStates(t, tasks, time.Now().Add(90*time.Second))
	comments := w.comments()
	states := map[string]int{}
	for _, k := range tasks {
		st := final[k.id]
		states[st.State+" "+st.FailureReason]++
		if st.State != "done" || comments[k.body] != 1 {
			t.Errorf("task %s ended %s %s with %d comments", k.id, st.State, st.FailureReason, comments[k.body])
		}
	}
	t.Logf("%d tasks, %d approvals accepted during the load; end states %v", len(tasks), len(accepted), states)

	// Every event the owners' webhooks should get arrives.
	var missing []string
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(500 * time.Millisecond) {
		missing = recv.missing(tasks, "task_created", "task_approved", "task_answered")
		if len(missing) == 0 || time.Now().After(deadline) {
			break
		}
	}
	recv.mu.Lock()
	heard, bad := len(recv.ids), recv.bad
	recv.mu.Unlock()
	t.Logf("the webhooks heard %d events", heard)
	if len(missing) > 0 {
		t.Errorf("%d events never reached the webhook: %s", len(missing), strings.Join(missing[:min(len(missing), 20)], "; "))
	}
	if len(bad) > 0 {
		t.Errorf("deliveries that do not verify: %v", bad)
	}
}
