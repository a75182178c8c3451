// Package httpapi is the service's HTTP edge: thin handlers that decode a
// request, call the domain, and render its answer or its refusal. Refusals
// are mapped to statuses in one place (errors.go). It never imports the
// sealing package: the inbox side of the service serves ciphertext only.
package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"sort"
	"strconv"
	"time"

	"github.com/gorilla/mux"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"countersign"
	"countersign/agentmcp"
	"countersign/connectors"
	"countersign/inbox"
	"countersign/store"
	"countersign/web"
)

// Options are what the server is built from.
type Options struct {
	Version string
	Store   store.Store
	Logger  *slog.Logger
	// Inbox is the owner's service; nil serves no inbox routes.
	Inbox *inbox.Service
	// Agents serves agents' calls; nil serves no call routes.
	Agents Agents
	// Connectors is the public catalogue.
	Connectors connectors.Catalogue
	// Limits bound request rates (zero: the defaults).
	Limits Limits
	// RunKey is the service's run public keys, published for receipts.
	RunKey RunKeys
	// PublicURL is the service's public origin (scheme://host[:port]): a
	// sign-in whose Origin is it also sets the browser's session cookie, and
	// a cookie-authenticated change must carry it in Origin. Empty: no
	// browser sessions (bearer tokens only).
	PublicURL string
	// Heartbeat is how often an idle event stream says it is alive, and
	// looks at its session again (0: DefaultHeartbeat).
	Heartbeat time.Duration
	// NearNetwork is the NEAR network the page's wallets sign in on:
	// "mainnet" (the default) or "testnet".
	NearNetwork string
	// SandboxWallet offers the page's sandbox wallet (serve --dev): a wallet
	// in the browser with a key of its own, for trying the service offline.
	SandboxWallet bool
	// MCPGrantPoll is how often the MCP transport looks at the grants of a
	// key with sessions, to announce a changed tool list (0: 10 s).
	MCPGrantPoll time.Duration
	// MCPSessionIdle is how long an MCP session may go without a request
	// before it ends (0: 10 minutes, SPEC §12).
	MCPSessionIdle time.Duration
}

// RunKeys are the run public keys by master key id ("ed25519:<base58>").
type RunKeys struct {
	Current uint32
	Keys    map[uint32]string
}

// Agents is the agent side of the service: the part that holds the master
// key runs calls; this package only carries them.
type Agents interface {
	// Authenticate checks an agent key before anything else of a call is
	// read: a transport-level refusal (unauthorized, the store
	// unavailable), or the context to serve the rest of the request with
	// (it may carry what the check found, so the call need not look again).
	Authenticate(ctx context.Context, agentKey string) (context.Context, error)
	// AuthenticateCall is Authenticate for a call to owner's project,
	// which it may read in the same look-up for the Call that follows.
	AuthenticateCall(ctx context.Context, agentKey, owner, project string) (context.Context, error)
	// Call serves POST /call/{owner}/{project}: the answer to write with
	// HTTP 200, or a transport-level refusal.
	Call(ctx context.Context, agentKey, owner, project, idempotencyKey string, body []byte) ([]byte, error)
	// Grants lists the projects granted to the key (GET /agent/projects,
	// and the MCP tools).
	Grants(ctx context.Context, agentKey string) ([]countersign.Grant, error)
}

// Server routes the service's HTTP API.
type Server struct {
	opts     Options
	router   *mux.Router
	handler  http.Handler // router wrapped in observe
	registry *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec

	signIns         *limiter
	ownerWrites     *limiter
	agentCalls      *limiter
	failedAuth      *limiter
	goodCredentials *credentials
	streams         *streams
	fan             *fanout // nil: every event stream keeps its handler
	browser         browserOrigin
	mcp             *agentmcp.Pool
	docCache
}

// New builds the server and its routes.
func New(opts Options) *Server {
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = DefaultHeartbeat
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Limits.SignInPerMinute == 0 {
		opts.Limits.SignInPerMinute = 10
	}
	if opts.Limits.OwnerWritesPerMinute == 0 {
		opts.Limits.OwnerWritesPerMinute = 120
	}
	if opts.Limits.AgentCallsPerMinute == 0 {
		opts.Limits.AgentCallsPerMinute = 600
	}
	if opts.Limits.FailedAuthPerMinute == 0 {
		opts.Limits.FailedAuthPerMinute = 30
	}
	s := &Server{opts: opts, router: mux.NewRouter(), registry: prometheus.NewRegistry(),
		signIns:         newLimiter(opts.Limits.SignInPerMinute, opts.Limits.SignInPerMinute),
		ownerWrites:     newLimiter(opts.Limits.OwnerWritesPerMinute, (opts.Limits.OwnerWritesPerMinute+1)/2),
		agentCalls:      newLimiter(opts.Limits.AgentCallsPerMinute, (opts.Limits.AgentCallsPerMinute+4)/5),
		failedAuth:      newLimiter(opts.Limits.FailedAuthPerMinute, opts.Limits.FailedAuthPerMinute),
		goodCredentials: newCredentials(), browser: newBrowserOrigin(opts.PublicURL)}
	s.streams = newStreams(opts.Store, opts.Logger)
	if sub, ok := opts.Store.(store.FuncSubscriber); ok && opts.Inbox != nil && handOffSupported {
		check := func(ctx context.Context, token string) error {
			_, err := opts.Inbox.Authenticate(ctx, token)
			return err
		}
		s.fan = newFanout(sub.SubscribeFunc, check, s.streams.close, opts.Heartbeat, opts.Logger)
	}
	s.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "countersign_http_requests_total",
		Help: "HTTP requests by route and status code.",
	}, []string{"route", "code"})
	s.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "countersign_http_request_duration_seconds",
		Help:    "HTTP request latency by route.",
		Buckets: prometheus.DefBuckets,
	}, []string{"route"})
	s.registry.MustRegister(s.requests, s.latency, newGauges(opts.Store),
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	s.registry.MustRegister(groupingCounters(opts.Store)...)

	r := s.router
	r.Use(recordRoute)
	r.NotFoundHandler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "not found"})
	})
	r.MethodNotAllowedHandler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "method not allowed"})
	})
	r.HandleFunc("/", s.page).Methods(http.MethodGet)
	r.HandleFunc("/sw.js", s.worker).Methods(http.MethodGet)
	r.HandleFunc("/manifest.webmanifest", s.manifest).Methods(http.MethodGet)
	r.PathPrefix(web.Prefix).Handler(web.Assets()).Methods(http.MethodGet, http.MethodHead)
	r.HandleFunc("/healthz", s.healthz).Methods(http.MethodGet)
	r.HandleFunc("/readyz", s.readyz).Methods(http.MethodGet)
	if opts.Inbox != nil {
		s.routeSessions(r)
		s.routeInbox(r)
	}
	if opts.Connectors != nil {
		r.HandleFunc("/connectors", s.connectors).Methods(http.MethodGet)
	}
	if opts.RunKey.Keys != nil {
		r.HandleFunc("/.well-known/countersign-run-key", s.runKey).Methods(http.MethodGet)
	}
	if opts.Agents != nil {
		s.routeCalls(r)
	}
	r.HandleFunc("/openapi.json", s.openAPIDoc).Methods(http.MethodGet)
	s.handler = s.observe(r)
	return s
}

// Close stops the server's background work (the MCP transport's look at
// grants) and ends its event streams, waiting a few seconds at most for
// them to close; the routes still answer, but an event stream opened from
// now on ends at once.
func (s *Server) Close() {
	if s.mcp != nil {
		s.mcp.Close()
	}
	if s.fan != nil {
		s.fan.close(5 * time.Second)
	}
}

// Registry is where other parts of the service register their metrics.
func (s *Server) Registry() *prometheus.Registry { return s.registry }

// Metrics serves GET /metrics in Prometheus format, and nothing else. It is
// not among the public routes (SPEC §15): serve it on a listener of its
// own, which only the operator's scraper reaches. Each scrape reads the
// store once (the gauges of what it holds).
func (s *Server) Metrics() http.Handler {
	r := mux.NewRouter()
	r.NotFoundHandler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "not found"})
	})
	r.MethodNotAllowedHandler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "method not allowed"})
	})
	r.Handle("/metrics", promhttp.HandlerFor(s.registry, promhttp.HandlerOpts{})).Methods(http.MethodGet)
	return r
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// healthz answers {service, version, schema} and nothing else.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	body := healthAnswer{Service: "countersign", Version: s.opts.Version}
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if st, err := s.opts.Store.Schema(ctx); err == nil {
		body.Schema = st.Current
	}
	writeJSON(w, http.StatusOK, body)
}

// readyz checks that the store answers.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := s.opts.Store.Ping(ctx); err != nil {
		s.opts.Logger.Warn("readiness check failed", "err", err)
		setRetryAfter(w, countersign.RetryShortly)
		writeJSON(w, http.StatusServiceUnavailable, readyAnswer{Status: "store unavailable"})
		return
	}
	writeJSON(w, http.StatusOK, readyAnswer{Status: "ready"})
}

// statusWriter remembers the status a handler wrote.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Flush lets server-sent events through the wrapper.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// observe counts and logs every request by its route template: never its
// query, headers or body, which may hold tokens or task ids of others.
func (s *Server) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		route := "unmatched"
		next.ServeHTTP(sw, r.WithContext(context.WithValue(r.Context(), routeKey{}, &route)))
		if sw.status == 0 {
			sw.status = http.StatusOK
		}
		elapsed := time.Since(start)
		s.requests.WithLabelValues(route, strconv.Itoa(sw.status)).Inc()
		s.latency.WithLabelValues(route).Observe(elapsed.Seconds())
		s.opts.Logger.Info("request", "method", r.Method, "route", route, "status", sw.status,
			"duration_ms", elapsed.Milliseconds())
	})
}

type routeKey struct{}

// recordRoute tells observe which route template matched.
func recordRoute(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p, ok := r.Context().Value(routeKey{}).(*string); ok {
			if tpl, err := mux.CurrentRoute(r).GetPathTemplate(); err == nil {
				*p = tpl
			}
		}
		next.ServeHTTP(w, r)
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// catalogueOp is an operation as the public catalogue shows it.
type catalogueOp struct {
	Name        string            `json:"name"`
	Kind        string            `json:"kind"`
	Price       int64             `json:"price"`
	Description string            `json:"description"`
	Schema      json.RawMessage   `json:"schema,omitempty"`
	Examples    []json.RawMessage `json:"examples,omitempty"`
	Result      json.RawMessage   `json:"result,omitempty"`
	// SuppliedText is an answer operation's shape of the text the owner
	// supplies (connectors.TextShape), when it declares one.
	SuppliedText json.RawMessage `json:"supplied_text,omitempty" jsonschema:"for an answer operation: the shape of the text the owner supplies to its tasks, a JSON Schema (2020-12) of a string with type, pattern, minLength, maxLength, a description of what is expected in plain words, and examples; the web page and the terminal inbox check the owner's text against it before the wallet is asked. Absent: any text."`
}

func catalogueOps(ops []connectors.Operation) []catalogueOp {
	out := []catalogueOp{}
	for _, o := range ops {
		out = append(out, catalogueOp{Name: o.Name, Kind: string(o.Kind), Price: o.Price, Description: o.Description,
			Schema: compactJSON(o.Schema), Examples: o.Examples, Result: compactJSON(o.Result), SuppliedText: compactJSON(o.SuppliedText)})
	}
	return out
}

// compactJSON is a declared schema without its layout.
func compactJSON(raw json.RawMessage) json.RawMessage {
	if raw == nil {
		return nil
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

// connectors serves the public catalogue: each connector's build and
// operations with their kind, price, description, argument and result
// schemas and, for an answer operation, the shape of the text the owner
// supplies, its policy keys, and the task operations every project
// answers.
func (s *Server) connectors(w http.ResponseWriter, _ *http.Request) {
	out := []catalogueConnector{}
	for _, name := range s.opts.Connectors.Names() {
		c := s.opts.Connectors[name]
		v := catalogueConnector{Name: c.Name, Version: c.Version, Build: c.Build(), Tasks: c.Tasks, Operations: catalogueOps(c.Operations), PolicyKeys: []string{"confirm"}, AllowedKey: c.Allowed}
		if len(c.Conditions) > 0 {
			v.PolicyKeys = append(v.PolicyKeys, "rules")
		}
		for k := range c.PolicyKeys {
			v.PolicyKeys = append(v.PolicyKeys, k)
		}
		sort.Strings(v.PolicyKeys[1:])
		out = append(out, v)
	}
	writeJSON(w, http.StatusOK, catalogueAnswer{Connectors: out, TaskOperations: catalogueOps(connectors.PlatformOperations)})
}

// runKey publishes the key that signs run receipts (and the older ones that
// signed receipts still kept).
func (s *Server) runKey(w http.ResponseWriter, _ *http.Request) {
	keys := map[string]string{}
	for id, k := range s.opts.RunKey.Keys {
		keys[strconv.FormatUint(uint64(id), 10)] = k
	}
	writeJSON(w, http.StatusOK, runKeysAnswer{Algorithm: "ed25519", KeyID: s.opts.RunKey.Current,
		PublicKey: s.opts.RunKey.Keys[s.opts.RunKey.Current], Keys: keys})
}
