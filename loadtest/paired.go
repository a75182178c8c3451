package loadtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"text/tabwriter"
	"time"
)

// PairedSizes are the counts of `countersign bench --paired OTHER`: P3, P1
// and P2 alone, on two services side by side.
type PairedSizes struct {
	// Turns is how many approvals are timed on each service.
	Turns int
	// Slices is how many times P1 runs on each service, in turn, for
	// SliceTime each, with Agents agents.
	Slices    int
	SliceTime time.Duration
	Agents    int
	// Rounds is how many rounds of P2 run on each service, in turn: each
	// by Agents owners approving ten each, two sets of owners taking
	// turns (P1's agents' owners and as many again).
	Rounds int
	// PhaseTime caps the setup and the timed turns, and the slices.
	PhaseTime time.Duration
}

// DefaultPaired times 200 turns, ten pairs of slices of P1 (the first
// 2 seconds, the second as many writes) and eight rounds of P2 (160 approvals each) on each service: about two minutes.
// Each owner makes 40 approvals in about twenty seconds, within what an
// owner may make (a burst of 60, then two a second).
func DefaultPaired() PairedSizes {
	return PairedSizes{Turns: 200, Slices: 10, SliceTime: 2 * time.Second, Agents: 16, Rounds: 8, PhaseTime: 4 * time.Minute}
}

// QuickPaired is tiny, for tests.
func QuickPaired() PairedSizes {
	return PairedSizes{Turns: 4, Slices: 2, SliceTime: 200 * time.Millisecond, Agents: 2, Rounds: 2, PhaseTime: 30 * time.Second}
}

func (s PairedSizes) check() error {
	if s.Turns < 1 || s.Slices < 1 || s.SliceTime <= 0 || s.Agents < 1 || s.Rounds < 1 || s.PhaseTime <= 0 {
		return errors.New("the paired bench needs a turn, a slice of P1 with an agent, a round of P2, and a time cap")
	}
	return nil
}

// PairedReport is what `countersign bench --paired` measured: P3, P1 and
// P2 on two binaries, each on a throwaway database of its own, their
// turns, P1's slices and P2's rounds timed in alternation (A B, B A, …) so
// that the machine's drift, which moves a whole run's figures by more than
// many a change, falls on both alike.
type PairedReport struct {
	Started   time.Time `json:"started"`
	Cores     int       `json:"cores"`
	Quick     bool      `json:"quick"`
	Databases []string  `json:"databases"`
	Dropped   bool      `json:"dropped"`
	// Floor1MS is one bare commit (the median of the floor's single
	// commits), measured on A's database before the turns.
	Floor1MS float64      `json:"floor1_ms"`
	A        PairedSide   `json:"a"`
	B        PairedSide   `json:"b"`
	Diff     PairedDiffer `json:"b_minus_a"`
	// WritesRatio is B's P1 writes/s ÷ A's, slice by slice (the nth of
	// each, run one after the other).
	WritesRatio PairedRatio `json:"writes_b_over_a"`
	// DoneRatio is B's P2 approvals carried out per second ÷ A's, round
	// by round.
	DoneRatio PairedRatio `json:"done_b_over_a"`
	// ServiceLog is both services' warnings and errors.
	ServiceLog ServiceLog `json:"service_log"`
}

// PairedSide is one binary's P3, P1 and P2.
type PairedSide struct {
	Binary    string    `json:"binary"`
	Latency   Latency   `json:"latency"`
	Writes    Writes    `json:"writes"`
	Approvals Approvals `json:"approvals"`
}

// PairedRatio sums up B's figure ÷ A's, slice by slice (or round by
// round): the median, the lowest and the highest, and in how many B was
// the higher.
type PairedRatio struct {
	Slices  int     `json:"slices"`
	Median  float64 `json:"median"`
	Min     float64 `json:"min"`
	Max     float64 `json:"max"`
	BHigher int     `json:"b_higher"`
}

// PairedDiffer is B's turn minus A's, turn by turn (the nth of each, made
// one after the other): the median and the quartiles in ms, and in how
// many pairs B was the quicker.
type PairedDiffer struct {
	Pairs    int     `json:"pairs"`
	MedianMS float64 `json:"median_ms"`
	Q1MS     float64 `json:"q1_ms"`
	Q3MS     float64 `json:"q3_ms"`
	BQuicker int     `json:"b_quicker"`
}

// pairedCommits is how many bare commits the one commit P3 is divided by
// is the median of.
const pairedCommits = 200

// pairedGames is how many games each side plays, in turn: at 200 turns a
// minute, 50 turns a minute for each owner.
const pairedGames = 4

// pairedSide is one side while it runs.
type pairedSide struct {
	b  *bench
	db *database
	// games are played in turn: an owner may approve 120 times a minute.
	games          []*game
	ends, answered []time.Duration
	firstError     string
	// ps are P1's agents, each with an owner of its own; writes what
	// they did in all, slice what they had done before the last slice.
	ps            []pair
	writes, slice Writes
	fails         failures
	// p2 is P2, on ps's owners and as many more, taking turns.
	p2 *p2
}

// sliceRate is the side's writes/s in its last slice of P1.
func (s *pairedSide) sliceRate() float64 {
	return 2 * float64(s.writes.Pairs-s.slice.Pairs) / (s.writes.Seconds - s.slice.Seconds)
}

// RunPaired times P3 on cfg.Binary (A) and on other (B) side by side.
func RunPaired(ctx context.Context, cfg Config, other string, sizes PairedSizes) (rep *PairedReport, err error) {
	if err := sizes.check(); err != nil {
		return nil, err
	}
	if cfg.Binary == "" || other == "" {
		return nil, errors.New("the two countersign binaries to compare are not known")
	}
	server, err := checkURL(cfg.DatabaseURL)
	if err != nil {
		return nil, err
	}
	rep = &PairedReport{Started: time.Now().UTC(), Cores: runtime.NumCPU(), Quick: sizes == QuickPaired(),
		A: PairedSide{Binary: cfg.Binary}, B: PairedSide{Binary: other}, Dropped: true}
	t0 := time.Now()
	addrs := newAddresses()
	defer addrs.close()
	sides := make([]*pairedSide, 2)
	defer func() {
		for _, s := range sides {
			if s == nil {
				continue
			}
			for _, g := range s.games {
				g.stop()
			}
			if s.p2 != nil {
				s.p2.stop()
			}
			if s.b.svc != nil {
				if serr := s.b.svc.stop(); serr != nil {
					err = errors.Join(err, serr)
				}
				rep.ServiceLog.add(s.b.svc.log.errors())
			}
			if s.db != nil {
				if derr := s.db.drop(); derr != nil {
					err, rep.Dropped = errors.Join(err, derr), false
				} else {
					s.b.progress("dropped the database %s", s.db.name)
				}
			}
			if s.b.dir != "" {
				_ = os.RemoveAll(s.b.dir)
			}
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, sizes.PhaseTime)
	defer cancel()
	for i, binary := range []string{cfg.Binary, other} {
		c := cfg
		c.Binary = binary
		s := &pairedSide{b: &bench{cfg: c, addrs: addrs, t0: t0}}
		sides[i] = s
		if s.b.dir, err = os.MkdirTemp("", "countersign-bench-"); err != nil {
			return rep, err
		}
		if s.db, err = createDatabase(ctx, server); err != nil {
			return rep, err
		}
		rep.Databases = append(rep.Databases, s.db.name)
		s.b.progress("created the database %s for %s", s.db.name, binary)
		if i == 0 {
			f, err := measureFloor(ctx, s.db.url, Sizes{FloorConns: 1, FloorTime: 100 * time.Millisecond, FloorSamples: pairedCommits})
			if err != nil {
				return rep, fmt.Errorf("one bare commit: %w", err)
			}
			rep.Floor1MS = f.OneCommitMS
		}
		if s.b.svc, err = startService(ctx, binary, s.db.url, false, s.b.progress); err != nil {
			return rep, err
		}
		for k := range pairedGames {
			g, err := s.b.newGame(ctx, fmt.Sprintf("paired%d-%d", i, k))
			if err != nil {
				return rep, err
			}
			s.games = append(s.games, g)
			// The first turns prepare statements and fill pools: untimed.
			if _, _, err := g.turn(ctx); err != nil {
				return rep, fmt.Errorf("%s's first turn: %w", binary, err)
			}
		}
		if s.ps, err = s.b.pairs(ctx, fmt.Sprintf("paired%d-load", i), sizes.Agents); err != nil {
			return rep, fmt.Errorf("P1's agents on %s: %w", binary, err)
		}
		s.writes.Agents = sizes.Agents
	}
	sides[0].b.progress("%d turns on each, one at a time, alternating", sizes.Turns)
	var diffs []time.Duration
	for n := range sizes.Turns {
		for _, s := range inTurn(sides, n) {
			if s.firstError != "" {
				continue
			}
			end, answered, err := s.games[n%len(s.games)].turn(ctx)
			if err != nil {
				s.firstError = err.Error()
				continue
			}
			s.ends, s.answered = append(s.ends, end), append(s.answered, answered)
		}
		a, b := sides[0], sides[1]
		if a.firstError != "" || b.firstError != "" {
			break
		}
		diffs = append(diffs, b.ends[n]-a.ends[n])
	}
	rep.A.Latency = latencyOf(sides[0].ends, sides[0].answered, sides[0].firstError)
	rep.B.Latency = latencyOf(sides[1].ends, sides[1].answered, sides[1].firstError)
	rep.Diff = differ(diffs)

	sides[0].b.progress("P1: %d slices on each, %d agents, alternating: the first of a pair %s, the second as many writes", sizes.Slices, sizes.Agents, sizes.SliceTime)
	var ratios []float64
	for n := range sizes.Slices {
		// The first of a pair of slices runs for SliceTime, the second
		// makes as many pairs (within three times as long): each side's
		// P1 then leaves as many tasks behind, and the P2 that follows
		// meets databases alike. (Slices of equal time left the quicker
		// side's database a tenth fuller, which made its P2 rounds about
		// as much slower.)
		work := int64(1 << 40)
		for i, s := range inTurn(sides, n) {
			s.slice = s.writes
			d := sizes.SliceTime
			if i == 1 {
				d = 3 * sizes.SliceTime
			}
			if err := s.b.loopPairs(ctx, s.ps, d, work, &s.writes, &s.fails); err != nil {
				return rep, fmt.Errorf("P1 on %s: %w", s.b.cfg.Binary, err)
			}
			if did := s.writes.Pairs - s.slice.Pairs; did > 0 {
				work = did
			}
		}
		if a, b := sides[0].sliceRate(), sides[1].sliceRate(); a > 0 {
			ratios = append(ratios, b/a)
		}
	}
	rep.A.Writes, rep.B.Writes = sides[0].writes, sides[1].writes
	rep.WritesRatio = ratioOf(ratios)

	sides[0].b.progress("P2: %d rounds on each, %d owners approving ten each, alternating", sizes.Rounds, sizes.Agents)
	for i, s := range sides {
		more, err := s.b.pairs(ctx, fmt.Sprintf("paired%d-p2", i), sizes.Agents)
		if err != nil {
			return rep, fmt.Errorf("P2's owners on %s: %w", s.b.cfg.Binary, err)
		}
		if s.p2, err = startP2(ctx, append(slices.Clone(s.ps), more...), sizes.Rounds*sizes.Agents*perRound); err != nil {
			return rep, fmt.Errorf("P2 on %s: %w", s.b.cfg.Binary, err)
		}
	}
	ratios = nil
	for n := range sizes.Rounds {
		rate := map[*pairedSide]float64{}
		for _, s := range inTurn(sides, n) {
			from := n % 2 * sizes.Agents // the two sets of owners take turns
			if rate[s], _, err = s.b.p2Round(ctx, s.p2, from, from+sizes.Agents, func() {}); err != nil {
				return rep, fmt.Errorf("P2 on %s: %w", s.b.cfg.Binary, err)
			}
		}
		if a, b := rate[sides[0]], rate[sides[1]]; a > 0 && b > 0 {
			ratios = append(ratios, b/a)
		}
	}
	rep.A.Approvals, rep.B.Approvals = sides[0].p2.end(ctx, sizes.PhaseTime), sides[1].p2.end(ctx, sizes.PhaseTime)
	rep.DoneRatio = ratioOf(ratios)
	return rep, nil
}

// inTurn is the two sides in the order the nth pair runs them: A B, then
// B A, so that whichever goes first in a pair is not always the same.
func inTurn(sides []*pairedSide, n int) []*pairedSide {
	if n%2 == 1 {
		return []*pairedSide{sides[1], sides[0]}
	}
	return []*pairedSide{sides[0], sides[1]}
}

// ratioOf sums up the slices' ratios.
func ratioOf(r []float64) PairedRatio {
	out := PairedRatio{Slices: len(r)}
	if len(r) == 0 {
		return out
	}
	out.Min, out.Max, out.Median = slices.Min(r), slices.Max(r), median(slices.Clone(r))
	for _, x := range r {
		if x > 1 {
			out.BHigher++
		}
	}
	return out
}

// write prints the ratio of what, as a sentence of the table.
func (q PairedRatio) write(w io.Writer, what string) {
	fmt.Fprintf(w, "\nB ÷ A %s (%d pairs): median %s, from %s to %s; B the higher in %d.\n",
		what, q.Slices, number(q.Median), number(q.Min), number(q.Max), q.BHigher)
}

// differ sums up the paired differences.
func differ(d []time.Duration) PairedDiffer {
	out := PairedDiffer{Pairs: len(d)}
	if len(d) == 0 {
		return out
	}
	s := slices.Clone(d)
	out.Q1MS, out.MedianMS, out.Q3MS = ms(percentile(s, 25)), ms(median(s)), ms(percentile(s, 75))
	for _, x := range d {
		if x < 0 {
			out.BQuicker++
		}
	}
	return out
}

// WriteTable prints the report for people.
func (r *PairedReport) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "countersign bench --paired, %s, %d cores: P3 (approve → done seen on the event stream), P1 and P2, timed in alternation\n\n",
		r.Started.Format("2006-01-02 15:04 MST"), r.Cores)
	sides := []struct {
		name string
		side PairedSide
	}{{"A", r.A}, {"B", r.B}}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SIDE\tTURNS\tMEDIAN\tP90\tMAX\tANSWERED (MEDIAN)\t÷ ONE BARE COMMIT\tBINARY")
	for _, s := range sides {
		l := s.side.Latency
		ratio := "—"
		if r.Floor1MS > 0 && l.Samples > 0 {
			ratio = number(l.MedianMS/r.Floor1MS) + "×"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s ms\t%s ms\t%s ms\t%s ms\t%s\t%s\n", s.name, l.Samples, number(l.MedianMS), number(l.P90MS),
			number(l.MaxMS), number(l.ApproveMS), ratio, s.side.Binary)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	d := r.Diff
	fmt.Fprintf(w, "\nB − A, turn by turn (%d pairs): median %s ms, quartiles %s to %s ms; B the quicker in %d.\n",
		d.Pairs, number(d.MedianMS), number(d.Q1MS), number(d.Q3MS), d.BQuicker)
	fmt.Fprintf(w, "One bare commit: %s ms (median of %d, on A's database before the turns).\n", number(r.Floor1MS), pairedCommits)

	fmt.Fprintf(w, "\nP1 (guess_start + task_cancel), slices timed in alternation:\n\n")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SIDE\tWRITES/S\tSERVICE · POSTGRESQL · BENCH CPU MS PER WRITE\tLANES: PER COMMIT, BUSY\tERRORS")
	for _, s := range sides {
		wr := s.side.Writes
		svc, pg, be := wr.CPU.PerOp()
		fmt.Fprintf(tw, "%s\t%s\t%s · %s · %s\t%s\t%d\n", s.name, number(wr.WritesPerSecond), number(svc), number(pg), number(be), wr.CPU.Lanes.brief(), wr.Errors)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	r.WritesRatio.write(w, "writes/s, slice by slice")

	fmt.Fprintf(w, "\nP2 (every owner approving ten at once, each answer run opening the next turn), rounds timed in alternation:\n\n")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SIDE\tROUNDS\tACCEPTED/S\tDONE/S\tSERVICE · POSTGRESQL · BENCH CPU MS PER APPROVAL DONE\tLANES: PER COMMIT, BUSY\tERRORS")
	for _, s := range sides {
		a := s.side.Approvals
		svc, pg, be := a.CPU.PerOp()
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s · %s · %s\t%s\t%d\n", s.name, a.Rounds, number(a.AcceptedPerSecond), number(a.DonePerSecond),
			number(svc), number(pg), number(be), a.CPU.Lanes.brief(), a.Errors)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	r.DoneRatio.write(w, "approvals done/s, round by round")
	for _, s := range sides {
		if e := s.side.Latency.FirstError; e != "" {
			fmt.Fprintf(w, "Problem: %s stopped: %s\n", s.name, e)
		}
		if e := s.side.Writes.FirstError; e != "" {
			fmt.Fprintf(w, "Problem: %s's P1: %s\n", s.name, e)
		}
		if e := s.side.Approvals.FirstError; e != "" {
			fmt.Fprintf(w, "Problem: %s's P2: %s\n", s.name, e)
		}
	}
	return nil
}
