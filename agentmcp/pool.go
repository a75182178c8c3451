package agentmcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"time"
)

// Pool keeps one Server per agent key for the streamable HTTP transport,
// and looks at each key's grants every so often, so that a project granted
// or removed is announced to its sessions (notifications/tools/list_changed)
// without their asking. Keys are held only as their SHA-256.
type Pool struct {
	make  func(key string) *Server
	every time.Duration
	idle  time.Duration

	mu      sync.Mutex
	servers map[string]*Server
	stop    context.CancelFunc
	ctx     context.Context
}

// NewPool returns a pool making servers with make, looking at grants every
// interval (0: 10 s), and dropping a server neither listed nor called for
// idle (0: 10 minutes) that has no session left.
func NewPool(make func(key string) *Server, every, idle time.Duration) *Pool {
	if every <= 0 {
		every = 10 * time.Second
	}
	if idle <= 0 {
		idle = 10 * time.Minute
	}
	ctx, stop := context.WithCancel(context.Background())
	return &Pool{make: make, every: every, idle: idle, servers: map[string]*Server{}, ctx: ctx, stop: stop}
}

// Close stops looking at grants.
func (p *Pool) Close() { p.stop() }

// For is the server of an agent key (already authenticated).
func (p *Pool) For(key string) *Server {
	h := sha256.Sum256([]byte(key))
	id := hex.EncodeToString(h[:])
	p.mu.Lock()
	defer p.mu.Unlock()
	if s, ok := p.servers[id]; ok {
		s.touch() // not idle now: watch keeps it, so a key's sessions all go to one server
		return s
	}
	s := p.make(key)
	p.servers[id] = s
	go p.watch(id, s)
	return s
}

// watch syncs a server's tools until it is idle and has no session.
func (p *Pool) watch(id string, s *Server) {
	t := time.NewTicker(p.every)
	defer t.Stop()
	for {
		select {
		case <-p.ctx.Done():
			return
		case <-t.C:
		}
		sessions := 0
		for range s.mcp.Sessions() {
			sessions++
		}
		if sessions == 0 && s.idle() > p.idle {
			p.mu.Lock()
			// Looked at again under the lock For takes: a server just
			// handed out is not dropped.
			drop := s.idle() > p.idle
			if drop {
				delete(p.servers, id)
			}
			p.mu.Unlock()
			if drop {
				return
			}
		}
		if sessions > 0 {
			ctx, cancel := context.WithTimeout(p.ctx, p.every)
			_ = s.Sync(ctx)
			cancel()
		}
	}
}
