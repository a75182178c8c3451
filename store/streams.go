package store

import (
	"context"
	"time"
)

// StreamSignal is news about owners' event streams that every process on the
// database hears, in one order: a device's session ended (sent by EndDevice
// when its transaction commits), or an event stream opened or closed.
type StreamSignal struct {
	Kind       StreamSignalKind
	Stream     string    // opened, closed: the stream's id
	Owner      string    // opened, closed
	Device     string    // ended, opened
	ValidUntil time.Time // opened: when the stream's session ends at the latest
}

// StreamSignalKind names a stream signal.
type StreamSignalKind string

// The stream signals.
const (
	SessionEnded StreamSignalKind = "ended"
	StreamOpened StreamSignalKind = "opened"
	StreamClosed StreamSignalKind = "closed"
)

// StreamSignaller carries stream signals between the processes on one
// database (LISTEN/NOTIFY on PostgreSQL; the embedded store has one process).
type StreamSignaller interface {
	// WatchStreams calls fn with every signal from now on, one at a time and
	// in the order every process hears them, until stop is called. fn must
	// not block.
	WatchStreams(fn func(StreamSignal)) (stop func())
	// SignalStream sends an opened or closed signal to every process, this
	// one included, outside any transaction.
	SignalStream(ctx context.Context, s StreamSignal) error
}
