package jobs

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
)

// The job queue's routine INFO lines reach a service's INFO log as DEBUG
// (so they are not shown); its warnings still are.
func TestJobQueueLogDemoted(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	l := slog.New(demoted{slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})})
	l.Info("elector: gained leadership")
	l.Warn("job failed")
	out := buf.String()
	if strings.Contains(out, "leadership") || !strings.Contains(out, "level=WARN msg=\"job failed\"") {
		t.Fatalf("the log reads %q", out)
	}
	buf.Reset()
	d := slog.New(demoted{slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})}).With("queue", "default")
	d.InfoContext(context.Background(), "elector: gained leadership")
	if !strings.Contains(buf.String(), "level=DEBUG") || !strings.Contains(buf.String(), "queue=default") {
		t.Fatalf("at debug the log reads %q", buf.String())
	}
}
