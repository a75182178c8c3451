package loadtest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The CPU and memory figures come from Linux's /proc. Times there are in
// clock ticks of USER_HZ, which is 100 on every Linux architecture.
const userHZ = 100

// procCPU is the user and system CPU time a process has used so far (0 when
// it cannot be read).
func procCPU(pid string) time.Duration {
	raw, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
	if err != nil {
		return 0
	}
	_, cpu, ok := parseStat(raw)
	if !ok {
		return 0
	}
	return cpu
}

// parseStat reads a /proc/<pid>/stat line: the command's name and
// utime+stime. The name is in parentheses and may hold spaces and
// parentheses itself, so the fields are counted from the last ')'.
func parseStat(raw []byte) (string, time.Duration, bool) {
	open, close := bytes.IndexByte(raw, '('), bytes.LastIndexByte(raw, ')')
	if open < 0 || close < open {
		return "", 0, false
	}
	fields := strings.Fields(string(raw[close+1:]))
	// fields[0] is the state (field 3); utime and stime are fields 14
	// and 15.
	if len(fields) < 13 {
		return "", 0, false
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		return "", 0, false
	}
	return string(raw[open+1 : close]), time.Duration(utime+stime) * time.Second / userHZ, true
}

// ProcessCPU is the user and system CPU time process pid ("self": this
// one) has used so far, and PostgresCPU that of every process named
// postgres, for benchmarks that price the two sides of a statement.
func ProcessCPU(pid string) time.Duration { return procCPU(pid) }

// PostgresCPU: see ProcessCPU.
func PostgresCPU() time.Duration { return postgresCPU() }

// postgresCPU is the CPU time used so far by every process named postgres:
// the server and its backends, the bench's own and any other client's. A
// backend that ends between two readings takes its time with it.
func postgresCPU() time.Duration {
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	var total time.Duration
	for _, d := range dirs {
		if _, err := strconv.Atoi(d.Name()); err != nil {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", d.Name(), "stat"))
		if err != nil {
			continue
		}
		if name, cpu, ok := parseStat(raw); ok && name == "postgres" {
			total += cpu
		}
	}
	return total
}

// rss is a process's resident memory (VmRSS) in bytes.
func rss(pid string) (int64, error) { return statusBytes(pid, "VmRSS") }

// fileRSS is the part of a process's resident memory that maps files
// (RssFile: its binary's and libraries' pages), in bytes. It depends on
// how the binary's file sits in the page cache, not on what the process
// does: the same binary freshly written can map several MiB more.
func fileRSS(pid string) (int64, error) { return statusBytes(pid, "RssFile") }

// statusBytes reads a kB field of /proc/<pid>/status, in bytes.
func statusBytes(pid, field string) (int64, error) {
	raw, err := os.ReadFile(filepath.Join("/proc", pid, "status"))
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			f := strings.Fields(rest)
			if len(f) == 2 && f[1] == "kB" {
				kb, err := strconv.ParseInt(f[0], 10, 64)
				if err == nil {
					return kb << 10, nil
				}
			}
		}
	}
	return 0, fmt.Errorf("/proc/%s/status has no %s line", pid, field)
}

// CPU is the CPU time spent during a phase, in milliseconds, by the service,
// by PostgreSQL and by the bench itself, and the operations it was spent on;
// and the WAL the server wrote meanwhile, in bytes (every database's: the
// bench's is the only one written to), which unlike CPU time does not
// depend on what else the machine is doing.
type CPU struct {
	Ops        int     `json:"ops"`
	ServiceMS  float64 `json:"service_ms"`
	PostgresMS float64 `json:"postgres_ms"`
	BenchMS    float64 `json:"bench_ms"`
	WALBytes   int64   `json:"wal_bytes"`
	// Lanes is what the service's lanes did meanwhile (from its /metrics;
	// absent when it groups nothing or serves no metrics).
	Lanes *Lanes `json:"lanes,omitempty"`
}

// Lanes is what the lanes that group different owners' actions did over a
// phase: the commits they made, the actions those kept, the actions run
// alone instead, and their busy time against the phase's.
type Lanes struct {
	Lanes       int     `json:"lanes"`
	Commits     int64   `json:"commits"`
	Kept        int64   `json:"kept"`
	Alone       int64   `json:"alone"`
	BusySeconds float64 `json:"busy_seconds"`
	Seconds     float64 `json:"seconds"`
}

// PerCommit is how many actions a commit kept.
func (l *Lanes) PerCommit() float64 {
	if l.Commits == 0 {
		return 0
	}
	return float64(l.Kept) / float64(l.Commits)
}

// counted says whether the service counted its lanes: it groups actions
// and serves the counters.
func (l *Lanes) counted() bool { return l != nil && l.Lanes > 0 }

// brief says how many actions a commit kept and how busy the lanes were,
// or "—" where the lanes were not counted.
func (l *Lanes) brief() string {
	if !l.counted() {
		return "—"
	}
	return fmt.Sprintf("%s, %s %%", number(l.PerCommit()), number(100*l.Busy()))
}

// Busy is the share of the time the lanes were busy, over all of them.
func (l *Lanes) Busy() float64 {
	if l.Seconds == 0 || l.Lanes == 0 {
		return 0
	}
	return l.BusySeconds / (l.Seconds * float64(l.Lanes))
}

// WALPerOp is the WAL written per operation, in bytes.
func (c CPU) WALPerOp() float64 {
	if c.Ops == 0 {
		return 0
	}
	return float64(c.WALBytes) / float64(c.Ops)
}

// PerOp is each side's CPU per operation, in milliseconds.
func (c CPU) PerOp() (service, postgres, bench float64) {
	if c.Ops == 0 {
		return 0, 0, 0
	}
	n := float64(c.Ops)
	return c.ServiceMS / n, c.PostgresMS / n, c.BenchMS / n
}

// cpuMark is a reading of the three CPU counters and of the WAL's position
// (-1 when it could not be read).
type cpuMark struct {
	service, postgres, bench time.Duration
	wal                      int64
	// lanes is the service's lane counters, when it serves them.
	lanes *laneMark
}

// laneMark is a reading of the service's lane counters: their totals so
// far (Seconds unused), and when they were read.
type laneMark struct {
	Lanes
	at time.Time
}

// mark reads the counters at a phase's start (first) or end. The
// service's lanes are read outside the CPU counters, before them at the
// start and after them at the end: rendering /metrics (1.6 ms of the
// service's CPU, and the gauges' queries) is no part of the phase.
func (b *bench) mark(first bool) cpuMark {
	var lanes *laneMark
	if first {
		lanes = readLanes(b.svc.metrics)
	}
	m := cpuMark{service: procCPU(b.svc.pid()), postgres: postgresCPU(), bench: procCPU("self"), wal: -1, lanes: lanes}
	if b.wal != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := b.wal.QueryRow(ctx, "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint").Scan(&m.wal); err != nil {
			m.wal = -1
		}
	}
	if !first {
		m.lanes = readLanes(b.svc.metrics)
	}
	return m
}

// add adds what was spent since m to c.
func (c *CPU) add(m cpuMark, now cpuMark) {
	c.ServiceMS += ms(now.service - m.service)
	c.PostgresMS += ms(now.postgres - m.postgres)
	c.BenchMS += ms(now.bench - m.bench)
	if m.wal >= 0 && now.wal >= m.wal {
		c.WALBytes += now.wal - m.wal
	}
	if a, z := m.lanes, now.lanes; a != nil && z != nil && z.counted() {
		if c.Lanes == nil {
			c.Lanes = &Lanes{Lanes: z.Lanes.Lanes}
		}
		l := c.Lanes
		l.Commits += z.Commits - a.Commits
		l.Kept += z.Kept - a.Kept
		l.Alone += z.Alone - a.Alone
		l.BusySeconds += z.BusySeconds - a.BusySeconds
		l.Seconds += z.at.Sub(a.at).Seconds()
	}
}

// readLanes reads the lane counters from a service's /metrics URL (nil
// when there is none or it cannot be read).
func readLanes(url string) *laneMark {
	if url == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	vals, err := readMetrics(ctx, url, "countersign_store_group_lanes", "countersign_store_group_commits_total",
		"countersign_store_grouped_kept_total", "countersign_store_grouped_alone_total", "countersign_store_group_busy_seconds_total")
	if err != nil {
		return nil
	}
	return &laneMark{at: time.Now(), Lanes: Lanes{Lanes: int(vals[0]), Commits: int64(vals[1]), Kept: int64(vals[2]), Alone: int64(vals[3]),
		BusySeconds: vals[4]}}
}
