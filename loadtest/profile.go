package loadtest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// profiles takes the service's profiles while the phases run (bench
// --profile): the service serves Go's profiler beside /metrics, on
// loopback, and each profile is written to the directory under the name
// of its phase.
type profiles struct {
	dir  string
	base string // the metrics listener, http://host:port
	mu   sync.Mutex
	// written are the files written; failed says why the others were not.
	written, failed []string
}

// cpu starts a CPU profile of the next d: the service samples only while
// it works, so time it spends idle adds nothing. wait waits until the file
// is written.
func (p *profiles) cpu(ctx context.Context, name string, d time.Duration) (wait func()) {
	if p == nil {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.save(ctx, fmt.Sprintf("/debug/pprof/profile?seconds=%d", max(1, int(d.Round(time.Second).Seconds()))), name+".cpu.pprof")
	}()
	return func() { <-done }
}

// heap writes the service's heap profile now: what its live objects are
// and where they were made.
func (p *profiles) heap(ctx context.Context, name string) {
	if p != nil {
		p.save(ctx, "/debug/pprof/heap", name+".heap.pprof")
	}
}

func (p *profiles) save(ctx context.Context, path, file string) {
	err := func() error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.base+path, nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
			return fmt.Errorf("%s answered %d: %s", path, resp.StatusCode, strings.TrimSpace(string(b)))
		}
		out := filepath.Join(p.dir, file)
		f, err := os.Create(out)
		if err != nil {
			return err
		}
		if _, err := io.Copy(f, resp.Body); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}()
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		p.failed = append(p.failed, fmt.Sprintf("%s: %v", file, err))
		return
	}
	p.written = append(p.written, filepath.Join(p.dir, file))
}
