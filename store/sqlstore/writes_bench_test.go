package sqlstore_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"countersign"
	"countersign/store"
	"countersign/store/storetest"
)

// BenchmarkTaskWrites is the store's own rate of task-layer writes on
// PostgreSQL, without the service around it: 16 writers (8 per core), each
// for an owner of its own, opening a task with a 1.7 KiB sealed copy and a
// 1.4 KiB content blob (a guessing game's turn) and cancelling it, each its
// own transaction with its event. "floor" is the same server's commit rate
// in the same run (16 connections, one 4 KiB row per commit), and the
// writes' figure is reported against it as writes/floor.
//
//	go test -run '^$' -bench TaskWrites -benchtime 5s ./store/sqlstore/
func BenchmarkTaskWrites(b *testing.B) {
	ctx := context.Background()
	db := storetest.Postgres(b)
	var floor float64
	var writer atomic.Int64 // across the runs of a sub-benchmark: task ids are never reused
	b.Run("floor", func(b *testing.B) {
		pool, err := pgxpool.New(ctx, storetest.PostgresURL()+"&search_path="+db.SchemaName()+"&pool_max_conns=16")
		if err != nil {
			b.Fatal(err)
		}
		defer pool.Close()
		if _, err := pool.Exec(ctx, "CREATE TABLE IF NOT EXISTS bench_floor (id BIGSERIAL PRIMARY KEY, blob BYTEA)"); err != nil {
			b.Fatal(err)
		}
		defer pool.Exec(ctx, "DROP TABLE bench_floor")
		blob := make([]byte, 4096)
		_, _ = rand.Read(blob)
		b.SetParallelism(8)
		start := time.Now()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := pool.Exec(ctx, "INSERT INTO bench_floor (blob) VALUES ($1)", blob); err != nil {
					b.Error(err)
					return
				}
			}
		})
		floor = float64(b.N) / time.Since(start).Seconds()
		b.ReportMetric(floor, "commits/s")
	})
	b.Run("open+cancel", func(b *testing.B) {
		sealed, content := make([]byte, 1680), make([]byte, 1440)
		_, _ = rand.Read(sealed)
		_, _ = rand.Read(content)
		cancel, err := countersign.Transition(countersign.KindInput, countersign.StateOpen, countersign.StateCancelled, countersign.ActorAgent, "")
		if err != nil {
			b.Fatal(err)
		}
		b.SetParallelism(8)
		start := time.Now()
		b.RunParallel(func(pb *testing.PB) {
			w := writer.Add(1)
			for i := 0; pb.Next(); i++ {
				id := fmt.Sprintf("w%d-%d", w, i)
				k, c := storetest.NewTask(id, fmt.Sprintf("owner%d.near", w), "bot.near")
				c.Sealed, c.Content, c.Files = sealed, content, nil
				if err := db.Tx(ctx, func(tx store.Tx) error { return tx.InsertTask(ctx, k, c) }); err != nil {
					b.Error(err)
					return
				}
				if err := db.Tx(ctx, func(tx store.Tx) error {
					_, err := tx.MoveTask(ctx, store.Move{ID: id, Move: cancel, At: time.Now()})
					return err
				}); err != nil {
					b.Error(err)
					return
				}
			}
		})
		writes := 2 * float64(b.N) / time.Since(start).Seconds()
		b.ReportMetric(writes, "writes/s")
		if floor > 0 {
			b.ReportMetric(writes/floor, "writes/floor")
		}
	})
}
