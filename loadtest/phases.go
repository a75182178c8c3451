package loadtest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"countersign/client"
	"countersign/device"
)

// failures counts a phase's failed operations and keeps the first one's
// words.
type failures struct {
	n     atomic.Int64
	once  sync.Once
	first string
}

func (f *failures) add(err error) {
	f.n.Add(1)
	f.once.Do(func() { f.first = err.Error() })
}

// Writes is P1: agents each looping guess_start then its task_cancel, on
// owners of their own.
type Writes struct {
	Agents          int     `json:"agents"`
	Pairs           int64   `json:"pairs"`
	Seconds         float64 `json:"seconds"`
	WritesPerSecond float64 `json:"writes_per_second"`
	Errors          int64   `json:"errors"`
	FirstError      string  `json:"first_error,omitempty"`
	// CPU is per write (two writes a pair).
	CPU CPU `json:"cpu"`
}

// Approvals is P2 and P2′: owners approving their tasks at once, in rounds.
type Approvals struct {
	Owners int `json:"owners"`
	Rounds int `json:"rounds"`
	// Accepted is the approvals the service accepted; Done the tasks that
	// then reached done.
	Accepted int `json:"accepted"`
	Done     int `json:"done"`
	// AcceptSeconds is the time spent in the rounds' approval requests
	// (from the first sent to the last answered); EndSeconds the time from
	// each round's first approval to its last task seen done.
	AcceptSeconds     float64 `json:"accept_seconds"`
	EndSeconds        float64 `json:"end_seconds"`
	AcceptedPerSecond float64 `json:"accepted_per_second"`
	DonePerSecond     float64 `json:"done_per_second"`
	Errors            int64   `json:"errors"`
	FirstError        string  `json:"first_error,omitempty"`
	// CPU is per task done, over the rounds' timed parts.
	CPU CPU `json:"cpu"`
}

// Latency is P3: one approval at a time, from the approval sent to the
// task's done seen on the owner's event stream.
type Latency struct {
	Samples int `json:"samples"`
	// MedianMS, P90MS and MaxMS are of approve → done on the stream;
	// ApproveMS is the median of the approval's own answer.
	MedianMS  float64 `json:"median_ms"`
	P90MS     float64 `json:"p90_ms"`
	MaxMS     float64 `json:"max_ms"`
	ApproveMS float64 `json:"approve_ms"`
	// BesideCommitMS is the median of one bare commit timed after each
	// turn, on a connection of the bench's own: the floor's single commit
	// measured beside P3 rather than after the floor's load.
	BesideCommitMS float64 `json:"beside_commit_ms"`
	FirstError     string  `json:"first_error,omitempty"`
}

// Memory is P7: the service's resident memory with tasks waiting and event
// streams open.
type Memory struct {
	Owners  int `json:"owners"`
	Tasks   int `json:"tasks"`
	Streams int `json:"streams"`
	// TasksRSS is VmRSS once the tasks wait, RSS once the streams are
	// open too (bytes).
	TasksRSS int64 `json:"tasks_rss"`
	RSS      int64 `json:"rss"`
	// FileRSS is the part of RSS that maps files (RssFile), read with it.
	FileRSS    int64  `json:"file_rss"`
	FirstError string `json:"first_error,omitempty"`
}

// writesAndApprovals sets up P1's and P2's owners and agents and runs both.
func (b *bench) writesAndApprovals(ctx context.Context) (Writes, Approvals, error) {
	n := b.sizes.Owners
	b.progress("setup: %d owners, each signed in, with an agent of its own granted its probe project", n)
	setup, cancel := context.WithTimeout(ctx, b.sizes.PhaseTime)
	ps, err := b.pairs(setup, "load", n)
	cancel()
	if err != nil {
		return Writes{}, Approvals{}, fmt.Errorf("setup: %w", err)
	}
	w, err := b.writes(ctx, ps)
	if err != nil {
		return w, Approvals{}, err
	}
	a, err := b.approvals(ctx, ps)
	return w, a, err
}

// writes is P1.
func (b *bench) writes(ctx context.Context, ps []pair) (Writes, error) {
	s := b.sizes
	b.progress("P1: %d agents looping guess_start + task_cancel for %s (at most %d pairs)", len(ps), s.P1Time, s.P1MaxPairs)
	w := Writes{Agents: len(ps)}
	defer b.prof.cpu(ctx, "p1-writes", s.P1Time)()
	var fails failures
	err := b.loopPairs(ctx, ps, s.P1Time, int64(s.P1MaxPairs), &w, &fails)
	return w, err
}

// loopPairs has each agent of ps loop guess_start then task_cancel of that
// task for d (at most max pairs in all), and adds to w what they did, how
// long it took and what it cost; fails gathers their failures.
func (b *bench) loopPairs(ctx context.Context, ps []pair, d time.Duration, max int64, w *Writes, fails *failures) error {
	// Requests in flight at the end get a little longer than the loop.
	ctx, cancel := context.WithTimeout(ctx, d+30*time.Second)
	defer cancel()
	var pairs atomic.Int64
	var wg sync.WaitGroup
	m0 := b.mark(true)
	start := time.Now()
	deadline := start.Add(d)
	for _, p := range ps {
		wg.Go(func() {
			mine := 0
			for time.Now().Before(deadline) && ctx.Err() == nil {
				if pairs.Add(1) > max {
					pairs.Add(-1)
					return
				}
				id, err := p.start(ctx)
				if err == nil {
					_, err = p.agent.Call(ctx, p.owner.Account, projectName, "task_cancel", map[string]any{"task_id": id}, nil)
				}
				if err != nil {
					pairs.Add(-1)
					if ctx.Err() != nil {
						return
					}
					fails.add(err)
					// An agent that keeps failing stops; the rest go on.
					if mine++; mine >= 10 {
						return
					}
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	w.CPU.add(m0, b.mark(false))
	if err := ctx.Err(); err != nil && !time.Now().After(deadline) {
		return err
	}
	w.Pairs += pairs.Load()
	w.Seconds += elapsed.Seconds()
	w.WritesPerSecond = float64(2*w.Pairs) / w.Seconds
	w.CPU.Ops = int(2 * w.Pairs)
	w.Errors, w.FirstError = fails.n.Load(), fails.first
	return nil
}

// signed is one task's approval, signed before the clock starts.
type signed struct {
	id  string
	req client.ApproveRequest
}

// guess is every approval's supplied guess: never right (the secret is
// from 1 to max), so each answer opens the thread's next turn, which is
// the next round's task.
var guess = []byte("0")

// approvals is P2 and P2′. Each owner's agent opens up to ten games (the
// limit of one preparer's open and approved tasks for an owner); a round
// has every owner approve all of its waiting turns at once, then waits
// for each to be seen done on the owner's event stream. Each answer run
// opens that game's next turn, so the next round approves those.
func (b *bench) approvals(ctx context.Context, ps []pair) (Approvals, error) {
	s := b.sizes
	b.progress("P2: %d owners approving %d tasks in rounds, every owner's at once", len(ps), s.P2Approvals)
	ctx, cancel := context.WithTimeout(ctx, s.PhaseTime)
	defer cancel()
	p, err := startP2(ctx, ps, s.P2Approvals)
	defer p.stop()
	if err != nil {
		return p.a, err
	}
	var profiled func()
	defer func() {
		if profiled != nil {
			profiled() // P3 waits for the profile
		}
	}()
	for ctx.Err() == nil {
		_, more, err := b.p2Round(ctx, p, 0, len(ps), func() {
			if profiled == nil {
				// As long as P1's loop, from the first round's approvals.
				profiled = b.prof.cpu(ctx, "p2-approvals", s.P1Time)
			}
		})
		if err != nil {
			return p.a, err
		}
		if !more {
			break
		}
	}
	return p.end(ctx, s.PhaseTime), nil
}

// p2 is P2 on one service while it runs: its owners, their event
// streams, how many each has left to approve, and what was measured.
type p2 struct {
	ps      []pair
	watches []*watch
	left    []int
	fails   failures
	a       Approvals
}

// startP2 opens each owner's event stream (for as long as ctx lasts) and
// the first turns of its games: total approvals to make among ps.
func startP2(ctx context.Context, ps []pair, total int) (*p2, error) {
	n := len(ps)
	p := &p2{ps: ps, watches: make([]*watch, n), left: make([]int, n), a: Approvals{Owners: n}}
	for i := range p.left {
		p.left[i] = total / n
		if i < total%n {
			p.left[i]++
		}
	}
	streams := ctx
	err := parallel(ctx, n, 8, func(ctx context.Context, i int) (err error) {
		// The stream outlives this setup's context.
		if p.watches[i], err = ps[i].owner.watchEvents(streams); err != nil {
			return err
		}
		for range min(perRound, p.left[i]) {
			if _, err := ps[i].start(ctx); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return p, fmt.Errorf("P2's first turns: %w", err)
	}
	return p, nil
}

func (p *p2) stop() {
	for _, w := range p.watches {
		if w != nil {
			w.stop()
		}
	}
}

// p2Round is one round of P2: every owner of p.ps[from:to] approves up
// to perRound of its waiting tasks at once, and the round ends when each
// is seen done (or not) on the owner's stream. timed is called as the
// timing starts. It answers the round's approvals carried out per second,
// and whether another round may follow.
func (b *bench) p2Round(ctx context.Context, p *p2, from, to int, timed func()) (rate float64, more bool, err error) {
	n := len(p.ps)
	batches := make([][]signed, n)
	err = parallel(ctx, to-from, 4, func(ctx context.Context, i int) (err error) {
		i += from
		batches[i], err = signWaiting(ctx, p.ps[i].owner, min(perRound, p.left[i]))
		return err
	})
	if err != nil && ctx.Err() == nil {
		return 0, false, fmt.Errorf("P2's round %d: %w", p.a.Rounds+1, err)
	} else if err != nil {
		return 0, false, nil // the cap: what was measured stands
	}
	total := 0
	for _, bt := range batches {
		total += len(bt)
	}
	if total == 0 {
		return 0, false, nil
	}
	p.a.Rounds++
	accepted := make([][]string, n)
	var mu sync.Mutex
	var wg sync.WaitGroup
	m0 := b.mark(true)
	start := time.Now()
	timed()
	for i, bt := range batches {
		for _, ap := range bt {
			wg.Go(func() {
				if _, err := p.ps[i].owner.Client.Approve(ctx, ap.id, ap.req); err != nil {
					p.fails.add(fmt.Errorf("approve %s: %w", ap.id, err))
					return
				}
				mu.Lock()
				accepted[i] = append(accepted[i], ap.id)
				mu.Unlock()
			})
		}
	}
	wg.Wait()
	answered := time.Now()
	var done atomic.Int64
	wait := time.Until(deadlineOf(ctx))
	_ = parallel(ctx, to-from, to-from, func(ctx context.Context, i int) error {
		i += from
		states, _, err := p.watches[i].await(ctx, accepted[i], wait)
		if err != nil {
			p.fails.add(err)
			return nil
		}
		for id, st := range states {
			if st == "done" {
				done.Add(1)
			} else {
				p.fails.add(fmt.Errorf("task %s ended %s", id, st))
			}
		}
		return nil
	})
	end := time.Now()
	p.a.CPU.add(m0, b.mark(false))
	for i := range p.left {
		p.left[i] -= len(batches[i])
		p.a.Accepted += len(accepted[i])
	}
	p.a.Done += int(done.Load())
	p.a.AcceptSeconds += answered.Sub(start).Seconds()
	p.a.EndSeconds += end.Sub(start).Seconds()
	b.progress("P2: round %d: %d approvals accepted in %s, done in %s", p.a.Rounds, total, answered.Sub(start).Round(time.Millisecond), end.Sub(start).Round(time.Millisecond))
	return float64(done.Load()) / end.Sub(start).Seconds(), p.fails.n.Load() == 0, nil
}

// end sums up what the rounds measured, within a cap of limit.
func (p *p2) end(ctx context.Context, limit time.Duration) Approvals {
	a := p.a
	if a.AcceptSeconds > 0 {
		a.AcceptedPerSecond = float64(a.Accepted) / a.AcceptSeconds
	}
	if a.EndSeconds > 0 {
		a.DonePerSecond = float64(a.Done) / a.EndSeconds
	}
	a.CPU.Ops = a.Done
	a.Errors, a.FirstError = p.fails.n.Load(), p.fails.first
	if a.FirstError == "" && ctx.Err() != nil {
		a.FirstError = fmt.Sprintf("P2 stopped at its cap of %s", limit)
	}
	return a
}

// perRound is how many of one owner's tasks a round approves: the limit of
// one preparer's open and approved tasks for an owner.
const perRound = 10

// deadlineOf is ctx's deadline, or a minute from now.
func deadlineOf(ctx context.Context) time.Time {
	if d, ok := ctx.Deadline(); ok {
		return d
	}
	return time.Now().Add(time.Minute)
}

// signWaiting lists the owner's waiting tasks, opens up to k of them on the
// device and signs each one's approval, guessing 0.
func signWaiting(ctx context.Context, o *owner, k int) ([]signed, error) {
	if k <= 0 {
		return nil, nil
	}
	page, err := o.Client.Tasks(ctx, "waiting", "", 20)
	if err != nil {
		return nil, err
	}
	var out []signed
	for _, view := range page.Tasks {
		if len(out) == k {
			break
		}
		ap, err := sign(o.Device, view)
		if err != nil {
			return nil, err
		}
		out = append(out, ap)
	}
	return out, nil
}

func sign(d *device.Device, view client.TaskView) (signed, error) {
	opened, err := d.Open(view)
	if err != nil {
		return signed{}, fmt.Errorf("open task %s: %w", view.ID, err)
	}
	req, err := d.ApproveRequest(opened, guess, "")
	if err != nil {
		return signed{}, err
	}
	return signed{id: view.ID, req: req}, nil
}

// latency is P3.
func (b *bench) latency(ctx context.Context) (Latency, error) {
	s := b.sizes
	b.progress("P3: %d approvals one at a time, approve → done seen on the owner's event stream", s.P3Samples)
	l := Latency{}
	ctx, cancel := context.WithTimeout(ctx, s.PhaseTime)
	defer cancel()
	g, err := b.newGame(ctx, "latency")
	if err != nil {
		return l, err
	}
	defer g.stop()
	bare, err := newBareCommits(ctx, b.dbURL)
	if err != nil {
		return l, err
	}
	defer bare.close()
	var ends, answers, commits []time.Duration
	for range s.P3Samples {
		end, answered, err := g.turn(ctx)
		if err != nil {
			l.FirstError = err.Error()
			break
		}
		ends, answers = append(ends, end), append(answers, answered)
		c, err := bare.time(ctx)
		if err != nil {
			return l, err
		}
		commits = append(commits, c)
	}
	l = latencyOf(ends, answers, l.FirstError)
	l.BesideCommitMS = ms(median(commits))
	return l, nil
}

// latencyOf sums up timed turns: approve → done seen on the stream, and the
// approval's own answer.
func latencyOf(ends, answers []time.Duration, firstError string) Latency {
	return Latency{Samples: len(ends), ApproveMS: ms(median(answers)), MaxMS: ms(percentile(ends, 100)),
		P90MS: ms(percentile(ends, 90)), MedianMS: ms(median(ends)), FirstError: firstError}
}

// game is P3's guessing game: one owner, watching its event stream, and
// one agent, whose turns the owner approves one at a time.
type game struct {
	p  pair
	w  *watch
	id string // the turn waiting
}

// newGame makes the owner and the agent, opens the owner's event stream and
// starts the game.
func (b *bench) newGame(ctx context.Context, prefix string) (*game, error) {
	ps, err := b.pairs(ctx, prefix, 1)
	if err != nil {
		return nil, fmt.Errorf("P3's setup: %w", err)
	}
	g := &game{p: ps[0]}
	if g.w, err = g.p.owner.watchEvents(ctx); err != nil {
		return nil, err
	}
	if g.id, err = g.p.start(ctx); err != nil {
		g.w.stop()
		return nil, err
	}
	return g, nil
}

func (g *game) stop() { g.w.stop() }

// turn fetches the waiting turn, opens and signs it (not timed), then times
// approve → done on the stream and the approval's answer, and moves on to
// the next turn (task_status's next_task_id).
func (g *game) turn(ctx context.Context) (end, answered time.Duration, err error) {
	p, id := g.p, g.id
	view, err := p.owner.Client.Task(ctx, id)
	if err != nil {
		return 0, 0, err
	}
	ap, err := sign(p.owner.Device, view)
	if err != nil {
		return 0, 0, err
	}
	t0 := time.Now()
	if _, err := p.owner.Client.Approve(ctx, id, ap.req); err != nil {
		return 0, 0, err
	}
	answered = time.Since(t0)
	states, at, err := g.w.await(ctx, []string{id}, time.Until(deadlineOf(ctx)))
	if err != nil {
		return 0, 0, err
	}
	if states[id] != "done" {
		return 0, 0, fmt.Errorf("task %s ended %s", id, states[id])
	}
	end = at[id].Sub(t0)
	st, err := p.agent.Status(ctx, p.owner.Account, projectName, id, 0)
	if err != nil {
		return 0, 0, err
	}
	if st.NextTaskID == "" {
		return 0, 0, fmt.Errorf("task %s ended with no next turn: %+v", id, st)
	}
	g.id = st.NextTaskID
	return end, answered, nil
}

// memory is P7.
func (b *bench) memory(ctx context.Context) (Memory, error) {
	s := b.sizes
	n, k := s.P7Owners, s.P7TasksPerAgent
	m := Memory{Owners: n}
	b.progress("P7: %d owners with %d tasks waiting from each of 2 agents, then one event stream each", n, k)
	ctx, cancel := context.WithTimeout(ctx, s.PhaseTime)
	defer cancel()
	names := []string{"keeper-a.near", "keeper-b.near"}
	agents := make([]*client.Client, len(names))
	for i, name := range names {
		var err error
		if agents[i], err = b.newAgent(ctx, name); err != nil {
			return m, err
		}
	}
	owners, err := b.newOwners(ctx, n)
	if err != nil {
		return m, fmt.Errorf("P7's sign-ins: %w", err)
	}
	// 500 operator processes would take longer than the rest of the
	// phase: these owners set their projects themselves, signed by their
	// wallets.
	if err := parallel(ctx, n, 8, func(ctx context.Context, i int) error { return owners[i].putProject(ctx, names...) }); err != nil {
		return m, fmt.Errorf("P7's projects: %w", err)
	}
	var opened atomic.Int64
	jobs := n * len(agents) * k
	// Job j is owner j%n, so that consecutive opens are for different
	// owners, as they would be in a service with many.
	err = parallel(ctx, jobs, 16, func(ctx context.Context, j int) error {
		if _, err := startGame(ctx, agents[(j/n)%len(agents)], owners[j%n].Account); err != nil {
			return err
		}
		opened.Add(1)
		return nil
	})
	m.Tasks = int(opened.Load())
	if err != nil {
		m.FirstError = err.Error()
	}
	b.progress("P7: %d tasks waiting", m.Tasks)
	time.Sleep(time.Second)
	m.TasksRSS, _ = rss(b.svc.pid())

	streams, stop := context.WithCancel(ctx)
	defer stop()
	var open atomic.Int64
	err = parallel(ctx, n, 16, func(ctx context.Context, i int) error {
		events, err := owners[i].Client.Events(streams)
		if err != nil {
			return err
		}
		open.Add(1)
		go func() {
			for range events {
			}
		}()
		return nil
	})
	m.Streams = int(open.Load())
	if err != nil && m.FirstError == "" {
		m.FirstError = err.Error()
	}
	// Let what the streams started settle before reading.
	time.Sleep(time.Second)
	if m.RSS, err = rss(b.svc.pid()); err != nil {
		return m, err
	}
	m.FileRSS, _ = fileRSS(b.svc.pid())
	b.prof.heap(ctx, "p7-streams")
	return m, nil
}
