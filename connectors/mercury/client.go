package mercury

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode"

	"countersign"
	"countersign/policy"
)

// maxAnswer bounds what is read of one Mercury answer.
const maxAnswer = 4 << 20

// creds are a project's credentials: an API token and, optionally, the base
// URL of the API it is valid for (a sandbox).
type creds struct {
	Token   string `json:"token"`
	BaseURL string `json:"base_url,omitempty"`
}

// client talks to one project's Mercury.
type client struct {
	http  *http.Client
	base  string
	token string
}

// apiError is an answer Mercury gave that is not a success, or no answer.
type apiError struct {
	// status is Mercury's HTTP status; 0 when no answer came.
	status  int
	message string
}

func (e *apiError) Error() string {
	if e.status == 0 {
		return "Mercury did not answer (" + e.message + ")"
	}
	return fmt.Sprintf("Mercury answered %d (%s)", e.status, e.message)
}

// certain reports whether the answer proves nothing happened: only a 4xx
// does; a 5xx or a lost answer may follow a write that was made.
func (e *apiError) certain() bool { return e.status >= 400 && e.status < 500 }

func (c *connector) client(raw []byte) (*client, error) {
	if len(raw) == 0 && c.cfg.SandboxCredentials != nil {
		raw = c.cfg.SandboxCredentials
	}
	var cr creds
	if len(raw) == 0 || countersign.DecodeStrict(raw, &cr) != nil || strings.TrimSpace(cr.Token) == "" {
		return nil, countersign.Errorf(countersign.InvalidRequest, "the project has no Mercury API token: its owner stores one as {\"token\": \"secret-token:…\"}")
	}
	base := c.cfg.BaseURL
	if cr.BaseURL != "" {
		if !strings.HasPrefix(cr.BaseURL, "https://") && !strings.HasPrefix(cr.BaseURL, "http://") {
			return nil, countersign.Errorf(countersign.InvalidRequest, "the project's Mercury base_url is not an http(s) URL")
		}
		base = cr.BaseURL
	}
	return &client{http: c.http, base: strings.TrimRight(base, "/"), token: cr.Token}, nil
}

// do sends one request and reads a success into out.
func (cl *client) do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, cl.base+path, rd)
	if err != nil {
		return &apiError{message: "the request could not be made"}
	}
	req.Header.Set("Authorization", "Bearer "+cl.token)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := cl.http.Do(req)
	if err != nil {
		// The error may quote the URL, never the token; say only what kind.
		if errors.Is(err, context.DeadlineExceeded) {
			return &apiError{message: "timed out"}
		}
		return &apiError{message: "the connection failed"}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil || len(raw) > maxAnswer {
		if resp.StatusCode >= 200 && resp.StatusCode < 300 {
			return &apiError{message: "the answer was cut off"}
		}
		raw = nil
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return &apiError{status: resp.StatusCode, message: errorText(raw, resp.StatusCode)}
	}
	if out == nil {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(out); err != nil {
		return &apiError{status: resp.StatusCode, message: "the answer does not read"}
	}
	return nil
}

// errorText is what Mercury said, made safe for a sentence: its body's
// message when there is one (Mercury does not document one shape, so
// message, errors.message and error are tried), else the status's name; at
// most 200 characters, without control or formatting characters.
func errorText(raw []byte, status int) string {
	var body struct {
		Message string `json:"message"`
		Error   any    `json:"error"`
		Errors  any    `json:"errors"`
	}
	msg := ""
	if json.Unmarshal(raw, &body) == nil {
		msg = body.Message
		if msg == "" {
			if m, ok := body.Errors.(map[string]any); ok {
				msg, _ = m["message"].(string)
			}
		}
		if msg == "" {
			msg, _ = body.Error.(string)
		}
	}
	msg = cleanText(msg, 200)
	if msg == "" {
		msg = strings.ToLower(http.StatusText(status))
	}
	if msg == "" {
		msg = "no reason given"
	}
	return msg
}

// cleanText keeps the printable characters of s, white space as single
// spaces, cut to n characters.
func cleanText(s string, n int) string {
	var b strings.Builder
	count := 0
	space := false
	for _, r := range strings.ToValidUTF8(s, "") {
		if unicode.IsSpace(r) {
			space = b.Len() > 0
			continue
		}
		if !unicode.IsPrint(r) {
			continue
		}
		if count >= n {
			break
		}
		if space {
			b.WriteByte(' ')
			count++
			space = false
		}
		b.WriteRune(r)
		count++
	}
	return b.String()
}

// Mercury's shapes, the members the connector reads.

type account struct {
	ID               string      `json:"id"`
	Name             string      `json:"name"`
	Status           string      `json:"status"`
	Kind             string      `json:"kind"`
	AvailableBalance json.Number `json:"availableBalance"`
}

type routingInfo struct {
	AccountNumber         string `json:"accountNumber"`
	RoutingNumber         string `json:"routingNumber"`
	ElectronicAccountType string `json:"electronicAccountType,omitempty"`
}

type recipient struct {
	ID                    string       `json:"id"`
	Name                  string       `json:"name"`
	Status                string       `json:"status"`
	DefaultPaymentMethod  string       `json:"defaultPaymentMethod"`
	ElectronicRoutingInfo *routingInfo `json:"electronicRoutingInfo"`
}

type transaction struct {
	ID               string      `json:"id"`
	Amount           json.Number `json:"amount"`
	Status           string      `json:"status"`
	Kind             string      `json:"kind"`
	CounterpartyName string      `json:"counterpartyName"`
	Note             string      `json:"note"`
	CreatedAt        string      `json:"createdAt"`
}

type invoice struct {
	ID            string      `json:"id"`
	InvoiceNumber string      `json:"invoiceNumber"`
	Status        string      `json:"status"`
	Amount        json.Number `json:"amount"`
	DueDate       string      `json:"dueDate"`
}

type customer struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Email string `json:"email"`
}

// dollarsOf reads an amount Mercury wrote in dollars (a JSON number) as
// cents, exactly; a negative amount keeps its sign.
func dollarsOf(n json.Number) (policy.Cents, bool) {
	s := string(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	// Mercury writes 1500, 1500.5 or 1500.50; "1500.500" is read too.
	if i := strings.IndexByte(s, '.'); i >= 0 {
		frac := strings.TrimRight(s[i+1:], "0")
		if frac == "" {
			s = s[:i]
		} else {
			s = s[:i] + "." + frac
		}
	}
	c, err := policy.ParseCents(s)
	if err != nil {
		return 0, false
	}
	if neg {
		c = -c
	}
	return c, true
}

// dollarNumber writes cents as a JSON number of dollars ("120.00").
func dollarNumber(c policy.Cents) json.Number { return json.Number(c.String()) }

// money shows cents as a money field does: "$1,234.56".
func money(c policy.Cents) string {
	s := c.String()
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	whole, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	for i, d := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(d)
	}
	out := "$" + b.String() + "." + frac
	if neg {
		return "-" + out
	}
	return out
}

// newHTTP is the connector's HTTP client: a timeout, no redirects followed.
func newHTTP(c *http.Client) *http.Client {
	if c != nil {
		return c
	}
	return &http.Client{Timeout: 20 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}
