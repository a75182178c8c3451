package loadtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// checkURL parses the server's URL and refuses one whose host is not
// loopback: the bench loads the machine it runs on and nothing else.
func checkURL(raw string) (*url.URL, error) {
	if raw == "" {
		return nil, errors.New("no PostgreSQL server given: set COUNTERSIGN_DATABASE_URL or --database to postgres://user@127.0.0.1:5432/postgres")
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Host == "" {
		return nil, errors.New("the database URL is not a postgres://user@host:port/database URL")
	}
	if u.Query().Has("host") {
		return nil, errors.New("the database URL names its host in a host parameter; put a loopback host (127.0.0.1) in the URL itself")
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("the database host %s is not a loopback address: the bench runs only against a PostgreSQL on this machine (127.0.0.1, ::1 or localhost)", host)
	}
	return u, nil
}

// database is the bench's throwaway database.
type database struct {
	name   string
	url    string
	server string
}

// createDatabase creates countersign_bench_<random hex> on the server.
func createDatabase(ctx context.Context, server *url.URL) (*database, error) {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	db := &database{name: "countersign_bench_" + hex.EncodeToString(b[:]), server: server.String()}
	u := *server
	u.Path = "/" + db.name
	db.url = u.String()
	if err := admin(ctx, db.server, "CREATE DATABASE "+db.name); err != nil {
		return nil, fmt.Errorf("cannot create the bench's database on %s (the user needs CREATEDB): %w", server.Redacted(), err)
	}
	return db, nil
}

// drop drops the database, closing whatever is still connected to it. It
// runs even when the run's context has ended.
func (db *database) drop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := admin(ctx, db.server, "DROP DATABASE IF EXISTS "+db.name+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("cannot drop the bench's database %s (drop it by hand): %w", db.name, err)
	}
	return nil
}

// admin runs one statement on the server's own database.
func admin(ctx context.Context, server, sql string) error {
	pool, err := openPool(ctx, server, 1)
	if err != nil {
		return err
	}
	defer pool.Close()
	_, err = pool.Exec(ctx, sql)
	return err
}

// openPool opens a pool of at most n connections (a pool, so that the URL
// may carry pgxpool's own parameters).
func openPool(ctx context.Context, url string, n int) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("the database URL does not parse: %w", err)
	}
	cfg.MaxConns = int32(n)
	cfg.MinConns = 0
	return pgxpool.NewWithConfig(ctx, cfg)
}

// Floor is PostgreSQL's own single-row commit rate on the bench's database:
// each commit one INSERT of a 4 KiB row in a transaction of its own, with
// synchronous_commit as the server has it.
type Floor struct {
	Connections int     `json:"connections"`
	Commits     int64   `json:"commits"`
	Seconds     float64 `json:"seconds"`
	// CommitsPerSecond is the rate of all the connections together.
	CommitsPerSecond float64 `json:"commits_per_second"`
	// OneCommitMS is the median of single commits on one otherwise idle
	// connection ("one bare commit").
	OneCommitMS float64 `json:"one_commit_ms"`
	Samples     int     `json:"samples"`
	// SynchronousCommit is the server's setting.
	SynchronousCommit string `json:"synchronous_commit"`
	// PostgresCPUPerCommitMS is the CPU PostgreSQL spent per commit in the
	// many-connection loop.
	PostgresCPUPerCommitMS float64 `json:"postgres_cpu_per_commit_ms"`
}

const floorTable = "bench_floor"

// commitTable is a table of 4 KiB rows of random bytes, each inserted in a
// transaction of its own: one bare commit.
type commitTable struct {
	name string
	row  []byte
}

// execer is a connection or a pool.
type execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

func newCommitTable(ctx context.Context, on execer, name string) (*commitTable, error) {
	if _, err := on.Exec(ctx, "CREATE TABLE "+name+" (id bigserial PRIMARY KEY, body bytea NOT NULL)"); err != nil {
		return nil, err
	}
	c := &commitTable{name: name, row: make([]byte, 4096)}
	_, _ = rand.Read(c.row)
	return c, nil
}

// commit inserts one row on on.
func (c *commitTable) commit(ctx context.Context, on execer) error {
	_, err := on.Exec(ctx, "INSERT INTO "+c.name+" (body) VALUES ($1)", c.row)
	return err
}

func (c *commitTable) drop(on execer) {
	_, _ = on.Exec(context.Background(), "DROP TABLE IF EXISTS "+c.name)
}

func measureFloor(ctx context.Context, url string, s Sizes) (Floor, error) {
	f := Floor{Connections: s.FloorConns, Samples: s.FloorSamples}
	pool, err := openPool(ctx, url, s.FloorConns)
	if err != nil {
		return f, err
	}
	defer pool.Close()
	if err := pool.QueryRow(ctx, "SHOW synchronous_commit").Scan(&f.SynchronousCommit); err != nil {
		return f, err
	}
	table, err := newCommitTable(ctx, pool, floorTable)
	if err != nil {
		return f, err
	}
	defer table.drop(pool)
	insert := func(c *pgxpool.Conn) error { return table.commit(ctx, c) }

	// Every connection is made, and its statement prepared, before the
	// clock starts.
	conns := make([]*pgxpool.Conn, s.FloorConns)
	defer func() {
		for _, c := range conns {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i := range conns {
		if conns[i], err = pool.Acquire(ctx); err != nil {
			return f, err
		}
		if err := insert(conns[i]); err != nil {
			return f, err
		}
	}
	var n atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, len(conns))
	pg0 := postgresCPU()
	start := time.Now()
	deadline := start.Add(s.FloorTime)
	for i, c := range conns {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				if err := insert(c); err != nil {
					errs[i] = err
					return
				}
				n.Add(1)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	pgCPU := postgresCPU() - pg0
	if err := errors.Join(errs...); err != nil {
		return f, err
	}
	f.Commits, f.Seconds = n.Load(), elapsed.Seconds()
	f.CommitsPerSecond = float64(f.Commits) / elapsed.Seconds()
	if f.Commits > 0 {
		f.PostgresCPUPerCommitMS = ms(pgCPU) / float64(f.Commits)
	}

	one := make([]time.Duration, s.FloorSamples)
	for i := range one {
		t0 := time.Now()
		if err := insert(conns[0]); err != nil {
			return f, err
		}
		one[i] = time.Since(t0)
	}
	f.OneCommitMS = ms(median(one))
	return f, nil
}

// bareCommits times one bare commit at a time, as the floor's single
// commits are, on a connection and table of its own: P3 sets them beside
// its turns.
type bareCommits struct {
	pool  *pgxpool.Pool
	table *commitTable
}

const besideTable = "bench_beside"

func newBareCommits(ctx context.Context, url string) (*bareCommits, error) {
	pool, err := openPool(ctx, url, 1)
	if err != nil {
		return nil, err
	}
	table, err := newCommitTable(ctx, pool, besideTable)
	if err != nil {
		pool.Close()
		return nil, err
	}
	c := &bareCommits{pool: pool, table: table}
	// The statement is prepared before anything is timed.
	if _, err := c.time(ctx); err != nil {
		c.close()
		return nil, err
	}
	return c, nil
}

// time commits one row and says how long it took.
func (c *bareCommits) time(ctx context.Context) (time.Duration, error) {
	t0 := time.Now()
	err := c.table.commit(ctx, c.pool)
	return time.Since(t0), err
}

func (c *bareCommits) close() {
	c.table.drop(c.pool)
	c.pool.Close()
}

// median is the middle of ds (the mean of the two middles for an even
// count); ds is sorted in place.
func median[T ~int64 | ~float64](ds []T) T {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	if len(ds)%2 == 1 {
		return ds[len(ds)/2]
	}
	return (ds[len(ds)/2-1] + ds[len(ds)/2]) / 2
}

// percentile is the p-th percentile (0–100) of ds, nearest rank; ds is
// sorted in place.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	i := int(float64(len(ds))*p/100+0.5) - 1
	return ds[max(0, min(i, len(ds)-1))]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
