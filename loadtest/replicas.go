package loadtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"countersign/client"
)

// ReplicaSizes are the counts of `countersign bench --replicas`: rounds of
// the same work against one, two or three serve processes on one database.
type ReplicaSizes struct {
	// Rounds are the process counts, one round each, in order.
	Rounds []int
	// Agents loop guess_start + task_cancel for WriteTime in each round,
	// agent i calling process i mod n.
	Agents    int
	WriteTime time.Duration
	// Samples is each round's approvals timed one at a time.
	Samples int
	// PhaseTime caps each round's setup and its timed approvals.
	PhaseTime time.Duration
}

// DefaultReplicas is one, two, three and again one process: about a minute.
func DefaultReplicas() ReplicaSizes {
	return ReplicaSizes{Rounds: []int{1, 2, 3, 1}, Agents: 16, WriteTime: 5 * time.Second, Samples: 20, PhaseTime: 60 * time.Second}
}

// QuickReplicas is tiny, for tests.
func QuickReplicas() ReplicaSizes {
	return ReplicaSizes{Rounds: []int{1, 2}, Agents: 2, WriteTime: 500 * time.Millisecond, Samples: 3, PhaseTime: 30 * time.Second}
}

func (s ReplicaSizes) check() error {
	if len(s.Rounds) == 0 || s.Agents < 1 || s.WriteTime <= 0 || s.Samples < 1 || s.Samples > 50 || s.PhaseTime <= 0 {
		return errors.New("the replicas bench needs rounds, agents, a write time, 1 to 50 samples and a time cap")
	}
	for _, n := range s.Rounds {
		if n < 1 || n > 8 {
			return errors.New("a round runs 1 to 8 processes")
		}
	}
	return nil
}

// ReplicasReport is what `countersign bench --replicas` measured.
type ReplicasReport struct {
	Started    time.Time      `json:"started"`
	Cores      int            `json:"cores"`
	Quick      bool           `json:"quick"`
	Database   string         `json:"database"`
	Dropped    bool           `json:"dropped"`
	Rounds     []ReplicaRound `json:"rounds"`
	ServiceLog ServiceLog     `json:"service_log"`
}

// ReplicaRound is one round: its processes' write throughput, and
// approvals sent to one process while the owner's event stream is held by
// another (by the same one when there is one).
type ReplicaRound struct {
	Processes int `json:"processes"`
	// WritesPerSecond is all processes' together, PerProcess each one's;
	// Ratio is WritesPerSecond ÷ the first one-process round's.
	WritesPerSecond float64   `json:"writes_per_second"`
	PerProcess      []float64 `json:"per_process"`
	Ratio           float64   `json:"ratio"`
	Errors          int64     `json:"errors"`
	// Samples approvals timed; medians in ms from the approval sent: to
	// its answer, to its approved event and to its done event on the
	// stream.
	Samples    int     `json:"samples"`
	AnswerMS   float64 `json:"answer_ms"`
	ApprovedMS float64 `json:"approved_ms"`
	DoneMS     float64 `json:"done_ms"`
	// CrossMS is the median from the approval's answer (accepted) to its
	// approved event on the other process's stream; it may be below zero
	// when the event arrives before the answer is read.
	CrossMS    float64 `json:"cross_ms"`
	FirstError string  `json:"first_error,omitempty"`
}

// replicaOrigin is the public origin every replica is told it serves.
const replicaOrigin = "http://127.0.0.1"

// RunReplicas runs the rounds against serve processes of its own on one
// throwaway database.
func RunReplicas(ctx context.Context, cfg Config, sizes ReplicaSizes) (rep *ReplicasReport, err error) {
	if err := sizes.check(); err != nil {
		return nil, err
	}
	if cfg.Binary == "" {
		return nil, errors.New("the countersign binary to run is not known")
	}
	server, err := checkURL(cfg.DatabaseURL)
	if err != nil {
		return nil, err
	}
	b := &bench{cfg: cfg, addrs: newAddresses(), t0: time.Now()}
	defer b.addrs.close()
	if b.dir, err = os.MkdirTemp("", "countersign-bench-"); err != nil {
		return nil, err
	}
	defer os.RemoveAll(b.dir)
	rep = &ReplicasReport{Started: time.Now().UTC(), Cores: runtime.NumCPU(), Quick: sizes.Agents == QuickReplicas().Agents}
	db, err := createDatabase(ctx, server)
	if err != nil {
		return rep, err
	}
	rep.Database = db.name
	b.progress("created the database %s", db.name)
	defer func() {
		if derr := db.drop(); derr != nil {
			err = errors.Join(err, derr)
		} else {
			rep.Dropped = true
			b.progress("dropped the database %s", db.name)
		}
	}()
	env, err := prepareService(ctx, cfg.Binary, db.url)
	if err != nil {
		return rep, err
	}
	// Replicas behind one address: one public origin, so one recipient
	// for every owner signature (by default each would take its own
	// listening address).
	env = append(env, "COUNTERSIGN_PUBLIC_URL="+replicaOrigin)
	b.recipient = "127.0.0.1"
	var logs []ServiceLog
	defer func() {
		for _, l := range logs {
			rep.ServiceLog.add(l)
		}
	}()
	var ps []pair
	for i, n := range sizes.Rounds {
		r, lg, err := b.replicaRound(ctx, env, sizes, i, n, &ps)
		logs = append(logs, lg...)
		if err != nil {
			return rep, fmt.Errorf("round %d (%d processes): %w", i+1, n, err)
		}
		if len(rep.Rounds) > 0 && rep.Rounds[0].WritesPerSecond > 0 {
			r.Ratio = r.WritesPerSecond / rep.Rounds[0].WritesPerSecond
		} else {
			r.Ratio = 1
		}
		rep.Rounds = append(rep.Rounds, r)
	}
	return rep, nil
}

// replicaRound starts n processes, runs the round's writes and timed
// approvals, and stops them. The agents and their owners are made in the
// first round and kept in *ps.
func (b *bench) replicaRound(ctx context.Context, env []string, sizes ReplicaSizes, round, n int, ps *[]pair) (r ReplicaRound, logs []ServiceLog, err error) {
	r.Processes = n
	svcs := make([]*service, 0, n)
	defer func() {
		for _, s := range svcs {
			_ = s.stop()
			logs = append(logs, s.log.errors())
		}
	}()
	b.progress("replicas: round %d: starting %d serve process(es) on the database", round+1, n)
	for range n {
		s, err := launch(ctx, b.cfg.Binary, env, false, b.progress)
		if err != nil {
			return r, logs, err
		}
		svcs = append(svcs, s)
	}
	b.svc = svcs[0]
	setup, cancel := context.WithTimeout(ctx, sizes.PhaseTime)
	defer cancel()
	if *ps == nil {
		if *ps, err = b.pairs(setup, "rep", sizes.Agents); err != nil {
			return r, logs, err
		}
	}
	// Agent i calls process i mod n.
	on := func(c *client.Client, i int) *client.Client {
		cp := *c
		cp.BaseURL = svcs[i%n].base
		return &cp
	}
	agents := make([]*client.Client, len(*ps))
	for i, p := range *ps {
		agents[i] = on(p.agent, i)
	}

	b.progress("replicas: round %d: %d agents looping guess_start + task_cancel for %s over %d process(es)", round+1, len(agents), sizes.WriteTime, n)
	perProcess := make([]atomic.Int64, n)
	var fails failures
	wctx, wcancel := context.WithTimeout(ctx, sizes.WriteTime+30*time.Second)
	defer wcancel()
	start := time.Now()
	deadline := start.Add(sizes.WriteTime)
	var wg sync.WaitGroup
	for i, p := range *ps {
		wg.Go(func() {
			mine := 0
			for time.Now().Before(deadline) && wctx.Err() == nil {
				id, err := startGame(wctx, agents[i], p.owner.Account)
				if err == nil {
					_, err = agents[i].Call(wctx, p.owner.Account, projectName, "task_cancel", map[string]any{"task_id": id}, nil)
				}
				if err != nil {
					if wctx.Err() != nil {
						return
					}
					fails.add(err)
					if mine++; mine >= 10 {
						return
					}
					continue
				}
				perProcess[i%n].Add(2)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start).Seconds()
	for i := range perProcess {
		w := float64(perProcess[i].Load()) / elapsed
		r.PerProcess = append(r.PerProcess, w)
		r.WritesPerSecond += w
	}
	r.Errors, r.FirstError = fails.n.Load(), fails.first

	// Approvals: the owner's stream on process 0, its approvals sent to
	// process 1 (0 when alone).
	b.progress("replicas: round %d: %d approvals sent to process %d, their events read on a stream held by process 1", round+1, sizes.Samples, min(1, n-1)+1)
	lat, err := b.pairs(setup, fmt.Sprintf("lat%d", round), 1)
	if err != nil {
		return r, logs, err
	}
	p := lat[0]
	w, err := p.owner.watchEvents(setup)
	if err != nil {
		return r, logs, err
	}
	defer w.stop()
	there := on(p.owner.Client, 1)
	agent := on(p.agent, 1)
	id, err := startGame(setup, agent, p.owner.Account)
	if err != nil {
		return r, logs, err
	}
	var answers, approved, done, cross []time.Duration
	for range sizes.Samples {
		err := func() error {
			view, err := there.Task(setup, id)
			if err != nil {
				return err
			}
			ap, err := sign(p.owner.Device, view)
			if err != nil {
				return err
			}
			t0 := time.Now()
			if _, err := there.Approve(setup, id, ap.req); err != nil {
				return err
			}
			answered := time.Now()
			states, at, err := w.await(setup, []string{id}, time.Until(deadlineOf(setup)))
			if err != nil {
				return err
			}
			if states[id] != "done" {
				return fmt.Errorf("task %s ended %s", id, states[id])
			}
			seen := w.approvedAt(id)
			if seen.IsZero() {
				return fmt.Errorf("task %s's approved event was not seen", id)
			}
			answers, approved = append(answers, answered.Sub(t0)), append(approved, seen.Sub(t0))
			done, cross = append(done, at[id].Sub(t0)), append(cross, seen.Sub(answered))
			st, err := agent.Status(setup, p.owner.Account, projectName, id, 0)
			if err != nil {
				return err
			}
			if st.NextTaskID == "" {
				return fmt.Errorf("task %s ended with no next turn", id)
			}
			id = st.NextTaskID
			return nil
		}()
		if err != nil {
			if r.FirstError == "" {
				r.FirstError = err.Error()
			}
			break
		}
	}
	r.Samples = len(done)
	r.AnswerMS, r.ApprovedMS, r.DoneMS = ms(median(answers)), ms(median(approved)), ms(median(done))
	r.CrossMS = ms(median(cross))
	b.progress("replicas: round %d: %.0f writes/s over %d process(es); approve → approved event %.2f ms, → done %.2f ms",
		round+1, r.WritesPerSecond, n, r.ApprovedMS, r.DoneMS)
	return r, logs, nil
}

// WriteTable writes one row per round.
func (r *ReplicasReport) WriteTable(w io.Writer) error {
	kind := "default"
	if r.Quick {
		kind = "quick"
	}
	fmt.Fprintf(w, "countersign bench --replicas (%s sizes), %s, %d cores; serve processes on one database\n\n",
		kind, r.Started.Format("2006-01-02 15:04 UTC"), r.Cores)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PROCESSES\tWRITES/S (SUM)\t÷ FIRST ROUND\tEACH PROCESS\tAPPROVALS\tANSWERED\t→ APPROVED EVENT\t→ DONE EVENT\tANSWER → EVENT")
	for _, rd := range r.Rounds {
		var each []string
		for _, v := range rd.PerProcess {
			each = append(each, number(v))
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%s ms\t%s ms\t%s ms\t%.2f ms\n", rd.Processes, number(rd.WritesPerSecond), number(rd.Ratio),
			strings.Join(each, " · "), rd.Samples, number(rd.AnswerMS), number(rd.ApprovedMS), number(rd.DoneMS), rd.CrossMS)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nWrites: agents looping guess_start + task_cancel, agent i calling process i mod n. Approvals: one at a time, sent to")
	fmt.Fprintln(w, "the second process, the events read on the owner's stream held by the first (both on the one process when alone);")
	fmt.Fprintln(w, "medians from the approval sent. Every process shares the machine's cores: the ratios, not the rates, are the figures.")
	var problems []string
	for _, rd := range r.Rounds {
		if rd.FirstError != "" {
			problems = append(problems, fmt.Sprintf("%d processes: %d failure(s); the first: %s", rd.Processes, max(rd.Errors, 1), rd.FirstError))
		}
	}
	if r.ServiceLog.Lines > 0 {
		problems = append(problems, fmt.Sprintf("the services logged %d warning or error line(s); the first: %s", r.ServiceLog.Lines, strings.Join(r.ServiceLog.First, "\n  ")))
	}
	if len(problems) > 0 {
		fmt.Fprintf(w, "\nProblems:\n  %s\n", strings.Join(problems, "\n  "))
	}
	return nil
}
