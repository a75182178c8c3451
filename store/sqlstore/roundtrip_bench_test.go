package sqlstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"countersign/loadtest"
	"countersign/store/storetest"
)

// BenchmarkRoundTrips prices, on one connection to the test server, what
// the store's design counts: a round trip against a statement pipelined
// with others, and a commit against a write in a transaction already open.
// Each reports the wall time and the CPU of both sides per statement (this
// process's, and every postgres process's, so run it on a quiet machine):
//
//   - one-per-round-trip and ten-per-round-trip: a primary-key lookup, each
//     sent and awaited alone, or ten to a batch;
//   - commit-each and one-transaction: a one-row insert, each its own
//     transaction, or all in one.
//
// The differences are a round trip's and a commit's price.
//
//	go test -run '^$' -bench RoundTrips -benchtime 5000x ./store/sqlstore/
func BenchmarkRoundTrips(b *testing.B) {
	ctx := context.Background()
	db := storetest.Postgres(b)
	c := schemaConn(b, db, nil)
	execAll(b, c,
		"CREATE TABLE bench_rt (id BIGINT PRIMARY KEY, v BIGINT)",
		"INSERT INTO bench_rt VALUES (1, 0)",
		"CREATE TABLE bench_commit (id BIGSERIAL PRIMARY KEY, v BIGINT)")
	const lookup, insert = "SELECT v FROM bench_rt WHERE id = $1", "INSERT INTO bench_commit (v) VALUES ($1)"
	exec := func(b *testing.B, sql string, args ...any) {
		if _, err := c.Exec(ctx, sql, args...); err != nil {
			b.Fatal(err)
		}
	}
	priced := func(name string, f func(b *testing.B)) {
		b.Run(name, func(b *testing.B) {
			self, pg, start := loadtest.ProcessCPU("self"), loadtest.PostgresCPU(), time.Now()
			f(b)
			n := float64(b.N)
			b.ReportMetric(float64(time.Since(start).Microseconds())/n, "µs-wall/stmt")
			b.ReportMetric(float64((loadtest.ProcessCPU("self")-self).Microseconds())/n, "µs-client-cpu/stmt")
			b.ReportMetric(float64((loadtest.PostgresCPU()-pg).Microseconds())/n, "µs-postgres-cpu/stmt")
		})
	}
	priced("one-per-round-trip", func(b *testing.B) {
		for b.Loop() {
			exec(b, lookup, 1)
		}
	})
	priced("ten-per-round-trip", func(b *testing.B) {
		batch := &pgx.Batch{}
		for b.Loop() {
			batch.Queue(lookup, 1)
			if batch.Len() == 10 {
				if err := c.SendBatch(ctx, batch).Close(); err != nil {
					b.Fatal(err)
				}
				batch = &pgx.Batch{}
			}
		}
		if batch.Len() > 0 {
			if err := c.SendBatch(ctx, batch).Close(); err != nil {
				b.Fatal(err)
			}
		}
	})
	priced("commit-each", func(b *testing.B) {
		for b.Loop() {
			exec(b, insert, 1)
		}
	})
	priced("one-transaction", func(b *testing.B) {
		exec(b, "BEGIN")
		for b.Loop() {
			exec(b, insert, 1)
		}
		exec(b, "COMMIT")
	})
}
