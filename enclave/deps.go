package enclave

import (
	"log/slog"
	"time"

	"countersign/store"
)

// Deps is what every service of the enclave side is built from: the
// key-holder, the store, the clock and the log. Each service's Config
// embeds it beside what is its own.
type Deps struct {
	Keys  *Keys
	Store store.Store
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// Logger is where the service logs (nil: slog.Default()).
	Logger *slog.Logger
}

// WithDefaults returns d with a missing clock and log filled in.
func (d Deps) WithDefaults() Deps {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	return d
}
