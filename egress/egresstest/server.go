package egresstest

import (
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// Server is an HTTP server on loopback that counts the connections and
// requests reaching it: a test aims a request at it through the guard and
// checks that nothing arrived.
type Server struct {
	*httptest.Server
	conns, requests atomic.Int32
}

// NewServer starts a server answering with h (TLS when useTLS) until t
// ends.
func NewServer(t testing.TB, useTLS bool, h http.Handler) *Server {
	t.Helper()
	s := &Server{}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		h.ServeHTTP(w, r)
	}))
	s.Config.ErrorLog = log.New(io.Discard, "", 0) // refused TLS handshakes are expected
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	if useTLS {
		s.StartTLS()
	} else {
		s.Start()
	}
	t.Cleanup(s.Close)
	return s
}

// Conns is how many connections reached the server.
func (s *Server) Conns() int { return int(s.conns.Load()) }

// Requests is how many requests it answered.
func (s *Server) Requests() int { return int(s.requests.Load()) }
