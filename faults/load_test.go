package faults

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"countersign/client"
	"countersign/device"
)

// heavy is held by the tests that put the full load on: they take turns,
// so that each has the machine's cores to itself against the lighter
// fault tests.
var heavy sync.Mutex

// Load's shape: about rate requests a second for duration, from owners
// owners and agents agents.
const (
	rate     = 200
	duration = 60 * time.Second
	owners   = 20
	agents   = 2
	// maxOpen bounds the open tasks the load keeps per owner and agent
	// (the contract allows 10 open or approved).
	maxOpen = 6
)

// Each request kind's share of the load, in percent. Approvals stay under
// the owner's 120 changes a minute (1.2 a second per owner at 200 a
// second); opening a task is balanced by approvals and cancellations.
var mix = []struct {
	kind  string
	share int
}{
	{"call", 20},        // an agent opens a task (issue_comment)
	{"task_status", 25}, // an agent reads one of its tasks
	{"inbox", 25},       // an owner lists the waiting tasks
	{"approve", 12},     // an owner opens a task and approves it
	{"task_cancel", 18}, // an agent cancels one of its open tasks
}

// expected are the refusals the contract foresees under this load.
var expected = map[string]bool{"inbox_full": true, "task_closed": true}

// loadTask is a task the load opened.
type loadTask struct {
	task
	o, a int // owner and agent index
}

// load is one run of the mixed load against one or more servers sharing a
// database.
type load struct {
	t      *testing.T
	w      *world
	owners [][]*device.Device // [owner][server]
	agents [][]*client.Client // [agent][server]

	mu        sync.Mutex
	open      []*loadTask // open, not yet taken to approve or cancel
	pairOpen  map[[2]int]int
	known     []*loadTask
	approved  map[*loadTask]bool
	cancelled map[*loadTask]bool
	unsure    map[*loadTask]bool // an approval or cancellation without an answer
	lat       map[string][]time.Duration
	refusals  map[string]int
	errs      map[string]int
	examples  []string
	seq       int
}

// newLoad makes the owners (each with the project, granted to every agent)
// and agents, speaking to every server in bases.
func newLoad(t *testing.T, w *world, bases []string) *load {
	l := &load{t: t, w: w, pairOpen: map[[2]int]int{}, approved: map[*loadTask]bool{}, cancelled: map[*loadTask]bool{},
		unsure: map[*loadTask]bool{}, lat: map[string][]time.Duration{}, refusals: map[string]int{}, errs: map[string]int{}}
	var names []string
	for a := range agents {
		name := fmt.Sprintf("load-agent-%d.near", a)
		names = append(names, name)
		key := w.agent(name)
		hc := httpClient("")
		var cs []*client.Client
		for _, b := range bases {
			cs = append(cs, &client.Client{BaseURL: b, AgentKey: key, HTTP: hc})
		}
		l.agents = append(l.agents, cs)
	}
	for o := range owners {
		d := newOwner(t, bases[o%len(bases)], loopback(o))
		w.project(d.Account, names...)
		var ds []*device.Device
		for _, b := range bases {
			ds = append(ds, at(d, b))
		}
		l.owners = append(l.owners, ds)
	}
	return l
}

// run sends the load for duration, then cancels what is still open, and
// waits for every task to end.
func (l *load) run() {
	t := l.t
	started := time.Now()
	sem := make(chan struct{}, 128)
	var wg sync.WaitGroup
	tick := time.NewTicker(time.Second / rate)
	sent := 0
	for end := time.Now().Add(duration); time.Now().Before(end); {
		<-tick.C
		sem <- struct{}{}
		wg.Add(1)
		sent++
		go func() {
			defer func() { <-sem; wg.Done() }()
			l.one()
		}()
	}
	tick.Stop()
	wg.Wait()
	took := time.Since(started)
	t.Logf("%d requests started in %s (%.0f a second)", sent, took.Round(time.Millisecond), float64(sent)/took.Seconds())

	// Cancel what is still open (and what may be: an approval or a
	// cancellation without an answer), so that every task ends.
	l.mu.Lock()
	rest := l.open
	l.open = nil
	for k := range l.unsure {
		rest = append(rest, k)
	}
	l.mu.Unlock()
	for _, k := range rest {
		ctx, cancel := context.WithTimeout(context.Background(), requestLimit)
		_, err := k.agent.Call(ctx, k.owner.Account, project, "task_cancel", map[string]any{"task_id": k.id}, nil)
		cancel()
		switch {
		case err == nil:
			l.cancelled[k] = true
		case !l.unsure[k] || refusalCode(err) != "task_closed":
			t.Errorf("cancel %s after the load: %v", k.id, err)
		}
	}
}

// one sends one request of a kind drawn from the mix.
func (l *load) one() {
	n := rand.IntN(100)
	kind := mix[len(mix)-1].kind
	for _, m := range mix {
		if n < m.share {
			kind = m.kind
			break
		}
		n -= m.share
	}
	srv := rand.IntN(len(l.agents[0]))
	switch kind {
	case "call":
		o, a, ok := l.reservePair()
		if !ok {
			l.status(srv)
			return
		}
		l.mu.Lock()
		l.seq++
		body := fmt.Sprintf("load o%d a%d #%d", o, a, l.seq)
		l.mu.Unlock()
		k := &loadTask{task: task{owner: l.owners[o][0], agent: l.agents[a][0], body: body}, o: o, a: a}
		var id string
		err := l.timed("call", func(ctx context.Context) (err error) {
			id, err = openComment(ctx, l.agents[a][srv], l.owners[o][0].Account, body)
			return err
		})
		l.mu.Lock()
		defer l.mu.Unlock()
		if err != nil {
			l.pairOpen[[2]int{o, a}]--
			return
		}
		k.id = id
		l.open = append(l.open, k)
		l.known = append(l.known, k)
	case "task_status":
		l.status(srv)
	case "inbox":
		d := l.owners[rand.IntN(len(l.owners))][srv]
		_ = l.timed("inbox", func(ctx context.Context) error {
			_, err := d.Client.Tasks(ctx, client.ShowWaiting, "", 20)
			return err
		})
	case "approve":
		k := l.take()
		if k == nil {
			l.status(srv)
			return
		}
		d := l.owners[k.o][srv]
		var view client.TaskView
		if err := l.timed("task_view", func(ctx context.Context) (err error) {
			view, err = d.Client.Task(ctx, k.id)
			return err
		}); err != nil {
			l.settle(k, nil, err)
			return
		}
		opened, err := d.Open(view)
		if err != nil {
			l.fail("open", err)
			l.settle(k, nil, err)
			return
		}
		req, err := d.ApproveRequest(opened, nil, "")
		if err != nil {
			l.fail("sign", err)
			l.settle(k, nil, err)
			return
		}
		err = l.timed("approve", func(ctx context.Context) error {
			_, err := d.Client.Approve(ctx, k.id, req)
			return err
		})
		l.settle(k, l.approved, err)
	case "task_cancel":
		k := l.take()
		if k == nil {
			l.status(srv)
			return
		}
		err := l.timed("task_cancel", func(ctx context.Context) error {
			_, err := l.agents[k.a][srv].Call(ctx, k.owner.Account, project, "task_cancel", map[string]any{"task_id": k.id}, nil)
			return err
		})
		l.settle(k, l.cancelled, err)
	}
}

// status asks task_status of a random task the load opened.
func (l *load) status(srv int) {
	l.mu.Lock()
	var k *loadTask
	if len(l.known) > 0 {
		k = l.known[rand.IntN(len(l.known))]
	}
	l.mu.Unlock()
	if k == nil {
		d := l.owners[rand.IntN(len(l.owners))][srv]
		_ = l.timed("inbox", func(ctx context.Context) error {
			_, err := d.Client.Tasks(ctx, client.ShowWaiting, "", 20)
			return err
		})
		return
	}
	_ = l.timed("task_status", func(ctx context.Context) error {
		_, err := l.agents[k.a][srv].Status(ctx, k.owner.Account, project, k.id, 0)
		return err
	})
}

// reservePair picks an owner and agent with room for another open task.
func (l *load) reservePair() (int, int, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for range 8 {
		p := [2]int{rand.IntN(len(l.owners)), rand.IntN(len(l.agents))}
		if l.pairOpen[p] < maxOpen {
			l.pairOpen[p]++
			return p[0], p[1], true
		}
	}
	return 0, 0, false
}

// take takes a random open task to approve or cancel.
func (l *load) take() *loadTask {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.open) == 0 {
		return nil
	}
	i := rand.IntN(len(l.open))
	k := l.open[i]
	l.open[i] = l.open[len(l.open)-1]
	l.open = l.open[:len(l.open)-1]
	return k
}

// settle records what became of a task taken to approve or cancel: into
// done when it was answered yes, back to the open ones when refused before
// anything was sent, unsure when no answer came.
func (l *load) settle(k *loadTask, done map[*loadTask]bool, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case err == nil && done != nil:
		done[k] = true
		l.pairOpen[[2]int{k.o, k.a}]--
	case isTransport(err) || status(err) >= 500 || refusalCode(err) == "task_closed":
		l.unsure[k] = true
		l.pairOpen[[2]int{k.o, k.a}]--
	default:
		l.open = append(l.open, k)
	}
}

// timed sends one request, bounded by requestLimit, and records its
// latency, refusal or error under kind.
func (l *load) timed(kind string, f func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), requestLimit)
	defer cancel()
	start := time.Now()
	err := f(ctx)
	took := time.Since(start)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lat[kind] = append(l.lat[kind], took)
	if err == nil {
		return nil
	}
	code := refusalCode(err)
	switch {
	case isTransport(err) || status(err) >= 500:
		l.errs[kind]++
		if len(l.examples) < 10 {
			l.examples = append(l.examples, fmt.Sprintf("%s after %s: %v", kind, took.Round(time.Millisecond), err))
		}
	case expected[code]:
		l.refusals[kind+" "+code]++
	default:
		l.errs[kind+" "+code]++
		if len(l.examples) < 10 {
			l.examples = append(l.examples, fmt.Sprintf("%s: %v", kind, err))
		}
	}
	return err
}

func (l *load) fail(kind string, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.errs[kind]++
	if len(l.examples) < 10 {
		l.examples = append(l.examples, fmt.Sprintf("%s: %v", kind, err))
	}
}

// report logs the latencies and refusals and fails the test on any error.
func (l *load) report() {
	t := l.t
	var kinds []string
	for k := range l.lat {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		t.Logf("%-12s %s", k, summary(l.lat[k]))
	}
	t.Logf("refusals the contract expects: %v", l.refusals)
	if len(l.errs) > 0 {
		t.Errorf("errors under load: %v; for example:\n%s", l.errs, strings.Join(l.examples, "\n"))
	}
}

// check waits until every task the load opened is terminal and compares
// each with the comments on the fake: an accepted approval is done with its
// comment posted once, a cancelled task posted nothing, no comment twice.
func (l *load) check() {
	t := l.t
	tasks := make([]*task, len(l.known))
	for i, k := range l.known {
		tasks[i] = &k.task
	}
	final := finalStates(t, tasks, time.Now().Add(90*time.Second))
	comments := l.w.comments()
	states := map[string]int{}
	for _, k := range l.known {
		st := final[k.id]
		states[st.State+" "+st.FailureReason]++
		n := comments[k.body]
		switch {
		case n > 1:
			t.Errorf("task %s was carried out %d times", k.id, n)
		case !terminal(st.State):
			t.Errorf("task %s is %s after the load", k.id, st.State)
		case l.approved[k] && (st.State != "done" || n != 1):
			t.Errorf("task %s approved ended %s %s with %d comments", k.id, st.State, st.FailureReason, n)
		case l.cancelled[k] && (st.State != "cancelled" || n != 0):
			t.Errorf("task %s cancelled ended %s with %d comments", k.id, st.State, n)
		case st.State == "done" && n != 1:
			t.Errorf("task %s is done with %d comments", k.id, n)
		}
	}
	t.Logf("%d tasks: %d approved, %d cancelled, %d without an answer; end states %v; %d comments posted",
		len(l.known), len(l.approved), len(l.cancelled), len(l.unsure), states, len(comments))
}

func refusalCode(err error) string {
	var r *client.Refusal
	if errors.As(err, &r) {
		return r.Code
	}
	return client.Reason(err)
}

func status(err error) int {
	var e *client.Error
	if errors.As(err, &e) {
		return e.Status
	}
	return 0
}

// TestMixedLoad (R8): about 200 requests a second of every kind for 60 s
// against one server: no 5xx and no transport error, refusals counted
// apart, each kind's p50 and p99 logged; then every approval accepted was
// carried out once and every task is terminal.
func TestMixedLoad(t *testing.T) {
	t.Parallel()
	heavy.Lock()
	defer heavy.Unlock()
	w := newWorld(t, testDatabase(t))
	srv := w.serveFresh()
	l := newLoad(t, w, []string{srv.base})
	l.run()
	l.report()
	l.check()
}

// TestTwoServersOneDatabase: the same load split between two server
// processes on one database; every approval is carried out once (counted
// on the fake, per task), every task ends terminal.
func TestTwoServersOneDatabase(t *testing.T) {
	t.Parallel()
	heavy.Lock()
	defer heavy.Unlock()
	w := newWorld(t, testDatabase(t))
	a := w.serveFresh()
	b := w.serveFresh()
	l := newLoad(t, w, []string{a.base, b.base})
	l.run()
	l.report()
	l.check()
}
