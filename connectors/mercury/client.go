package mercury

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"unicode"

	"countersign"
	"countersign/egress"
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
	base  string // scheme, host and path, no trailing slash
	token string
	// own: the base came from the project's credentials.
	own bool
}

// apiError is an answer Mercury gave that is not a success, or no answer,
// or a request that never left.
type apiError struct {
	// status is Mercury's HTTP status; 0 when no answer came.
	status  int
	message string
	// body is the answer's body when it is a conflict (409), which for a
	// payment carries the transaction its idempotency key made.
	body []byte
	// before: the request was refused before it left (a value that would
	// make a dot segment of the path, a host that is not public), for the
	// reason code and the sentence message. Nothing happened.
	before bool
	code   countersign.Code
}

func (e *apiError) Error() string {
	if e.status == 0 {
		return "Mercury did not answer (" + e.message + ")"
	}
	return fmt.Sprintf("Mercury answered %d (%s)", e.status, e.message)
}

// certain reports whether the answer proves nothing happened: a 4xx does,
// and a request that never left; a 5xx or a lost answer may follow a
// write that was made.
func (e *apiError) certain() bool { return e.before || e.status >= 400 && e.status < 500 }

// client is the API client for a project's credentials: the base URL they
// name, or the connector's, checked by the egress rules (https, no
// userinfo, query or fragment, a public host, no dot segments) before any
// request.
func (c *connector) client(raw []byte) (*client, error) {
	if len(raw) == 0 && c.cfg.SandboxCredentials != nil {
		raw = c.cfg.SandboxCredentials
	}
	var cr creds
	if len(raw) == 0 || countersign.DecodeStrict(raw, &cr) != nil || strings.TrimSpace(cr.Token) == "" {
		return nil, countersign.Errorf(countersign.InvalidRequest, "the project has no Mercury API token: its owner stores one as {\"token\": \"secret-token:…\"}")
	}
	base, own := c.cfg.BaseURL, cr.BaseURL != ""
	if own {
		base = cr.BaseURL
	}
	u, err := egress.CheckBaseURL(base, c.cfg.Egress.AllowPrivate)
	if err != nil {
		ue := egress.ErrURLSyntax
		errors.As(err, &ue)
		if own {
			return nil, countersign.Errorf(countersign.InvalidRequest, "%s: the owner must correct the project's credentials", ue.Of("the project's Mercury base_url"))
		}
		return nil, countersign.Errorf(countersign.Internal, "the service's Mercury base URL is refused: %s", ue.Of("it"))
	}
	return &client{http: c.http, base: u.String(), token: cr.Token, own: own}, nil
}

// at is a request's path: its segments, each escaped whole when the
// request is made (egress.Path), so no id can add or remove a level.
type at []string

// do sends one request and reads a success into out.
func (cl *client) do(ctx context.Context, method string, path at, body, out any) error {
	return cl.send(ctx, method, path, nil, body, out)
}

// send is do with a query.
func (cl *client) send(ctx context.Context, method string, path at, query url.Values, body, out any) error {
	p, err := egress.Path(path...)
	if err != nil {
		return &apiError{before: true, code: countersign.InvalidRequest, message: "an id would make an empty, . or .. segment of Mercury's URL path"}
	}
	if len(query) > 0 {
		p += "?" + egress.Query(query)
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, cl.base+p, rd)
	if err != nil {
		return &apiError{before: true, code: countersign.InvalidRequest, message: "the request to Mercury could not be made"}
	}
	req.Header.Set("Authorization", "Bearer "+cl.token)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := cl.http.Do(req)
	switch {
	case egress.Refused(err) && cl.own:
		return &apiError{before: true, code: countersign.InvalidRequest,
			message: "the project's Mercury base_url leads to an address that is not public (loopback, private, link-local or reserved), so Mercury was not asked: the owner must correct the project's credentials"}
	case egress.Refused(err):
		return &apiError{before: true, code: countersign.Internal, message: "Mercury's host resolves to an address that is not public, so it was not asked"}
	case err != nil:
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
		ae := &apiError{status: resp.StatusCode, message: errorText(raw, resp.StatusCode)}
		if resp.StatusCode == http.StatusConflict {
			ae.body = raw
		}
		return ae
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
	AccountNumber    string      `json:"accountNumber"`
	AvailableBalance json.Number `json:"availableBalance"`
}

type routingInfo struct {
	AccountNumber         string   `json:"accountNumber"`
	RoutingNumber         string   `json:"routingNumber"`
	ElectronicAccountType string   `json:"electronicAccountType,omitempty"`
	Address               *address `json:"address,omitempty"`
}

// address is Mercury's address without a name (AddressWithoutName).
type address struct {
	Address1   string `json:"address1"`
	Address2   string `json:"address2,omitempty"`
	City       string `json:"city"`
	Region     string `json:"region"`
	PostalCode string `json:"postalCode"`
	Country    string `json:"country"`
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
	CounterpartyID   string      `json:"counterpartyId"`
	CounterpartyName string      `json:"counterpartyName"`
	Note             string      `json:"note"`
	CreatedAt        string      `json:"createdAt"`
	DashboardLink    string      `json:"dashboardLink"`
}

type invoice struct {
	ID            string      `json:"id"`
	InvoiceNumber string      `json:"invoiceNumber"`
	Status        string      `json:"status"`
	Amount        json.Number `json:"amount"`
	DueDate       string      `json:"dueDate"`
	CustomerID    string      `json:"customerId"`
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
