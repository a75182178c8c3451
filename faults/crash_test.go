package faults

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"countersign/client"
	"countersign/device"
)

// What became of one approval sent before the kill.
const (
	unsent   = iota // the kill came first
	accepted        // answered 200 approved
	refused         // answered with a refusal
	unheard         // sent, no answer: it may have landed or not
)

// TestKilledMidApproval (R1): 500 tasks (25 owners, 2 agents, 10 tasks per
// pair) are approved 16 at a time, and the server is killed with SIGKILL
// after a random number of them were accepted, then started again on the
// same database. Every task ends terminal within a few minutes; no comment
// is posted twice; an approval whose run had not started is carried out
// after the restart (done, its comment posted once); a run that had started
// ends failed run_unfinished (the sweep ends the runs of a process whose
// heartbeat stopped). Approvals that got no answer, and those never sent,
// are sent again after the restart when the task is still open.
func TestKilledMidApproval(t *testing.T) {
	t.Parallel()
	const owners, agents, perPair = 25, 2, 10
	started := time.Now()
	w := newWorld(t, testDatabase(t))
	// The killed process is taken for dead after 20 s of silence rather
	// than a minute, so its runs in flight end sooner.
	w.env = append(w.env, "COUNTERSIGN_RUNNER_DEAD_AFTER=20s")
	var keys []string
	var names []string
	for a := range agents {
		names = append(names, fmt.Sprintf("crash-agent-%d.near", a))
		keys = append(keys, w.agent(names[a]))
	}
	srv := w.serveFresh()
	addr := srv.addr
	var devices []*device.Device
	for i := range owners {
		d := newOwner(t, srv.base, loopback(i))
		w.project(d.Account, names...)
		devices = append(devices, d)
	}
	var clients []*client.Client
	for _, k := range keys {
		clients = append(clients, &client.Client{BaseURL: srv.base, AgentKey: k, HTTP: httpClient("")})
	}

	// Open the tasks, eight calls at a time.
	var tasks []*task
	for o, d := range devices {
		for a, c := range clients {
			for n := range perPair {
				tasks = append(tasks, &task{owner: d, agent: c, body: fmt.Sprintf("crash o%d a%d n%d", o, a, n)})
			}
		}
	}
	parallel(t, tasks, 8, func(ctx context.Context, k *task) error {
		id, err := openComment(ctx, k.agent, k.owner.Account, k.body)
		k.id = id
		return err
	})
	// Open each on its owner's device and sign its approval beforehand, so
	// that the approvals themselves go out as fast as the server takes them.
	reqs := make(map[*task]client.ApproveRequest, len(tasks))
	var reqMu sync.Mutex
	parallel(t, tasks, 8, func(ctx context.Context, k *task) error {
		r, err := approveRequest(ctx, k)
		reqMu.Lock()
		reqs[k] = r
		reqMu.Unlock()
		return err
	})
	t.Logf("%d tasks open and their approvals signed after %s", len(tasks), time.Since(started).Round(time.Millisecond))

	// Approve, 16 at a time, until the kill.
	seed := rand.Uint64()
	killAfter := 60 + int(rand.New(rand.NewPCG(seed, 0)).IntN(380))
	t.Logf("seed %d: the kill comes after %d accepted approvals", seed, killAfter)
	outcome := make(map[*task]int, len(tasks))
	var mu sync.Mutex
	var acceptedN atomic.Int64
	var killed atomic.Bool
	var killOnce sync.Once
	next := make(chan *task)
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range next {
				if killed.Load() {
					continue
				}
				ctx, cancel := context.WithTimeout(context.Background(), requestLimit)
				_, err := k.owner.Client.Approve(ctx, k.id, reqs[k])
				cancel()
				o := accepted
				switch {
				case isTransport(err):
					o = unheard
				case err != nil:
					o = refused
				}
				mu.Lock()
				outcome[k] = o
				mu.Unlock()
				if o == accepted && acceptedN.Add(1) == int64(killAfter) {
					killOnce.Do(func() { killed.Store(true); srv.kill() })
				}
			}
		}()
	}
	order := append([]*task(nil), tasks...)
	rand.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	for _, k := range order {
		next <- k
	}
	close(next)
	wg.Wait()
	killOnce.Do(func() { killed.Store(true); srv.kill() }) // all were accepted first
	killedAt := time.Now()
	count := map[int]int{}
	for _, k := range tasks {
		count[outcome[k]]++
	}
	t.Logf("killed after %d accepted approvals: %d accepted, %d refused, %d without an answer, %d not sent",
		acceptedN.Load(), count[accepted], count[refused], count[unheard], count[unsent])
	for k, o := range outcome {
		if o == refused {
			t.Errorf("the approval of %s was refused before the kill", k.id)
		}
	}

	// Start again on the same database and address; approve what is still
	// open.
	srv = w.serve(addr)
	restarted := time.Now().Truncate(time.Second) // history is to the second
	for _, d := range devices {
		d.Client.HTTP.CloseIdleConnections() // connections to the killed process
	}
	for _, c := range clients {
		c.HTTP.CloseIdleConnections()
	}
	t.Logf("restarted %s after the kill", time.Since(killedAt).Round(time.Millisecond))
	var again []*task
	for _, k := range tasks {
		if outcome[k] != accepted {
			again = append(again, k)
		}
	}
	var reapproved, landed atomic.Int64
	parallel(t, again, 8, func(ctx context.Context, k *task) error {
		view, err := k.owner.Client.Task(ctx, k.id)
		if err != nil {
			return err
		}
		if view.State != "open" {
			landed.Add(1) // an unanswered approval that had landed
			return nil
		}
		opened, err := k.owner.Open(view)
		if err != nil {
			return err
		}
		if _, err := k.owner.Approve(ctx, opened, nil, ""); err != nil {
			return fmt.Errorf("approve %s after the restart: %w", k.id, err)
		}
		reapproved.Add(1)
		return nil
	})
	t.Logf("after the restart: %d approved again, %d had landed unanswered", reapproved.Load(), landed.Load())

	// Every task ends terminal within a few minutes of the restart.
	final := finalStates(t, tasks, time.Now().Add(150*time.Second))
	t.Logf("every task's state read %s after the kill", time.Since(killedAt).Round(time.Millisecond))
	comments := w.comments()
	states := map[string]int{}
	var stranded []string
	afterRestart := 0 // accepted before the kill, run after the restart
	for _, k := range tasks {
		st := final[k.id]
		key := st.State
		if st.FailureReason != "" {
			key += " " + st.FailureReason
		}
		states[key]++
		n := comments[k.body]
		switch {
		case n > 1:
			t.Errorf("task %s (%s) was carried out %d times", k.id, key, n)
		case st.State == "done" && n != 1:
			t.Errorf("task %s is done with %d comments posted", k.id, n)
		case st.State == "done":
			if outcome[k] == accepted && !began(t, k).Before(restarted) {
				afterRestart++
			}
		case st.State == "failed" && st.FailureReason == "run_unfinished":
			if began(t, k).IsZero() {
				t.Errorf("task %s failed run_unfinished though its run never began", k.id)
			}
		case !terminal(st.State):
			stranded = append(stranded, k.id+" "+key)
		default:
			t.Errorf("task %s ended %s (%d comments)", k.id, key, n)
		}
	}
	var summary []string
	for s, n := range states {
		summary = append(summary, fmt.Sprintf("%s: %d", s, n))
	}
	sort.Strings(summary)
	t.Logf("end states: %s; %d comments posted; %d approvals accepted before the kill were carried out after the restart; %s in all",
		strings.Join(summary, ", "), len(comments), afterRestart, time.Since(started).Round(time.Second))
	if len(stranded) > 0 {
		t.Errorf("%d tasks are not terminal 150 s after the restart (an approved task whose answer job the killed process had taken stays approved): %s",
			len(stranded), strings.Join(stranded[:min(len(stranded), 20)], "; "))
	}
}

// began is when the task's history shows its run begun (approved →
// answering), to the second; zero when it never began.
func began(t *testing.T, k *task) time.Time {
	ctx, cancel := context.WithTimeout(context.Background(), requestLimit)
	defer cancel()
	h, err := k.owner.Client.History(ctx, k.id)
	if err != nil {
		t.Errorf("history of %s: %v", k.id, err)
		return time.Time{}
	}
	for _, e := range h {
		if e.From == "approved" && e.To == "answering" {
			at, err := time.Parse(time.RFC3339, e.At)
			if err != nil {
				t.Errorf("history of %s: %v", k.id, err)
			}
			return at
		}
	}
	return time.Time{}
}
