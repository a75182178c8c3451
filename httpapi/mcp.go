package httpapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"time"

	"github.com/gorilla/mux"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"countersign"
	"countersign/agentmcp"
)

// mcpBody is the most one MCP message may hold: a tool call's arguments up
// to the 64 KiB a call takes, and the JSON-RPC around them. A tool call
// whose call would be larger is refused as POST /call refuses it.
const mcpBody = 256 << 10

// MCPProtocolVersions are the MCP revisions POST /mcp speaks: those with
// sessions, as a request id names one call only within its session (the
// Idempotency-Key is derived from both) and tool list changes go to the
// session's stream.
var MCPProtocolVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26"}

// MCP sessions (SPEC §12): at most mcpSessionsPerKey open per agent key
// (opening one more closes the oldest), and each ends after
// Options.MCPSessionIdle without a request.
const (
	mcpSessionsPerKey  = 16
	defaultMCPIdleTime = 10 * time.Minute
)

// routeMCP serves the streamable HTTP transport of MCP at /mcp (POST for
// messages, GET for the session's stream, DELETE to end it), each request
// authenticated with the agent key as a call is.
func (s *Server) routeMCP(r *mux.Router) {
	cat := agentmcp.FromConnectors(s.opts.Connectors) // read only, shared by every key's server
	s.mcp = agentmcp.NewPool(func(key string) *agentmcp.Server {
		return agentmcp.New(agentmcp.Config{Door: keyDoor{agents: s.opts.Agents, key: key},
			Catalogue: cat, Version: s.opts.Version, Logger: s.opts.Logger,
			SupportedProtocolVersions: MCPProtocolVersions, MaxSessions: mcpSessionsPerKey})
	}, s.opts.MCPGrantPoll, 0)
	idle := s.opts.MCPSessionIdle
	if idle <= 0 {
		idle = defaultMCPIdleTime
	}
	streamable := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		return s.mcp.For(bearer(r)).MCP()
	}, &mcp.StreamableHTTPOptions{MaxRequestBodyBytes: mcpBody, SessionTimeout: idle,
		// Every request carries the agent key, which a page a browser was
		// tricked into cannot send: the SDK's guard for keyless local
		// servers (loopback address, other Host) would refuse a service
		// behind a proxy on loopback.
		DisableLocalhostProtection: true})
	// The session is bound to the key that opened it (the SDK compares
	// the token's user id, here the key's SHA-256, on every request).
	bound := auth.RequireBearerToken(func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		h := sha256.Sum256([]byte(token))
		return &auth.TokenInfo{UserID: hex.EncodeToString(h[:]), Expiration: time.Now().Add(time.Hour)}, nil
	}, nil)(agentmcp.GuardHTTP(streamable, mcpBody))
	r.Handle("/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := bearer(r)
		r, err := s.authenticateAgent(r, key, nil)
		if err != nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="countersign"`)
			writeAgentError(w, s.opts.Logger, err)
			return
		}
		if err := s.limitCalls(key); err != nil {
			writeAgentError(w, s.opts.Logger, err)
			return
		}
		bound.ServeHTTP(w, r)
	})).Methods(http.MethodPost, http.MethodGet, http.MethodDelete)
}

// keyDoor is the agent API for one key, in process: a tool's call meets
// the checks POST /call makes before it reaches the agents' side.
type keyDoor struct {
	agents Agents
	key    string
}

func (d keyDoor) Grants(ctx context.Context) ([]countersign.Grant, error) {
	return d.agents.Grants(ctx, d.key)
}

func (d keyDoor) Call(ctx context.Context, owner, project, idempotencyKey string, body []byte) ([]byte, error) {
	if err := checkVar("/call/{owner}/{project}", "owner", owner); err != nil {
		return nil, err
	}
	if err := checkVar("/call/{owner}/{project}", "project", project); err != nil {
		return nil, err
	}
	if len(body) > callBody {
		return nil, countersign.Errorf(countersign.InvalidRequest, "the call is larger than %d bytes", callBody)
	}
	if err := checkCallBody(body); err != nil {
		return nil, err
	}
	return d.agents.Call(ctx, d.key, owner, project, idempotencyKey, body)
}
