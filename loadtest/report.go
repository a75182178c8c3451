package loadtest

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// Report is what a run measured.
type Report struct {
	Started  time.Time `json:"started"`
	Cores    int       `json:"cores"`
	Quick    bool      `json:"quick"`
	Database string    `json:"database"`
	// Dropped is true once the database is dropped.
	Dropped bool  `json:"dropped"`
	Floor   Floor `json:"floor"`
	// IdleRSS is the service's VmRSS right after it started (bytes).
	IdleRSS    int64      `json:"idle_rss"`
	P1         Writes     `json:"p1"`
	P2         Approvals  `json:"p2"`
	P3         Latency    `json:"p3"`
	P7         Memory     `json:"p7"`
	Figures    []Figure   `json:"figures"`
	ServiceLog ServiceLog `json:"service_log"`
	// Profiles are the service's profiles written (bench --profile), and
	// ProfileProblems why any asked for was not.
	Profiles        []string `json:"profiles,omitempty"`
	ProfileProblems []string `json:"profile_problems,omitempty"`
}

// Figure is one row of the table: a measured value beside the floor it is
// compared to.
type Figure struct {
	// ID is floor, floor1, P1, P2, P2′, P3 or P7.
	ID    string  `json:"id"`
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Unit  string  `json:"unit"`
	// Floor and Ratio are 0 when the figure has none; Goal is "" then.
	Floor     float64 `json:"floor,omitempty"`
	FloorUnit string  `json:"floor_unit,omitempty"`
	Ratio     float64 `json:"ratio,omitempty"`
	// Goal is the ratio aimed at ("≥ 0.5", "≤ 20×"); Met says whether
	// the ratio reaches it.
	Goal string `json:"goal,omitempty"`
	Met  bool   `json:"met"`
}

func (r *Report) figures() []Figure {
	f := r.Floor
	rate := func(id, name string, v float64, goal float64) Figure {
		fg := Figure{ID: id, Name: name, Value: v, Unit: "/s", Floor: f.CommitsPerSecond, FloorUnit: "commits/s"}
		if f.CommitsPerSecond > 0 {
			fg.Ratio = v / f.CommitsPerSecond
		}
		if goal > 0 {
			fg.Goal, fg.Met = fmt.Sprintf("≥ %g", goal), fg.Ratio >= goal
		}
		return fg
	}
	p3 := Figure{ID: "P3", Name: fmt.Sprintf("approve → done seen on the event stream, median of %d", r.P3.Samples),
		Value: r.P3.MedianMS, Unit: "ms", Floor: f.OneCommitMS, FloorUnit: "ms", Goal: "≤ 20×"}
	if f.OneCommitMS > 0 {
		p3.Ratio = r.P3.MedianMS / f.OneCommitMS
		p3.Met = r.P3.Samples > 0 && p3.Ratio <= 20
	}
	return []Figure{
		{ID: "floor", Name: fmt.Sprintf("PostgreSQL commits/s, %d connections, 4 KiB rows", f.Connections), Value: f.CommitsPerSecond, Unit: "/s"},
		{ID: "floor1", Name: "one bare commit, median", Value: f.OneCommitMS, Unit: "ms"},
		rate("P1", fmt.Sprintf("task-layer writes/s, %d agents (guess_start + task_cancel)", r.P1.Agents), r.P1.WritesPerSecond, 0.5),
		rate("P2", fmt.Sprintf("approvals accepted/s, %d owners at once, %d in %d rounds", r.P2.Owners, r.P2.Accepted, r.P2.Rounds), r.P2.AcceptedPerSecond, 0.5),
		rate("P2′", fmt.Sprintf("approvals carried out (approve → done)/s, %d done", r.P2.Done), r.P2.DonePerSecond, 0),
		p3,
		{ID: "P7", Name: fmt.Sprintf("service VmRSS, %d tasks waiting, %d event streams", r.P7.Tasks, r.P7.Streams), Value: mib(r.P7.RSS), Unit: "MiB"},
	}
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// number prints a value with as many decimals as its size needs.
func number(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

// WriteTable writes the report as a table, one row per figure, then the
// CPU per operation and anything that went wrong.
func (r *Report) WriteTable(w io.Writer) error {
	kind := "default"
	if r.Quick {
		kind = "quick"
	}
	fmt.Fprintf(w, "countersign bench (%s sizes), %s, %d cores; PostgreSQL synchronous_commit=%s\n\n",
		kind, r.Started.Format("2006-01-02 15:04 UTC"), r.Cores, r.Floor.SynchronousCommit)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FIGURE\tMEASURED\tFLOOR\tRATIO\tGOAL\tMET")
	for _, f := range r.Figures {
		floor, ratio, goal, met := "", "", "", ""
		if f.FloorUnit != "" {
			floor = number(f.Floor) + " " + f.FloorUnit
			ratio = number(f.Ratio)
			if f.Unit == "ms" {
				ratio += "×"
			}
		}
		if f.Goal != "" {
			goal, met = f.Goal, "no"
			if f.Met {
				met = "yes"
			}
		}
		fmt.Fprintf(tw, "%s %s\t%s %s\t%s\t%s\t%s\t%s\n", f.ID, f.Name, number(f.Value), f.Unit, floor, ratio, goal, met)
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	fmt.Fprintf(w, "\nCPU ms per operation (service, PostgreSQL, bench; all PostgreSQL processes on the machine counted), and the WAL the server wrote per operation:\n")
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PHASE\tSERVICE\tPOSTGRESQL\tBENCH\tTOTAL\tCEILING ON THESE CORES\tWAL KiB")
	cpuRow := func(name, op string, c CPU) {
		svc, pg, be := c.PerOp()
		total := svc + pg + be
		ceiling := ""
		if total > 0 {
			ceiling = fmt.Sprintf("%s %s/s", number(float64(r.Cores)*1000/total), op)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", name, number(svc), number(pg), number(be), number(total), ceiling, number(c.WALPerOp()/1024))
	}
	cpuRow("P1 per write", "writes", r.P1.CPU)
	cpuRow("P2 per approval done", "approvals", r.P2.CPU)
	fmt.Fprintf(tw, "floor per commit\t\t%s\t\t\t\t\n", number(r.Floor.PostgresCPUPerCommitMS))
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, p := range []struct {
		phase, ops string
		l          *Lanes
	}{{"P1", "writes", r.P1.CPU.Lanes}, {"P2", "approvals and answers", r.P2.CPU.Lanes}} {
		if !p.l.counted() {
			continue
		}
		fmt.Fprintf(w, "%s: the service's %d lanes kept %s %s per commit (%d commits; %d run alone instead) and were busy %s %% of the time.\n",
			p.phase, p.l.Lanes, number(p.l.PerCommit()), p.ops, p.l.Commits, p.l.Alone, number(100*p.l.Busy()))
	}

	fmt.Fprintf(w, "\nP3: approve answered in %s ms (median); approve → done p90 %s ms, max %s ms.\n",
		number(r.P3.ApproveMS), number(r.P3.P90MS), number(r.P3.MaxMS))
	if r.P3.BesideCommitMS > 0 {
		fmt.Fprintf(w, "P3: one bare commit after each turn, median %s ms; P3 ÷ it %s×.\n",
			number(r.P3.BesideCommitMS), number(r.P3.MedianMS/r.P3.BesideCommitMS))
	}
	fmt.Fprintf(w, "P7: VmRSS %s MiB at start, %s MiB with the tasks waiting, %s MiB with the streams open too, of which %s MiB map files (RssFile: the binary's pages, which depend on the page cache; compare builds made together).\n",
		number(mib(r.IdleRSS)), number(mib(r.P7.TasksRSS)), number(mib(r.P7.RSS)), number(mib(r.P7.FileRSS)))
	var problems []string
	for _, p := range []struct {
		phase string
		n     int64
		first string
	}{{"P1", r.P1.Errors, r.P1.FirstError}, {"P2", r.P2.Errors, r.P2.FirstError}, {"P3", 0, r.P3.FirstError}, {"P7", 0, r.P7.FirstError}} {
		if p.first != "" {
			problems = append(problems, fmt.Sprintf("%s: %d failure(s); the first: %s", p.phase, max(p.n, 1), p.first))
		}
	}
	for _, p := range r.ProfileProblems {
		problems = append(problems, "a profile was not written: "+p)
	}
	if r.ServiceLog.Lines > 0 {
		problems = append(problems, fmt.Sprintf("the service logged %d warning or error line(s); the first: %s", r.ServiceLog.Lines, strings.Join(r.ServiceLog.First, "\n  ")))
	}
	if len(r.Profiles) > 0 {
		fmt.Fprintf(w, "\nThe service's profiles (go tool pprof -top FILE):\n  %s\n", strings.Join(r.Profiles, "\n  "))
	}
	if len(problems) > 0 {
		fmt.Fprintf(w, "\nProblems:\n  %s\n", strings.Join(problems, "\n  "))
	}
	return nil
}
