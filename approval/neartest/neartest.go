// Package neartest is a local fake of the parts of the NEAR JSON-RPC API the
// service uses: `query` with `request_type` `view_access_key` and
// `view_account`. It answers with nearcore's envelopes and fields (JSON-RPC
// 2.0, `nonce`, `permission`, `block_height`, `block_hash`, and nearcore's
// error objects), so tests, end-to-end tests and the development sandbox
// can run without a network.
//
// A test adds accounts and keys, removes them, chooses which of nearcore's
// two "does not exist" shapes a missing key gets, makes the endpoint go down
// (HTTP 500, a closed connection, a hang, or a non-JSON page), and counts the
// requests it received.
package neartest

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"

	"github.com/mr-tron/base58"
)

// Permission is an access key's permission.
type Permission struct {
	// FullAccess: the key may do anything.
	FullAccess bool
	// For a function-call key: the contract it may call, the methods (none
	// means any), and the allowance in yoctoNEAR (nil means unlimited).
	ReceiverID  string
	MethodNames []string
	Allowance   *string
}

// FullAccess is the FullAccess permission.
func FullAccess() Permission { return Permission{FullAccess: true} }

// FunctionCall is a FunctionCall permission for receiverID and methods,
// with an unlimited allowance.
func FunctionCall(receiverID string, methods ...string) Permission {
	return Permission{ReceiverID: receiverID, MethodNames: methods}
}

// Mode is how the endpoint answers every request.
type Mode int

// Modes.
const (
	// Up answers normally.
	Up Mode = iota
	// Down500 answers HTTP 500 with nearcore's INTERNAL_ERROR object.
	Down500
	// DownClose closes the connection without answering.
	DownClose
	// DownHang never answers (until the client gives up or the server
	// closes).
	DownHang
	// DownGarbage answers HTTP 200 with an HTML page, as a broken proxy
	// would.
	DownGarbage
)

// MissingShape is how `view_access_key` says a key does not exist.
type MissingShape int

// The shapes of "does not exist" that nearcore answers with.
const (
	// MissingLegacy: HTTP 200 with a `result` carrying an `error` string,
	// "access key <key> does not exist while viewing", `logs`,
	// `block_height` and `block_hash` (nearcore's backward-compatible answer).
	MissingLegacy MissingShape = iota
	// MissingStructured: a JSON-RPC `error` HANDLER_ERROR whose cause is
	// UNKNOWN_ACCESS_KEY (info: public_key, block_height, block_hash).
	MissingStructured
	// MissingAccountStructured: as MissingStructured, but when the account
	// itself does not exist the cause is UNKNOWN_ACCOUNT (info:
	// requested_account_id, block_height, block_hash).
	MissingAccountStructured
)

// Request is one request the fake received.
type Request struct {
	Method      string
	RequestType string
	Finality    string
	AccountID   string
	PublicKey   string
}

type key struct {
	perm  Permission
	nonce uint64
}

// Server is the fake endpoint. Its methods are safe for concurrent use.
type Server struct {
	srv     *httptest.Server
	closing chan struct{}
	once    sync.Once

	mu       sync.Mutex
	accounts map[string]map[string]key // account → public key → key
	mode     Mode
	missing  MissingShape
	height   uint64
	log      []Request
}

// New starts a fake on a loopback port. Close it when done.
func New() *Server {
	s := &Server{
		closing:  make(chan struct{}),
		accounts: make(map[string]map[string]key),
		height:   100_000_000,
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// URL is the endpoint's address.
func (s *Server) URL() string { return s.srv.URL }

// Client returns an HTTP client for the endpoint.
func (s *Server) Client() *http.Client { return s.srv.Client() }

// Close releases hanging requests and stops the server.
func (s *Server) Close() {
	s.once.Do(func() { close(s.closing) })
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// AddAccount creates an account with no keys (like an account whose keys
// were all deleted, or an ETH-implicit wallet-contract account).
func (s *Server) AddAccount(account string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.accounts[account] == nil {
		s.accounts[account] = make(map[string]key)
	}
}

// RemoveAccount deletes an account and its keys.
func (s *Server) RemoveAccount(account string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.accounts, account)
}

// AddKey adds (or replaces) publicKey (`ed25519:…` or `secp256k1:…`) on
// account with permission p, creating the account if needed.
func (s *Server) AddKey(account, publicKey string, p Permission) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.accounts[account] == nil {
		s.accounts[account] = make(map[string]key)
	}
	s.height++
	s.accounts[account][publicKey] = key{perm: p, nonce: s.height * 1_000_000}
}

// RemoveKey deletes publicKey from account.
func (s *Server) RemoveKey(account, publicKey string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.accounts[account], publicKey)
}

// SetMode makes every later request answer as m says.
func (s *Server) SetMode(m Mode) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mode = m
}

// SetMissingShape chooses how a missing key is answered.
func (s *Server) SetMissingShape(m MissingShape) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.missing = m
}

// Requests is the number of requests received so far (in every mode).
func (s *Server) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.log)
}

// Log returns a copy of the requests received so far.
func (s *Server) Log() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.log...)
}

// ResetLog forgets the requests received so far.
func (s *Server) ResetLog() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = nil
}

type rpcRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

type queryParams struct {
	RequestType string          `json:"request_type"`
	Finality    string          `json:"finality"`
	BlockID     json.RawMessage `json:"block_id"`
	AccountID   string          `json:"account_id"`
	PublicKey   string          `json:"public_key"`
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	var req rpcRequest
	var params queryParams
	if err == nil {
		if json.Unmarshal(body, &req) == nil {
			_ = json.Unmarshal(req.Params, &params)
		}
	}

	s.mu.Lock()
	s.log = append(s.log, Request{
		Method: req.Method, RequestType: params.RequestType, Finality: params.Finality,
		AccountID: params.AccountID, PublicKey: params.PublicKey,
	})
	mode := s.mode
	s.mu.Unlock()

	switch mode {
	case Down500:
		writeJSON(w, http.StatusInternalServerError, errorEnvelope(req.ID, "INTERNAL_ERROR",
			"INTERNAL_ERROR", map[string]any{"error_message": "the node is overloaded"}, "the node is overloaded"))
		return
	case DownClose:
		hj, ok := w.(http.Hijacker)
		if !ok {
			panic(http.ErrAbortHandler)
		}
		conn, _, err := hj.Hijack()
		if err == nil {
			conn.Close()
		}
		return
	case DownHang:
		select {
		case <-r.Context().Done():
		case <-s.closing:
		}
		return
	case DownGarbage:
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, "<html><body><h1>502 Bad Gateway</h1></body></html>\n")
		return
	}

	if err != nil || r.Method != http.MethodPost || json.Unmarshal(body, &req) != nil || req.JSONRPC != "2.0" {
		writeJSON(w, http.StatusBadRequest, errorEnvelope(req.ID, "REQUEST_VALIDATION_ERROR",
			"PARSE_ERROR", map[string]any{"error_message": "the body is not a JSON-RPC 2.0 request"},
			"the body is not a JSON-RPC 2.0 request"))
		return
	}
	if req.Method != "query" {
		writeJSON(w, http.StatusBadRequest, errorEnvelope(req.ID, "REQUEST_VALIDATION_ERROR",
			"METHOD_NOT_FOUND", map[string]any{"method_name": req.Method}, "Method not found"))
		return
	}
	if msg := validateParams(params); msg != "" {
		writeJSON(w, http.StatusBadRequest, errorEnvelope(req.ID, "REQUEST_VALIDATION_ERROR",
			"PARSE_ERROR", map[string]any{"error_message": msg}, msg))
		return
	}
	status, answer := s.answer(req.ID, params)
	writeJSON(w, status, answer)
}

func validateParams(p queryParams) string {
	if (p.Finality == "") == (len(p.BlockID) == 0) {
		return "exactly one of finality and block_id is required"
	}
	if p.Finality != "" && p.Finality != "final" && p.Finality != "optimistic" && p.Finality != "near-final" {
		return "unknown finality"
	}
	if !validAccountID(p.AccountID) {
		return "invalid account_id"
	}
	switch p.RequestType {
	case "view_account":
		return ""
	case "view_access_key":
		if !validPublicKey(p.PublicKey) {
			return "invalid public_key"
		}
		return ""
	}
	return "unknown request_type"
}

func (s *Server) answer(id json.RawMessage, p queryParams) (int, any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.height++
	height := s.height
	hash := blockHash(height)
	keys, accountExists := s.accounts[p.AccountID]

	if p.RequestType == "view_account" {
		if !accountExists {
			return http.StatusOK, errorEnvelope(id, "HANDLER_ERROR", "UNKNOWN_ACCOUNT",
				map[string]any{"requested_account_id": p.AccountID, "block_height": height, "block_hash": hash},
				fmt.Sprintf("account %s does not exist while viewing", p.AccountID))
		}
		return http.StatusOK, resultEnvelope(id, map[string]any{
			"amount":          "1000000000000000000000000",
			"locked":          "0",
			"code_hash":       "11111111111111111111111111111111",
			"storage_usage":   182 + 100*len(keys),
			"storage_paid_at": 0,
			"block_height":    height,
			"block_hash":      hash,
		})
	}

	k, ok := keys[p.PublicKey]
	if !ok {
		switch {
		case s.missing == MissingAccountStructured && !accountExists:
			return http.StatusOK, errorEnvelope(id, "HANDLER_ERROR", "UNKNOWN_ACCOUNT",
				map[string]any{"requested_account_id": p.AccountID, "block_height": height, "block_hash": hash},
				fmt.Sprintf("account %s does not exist while viewing", p.AccountID))
		case s.missing == MissingStructured || s.missing == MissingAccountStructured:
			return http.StatusOK, errorEnvelope(id, "HANDLER_ERROR", "UNKNOWN_ACCESS_KEY",
				map[string]any{"public_key": p.PublicKey, "block_height": height, "block_hash": hash},
				fmt.Sprintf("Access key for public key %s has never been observed on the node", p.PublicKey))
		}
		return http.StatusOK, resultEnvelope(id, map[string]any{
			"error":        fmt.Sprintf("access key %s does not exist while viewing", p.PublicKey),
			"logs":         []string{},
			"block_height": height,
			"block_hash":   hash,
		})
	}
	var perm any = "FullAccess"
	if !k.perm.FullAccess {
		methods := append([]string{}, k.perm.MethodNames...)
		sort.Strings(methods)
		perm = map[string]any{"FunctionCall": map[string]any{
			"allowance":    k.perm.Allowance,
			"receiver_id":  k.perm.ReceiverID,
			"method_names": methods,
		}}
	}
	return http.StatusOK, resultEnvelope(id, map[string]any{
		"nonce":        k.nonce,
		"permission":   perm,
		"block_height": height,
		"block_hash":   hash,
	})
}

func resultEnvelope(id json.RawMessage, result any) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "id": rawID(id), "result": result}
}

// errorEnvelope is nearcore's error object: the structured name, cause and
// info, and the legacy code, message and data fields.
func errorEnvelope(id json.RawMessage, name, cause string, info map[string]any, data string) map[string]any {
	code := -32000
	message := "Server error"
	switch name {
	case "REQUEST_VALIDATION_ERROR":
		code, message = -32700, "Parse error"
		if cause == "METHOD_NOT_FOUND" {
			code, message = -32601, "Method not found"
		}
	case "INTERNAL_ERROR":
		code, message = -32000, "Server error"
	}
	return map[string]any{
		"jsonrpc": "2.0",
		"id":      rawID(id),
		"error": map[string]any{
			"name":    name,
			"cause":   map[string]any{"name": cause, "info": info},
			"code":    code,
			"message": message,
			"data":    data,
		},
	}
}

func rawID(id json.RawMessage) any {
	if len(id) == 0 {
		return nil
	}
	return id
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "encoding failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

func blockHash(height uint64) string {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], height)
	h := sha256.Sum256(b[:])
	return base58.Encode(h[:])
}

func validPublicKey(s string) bool {
	body, size := "", 0
	switch {
	case strings.HasPrefix(s, "ed25519:"):
		body, size = s[len("ed25519:"):], 32
	case strings.HasPrefix(s, "secp256k1:"):
		body, size = s[len("secp256k1:"):], 64
	default:
		return false
	}
	if len(body) > 100 {
		return false
	}
	raw, err := base58.Decode(body)
	return err == nil && len(raw) == size
}

// validAccountID applies NEAR's account id rules, as the node does when it
// parses the request.
func validAccountID(id string) bool {
	if len(id) < 2 || len(id) > 64 {
		return false
	}
	sep := true
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			sep = false
		case c == '-' || c == '_' || c == '.':
			if sep {
				return false
			}
			sep = true
		default:
			return false
		}
	}
	return !sep
}
