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

// ScaleSizes are the counts of `countersign bench --scale`: the population
// it builds, one step at a time, reading the service's memory after each.
type ScaleSizes struct {
	// Owners is how many owners sign in (one device each); each step's
	// streams are one per owner, so no step has more streams than owners.
	Owners int
	// Steps are the populations measured, in order; each has at least the
	// tasks and streams of the one before.
	Steps []ScaleStep
	// StepTime caps each step's building (and the sign-ins).
	StepTime time.Duration
	// Probes is how many owners' streams are checked at the end to still
	// carry their events: the owner's agent cancels one of its tasks and
	// the stream must say so.
	Probes int
}

// ScaleStep is one population: tasks waiting and event streams open.
type ScaleStep struct {
	Tasks   int `json:"tasks"`
	Streams int `json:"streams"`
}

// perPreparer is one preparer's limit of open tasks for an owner.
const perPreparer = 10

// DefaultScale is the full ladder: 5,000 owners signed in, then 10,000
// tasks waiting, then 1,000 and 5,000 event streams, then 100,000 tasks
// (the goal's population). About three minutes on two cores.
func DefaultScale() ScaleSizes {
	return ScaleSizes{Owners: 5000, Steps: []ScaleStep{{0, 0}, {10_000, 0}, {10_000, 1000}, {10_000, 5000}, {100_000, 5000}},
		StepTime: 6 * time.Minute, Probes: 50}
}

// QuickScale is a ladder of tiny counts, a few seconds, for tests.
func QuickScale() ScaleSizes {
	return ScaleSizes{Owners: 20, Steps: []ScaleStep{{0, 0}, {40, 0}, {40, 10}, {40, 20}, {200, 20}},
		StepTime: 30 * time.Second, Probes: 5}
}

// agents is how many agents the ladder needs: each may keep perPreparer
// tasks waiting for an owner.
func (s ScaleSizes) agents() int {
	most := 0
	for _, st := range s.Steps {
		most = max(most, st.Tasks)
	}
	per := s.Owners * perPreparer
	return max(1, (most+per-1)/per)
}

func (s ScaleSizes) check() error {
	if s.Owners < 1 || len(s.Steps) == 0 || s.StepTime <= 0 {
		return errors.New("the scale bench needs owners, steps and a time cap")
	}
	var prev ScaleStep
	for _, st := range s.Steps {
		if st.Tasks < prev.Tasks || st.Streams < prev.Streams || st.Streams > s.Owners {
			return fmt.Errorf("step %+v: every step has at least the tasks and streams of the one before, and at most one stream per owner", st)
		}
		prev = st
	}
	if s.agents() > 50 {
		return errors.New("too many tasks for the owners: at most 50 agents with 10 tasks each per owner")
	}
	return nil
}

// ScaleReport is what `countersign bench --scale` measured.
type ScaleReport struct {
	Started  time.Time `json:"started"`
	Cores    int       `json:"cores"`
	Quick    bool      `json:"quick"`
	Database string    `json:"database"`
	Dropped  bool      `json:"dropped"`
	Owners   int       `json:"owners"`
	Agents   int       `json:"agents"`
	// Idle is the service right after it started; Steps one reading per
	// population.
	Idle Reading `json:"idle"`
	// SignedIn is once the owners have signed in and set their projects,
	// their clients' idle connections still open.
	SignedIn Reading   `json:"signed_in"`
	Steps    []Reading `json:"steps"`
	// SignInSeconds is how long the owners' sign-ins took, SignInErrors
	// how many failed (each is tried again, up to three times) and
	// SignInFirst the first failure's words.
	SignInSeconds float64 `json:"sign_in_seconds"`
	SignInErrors  int64   `json:"sign_in_errors"`
	SignInFirst   string  `json:"sign_in_first,omitempty"`
	// Probes is how many streams were asked to carry an event at the end,
	// Heard how many did, ProbeMS the median from the agent's cancel
	// answered to its event seen.
	Probes  int     `json:"probes"`
	Heard   int     `json:"heard"`
	ProbeMS float64 `json:"probe_ms"`
	// StreamsLost is how many streams ended before the bench closed them.
	StreamsLost int64      `json:"streams_lost"`
	FirstError  string     `json:"first_error,omitempty"`
	ServiceLog  ServiceLog `json:"service_log"`
}

// Reading is the service's memory at one population.
type Reading struct {
	Tasks   int `json:"tasks"`
	Streams int `json:"streams"`
	// Seconds is how long the step took to build.
	Seconds float64 `json:"seconds"`
	// RSS is VmRSS (bytes); HeapInUse, StackInUse and Goroutines are the
	// Go runtime's own figures from the service's /metrics.
	RSS        int64 `json:"rss"`
	HeapInUse  int64 `json:"heap_in_use"`
	StackInUse int64 `json:"stack_in_use"`
	Goroutines int64 `json:"goroutines"`
}

// ScaleGoal is the resident memory allowed with the goal's population.
const (
	ScaleGoalBytes   = 150_000_000
	ScaleGoalTasks   = 100_000
	ScaleGoalStreams = 5000
)

// RunScale builds the population of sizes step by step against a service
// of its own and reads its memory after each step. Like Run, it leaves no
// database or process behind.
func RunScale(ctx context.Context, cfg Config, sizes ScaleSizes) (rep *ScaleReport, err error) {
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
	rep = &ScaleReport{Started: time.Now().UTC(), Cores: runtime.NumCPU(), Owners: sizes.Owners, Agents: sizes.agents()}
	rep.Quick = sizes.Owners == QuickScale().Owners
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
	if b.svc, err = launch(ctx, cfg.Binary, env, true, b.progress); err != nil {
		return rep, err
	}
	defer func() {
		if serr := b.svc.stop(); serr != nil {
			err = errors.Join(err, serr)
		}
		rep.ServiceLog = b.svc.log.errors()
	}()
	time.Sleep(time.Second)
	if rep.Idle, err = b.read(ctx); err != nil {
		return rep, err
	}
	err = b.scale(ctx, sizes, rep)
	return rep, err
}

// scale builds the population step by step.
func (b *bench) scale(ctx context.Context, sizes ScaleSizes, rep *ScaleReport) error {
	agents := make([]*client.Client, rep.Agents)
	names := make([]string, rep.Agents)
	for i := range agents {
		names[i] = fmt.Sprintf("scale-%02d.near", i)
		var err error
		if agents[i], err = b.newAgent(ctx, names[i]); err != nil {
			return err
		}
	}

	b.progress("scale: %d owners signing in, each setting its probe project for %d agent(s)", sizes.Owners, len(agents))
	setup, cancel := context.WithTimeout(ctx, sizes.StepTime)
	t0 := time.Now()
	owners := make([]*owner, sizes.Owners)
	var signInFails failures
	err := parallel(setup, sizes.Owners, 8, func(ctx context.Context, i int) (err error) {
		// A failed sign-in is tried again (a fresh owner), up to three
		// times; each failure is counted.
		for try := 0; ; try++ {
			if owners[i], err = b.newOwner(ctx); err == nil || try == 2 || ctx.Err() != nil {
				break
			}
			signInFails.add(err)
		}
		if err != nil {
			return err
		}
		return owners[i].putProject(ctx, names...)
	})
	cancel()
	rep.SignInSeconds = time.Since(t0).Seconds()
	rep.SignInErrors, rep.SignInFirst = signInFails.n.Load(), signInFails.first
	if err != nil {
		return fmt.Errorf("the owners' sign-ins: %w", err)
	}
	// The owners' clients keep the connections of their sign-ins open,
	// idle, until the service's idle timeout: they are read, then closed,
	// so that the steps measure tasks and streams.
	time.Sleep(2 * time.Second)
	if rep.SignedIn, err = b.read(ctx); err != nil {
		return err
	}
	b.addrs.close()
	agentHTTP.CloseIdleConnections()

	streams, stopStreams := context.WithCancel(ctx)
	defer stopStreams()
	watches := make([]*watch, sizes.Owners)
	var lost atomic.Int64
	defer func() {
		stopStreams()
		rep.StreamsLost = lost.Load()
	}()
	taskIDs := make([][]string, sizes.Owners)
	var idsMu sync.Mutex
	tasks, open := 0, 0
	for i, st := range sizes.Steps {
		step, cancel := context.WithTimeout(ctx, sizes.StepTime)
		t0 := time.Now()
		if st.Tasks > tasks {
			b.progress("scale: step %d: %d more tasks waiting (%d in all)", i+1, st.Tasks-tasks, st.Tasks)
			var made atomic.Int64
			// Job j is for owner j%n from agent (j/n)%agents: consecutive
			// opens are for different owners, and no agent has more
			// than perPreparer tasks waiting for one owner.
			n := sizes.Owners
			err := parallel(step, st.Tasks-tasks, 16, func(ctx context.Context, k int) error {
				j := tasks + k
				o := j % n
				id, err := startGame(ctx, agents[(j/n)%len(agents)], owners[o].Account)
				if err != nil {
					return err
				}
				idsMu.Lock()
				taskIDs[o] = append(taskIDs[o], id)
				idsMu.Unlock()
				made.Add(1)
				return nil
			})
			tasks += int(made.Load())
			if err != nil && !capped(ctx, step) {
				cancel()
				return fmt.Errorf("step %d's tasks (%d made): %w", i+1, tasks, err)
			}
		}
		if st.Streams > open {
			b.progress("scale: step %d: %d more event streams (%d in all)", i+1, st.Streams-open, st.Streams)
			err := parallel(step, st.Streams-open, 16, func(ctx context.Context, k int) (err error) {
				o := open + k
				if watches[o], err = owners[o].watchEvents(streams); err != nil {
					return err
				}
				go func(w *watch) {
					<-w.gone
					if streams.Err() == nil {
						lost.Add(1)
					}
				}(watches[o])
				return nil
			})
			n := 0
			for _, w := range watches {
				if w != nil {
					n++
				}
			}
			open = n
			if err != nil && !capped(ctx, step) {
				cancel()
				return fmt.Errorf("step %d's streams (%d open): %w", i+1, open, err)
			}
		}
		stepCapped := capped(ctx, step)
		cancel()
		built := time.Since(t0)
		// What the step started settles before the reading.
		time.Sleep(2 * time.Second)
		r, err := b.read(ctx)
		if err != nil {
			return err
		}
		r.Tasks, r.Streams, r.Seconds = tasks, open, built.Seconds()
		rep.Steps = append(rep.Steps, r)
		b.progress("scale: %d tasks, %d streams: VmRSS %.1f MiB, heap %.1f MiB, stacks %.1f MiB, %d goroutines",
			tasks, open, mib(r.RSS), mib(r.HeapInUse), mib(r.StackInUse), r.Goroutines)
		if stepCapped {
			// What was built is measured; the steps after it need it whole.
			rep.FirstError = fmt.Sprintf("step %d stopped at its cap of %s with %d tasks and %d streams; the ladder ends there", i+1, sizes.StepTime, tasks, open)
			break
		}
	}

	// The streams still carry events: a few owners' agents cancel one of
	// their tasks each, and the owner's stream must say so.
	var probeTimes []time.Duration
	for o := 0; o < open && len(probeTimes) < sizes.Probes && o < len(taskIDs); o += max(1, open/max(1, sizes.Probes)) {
		if len(taskIDs[o]) == 0 || watches[o] == nil {
			continue
		}
		rep.Probes++
		id := taskIDs[o][0]
		t0 := time.Now()
		ag := agents[0]
		if _, err := ag.Call(ctx, owners[o].Account, projectName, "task_cancel", map[string]any{"task_id": id}, nil); err != nil {
			rep.FirstError = fmt.Sprintf("a probe's cancel: %v", err)
			break
		}
		states, at, err := watches[o].await(ctx, []string{id}, 10*time.Second)
		if err != nil {
			if rep.FirstError == "" {
				rep.FirstError = "a probe: " + err.Error()
			}
			continue
		}
		if states[id] == "cancelled" {
			rep.Heard++
			probeTimes = append(probeTimes, at[id].Sub(t0))
		}
	}
	rep.ProbeMS = ms(median(probeTimes))
	return nil
}

// capped says whether step ended at its time cap while the run goes on.
func capped(run, step context.Context) bool {
	return run.Err() == nil && errors.Is(step.Err(), context.DeadlineExceeded)
}

// read is the service's memory now: VmRSS from /proc, and the Go runtime's
// figures from its /metrics.
func (b *bench) read(ctx context.Context) (Reading, error) {
	var r Reading
	var err error
	if r.RSS, err = rss(b.svc.pid()); err != nil {
		return r, err
	}
	if b.svc.metrics == "" {
		return r, nil
	}
	vals, err := readMetrics(ctx, b.svc.metrics, "go_goroutines", "go_memstats_heap_inuse_bytes", "go_memstats_stack_inuse_bytes")
	r.Goroutines, r.HeapInUse, r.StackInUse = int64(vals[0]), int64(vals[1]), int64(vals[2])
	return r, err
}

// Goal is the reading at the goal's population (100,000 tasks waiting,
// 5,000 streams), if the ladder reached it.
func (r *ScaleReport) Goal() (Reading, bool) {
	for _, s := range r.Steps {
		if s.Tasks >= ScaleGoalTasks && s.Streams >= ScaleGoalStreams {
			return s, true
		}
	}
	return Reading{}, false
}

// WriteTable writes the ladder: each step's memory, and what each stream
// and task added over the step before.
func (r *ScaleReport) WriteTable(w io.Writer) error {
	kind := "default"
	if r.Quick {
		kind = "quick"
	}
	fmt.Fprintf(w, "countersign bench --scale (%s sizes), %s, %d cores; %d owners signed in (%.0f s), %d agent(s)\n\n",
		kind, r.Started.Format("2006-01-02 15:04 UTC"), r.Cores, r.Owners, r.SignInSeconds, r.Agents)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "TASKS\tSTREAMS\tVmRSS MiB\tHEAP MiB\tSTACKS MiB\tGOROUTINES\tPER ADDED STREAM\tPER ADDED TASK\tBUILT IN\t")
	fmt.Fprintf(tw, "start\t\t%s\t%s\t%s\t%d\t\t\t\t\n", number(mib(r.Idle.RSS)), number(mib(r.Idle.HeapInUse)), number(mib(r.Idle.StackInUse)), r.Idle.Goroutines)
	fmt.Fprintf(tw, "signed in\t\t%s\t%s\t%s\t%d\t\t\t%.1f s\t\n", number(mib(r.SignedIn.RSS)), number(mib(r.SignedIn.HeapInUse)), number(mib(r.SignedIn.StackInUse)), r.SignedIn.Goroutines, r.SignInSeconds)
	prev := r.Idle
	for i, s := range r.Steps {
		perStream, perTask := "", ""
		if i > 0 {
			if d := s.Streams - prev.Streams; d > 0 && s.Tasks == prev.Tasks {
				perStream = perItem(s, prev, d)
			}
			if d := s.Tasks - prev.Tasks; d > 0 && s.Streams == prev.Streams {
				perTask = perItem(s, prev, d)
			}
		}
		fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%s\t%d\t%s\t%s\t%.1f s\t\n", s.Tasks, s.Streams, number(mib(s.RSS)), number(mib(s.HeapInUse)),
			number(mib(s.StackInUse)), s.Goroutines, perStream, perTask, s.Seconds)
		prev = s
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nPer added stream or task: VmRSS growth · Go heap growth · goroutines added, over the step before.")
	fmt.Fprintf(w, "Signed in: %d owners, their clients' idle keep-alive connections still open (closed before the steps).\n", r.Owners)
	if g, ok := r.Goal(); ok {
		met := "no"
		if g.RSS <= ScaleGoalBytes {
			met = "yes"
		}
		fmt.Fprintf(w, "P7′: VmRSS %.0f MB with %d tasks waiting and %d streams open; goal ≤ %d MB: %s.\n", float64(g.RSS)/1e6, g.Tasks, g.Streams, ScaleGoalBytes/1_000_000, met)
	}
	fmt.Fprintf(w, "Streams still carrying events at the end: %d of %d probed (median cancel → event %s ms); streams lost on the way: %d.\n",
		r.Heard, r.Probes, number(r.ProbeMS), r.StreamsLost)
	var problems []string
	if r.SignInErrors > 0 {
		problems = append(problems, fmt.Sprintf("sign-ins: %d failure(s), each tried again; the first: %s", r.SignInErrors, r.SignInFirst))
	}
	if r.FirstError != "" {
		problems = append(problems, r.FirstError)
	}
	if r.ServiceLog.Lines > 0 {
		problems = append(problems, fmt.Sprintf("the service logged %d warning or error line(s); the first: %s", r.ServiceLog.Lines, strings.Join(r.ServiceLog.First, "\n  ")))
	}
	if len(problems) > 0 {
		fmt.Fprintf(w, "\nProblems:\n  %s\n", strings.Join(problems, "\n  "))
	}
	return nil
}

// perItem is what each of d added items cost between two readings.
func perItem(s, prev Reading, d int) string {
	kb := func(v int64) string { return fmt.Sprintf("%.1f KB", float64(v)/float64(d)/1000) }
	return fmt.Sprintf("%s · %s · %.2f", kb(s.RSS-prev.RSS), kb(s.HeapInUse-prev.HeapInUse), float64(s.Goroutines-prev.Goroutines)/float64(d))
}
