package servicetest

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"countersign/enclave/side"
	"countersign/store/jobs"
	"countersign/store/sqlstore"
)

// Enclave is the enclave side, wired as serve wires it (package side).
type Enclave = side.Side

// EnclaveConfig is what NewEnclave builds the enclave side from.
type EnclaveConfig = side.Config

// NewEnclave builds the enclave side.
func NewEnclave(c EnclaveConfig) *Enclave { return side.New(c) }

// StartJobs works the job queue with e on db until the test ends, with a
// heartbeat.
func StartJobs(t testing.TB, db *sqlstore.DB, e *Enclave) {
	t.Helper()
	jctx, cancel := context.WithCancel(context.Background())
	go e.Answers.KeepAlive(jctx)
	work := e.Work()
	stop, err := jobs.Start(jctx, db, jobs.Config{Workers: work.Workers(), Periodic: work.Periodic(),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), HandOff: work.Answer, HandOffTimeout: work.AnswerTimeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, c := context.WithTimeout(context.Background(), 10*time.Second)
		defer c()
		_ = stop(sctx)
		cancel()
	})
}
