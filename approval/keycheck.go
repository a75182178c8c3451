package approval

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"countersign/expiring"
)

// KeyStatus is what the chain says about a key of an account.
type KeyStatus uint8

// Key statuses. Only KeyFullAccess and KeyImplicit may act for an owner.
const (
	// KeyFullAccess: the key is a full-access key of the account on chain.
	KeyFullAccess KeyStatus = iota + 1
	// KeyImplicit: the account is the key's own implicit account and does
	// not exist on chain yet, so the key controls it by construction.
	KeyImplicit
	// KeyLimited: the key is a key of the account with a FunctionCall
	// permission (or any permission other than FullAccess).
	KeyLimited
	// KeyUnknown: the key is not a key of the account, or the account does
	// not exist (and is not the key's own implicit account).
	KeyUnknown
)

func (s KeyStatus) String() string {
	switch s {
	case KeyFullAccess:
		return "full access"
	case KeyImplicit:
		return "implicit"
	case KeyLimited:
		return "limited"
	case KeyUnknown:
		return "unknown"
	}
	return "invalid"
}

// MayAct reports whether a key with this status may sign owner actions.
func (s KeyStatus) MayAct() bool { return s == KeyFullAccess || s == KeyImplicit }

// KeyChecker tells whether key may act for account. An error means no
// answer could be had: RPCChecker's errors are of kind UpstreamUnavailable
// (never to be taken as "valid"); a checker may also refuse with an *Error of
// another kind and a sentence saying why (OffChecker does for named
// accounts).
type KeyChecker interface {
	CheckKey(ctx context.Context, account string, key PublicKey) (KeyStatus, error)
}

// OffChecker is the KeyChecker used when NEAR RPC is off (development): only
// an implicit account signed for by its own key is accepted; whether such an
// account exists on chain, or still has that key, is not known.
type OffChecker struct{}

// rpcOffSentence refuses a named account when NEAR RPC is off.
const rpcOffSentence = "NEAR RPC is off: only an implicit account signed with its own key can act; set NEAR_RPC to use a named account"

// CheckKey implements KeyChecker.
func (OffChecker) CheckKey(_ context.Context, account string, key PublicKey) (KeyStatus, error) {
	if !IsImplicit(account) {
		return 0, refuse(UnknownKey, rpcOffSentence)
	}
	if IsOwnImplicitAccount(account, key) {
		return KeyImplicit, nil
	}
	return KeyUnknown, nil
}

// Defaults of RPCChecker.
const (
	DefaultCacheTTL        = 5 * time.Minute
	DefaultRPCTimeout      = 10 * time.Second
	DefaultMaxCacheEntries = 10000
	maxRPCResponseBytes    = 256 << 10
)

// RPCConfig configures an RPCChecker.
type RPCConfig struct {
	// URL is the NEAR JSON-RPC endpoint (http or https).
	URL string
	// Client sends the requests. Nil means a client with a 10-second timeout
	// that does not follow redirects.
	Client *http.Client
	// Now is the cache's clock. Nil means time.Now.
	Now func() time.Time
	// CacheTTL is how long an answer is kept. Zero means 5 minutes.
	CacheTTL time.Duration
	// MaxCacheEntries bounds the cache. Zero means 10,000.
	MaxCacheEntries int
}

// RPCChecker asks a NEAR JSON-RPC node (`query` with `view_access_key` at
// finality `final`) and caches each answer for CacheTTL. Failures are never
// cached.
type RPCChecker struct {
	url    string
	client *http.Client
	now    func() time.Time
	ttl    time.Duration
	nextID atomic.Uint64
	cache  *expiring.Map[cacheKey, KeyStatus]
}

type cacheKey struct {
	account string
	key     PublicKey
}

// NewRPCChecker returns a checker for the endpoint in cfg.
func NewRPCChecker(cfg RPCConfig) (*RPCChecker, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("approval: the NEAR RPC URL must be an http or https URL")
	}
	c := &RPCChecker{
		url:    cfg.URL,
		client: cfg.Client,
		now:    cfg.Now,
		ttl:    cfg.CacheTTL,
	}
	if c.client == nil {
		c.client = &http.Client{
			Timeout: DefaultRPCTimeout,
			CheckRedirect: func(*http.Request, []*http.Request) error {
				return http.ErrUseLastResponse
			},
		}
	}
	if c.now == nil {
		c.now = time.Now
	}
	if c.ttl <= 0 {
		c.ttl = DefaultCacheTTL
	}
	bound := cfg.MaxCacheEntries
	if bound <= 0 {
		bound = DefaultMaxCacheEntries
	}
	c.cache = expiring.New[cacheKey, KeyStatus](bound)
	return c, nil
}

// CheckKey implements KeyChecker. A key the chain does not know, on an
// account that is the key's own implicit account, is KeyImplicit only when
// the account itself does not exist on chain (asked with `view_account`): an
// implicit account that exists is governed by its keys on chain like any
// other.
func (c *RPCChecker) CheckKey(ctx context.Context, account string, key PublicKey) (KeyStatus, error) {
	if err := ValidateAccountID(account); err != nil {
		return 0, err
	}
	if key.IsZero() {
		return 0, refuse(Malformed, "no public key")
	}
	ck := cacheKey{account: account, key: key}
	if s, ok := c.cached(ck); ok {
		return s, nil
	}
	s, err := c.ask(ctx, account, key)
	if err != nil {
		return 0, err
	}
	c.store(ck, s)
	return s, nil
}

func (c *RPCChecker) ask(ctx context.Context, account string, key PublicKey) (KeyStatus, error) {
	ans, err := c.viewAccessKey(ctx, account, key)
	if err != nil {
		return 0, err
	}
	switch ans {
	case answerFullAccess:
		return KeyFullAccess, nil
	case answerLimited:
		return KeyLimited, nil
	}
	// The chain does not know the key (or the account).
	if !IsOwnImplicitAccount(account, key) {
		return KeyUnknown, nil
	}
	if ans == answerNoAccount {
		return KeyImplicit, nil
	}
	exists, err := c.viewAccount(ctx, account)
	if err != nil {
		return 0, err
	}
	if exists {
		return KeyUnknown, nil
	}
	return KeyImplicit, nil
}

func (c *RPCChecker) cached(k cacheKey) (KeyStatus, bool) { return c.cache.Get(k, c.now()) }

func (c *RPCChecker) store(k cacheKey, s KeyStatus) {
	now := c.now()
	c.cache.Put(k, s, now.Add(c.ttl), now)
}

type answer uint8

const (
	answerFullAccess answer = iota + 1
	answerLimited
	answerNoKey
	answerNoAccount
)

// errUnavailable builds the error every RPC failure turns into.
func errUnavailable(cause error) error {
	return refuseCause(UpstreamUnavailable, "NEAR RPC is unavailable; try again later", cause)
}

type rpcRequest struct {
	JSONRPC string         `json:"jsonrpc"`
	ID      string         `json:"id"`
	Method  string         `json:"method"`
	Params  map[string]any `json:"params"`
}

type rpcErrorBody struct {
	Name  string `json:"name"`
	Cause *struct {
		Name string          `json:"name"`
		Info json.RawMessage `json:"info"`
	} `json:"cause"`
	Code int `json:"code"`
}

type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *rpcErrorBody   `json:"error"`
}

// legacyError is the old "result carrying an error string" shape nearcore
// still answers `view_access_key` with for a missing key:
// {"error": "access key <key> does not exist while viewing", "logs": [], "block_height", "block_hash"}.
type legacyError struct {
	Error *string `json:"error"`
}

func (c *RPCChecker) viewAccessKey(ctx context.Context, account string, key PublicKey) (answer, error) {
	res, cause, err := c.query(ctx, map[string]any{
		"request_type": "view_access_key",
		"finality":     "final",
		"account_id":   account,
		"public_key":   key.String(),
	})
	if err != nil {
		return 0, err
	}
	return accessKeyAnswer(res, cause)
}

// accessKeyAnswer interprets a view_access_key answer: a result, or the
// cause name of a handler error.
func accessKeyAnswer(res json.RawMessage, cause string) (answer, error) {
	switch cause {
	case "UNKNOWN_ACCESS_KEY":
		return answerNoKey, nil
	case "UNKNOWN_ACCOUNT":
		return answerNoAccount, nil
	case "":
	default:
		return 0, errUnavailable(fmt.Errorf("approval: NEAR RPC answered view_access_key with error %q", clip(cause)))
	}
	var legacy legacyError
	if err := json.Unmarshal(res, &legacy); err != nil {
		return 0, errUnavailable(fmt.Errorf("approval: decoding view_access_key result: %w", err))
	}
	if legacy.Error != nil {
		msg := *legacy.Error
		switch {
		case strings.HasPrefix(msg, "access key ") && strings.HasSuffix(msg, " does not exist while viewing"):
			return answerNoKey, nil
		case strings.HasPrefix(msg, "account ") && strings.HasSuffix(msg, " does not exist while viewing"):
			return answerNoAccount, nil
		}
		return 0, errUnavailable(errors.New("approval: NEAR RPC answered view_access_key with an unexpected error string"))
	}
	var view struct {
		Nonce       *uint64         `json:"nonce"`
		Permission  json.RawMessage `json:"permission"`
		BlockHeight *uint64         `json:"block_height"`
	}
	if err := json.Unmarshal(res, &view); err != nil {
		return 0, errUnavailable(fmt.Errorf("approval: decoding view_access_key result: %w", err))
	}
	if view.Nonce == nil || view.BlockHeight == nil || len(view.Permission) == 0 {
		return 0, errUnavailable(errors.New("approval: view_access_key result lacks nonce, permission or block_height"))
	}
	var perm string
	if err := json.Unmarshal(view.Permission, &perm); err == nil {
		if perm == "FullAccess" {
			return answerFullAccess, nil
		}
		return answerLimited, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(view.Permission, &obj); err != nil || len(obj) == 0 {
		return 0, errUnavailable(errors.New("approval: view_access_key permission is neither a string nor an object"))
	}
	// {"FunctionCall": {...}} and any other object permission: not full access.
	return answerLimited, nil
}

// viewAccount reports whether account exists on chain.
func (c *RPCChecker) viewAccount(ctx context.Context, account string) (bool, error) {
	res, cause, err := c.query(ctx, map[string]any{
		"request_type": "view_account",
		"finality":     "final",
		"account_id":   account,
	})
	if err != nil {
		return false, err
	}
	return accountAnswer(res, cause)
}

// accountAnswer interprets a view_account answer.
func accountAnswer(res json.RawMessage, cause string) (bool, error) {
	switch cause {
	case "UNKNOWN_ACCOUNT":
		return false, nil
	case "":
	default:
		return false, errUnavailable(fmt.Errorf("approval: NEAR RPC answered view_account with error %q", clip(cause)))
	}
	var legacy legacyError
	if err := json.Unmarshal(res, &legacy); err != nil {
		return false, errUnavailable(fmt.Errorf("approval: decoding view_account result: %w", err))
	}
	if legacy.Error != nil {
		msg := *legacy.Error
		if strings.HasPrefix(msg, "account ") && strings.HasSuffix(msg, " does not exist while viewing") {
			return false, nil
		}
		return false, errUnavailable(errors.New("approval: NEAR RPC answered view_account with an unexpected error string"))
	}
	var view struct {
		Amount      *string `json:"amount"`
		BlockHeight *uint64 `json:"block_height"`
	}
	if err := json.Unmarshal(res, &view); err != nil || view.Amount == nil || view.BlockHeight == nil {
		return false, errUnavailable(errors.New("approval: view_account result lacks amount or block_height"))
	}
	return true, nil
}

// query sends one `query` call. It returns the raw result, or the cause name
// of a structured handler error, or an UpstreamUnavailable error.
func (c *RPCChecker) query(ctx context.Context, params map[string]any) (json.RawMessage, string, error) {
	id := "countersign-" + strconv.FormatUint(c.nextID.Add(1), 10)
	body, err := json.Marshal(rpcRequest{JSONRPC: "2.0", ID: id, Method: "query", Params: params})
	if err != nil {
		return nil, "", fmt.Errorf("approval: encoding the RPC request: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, "", errUnavailable(errors.New("approval: building the RPC request failed"))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := c.client.Do(req)
	if err != nil {
		// A *url.Error names the URL, which may carry a provider's API key:
		// keep only the underlying cause.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, "", errUnavailable(fmt.Errorf("approval: NEAR RPC request failed: %w", err))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxRPCResponseBytes+1))
	if err != nil {
		return nil, "", errUnavailable(fmt.Errorf("approval: reading the NEAR RPC answer: %w", err))
	}
	return parseResponse(resp.StatusCode, raw, id)
}

// parseResponse checks a JSON-RPC answer to the request with this id. It
// returns the result object, or the cause name of a HANDLER_ERROR, or an
// UpstreamUnavailable error for anything else.
func parseResponse(status int, raw []byte, id string) (json.RawMessage, string, error) {
	if status != http.StatusOK {
		return nil, "", errUnavailable(fmt.Errorf("approval: NEAR RPC answered HTTP %d", status))
	}
	if len(raw) > maxRPCResponseBytes {
		return nil, "", errUnavailable(errors.New("approval: NEAR RPC answer is too large"))
	}
	var r rpcResponse
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, "", errUnavailable(fmt.Errorf("approval: NEAR RPC answer is not JSON-RPC: %w", err))
	}
	var gotID string
	if r.JSONRPC != "2.0" || json.Unmarshal(r.ID, &gotID) != nil || gotID != id {
		return nil, "", errUnavailable(errors.New("approval: NEAR RPC answer is not a JSON-RPC 2.0 answer to this request"))
	}
	if r.Error != nil {
		if r.Error.Name == "HANDLER_ERROR" && r.Error.Cause != nil && r.Error.Cause.Name != "" {
			return nil, r.Error.Cause.Name, nil
		}
		name := r.Error.Name
		if r.Error.Cause != nil {
			name += "/" + r.Error.Cause.Name
		}
		return nil, "", errUnavailable(fmt.Errorf("approval: NEAR RPC error %q", clip(name)))
	}
	if len(r.Result) == 0 || r.Result[0] != '{' {
		return nil, "", errUnavailable(errors.New("approval: NEAR RPC answer has no result object"))
	}
	return r.Result, "", nil
}

// clip bounds text from the RPC that goes into an error.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}
