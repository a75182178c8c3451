// Package mercury is the Mercury banking connector (SPEC §14): payments,
// payees and invoices, gated by the owner's rules. It talks to Mercury's
// REST API (https://api.mercury.com/api/v1, or a project's own base URL,
// such as the sandbox's or the local fake's in mercurytest) with plain
// net/http and the project's bearer token. Every request goes through the
// egress guard (SPEC §14, connector egress): a base_url is https (http
// only when wiring allows private hosts, for serve --dev and tests)
// without userinfo, query, fragment or dot segments, refused before any
// request when it is not; every address dialed is public; no redirect is
// followed; ids go in the path as escaped segments, and a request refused
// before it left counts as certainly not made.
//
// Writes: pay_invoice (a payment to a saved payee, or to a new one saved
// with it), add_recipient, send_invoice, cancel_invoice. Reads: accounts,
// recipients, transactions. Each write is decided by the policy before
// Mercury is asked anything: max_payment_usd, and max_spend_usd_month for
// one payment alone, are the connector's declared caps, then confirm and
// the rules; what the last 30 days add to a payment the connector counts
// in the platform's spend ledger. A write the owner asked to see is sealed
// into a task whole (what it pays, to whom, from where, and why the owner
// is asked) with a one-line summary of what approving does ("pay $750.25
// to Acme Corp from Checking ••1234 by ACH; it cannot be undone"), and the
// answer run "confirm" carries out exactly the sealed write after checking
// the policy as it is then. Every write made tells the owner's history
// what it did (Call.Did at once, Report.Outcome when approved), and every
// operation declares the schema of its result.
//
// The requests and answers follow Mercury's reference: the members its
// OpenAPI document names (as the official Go SDK is generated from it),
// amounts as dollars in JSON numbers, the idempotency key in the body, a
// repeated key answered 409 with the payment it made.
//
// Money is integer cents throughout (policy.Cents); only the edges write
// dollars, as Mercury and the owner read them.
package mercury

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"countersign"
	"countersign/connectors"
	"countersign/egress"
	"countersign/policy"
)

// The connector's declaration.
const (
	Name    = "mercury"
	Version = "1.1.0"
	// DefaultBaseURL is Mercury's production API.
	DefaultBaseURL = "https://api.mercury.com/api/v1"
	// WritePrice and ReadPrice are the operations' prices in micro-USD.
	WritePrice = 10_000
	ReadPrice  = 1_000
)

// Policy keys of the connector, besides confirm and rules.
const (
	keyMaxPayment = "max_payment_usd"
	keyMaxMonth   = "max_spend_usd_month"
)

// Payment methods as rules and agents name them, and as Mercury does.
var methods = map[string]string{"ach": "ach", "wire": "domesticWire", "check": "check"}

// methodShown is how a task shows a method.
var methodShown = map[string]string{"ach": "ACH", "wire": "Domestic wire", "check": "Check"}

// wirePurpose is the purpose Mercury requires of a domestic wire, shown in
// the task.
const wirePurpose = "Vendor"

// keyPrefix starts every idempotency key the connector sends.
const keyPrefix = "countersign-"

// Config is how the service builds the connector.
type Config struct {
	// BaseURL is the API a project's credentials do not name one for
	// (default DefaultBaseURL).
	BaseURL string
	// Egress is how the API is reached: only public addresses over https,
	// no redirects followed, unless wiring sets AllowPrivate (serve --dev
	// and tests, whose fake listens on loopback http).
	Egress egress.Options
	// SandboxCredentials stand in for a project's credentials when it has
	// none: serve --dev sets them to its fake's token, never a real one.
	SandboxCredentials []byte
}

type connector struct {
	cfg  Config
	http *http.Client
}

// New returns the Mercury connector.
func New(cfg Config) *connectors.Connector {
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	e := cfg.Egress
	e.Timeout, e.Redirects = 20*time.Second, 0
	c := &connector{cfg: cfg, http: egress.NewClient(e)}
	return &connectors.Connector{
		Name: Name, Version: Version, Tasks: true,
		PolicyKeys: map[string]policy.KeyKind{keyMaxPayment: policy.Amount, keyMaxMonth: policy.Amount},
		// The policy refuses a payment above max_payment_usd, and one that
		// alone is above max_spend_usd_month; what the last 30 days add to
		// it the connector counts when it pays.
		Caps: []policy.Cap{
			{Key: keyMaxPayment, Condition: "amount", Writes: []string{"pay_invoice"}},
			{Key: keyMaxMonth, Condition: "amount", Writes: []string{"pay_invoice"}, Counted: "with the last 30 days' payments"},
		},
		Conditions: []policy.Condition{
			policy.AmountRange("amount", "min_usd", "max_usd"),
			policy.AnyOf("method", "methods", "ach", "wire", "check"),
			policy.Equals("payee", "payee", "saved", "new"),
			// The saved payee's id in Mercury (a new payee has none yet).
			policy.Names("recipient", "recipients", false),
		},
		TaskFacts: taskFacts,
		Operations: []connectors.Operation{
			{Name: "pay_invoice", Kind: connectors.Write, Price: WritePrice, Run: c.payInvoice,
				Carries: []string{"amount", "method", "payee", "recipient"}, Noun: "payment",
				Description: "Pays a saved payee (recipient_id) or a new one (recipient) from a Mercury account, by ACH, wire or check.",
				Schema:      json.RawMessage(paySchema), Result: json.RawMessage(paidSchema),
				Examples: []json.RawMessage{
					json.RawMessage(`{"recipient_id": "b2b2b2b2-0000-4000-8000-000000000001", "amount_usd": 120, "method": "ach", "memo": "Invoice 1042"}`),
					json.RawMessage(`{"recipient": {"name": "Hooli Inc", "email": "ap@hooli.example", "account_number": "000111222333", "routing_number": "021000021", ` +
						exampleAddress + `}, "amount_usd": 99.5, "method": "ach"}`),
				}},
			{Name: "add_recipient", Kind: connectors.Write, Price: WritePrice, Run: c.addRecipient, Noun: "new payee",
				Description: "Saves a new payee in Mercury with its bank account for ACH payments.",
				Schema:      json.RawMessage(recipientSchema), Result: json.RawMessage(savedSchema),
				Examples: []json.RawMessage{json.RawMessage(`{"name": "Hooli Inc", "email": "ap@hooli.example", "account_number": "000111222333", "routing_number": "021000021", ` +
					exampleAddress + `}`)}},
			{Name: "send_invoice", Kind: connectors.Write, Price: WritePrice, Run: c.sendInvoice,
				Carries: []string{"amount"}, Noun: "invoice",
				Description: "Creates an invoice for a Mercury customer and emails it to them now.",
				Schema:      json.RawMessage(invoiceSchema), Result: json.RawMessage(invoicedSchema),
				Examples: []json.RawMessage{json.RawMessage(`{"customer_id": "c3c3c3c3-0000-4000-8000-000000000001", "invoice_date": "2026-12-01", "due_date": "2026-12-31", ` +
					`"line_items": [{"name": "Consulting, December", "quantity": 10, "unit_price_usd": 150}]}`)}},
			{Name: "cancel_invoice", Kind: connectors.Write, Price: WritePrice, Run: c.cancelInvoice, Noun: "cancellation",
				Description: "Cancels an unpaid invoice; this cannot be undone.",
				Schema:      json.RawMessage(`{"type": "object", "properties": {"invoice_id": ` + idSchema + `}, "required": ["invoice_id"], "additionalProperties": false}`),
				Examples:    []json.RawMessage{json.RawMessage(`{"invoice_id": "d4d4d4d4-0000-4000-8000-000000000001"}`)},
				Result:      json.RawMessage(cancelledSchema)},
			{Name: "accounts", Kind: connectors.Read, Price: ReadPrice, Run: c.accounts,
				Description: "Lists the Mercury accounts with their balances.",
				Schema:      json.RawMessage(`{"type": "object", "additionalProperties": false}`),
				Examples:    []json.RawMessage{json.RawMessage(`{}`)},
				Result:      json.RawMessage(accountsSchema)},
			{Name: "recipients", Kind: connectors.Read, Price: ReadPrice, Run: c.recipients,
				Description: "Lists the saved payees.",
				Schema:      json.RawMessage(`{"type": "object", "additionalProperties": false}`),
				Examples:    []json.RawMessage{json.RawMessage(`{}`)},
				Result:      json.RawMessage(recipientsSchema)},
			{Name: "transactions", Kind: connectors.Read, Price: ReadPrice, Run: c.transactions,
				Description: "Lists an account's latest transactions, newest first (the first checking account when none is named).",
				Schema: json.RawMessage(`{"type": "object", "properties": {"account_id": ` + idSchema + `, ` +
					`"limit": {"type": "integer", "minimum": 1, "maximum": 500, "default": 50}}, "additionalProperties": false}`),
				Examples: []json.RawMessage{json.RawMessage(`{}`), json.RawMessage(`{"account_id": "a1a1a1a1-0000-4000-8000-000000000001", "limit": 10}`)},
				Result:   json.RawMessage(transactionsSchema)},
			{Name: "confirm", Kind: connectors.Answer, Answer: c.confirm,
				Description: "Carries out the write the owner approved, exactly as sealed.",
				Result:      json.RawMessage(`{"oneOf": [` + paidSchema + `, ` + savedSchema + `, ` + invoicedSchema + `, ` + cancelledSchema + `]}`)},
		},
	}
}

// The results' schemas: what each write answers once it is made (at once,
// or as the answer to an approved task), and what each read answers.
const (
	paidSchema = `{"type": "object", "description": "a payment made", "properties": {
    "ok": {"const": true}, "wrote": {"const": true},
    "sent_via": {"const": "direct", "description": "paid with Mercury's send money, never its approval requests"},
    "transaction_id": {"type": "string"},
    "amount_usd": {"type": "number", "description": "dollars, two decimals"},
    "amount_cents": {"type": "integer", "minimum": 1},
    "status": {"type": "string", "description": "Mercury's status of the transaction: pending, sent, …"},
    "recipient_id": {"type": "string"},
    "payee_saved": {"const": true, "description": "present when the payment saved its new payee first"}
  }, "required": ["ok", "wrote", "sent_via", "transaction_id", "amount_usd", "amount_cents", "status", "recipient_id"], "additionalProperties": false}`
	savedSchema = `{"type": "object", "description": "a payee saved", "properties": {
    "ok": {"const": true}, "wrote": {"const": true}, "recipient_id": {"type": "string"}, "name": {"type": "string"}
  }, "required": ["ok", "wrote", "recipient_id", "name"], "additionalProperties": false}`
	invoicedSchema = `{"type": "object", "description": "an invoice made and emailed", "properties": {
    "ok": {"const": true}, "wrote": {"const": true}, "invoice_id": {"type": "string"}, "invoice_number": {"type": "string"},
    "amount_usd": {"type": "number"}, "amount_cents": {"type": "integer", "minimum": 1}
  }, "required": ["ok", "wrote", "invoice_id", "invoice_number", "amount_usd", "amount_cents"], "additionalProperties": false}`
	cancelledSchema = `{"type": "object", "description": "an invoice cancelled", "properties": {
    "ok": {"const": true}, "wrote": {"const": true}, "invoice_id": {"type": "string"}, "status": {"const": "Cancelled"}
  }, "required": ["ok", "wrote", "invoice_id", "status"], "additionalProperties": false}`
	accountsSchema = `{"type": "object", "properties": {
    "ok": {"const": true},
    "accounts": {"type": "array", "items": {"type": "object", "properties": {
      "id": {"type": "string"}, "name": {"type": "string"}, "kind": {"type": "string"}, "status": {"type": "string"},
      "available_usd": {"type": "number"}, "available_cents": {"type": "integer"}
    }, "required": ["id", "name", "kind", "status", "available_usd", "available_cents"], "additionalProperties": false}}
  }, "required": ["ok", "accounts"], "additionalProperties": false}`
	recipientsSchema = `{"type": "object", "properties": {
    "ok": {"const": true},
    "recipients": {"type": "array", "items": {"type": "object", "properties": {
      "id": {"type": "string"}, "name": {"type": "string"}, "status": {"type": "string"},
      "default_payment_method": {"type": "string", "description": "Mercury's: ach, check, domesticWire, internationalWire, realTimePayment"},
      "account_last4": {"type": "string", "description": "the last four digits of the ACH account, when there is one"}
    }, "required": ["id", "name", "status", "default_payment_method"], "additionalProperties": false}}
  }, "required": ["ok", "recipients"], "additionalProperties": false}`
	transactionsSchema = `{"type": "object", "properties": {
    "ok": {"const": true}, "account_id": {"type": "string"},
    "transactions": {"type": "array", "items": {"type": "object", "properties": {
      "id": {"type": "string"}, "amount_usd": {"type": "number", "description": "negative for money out"}, "amount_cents": {"type": "integer"},
      "status": {"type": "string"}, "kind": {"type": "string"}, "counterparty": {"type": "string"}, "note": {"type": "string"},
      "created_at": {"type": "string"}
    }, "required": ["id", "amount_usd", "amount_cents", "status", "kind", "counterparty", "note", "created_at"], "additionalProperties": false}}
  }, "required": ["ok", "account_id", "transactions"], "additionalProperties": false}`
)

// exampleAddress is the address member of the examples.
const exampleAddress = `"address": {"address1": "1600 Amphitheatre Pkwy", "city": "Mountain View", "region": "CA", "postal_code": "94043", "country": "US"}`

const idSchema = `{"type": "string", "pattern": "^[A-Za-z0-9-]{1,64}$"}`

const amountSchema = `{"type": "number", "exclusiveMinimum": 0, "maximum": 100000000, "description": "dollars, with at most two decimals"}`

// addressSchema is a payee's legal address, which Mercury requires with an
// ACH account; its parts are bounded so that the whole is shown as one
// address value (200 characters).
const addressSchema = `{"type": "object", "description": "the payee's legal address", "properties": {
      "address1": {"type": "string", "minLength": 1, "maxLength": 50},
      "address2": {"type": "string", "maxLength": 50},
      "city": {"type": "string", "minLength": 1, "maxLength": 40},
      "region": {"type": "string", "minLength": 1, "maxLength": 20, "description": "the state, such as CA"},
      "postal_code": {"type": "string", "minLength": 1, "maxLength": 10},
      "country": {"type": "string", "pattern": "^[A-Z]{2}$", "description": "ISO 3166-1 alpha-2, such as US"}
    }, "required": ["address1", "city", "region", "postal_code", "country"], "additionalProperties": false}`

const newRecipientProps = `"name": {"type": "string", "minLength": 1, "maxLength": 100},
    "email": {"type": "string", "format": "email", "maxLength": 200},
    "account_number": {"type": "string", "pattern": "^[0-9]{4,17}$"},
    "routing_number": {"type": "string", "pattern": "^[0-9]{9}$"},
    "account_type": {"enum": ["businessChecking", "businessSavings", "personalChecking", "personalSavings"], "default": "businessChecking"},
    "address": ` + addressSchema

const recipientSchema = `{"type": "object", "properties": {
    ` + newRecipientProps + `
  }, "required": ["name", "email", "account_number", "routing_number", "address"], "additionalProperties": false}`

const paySchema = `{
  "type": "object",
  "properties": {
    "recipient_id": ` + idSchema + `,
    "recipient": ` + recipientSchema + `,
    "amount_usd": ` + amountSchema + `,
    "method": {"enum": ["ach", "wire", "check"]},
    "account_id": ` + idSchema + `,
    "memo": {"type": "string", "maxLength": 140, "description": "the note kept with the payment"}
  },
  "required": ["amount_usd", "method"],
  "oneOf": [{"required": ["recipient_id"]}, {"required": ["recipient"]}],
  "additionalProperties": false
}`

const invoiceSchema = `{
  "type": "object",
  "properties": {
    "customer_id": ` + idSchema + `,
    "account_id": ` + idSchema + `,
    "invoice_date": {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"},
    "due_date": {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"},
    "line_items": {"type": "array", "minItems": 1, "maxItems": 20, "items": {"type": "object", "properties": {
      "name": {"type": "string", "minLength": 1, "maxLength": 100},
      "quantity": {"type": "integer", "minimum": 1, "maximum": 100000},
      "unit_price_usd": ` + amountSchema + `
    }, "required": ["name", "quantity", "unit_price_usd"], "additionalProperties": false}},
    "memo": {"type": "string", "maxLength": 500}
  },
  "required": ["customer_id", "invoice_date", "due_date", "line_items"],
  "additionalProperties": false
}`

// newPayee is a payee the write saves in Mercury.
type newPayee struct {
	Name          string       `json:"name"`
	Email         string       `json:"email"`
	AccountNumber string       `json:"account_number"`
	RoutingNumber string       `json:"routing_number"`
	AccountType   string       `json:"account_type,omitempty"`
	Address       payeeAddress `json:"address"`
}

// payeeAddress is a new payee's legal address.
type payeeAddress struct {
	Address1   string `json:"address1"`
	Address2   string `json:"address2,omitempty"`
	City       string `json:"city"`
	Region     string `json:"region"`
	PostalCode string `json:"postal_code"`
	Country    string `json:"country"`
}

// line is the address on one line, as the owner is shown it.
func (a payeeAddress) line() string {
	parts := []string{a.Address1}
	if a.Address2 != "" {
		parts = append(parts, a.Address2)
	}
	return strings.Join(append(parts, a.City, a.Region+" "+a.PostalCode, a.Country), ", ")
}

// write is the sealed state of a task: the exact write to make.
type write struct {
	Op string `json:"op"`
	// pay_invoice
	AccountID   string `json:"account_id,omitempty"`
	RecipientID string `json:"recipient_id,omitempty"`
	Payee       string `json:"payee,omitempty"` // saved | new
	// PayeeName is the saved payee's name as Mercury had it: a wire's
	// purpose names it.
	PayeeName string    `json:"payee_name,omitempty"`
	New       *newPayee `json:"new,omitempty"` // pay_invoice to a new payee, add_recipient
	Cents     int64     `json:"cents,omitempty"`
	Method    string    `json:"method,omitempty"`
	Memo      string    `json:"memo,omitempty"`
	// send_invoice
	Invoice *invoiceRequest `json:"invoice,omitempty"`
	// cancel_invoice
	InvoiceID string `json:"invoice_id,omitempty"`
	// Number is the invoice's number as Mercury had it, for the owner's
	// history.
	Number string `json:"number,omitempty"`
}

// invoiceRequest is Mercury's POST /ar/invoices body.
type invoiceRequest struct {
	CustomerID           string         `json:"customerId"`
	DestinationAccountID string         `json:"destinationAccountId"`
	InvoiceDate          string         `json:"invoiceDate"`
	DueDate              string         `json:"dueDate"`
	LineItems            []lineItemBody `json:"lineItems"`
	PayerMemo            string         `json:"payerMemo,omitempty"`
	SendEmailOption      string         `json:"sendEmailOption"`
	AchDebitEnabled      bool           `json:"achDebitEnabled"`
	CreditCardEnabled    bool           `json:"creditCardEnabled"`
	UseRealAccountNumber bool           `json:"useRealAccountNumber"`
	CcEmails             []string       `json:"ccEmails"`
}

type lineItemBody struct {
	Name      string      `json:"name"`
	Quantity  json.Number `json:"quantity"`
	UnitPrice json.Number `json:"unitPrice"`
}

// ---- reads

func (c *connector) accounts(ctx context.Context, call *connectors.Call) (any, error) {
	cl, err := c.client(call.Credentials)
	if err != nil {
		return nil, err
	}
	list, err := cl.accounts(ctx)
	if err != nil {
		return nil, readRefusal(err)
	}
	out := make([]map[string]any, 0, len(list))
	for _, a := range list {
		cents, _ := dollarsOf(a.AvailableBalance)
		out = append(out, map[string]any{"id": a.ID, "name": a.Name, "kind": a.Kind, "status": a.Status,
			"available_usd": dollarNumber(cents), "available_cents": int64(cents)})
	}
	return map[string]any{"ok": true, "accounts": out}, nil
}

func (c *connector) recipients(ctx context.Context, call *connectors.Call) (any, error) {
	cl, err := c.client(call.Credentials)
	if err != nil {
		return nil, err
	}
	var body struct {
		Recipients []recipient `json:"recipients"`
	}
	if err := cl.do(ctx, http.MethodGet, at{"recipients"}, nil, &body); err != nil {
		return nil, readRefusal(err)
	}
	out := make([]map[string]any, 0, len(body.Recipients))
	for _, r := range body.Recipients {
		m := map[string]any{"id": r.ID, "name": r.Name, "status": r.Status, "default_payment_method": r.DefaultPaymentMethod}
		if ri := r.ElectronicRoutingInfo; ri != nil {
			m["account_last4"] = last4(ri.AccountNumber)
		}
		out = append(out, m)
	}
	return map[string]any{"ok": true, "recipients": out}, nil
}

func (c *connector) transactions(ctx context.Context, call *connectors.Call) (any, error) {
	var args struct {
		AccountID string `json:"account_id"`
		Limit     int    `json:"limit"`
	}
	if err := call.Decode(&args); err != nil {
		return nil, err
	}
	if args.Limit == 0 {
		args.Limit = 50
	}
	cl, err := c.client(call.Credentials)
	if err != nil {
		return nil, err
	}
	acct, err := cl.pickAccount(ctx, args.AccountID)
	if err != nil {
		return nil, err
	}
	var body struct {
		Transactions []transaction `json:"transactions"`
	}
	if err := cl.send(ctx, http.MethodGet, at{"account", acct.ID, "transactions"}, url.Values{"limit": {strconv.Itoa(args.Limit)}}, nil, &body); err != nil {
		return nil, readRefusal(err)
	}
	out := make([]map[string]any, 0, len(body.Transactions))
	for _, t := range body.Transactions {
		cents, _ := dollarsOf(t.Amount)
		out = append(out, map[string]any{"id": t.ID, "amount_usd": dollarNumber(cents), "amount_cents": int64(cents), "status": t.Status,
			"kind": t.Kind, "counterparty": t.CounterpartyName, "note": t.Note, "created_at": t.CreatedAt})
	}
	return map[string]any{"ok": true, "account_id": acct.ID, "transactions": out}, nil
}

func (cl *client) accounts(ctx context.Context) ([]account, error) {
	var body struct {
		Accounts []account `json:"accounts"`
	}
	if err := cl.do(ctx, http.MethodGet, at{"accounts"}, nil, &body); err != nil {
		return nil, err
	}
	return body.Accounts, nil
}

// pickAccount finds the account named, or the first active checking
// account when id is "".
func (cl *client) pickAccount(ctx context.Context, id string) (account, error) {
	list, err := cl.accounts(ctx)
	if err != nil {
		return account{}, readRefusal(err)
	}
	for _, a := range list {
		if (id != "" && a.ID == id) || (id == "" && a.Status == "active" && a.Kind == "checking") {
			if a.Status != "active" {
				return account{}, connectors.Refuse(countersign.InvalidRequest, "the account %s is %s, not active", a.ID, cleanText(a.Status, 20))
			}
			return a, nil
		}
	}
	if id == "" {
		return account{}, connectors.Refuse(countersign.InvalidRequest, "there is no active checking account; name one with `account_id`")
	}
	return account{}, connectors.Refuse(countersign.InvalidRequest, "Mercury has no account %s for this token", id)
}

// readRefusal words a failed read for the agent.
func readRefusal(err error) error {
	var ae *apiError
	if !errors.As(err, &ae) {
		return err
	}
	switch {
	case ae.before:
		return connectors.Refuse(ae.code, "%s", ae.message)
	case ae.status == http.StatusUnauthorized || ae.status == http.StatusForbidden:
		return connectors.Refuse("credentials_rejected", "Mercury refused the project's token (%d): its owner must store a valid one", ae.status)
	case ae.status == http.StatusNotFound:
		return connectors.Refuse(countersign.InvalidRequest, "Mercury does not know it (%s)", ae.message)
	case ae.certain():
		return connectors.Refuse(countersign.InvalidRequest, "Mercury refused it: %s", ae.message)
	}
	return connectors.Refuse("upstream_unavailable", "%s; try again later", ae.Error())
}

// ---- the policy

// monthly is the project's max_spend_usd_month in cents, or -1 for none.
func monthly(p *policy.Policy) policy.Cents {
	if max, ok := p.Amount(keyMaxMonth); ok {
		return max
	}
	return -1
}

func (w *write) facts() policy.Facts {
	switch w.Op {
	case "pay_invoice":
		recipient := []string{}
		if w.Payee == "saved" {
			recipient = []string{w.RecipientID}
		}
		return policy.Facts{Amounts: map[string]policy.Cents{"amount": policy.Cents(w.Cents)},
			Words: map[string]string{"method": w.Method, "payee": w.Payee}, Names: map[string][]string{"recipient": recipient}}
	case "send_invoice":
		return policy.Facts{Amounts: map[string]policy.Cents{"amount": policy.Cents(w.Cents)}}
	}
	return policy.Facts{}
}

// taskFacts reads the write a task asks about from the agent's request,
// as payInvoice and sendInvoice read it, for "Always allow this".
func taskFacts(request []byte, _ countersign.Envelope) (string, policy.Facts, error) {
	op, err := connectors.RequestOperation(request)
	if err != nil {
		return "", policy.Facts{}, err
	}
	w := &write{Op: op}
	switch op {
	case "pay_invoice":
		var args struct {
			RecipientID string          `json:"recipient_id"`
			Recipient   json.RawMessage `json:"recipient"`
			AmountUSD   json.RawMessage `json:"amount_usd"`
			Method      string          `json:"method"`
		}
		if err := json.Unmarshal(request, &args); err != nil {
			return "", policy.Facts{}, err
		}
		cents, err := policy.ParseCents(string(args.AmountUSD))
		if err != nil {
			return "", policy.Facts{}, err
		}
		w.Cents, w.Method, w.Payee, w.RecipientID = int64(cents), args.Method, "saved", args.RecipientID
		if args.Recipient != nil {
			w.Payee, w.RecipientID = "new", ""
		}
	case "send_invoice":
		var args struct {
			LineItems []struct {
				Quantity     int64           `json:"quantity"`
				UnitPriceUSD json.RawMessage `json:"unit_price_usd"`
			} `json:"line_items"`
		}
		if err := json.Unmarshal(request, &args); err != nil {
			return "", policy.Facts{}, err
		}
		for _, li := range args.LineItems {
			price, err := policy.ParseCents(string(li.UnitPriceUSD))
			if err != nil {
				return "", policy.Facts{}, err
			}
			w.Cents += int64(price) * li.Quantity
		}
	}
	return op, w.facts(), nil
}

// decide asks the policy about a write at prepare time: a refusal is the
// error; ask tells whether a task is needed, and why shows the owner why.
func decide(call *connectors.Call, w *write) (ask bool, why string, err error) {
	d := call.Policy.Decide(w.Op, w.facts())
	switch d.Outcome {
	case policy.Refuse:
		return false, "", connectors.Refuse(countersign.Code(d.Code), "%s", d.Sentence)
	case policy.Ask:
		if d.Rule > 0 {
			return true, "The owner's " + call.Policy.RuleText(d.Rule) + " asks about it.", nil
		}
		return true, "The owner's policy asks before every " + w.Op + " (confirm).", nil
	}
	return false, "", nil
}

// prepare asks the policy about a write at prepare time (decide), before
// Mercury is asked anything, then builds the project's client.
func (c *connector) prepare(call *connectors.Call, w *write) (cl *client, ask bool, why string, err error) {
	if ask, why, err = decide(call, w); err != nil {
		return nil, false, "", err
	}
	cl, err = c.client(call.Credentials)
	return cl, ask, why, err
}

// ---- pay_invoice

func (c *connector) payInvoice(ctx context.Context, call *connectors.Call) (any, error) {
	var args struct {
		RecipientID string          `json:"recipient_id"`
		Recipient   *newPayee       `json:"recipient"`
		AmountUSD   json.RawMessage `json:"amount_usd"`
		Method      string          `json:"method"`
		AccountID   string          `json:"account_id"`
		Memo        string          `json:"memo"`
	}
	if err := call.Decode(&args); err != nil {
		return nil, err
	}
	cents, err := policy.ParseCents(string(args.AmountUSD))
	if err != nil || cents <= 0 {
		return nil, connectors.Refuse(countersign.InvalidRequest, "`amount_usd` is an amount in dollars above 0 with at most two decimals, such as 120 or 499.99")
	}
	if _, ok := methods[args.Method]; !ok {
		return nil, connectors.Refuse(countersign.InvalidRequest, "`method` is ach, wire or check")
	}
	if (args.RecipientID == "") == (args.Recipient == nil) {
		return nil, connectors.Refuse(countersign.InvalidRequest, "a payment names either `recipient_id` (a saved payee) or `recipient` (a new one)")
	}
	if err := checkText("memo", args.Memo); err != nil {
		return nil, err
	}
	w := &write{Op: "pay_invoice", Cents: int64(cents), Method: args.Method, Memo: args.Memo, Payee: "saved", RecipientID: args.RecipientID}
	if args.Recipient != nil {
		if err := checkPayee(args.Recipient); err != nil {
			return nil, err
		}
		w.Payee, w.New = "new", args.Recipient
	}
	cl, ask, why, err := c.prepare(call, w)
	if err != nil {
		return nil, err
	}
	acct, err := cl.pickAccount(ctx, args.AccountID)
	if err != nil {
		return nil, err
	}
	w.AccountID = acct.ID
	var payeeAccount string
	if w.Payee == "saved" {
		var r recipient
		if err := cl.do(ctx, http.MethodGet, at{"recipient", w.RecipientID}, nil, &r); err != nil {
			return nil, readRefusal(err)
		}
		if r.Status != "" && r.Status != "active" {
			return nil, connectors.Refuse(countersign.InvalidRequest, "the payee %s is %s in Mercury, not active", w.RecipientID, cleanText(r.Status, 20))
		}
		w.PayeeName = cleanText(r.Name, 100)
		if w.PayeeName == "" {
			w.PayeeName = "the payee " + w.RecipientID
		}
		if r.ElectronicRoutingInfo != nil {
			payeeAccount = r.ElectronicRoutingInfo.AccountNumber
		}
	}
	head := heading{title: title("Pay "+money(cents)+" to ", w.payee()), summary: paySummary(w, accountWords(acct))}
	if !ask {
		return direct(call, head)(c.pay(ctx, cl, call.Platform, call.Policy, w, call.Run))
	}
	fields := []countersign.Field{
		field(countersign.FieldMoney, "Amount", countersign.WrittenByAgent, money(cents)),
	}
	if w.Payee == "saved" {
		to := w.PayeeName
		if payeeAccount != "" {
			to += " (account ••" + last4(payeeAccount) + ")"
		}
		fields = append(fields,
			field(countersign.FieldAccount, "To", countersign.WrittenByProject, to),
			field(countersign.FieldText, "Payee", countersign.WrittenByProject, "saved in Mercury ("+w.RecipientID+")"))
	} else {
		fields = append(fields,
			field(countersign.FieldAccount, "To", countersign.WrittenByAgent, w.New.Name),
			field(countersign.FieldText, "Payee", countersign.WrittenByProject, "new: saved in Mercury with this payment"))
		fields = append(fields, payeeFields("Payee's ", w.New)...)
	}
	method := methodShown[w.Method]
	if w.Method == "wire" {
		method += " (purpose: " + wirePurpose + ", " + w.payee() + ")"
	}
	fields = append(fields,
		field(countersign.FieldText, "Method", countersign.WrittenByAgent, method),
		field(countersign.FieldAccount, "From", countersign.WrittenByProject, cleanText(acct.Name, 100)+" ("+acct.ID+")"))
	if w.Memo != "" {
		fields = append(fields, field(countersign.FieldText, "Memo", countersign.WrittenByAgent, w.Memo))
	}
	return c.open(ctx, call, head, fields, why, w)
}

// payeeFields show a new payee's bank account, address and email, their
// labels starting with prefix.
func payeeFields(prefix string, p *newPayee) []countersign.Field {
	label := func(s string) string {
		if prefix == "" {
			return upper(s)
		}
		return prefix + s
	}
	return []countersign.Field{
		field(countersign.FieldAccount, label("account"), countersign.WrittenByAgent, p.AccountNumber+" ("+accountType(p)+")"),
		field(countersign.FieldAccount, label("routing number"), countersign.WrittenByAgent, p.RoutingNumber),
		field(countersign.FieldAddress, label("address"), countersign.WrittenByAgent, p.Address.line()),
		field(countersign.FieldText, label("email"), countersign.WrittenByAgent, p.Email),
	}
}

// paySummary is what approving a payment does, as SPEC §8's example says
// it: "pay $750.25 to Acme Corp from Checking ••1234 by ACH; it cannot be
// undone". A new payee is "new payee" and its name quoted; names are cut
// with "…" to fit 200 characters.
func paySummary(w *write, from string) string {
	rest := " from " + from + " by " + methodWords[w.Method] + "; it cannot be undone"
	lead := "pay " + money(policy.Cents(w.Cents)) + " to "
	room := countersign.MaxSummaryChars - utf8.RuneCountInString(lead+rest)
	if w.New != nil {
		return lead + "new payee " + quoted(w.New.Name, room-len("new payee ")) + rest
	}
	return lead + named(w.PayeeName, room) + rest
}

// methodWords name a method in a summary.
var methodWords = map[string]string{"ach": "ACH", "wire": "domestic wire", "check": "check"}

// accountWords name the account paid from or into as the owner knows it:
// its kind and the last four digits of its number ("Checking ••1234"), or
// its name in Mercury when its number is not given.
func accountWords(a account) string {
	kind := cleanText(a.Kind, 30)
	if len(a.AccountNumber) < 4 || kind == "" {
		return named(cleanText(a.Name, 100), 60)
	}
	return upper(kind) + " ••" + last4(a.AccountNumber)
}

// pay makes a payment: the new payee first, then the payment, counted
// against the month's bound under key. It is the write of a direct call
// (key: the run) and of an approved task (key: the task).
func (c *connector) pay(ctx context.Context, cl *client, pf connectors.Platform, pol *policy.Policy, w *write, key string) (*done, error) {
	idem := keyPrefix + key
	ok, err := pf.Spend(ctx, idem, policy.Cents(w.Cents), monthly(pol))
	if err != nil {
		return nil, err
	}
	if !ok {
		max, _ := pol.Amount(keyMaxMonth)
		return nil, connectors.Refuse(countersign.PolicyDenied, "this payment of %s would take the last 30 days' payments past the owner's max_spend_usd_month of %s", money(policy.Cents(w.Cents)), money(max))
	}
	recipientID, saved := w.RecipientID, false
	if w.New != nil {
		r, err := cl.createRecipient(ctx, w.New)
		if err != nil {
			_ = pf.Unspend(ctx, idem)
			return nil, writeRefusal(err, "the new payee", false)
		}
		recipientID, saved = r.ID, true
	}
	body := map[string]any{"recipientId": recipientID, "amount": dollarNumber(policy.Cents(w.Cents)),
		"paymentMethod": methods[w.Method], "idempotencyKey": idem}
	if w.Memo != "" {
		body["note"] = w.Memo
	}
	if w.Method == "wire" {
		// Mercury requires additionalInfo, the vendor's name, of a Vendor
		// purpose.
		body["purpose"] = map[string]any{"simple": map[string]string{"category": wirePurpose, "additionalInfo": w.payee()}}
	}
	var t transaction
	path := at{"account", w.AccountID, "transactions"}
	err = cl.do(ctx, http.MethodPost, path, body, &t)
	var ae *apiError
	if errors.As(err, &ae) && !ae.certain() {
		// The answer was lost or Mercury failed: the payment may have been
		// made. The same idempotency key asks again without paying twice.
		err = cl.do(ctx, http.MethodPost, path, body, &t)
	}
	if errors.As(err, &ae) && ae.status == http.StatusConflict {
		// Mercury answers a repeated idempotency key with 409 and the
		// transaction the key made, and makes none: this payment, made
		// by the first request.
		first, ok := madeBefore(ae.body, recipientID, policy.Cents(w.Cents))
		if !ok {
			return nil, connectors.RefusedUnknown("upstream_unavailable", "%s", upper(pre(saved)+
				"Mercury answered 409 for this payment's idempotency key with another transaction, so whether this payment was made is not known: look at the account's transactions before preparing it again."))
		}
		t, err = first, nil
	}
	if err != nil {
		if errors.As(err, &ae) && ae.certain() {
			_ = pf.Unspend(ctx, idem)
		}
		return nil, writeRefusal(err, "the payment", saved)
	}
	out := map[string]any{"ok": true, "wrote": true, "sent_via": "direct", "transaction_id": t.ID,
		"amount_usd": dollarNumber(policy.Cents(w.Cents)), "amount_cents": w.Cents, "status": cleanText(t.Status, 40), "recipient_id": recipientID}
	text := "Payment sent: transaction " + cleanText(t.ID, 64)
	if saved {
		out["payee_saved"] = true
		text = "Payee saved and payment sent: transaction " + cleanText(t.ID, 64)
	}
	if st := cleanText(t.Status, 20); st != "" {
		text += " (" + st + ")"
	}
	return &done{out: out, outcome: connectors.Outcome{Text: text, URL: link(t.DashboardLink)}}, nil
}

// link is Mercury's link to an object when it is an https URL a page may
// open; "" otherwise.
func link(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || len(s) > 500 || strings.ContainsFunc(s, unicode.IsSpace) {
		return ""
	}
	return u.String()
}

// madeBefore reads the transaction a 409 answer carries and tells whether
// it is the payment meant: to recipient, of cents.
func madeBefore(raw []byte, recipient string, cents policy.Cents) (transaction, bool) {
	var t transaction
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&t) != nil || t.ID == "" || t.CounterpartyID != recipient {
		return transaction{}, false
	}
	amount, ok := dollarsOf(t.Amount)
	if amount < 0 {
		amount = -amount
	}
	return t, ok && amount == cents
}

// payee is the name of the write's payee, saved or new.
func (w *write) payee() string {
	if w.New != nil {
		return w.New.Name
	}
	return w.PayeeName
}

// createRecipient saves a new payee with its ACH account and legal
// address (POST /recipients, as Mercury's reference names its members).
func (cl *client) createRecipient(ctx context.Context, p *newPayee) (recipient, error) {
	var r recipient
	a := p.Address
	err := cl.do(ctx, http.MethodPost, at{"recipients"}, map[string]any{
		"name": p.Name, "emails": []string{p.Email},
		"electronicRoutingInfo": routingInfo{AccountNumber: p.AccountNumber, RoutingNumber: p.RoutingNumber, ElectronicAccountType: accountType(p),
			Address: &address{Address1: a.Address1, Address2: a.Address2, City: a.City, Region: a.Region, PostalCode: a.PostalCode, Country: a.Country}},
	}, &r)
	return r, err
}

// writeRefusal words a failed write: a 4xx proves it did not happen; a lost
// answer or a 5xx leaves it unknown. before says whether an earlier step of
// the same write (a payee saved) did happen.
func writeRefusal(err error, what string, before bool) error {
	var ae *apiError
	if !errors.As(err, &ae) {
		return err
	}
	pre := pre(before)
	switch {
	case ae.before:
		return &connectors.Refusal{Code: ae.code, Wrote: before, Sentence: upper(pre + ae.message + ".")}
	case ae.status == http.StatusUnauthorized || ae.status == http.StatusForbidden:
		return &connectors.Refusal{Code: "credentials_rejected", Wrote: before,
			Sentence: upper(pre + fmt.Sprintf("Mercury refused the project's token for %s (%d): its owner must store a valid one.", what, ae.status))}
	case ae.status == http.StatusConflict:
		return &connectors.Refusal{Code: countersign.Conflict, Wrote: before, Sentence: upper(pre + fmt.Sprintf("Mercury refused %s as a conflict: %s.", what, ae.message))}
	case ae.certain():
		return &connectors.Refusal{Code: countersign.InvalidRequest, Wrote: before, Sentence: upper(pre + fmt.Sprintf("Mercury refused %s: %s.", what, ae.message))}
	}
	look := "look in Mercury"
	if what == "the payment" {
		look = "look at the account's transactions"
	}
	return connectors.RefusedUnknown("upstream_unavailable", "%s", upper(pre+fmt.Sprintf("%s, so %s may or may not have been made: %s before preparing it again.", ae.Error(), what, look)))
}

// pre starts a sentence about a payment whose new payee was saved.
func pre(saved bool) string {
	if saved {
		return "The new payee was saved in Mercury, but "
	}
	return ""
}

func upper(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// ---- add_recipient

func (c *connector) addRecipient(ctx context.Context, call *connectors.Call) (any, error) {
	var p newPayee
	if err := call.Decode(&p); err != nil {
		return nil, err
	}
	if err := checkPayee(&p); err != nil {
		return nil, err
	}
	w := &write{Op: "add_recipient", New: &p}
	cl, ask, why, err := c.prepare(call, w)
	if err != nil {
		return nil, err
	}
	lead, rest := "save the payee ", fmt.Sprintf(" (ACH to account ••%s, routing %s); it can be deleted later in Mercury", last4(p.AccountNumber), p.RoutingNumber)
	head := heading{title: title("Save a new payee: ", p.Name),
		summary: lead + quoted(p.Name, countersign.MaxSummaryChars-utf8.RuneCountInString(lead+rest)) + rest}
	if !ask {
		return direct(call, head)(c.saveRecipient(ctx, cl, w))
	}
	fields := append([]countersign.Field{field(countersign.FieldText, "Name", countersign.WrittenByAgent, p.Name)}, payeeFields("", &p)...)
	return c.open(ctx, call, head, fields, why, w)
}

func (c *connector) saveRecipient(ctx context.Context, cl *client, w *write) (*done, error) {
	r, err := cl.createRecipient(ctx, w.New)
	if err != nil {
		return nil, writeRefusal(err, "the new payee", false)
	}
	return &done{out: map[string]any{"ok": true, "wrote": true, "recipient_id": r.ID, "name": cleanText(r.Name, 100)},
		outcome: connectors.Outcome{Text: "Payee saved: recipient " + cleanText(r.ID, 64)}}, nil
}

// ---- send_invoice

func (c *connector) sendInvoice(ctx context.Context, call *connectors.Call) (any, error) {
	var args struct {
		CustomerID  string `json:"customer_id"`
		AccountID   string `json:"account_id"`
		InvoiceDate string `json:"invoice_date"`
		DueDate     string `json:"due_date"`
		LineItems   []struct {
			Name         string          `json:"name"`
			Quantity     int64           `json:"quantity"`
			UnitPriceUSD json.RawMessage `json:"unit_price_usd"`
		} `json:"line_items"`
		Memo string `json:"memo"`
	}
	if err := call.Decode(&args); err != nil {
		return nil, err
	}
	if err := checkText("memo", args.Memo); err != nil {
		return nil, err
	}
	req := &invoiceRequest{CustomerID: args.CustomerID, InvoiceDate: args.InvoiceDate, DueDate: args.DueDate, PayerMemo: args.Memo,
		SendEmailOption: "SendNow", AchDebitEnabled: true, CcEmails: []string{}}
	var total policy.Cents
	var lines []string
	for i, li := range args.LineItems {
		price, err := policy.ParseCents(string(li.UnitPriceUSD))
		if err != nil || price <= 0 || li.Quantity <= 0 {
			return nil, connectors.Refuse(countersign.InvalidRequest, "line item %d: `unit_price_usd` is an amount in dollars above 0 with at most two decimals", i+1)
		}
		if err := checkText(fmt.Sprintf("line item %d's name", i+1), li.Name); err != nil {
			return nil, err
		}
		total += price * policy.Cents(li.Quantity)
		req.LineItems = append(req.LineItems, lineItemBody{Name: li.Name, Quantity: json.Number(fmt.Sprint(li.Quantity)), UnitPrice: dollarNumber(price)})
		lines = append(lines, fmt.Sprintf("%s: %d × %s", li.Name, li.Quantity, money(price)))
	}
	w := &write{Op: "send_invoice", Cents: int64(total), Invoice: req}
	cl, ask, why, err := c.prepare(call, w)
	if err != nil {
		return nil, err
	}
	acct, err := cl.pickAccount(ctx, args.AccountID)
	if err != nil {
		return nil, err
	}
	req.DestinationAccountID = acct.ID
	var cust customer
	if err := cl.do(ctx, http.MethodGet, at{"ar", "customers", args.CustomerID}, nil, &cust); err != nil {
		var ae *apiError
		if errors.As(err, &ae) && ae.status == http.StatusNotFound {
			return nil, connectors.Refuse(countersign.InvalidRequest, "Mercury has no customer %s", args.CustomerID)
		}
		return nil, readRefusal(err)
	}
	name := cleanText(cust.Name, 100)
	lead, rest := "email an invoice of "+money(total)+" to ", ", due "+args.DueDate+"; it can be cancelled while unpaid"
	head := heading{title: title("Send an invoice of "+money(total)+" to ", name),
		summary: lead + named(name, countersign.MaxSummaryChars-utf8.RuneCountInString(lead+rest)) + rest}
	if !ask {
		return direct(call, head)(c.createInvoice(ctx, cl, w))
	}
	fields := []countersign.Field{
		field(countersign.FieldMoney, "Total", countersign.WrittenByProject, money(total)),
		field(countersign.FieldText, "To", countersign.WrittenByProject, name+" <"+cleanText(cust.Email, 200)+">, emailed now"),
		{Kind: countersign.FieldList, Label: "Lines", Values: lines, WrittenBy: countersign.WrittenByAgent},
		field(countersign.FieldText, "Dates", countersign.WrittenByAgent, "dated "+args.InvoiceDate+", due "+args.DueDate),
		field(countersign.FieldAccount, "Paid into", countersign.WrittenByProject, cleanText(acct.Name, 100)+" ("+acct.ID+")"),
	}
	if args.Memo != "" {
		fields = append(fields, field(countersign.FieldText, "Memo", countersign.WrittenByAgent, args.Memo))
	}
	return c.open(ctx, call, head, fields, why, w)
}

func (c *connector) createInvoice(ctx context.Context, cl *client, w *write) (*done, error) {
	var inv invoice
	if err := cl.do(ctx, http.MethodPost, at{"ar", "invoices"}, w.Invoice, &inv); err != nil {
		return nil, writeRefusal(err, "the invoice", false)
	}
	number := cleanText(inv.InvoiceNumber, 40)
	return &done{out: map[string]any{"ok": true, "wrote": true, "invoice_id": inv.ID, "invoice_number": number,
		"amount_usd": dollarNumber(policy.Cents(w.Cents)), "amount_cents": w.Cents},
		outcome: connectors.Outcome{Text: "Invoice " + named(number, 60) + " emailed: " + money(policy.Cents(w.Cents)) + ", invoice " + cleanText(inv.ID, 64)}}, nil
}

// ---- cancel_invoice

func (c *connector) cancelInvoice(ctx context.Context, call *connectors.Call) (any, error) {
	var args struct {
		InvoiceID string `json:"invoice_id"`
	}
	if err := call.Decode(&args); err != nil {
		return nil, err
	}
	w := &write{Op: "cancel_invoice", InvoiceID: args.InvoiceID}
	cl, ask, why, err := c.prepare(call, w)
	if err != nil {
		return nil, err
	}
	var inv invoice
	if err := cl.do(ctx, http.MethodGet, at{"ar", "invoices", args.InvoiceID}, nil, &inv); err != nil {
		return nil, readRefusal(err)
	}
	if inv.Status != "Unpaid" {
		return nil, connectors.Refuse(countersign.InvalidRequest, "the invoice is %s: only an unpaid invoice can be cancelled", cleanText(inv.Status, 20))
	}
	w.Number = cleanText(inv.InvoiceNumber, 40)
	amount, _ := dollarsOf(inv.Amount)
	due := cleanText(inv.DueDate, 20)
	head := heading{title: title("Cancel invoice ", w.Number),
		summary: "cancel invoice " + named(w.Number, 60) + " of " + money(amount) + ", due " + named(due, 30) + "; it cannot be undone"}
	if !ask {
		return direct(call, head)(c.cancel(ctx, cl, w))
	}
	fields := []countersign.Field{
		field(countersign.FieldText, "Invoice", countersign.WrittenByProject, w.Number+" ("+inv.ID+")"),
		field(countersign.FieldMoney, "Amount", countersign.WrittenByProject, money(amount)),
		field(countersign.FieldText, "Due", countersign.WrittenByProject, due),
		field(countersign.FieldText, "What happens", countersign.WrittenByProject, "The invoice is cancelled and can no longer be paid; this cannot be undone."),
	}
	return c.open(ctx, call, head, fields, why, w)
}

// cancel cancels the invoice; Mercury's answer has no body to read.
func (c *connector) cancel(ctx context.Context, cl *client, w *write) (*done, error) {
	if err := cl.do(ctx, http.MethodPost, at{"ar", "invoices", w.InvoiceID, "cancel"}, nil, nil); err != nil {
		return nil, writeRefusal(err, "the cancellation", false)
	}
	text := "Invoice " + cleanText(w.InvoiceID, 64) + " cancelled"
	if w.Number != "" {
		text = "Invoice " + named(w.Number, 60) + " cancelled (" + cleanText(w.InvoiceID, 64) + ")"
	}
	return &done{out: map[string]any{"ok": true, "wrote": true, "invoice_id": w.InvoiceID, "status": "Cancelled"},
		outcome: connectors.Outcome{Text: text}}, nil
}

// ---- tasks and answers

// heading is what a write's task shows above its fields, and what a write
// made at once tells the owner's history of itself.
type heading struct{ title, summary string }

// done is a write made: what it answers, and what it tells the owner's
// history it did.
type done struct {
	out     any
	outcome connectors.Outcome
}

// open seals w into a task showing fields and, last, why the owner is asked.
func (c *connector) open(ctx context.Context, call *connectors.Call, s heading, fields []countersign.Field, why string, w *write) (any, error) {
	fields = append(fields, field(countersign.FieldText, "Why you are asked", countersign.WrittenByProject, why))
	state, err := json.Marshal(w)
	if err != nil {
		return nil, err
	}
	t, err := call.OpenTask(ctx, connectors.TaskSpec{Kind: countersign.KindConfirm,
		Display:  countersign.Display{Title: s.title, Summary: s.summary, Fields: fields},
		AnswerBy: &countersign.AnswerBy{Operation: "confirm", Supplies: countersign.SuppliesNone}, State: state})
	if err != nil {
		return nil, err
	}
	return connectors.AwaitingOwner(t), nil
}

// confirm carries out an approved write: the sealed one, after the policy
// as it is now allows it (Ask is the owner's yes).
func (c *connector) confirm(ctx context.Context, a *connectors.AnswerCall) (connectors.Report, error) {
	w, err := parseWrite(a.State)
	if err != nil {
		return connectors.Report{}, connectors.Refused(countersign.InvalidRequest, false, "The task's sealed write does not read.")
	}
	if a.Policy.Mode() != policy.OK {
		return connectors.Report{}, connectors.Refused(countersign.PolicyUnreadable, false, "%s.", upper(a.Policy.Sentence()))
	}
	if d := a.Decide(w.Op, w.facts()); d.Outcome == policy.Refuse {
		return connectors.Report{}, connectors.Refused(countersign.Code(d.Code), false, "%s.", upper(d.Sentence))
	}
	cl, err := c.client(a.Credentials)
	if err != nil {
		return connectors.Report{}, connectors.Refused(countersign.ErrorCode(err), false, "%s.", upper(countersign.ErrorMessage(err)))
	}
	var d *done
	switch w.Op {
	case "pay_invoice":
		d, err = c.pay(ctx, cl, a.Platform, a.Policy, w, a.Task.ID)
	case "add_recipient":
		d, err = c.saveRecipient(ctx, cl, w)
	case "send_invoice":
		d, err = c.createInvoice(ctx, cl, w)
	case "cancel_invoice":
		d, err = c.cancel(ctx, cl, w)
	}
	var ce *countersign.Error
	if errors.As(err, &ce) {
		return connectors.Report{}, connectors.Refused(ce.Code, false, "%s.", upper(ce.Message))
	}
	if err != nil {
		return connectors.Report{}, err
	}
	return connectors.Report{Result: d.out, Outcome: d.outcome}, nil
}

// parseWrite reads a task's sealed write strictly.
func parseWrite(b []byte) (*write, error) {
	var w write
	if err := countersign.DecodeStrict(b, &w); err != nil {
		return nil, err
	}
	ok := false
	switch w.Op {
	case "pay_invoice":
		_, known := methods[w.Method]
		ok = known && w.Cents > 0 && w.AccountID != "" && (w.Payee == "saved" && w.RecipientID != "" && w.New == nil || w.Payee == "new" && w.New != nil && w.RecipientID == "") &&
			(w.Method != "wire" || w.payee() != "")
	case "add_recipient":
		ok = w.New != nil
	case "send_invoice":
		ok = w.Invoice != nil && w.Cents > 0
	case "cancel_invoice":
		ok = w.InvoiceID != ""
	}
	if !ok {
		return nil, errors.New("mercury: the sealed write is incomplete")
	}
	return &w, nil
}

// ---- helpers

// direct answers a write made at once: what it answers, after telling
// the owner's history what it did, with the title and summary a task of
// it would have shown; an upstream refusal reaches the agent as "<code>:
// <sentence>", with what happened to the write.
func direct(call *connectors.Call, s heading) func(*done, error) (any, error) {
	return func(d *done, err error) (any, error) {
		var r *connectors.Refusal
		if errors.As(err, &r) {
			return nil, countersign.Errorf(r.Code, "%s", r.Message())
		}
		if err != nil {
			return nil, err
		}
		call.Did(connectors.Did{Title: s.title, Summary: s.summary, Outcome: d.outcome})
		return d.out, nil
	}
}

// named is a name from Mercury as the owner reads it in a summary: as it
// is when it is plain (letters, digits, spaces and . , & ' -), else quoted
// as a Go string is; cut with "…" to at most max characters either way.
func named(s string, max int) string {
	plain := s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune(" .,&'-", r)
	}) && strings.TrimSpace(s) == s && !strings.Contains(s, "  ")
	if !plain {
		return quoted(s, max)
	}
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	return string([]rune(s)[:max-1]) + "…"
}

// quoted is s between double quotes as Go writes a string literal (a
// quote or backslash in it escaped, so it cannot close the quotation
// early; an invisible character written as its escape), cut with "…"
// inside the quotes to at most max characters.
func quoted(s string, max int) string {
	q := strconv.Quote(s)
	if utf8.RuneCountInString(q) <= max {
		return q
	}
	r := []rune(s)
	for n := min(len(r), max); n > 0; n-- {
		if q = strconv.Quote(string(r[:n]) + "…"); utf8.RuneCountInString(q) <= max {
			return q
		}
	}
	return `"…"`
}

func field(kind countersign.FieldKind, label string, by countersign.WrittenBy, value string) countersign.Field {
	return countersign.Field{Kind: kind, Label: label, Values: []string{value}, WrittenBy: by}
}

// title is prefix and name within the 80 characters of a title.
func title(prefix, name string) string {
	room := countersign.MaxTitleChars - utf8.RuneCountInString(prefix)
	if utf8.RuneCountInString(name) > room {
		r := []rune(name)
		name = string(r[:room-1]) + "…"
	}
	return prefix + name
}

func last4(s string) string {
	if len(s) <= 4 {
		return s
	}
	return s[len(s)-4:]
}

func accountType(p *newPayee) string {
	if p.AccountType == "" {
		return "businessChecking"
	}
	return p.AccountType
}

// checkText refuses a text the owner could not be shown as it is.
func checkText(what, s string) error {
	if s == "" {
		return nil
	}
	if countersign.ValidateDisplay(countersign.Display{Title: "x", Fields: []countersign.Field{field(countersign.FieldText, "x", countersign.WrittenByAgent, s)}}) != nil {
		return connectors.Refuse(countersign.InvalidRequest, "the %s holds characters a task may not show (control, invisible or reordering characters)", what)
	}
	return nil
}

func checkPayee(p *newPayee) error {
	a := p.Address
	for _, f := range []struct{ what, v string }{{"payee's name", p.Name}, {"payee's email", p.Email},
		{"payee's address", a.Address1}, {"payee's city", a.City}, {"payee's region", a.Region}, {"payee's postal code", a.PostalCode}} {
		if strings.TrimSpace(f.v) == "" {
			return connectors.Refuse(countersign.InvalidRequest, "the %s is empty", f.what)
		}
		if err := checkText(f.what, f.v); err != nil {
			return err
		}
	}
	return checkText("payee's address", a.Address2)
}
