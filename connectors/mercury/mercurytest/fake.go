// Package mercurytest is a local fake of the parts of Mercury's banking API
// (https://api.mercury.com/api/v1) the mercury connector uses: accounts with
// balances, recipients, transactions, customers and invoices, behind a
// bearer token. Tests, serve --dev and `countersign sandbox mercury` run it;
// it answers the same REST API it is inspected through.
//
// Its shapes are those of Mercury's API reference, as its OpenAPI document
// generates the official Go SDK (MercuryTechnologies/mercury-go, v0.13.9)
// and as docs.mercury.com's pages for sending money say: amounts are dollars
// as JSON numbers (held here in integer cents); a payment needs recipientId,
// amount, paymentMethod (ach, check, domesticWire) and idempotencyKey, all in
// the body (there is no idempotency header), and a domestic wire a purpose
// whose category is one of Mercury's, with additionalInfo (the payee's
// name) for Vendor, Contractor and Other; a repeated idempotencyKey creates
// nothing and answers 409 with the transaction it made first; a second
// payment to the same recipient from the same account of the same amount
// within 24 hours is 400 even under another key; a new recipient's
// electronicRoutingInfo carries accountNumber, routingNumber,
// electronicAccountType and the recipient's address; cancelling an invoice
// answers no body. What the reference leaves open, the fake chooses: a
// payment above the available balance is 400; an unknown account, recipient,
// customer or invoice is 404; a missing or wrong token is 401; a body member
// the reference does not name is 400 (so the connector sends only what the
// reference names). Mercury does not document its error bodies; the fake
// answers {"errors": {"message": …}} and the connector relies on statuses
// only. A dashboardLink is the fake's own making, on Mercury's host.
package mercurytest

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Token is the bearer token the seeded fake accepts.
const Token = "secret-token:mercury_sandbox_countersign"

// Seeded ids.
const (
	CheckingID = "a1a1a1a1-0000-4000-8000-000000000001"
	SavingsID  = "a1a1a1a1-0000-4000-8000-000000000002"
	AcmeID     = "b2b2b2b2-0000-4000-8000-000000000001" // a saved payee, ACH
	GlobexID   = "b2b2b2b2-0000-4000-8000-000000000002" // a saved payee, wire
	CustomerID = "c3c3c3c3-0000-4000-8000-000000000001"
	InvoiceID  = "d4d4d4d4-0000-4000-8000-000000000001"
)

// Account is a Mercury account.
type Account struct {
	ID               string      `json:"id"`
	Name             string      `json:"name"`
	Status           string      `json:"status"`
	Type             string      `json:"type"`
	Kind             string      `json:"kind"`
	AccountNumber    string      `json:"accountNumber"`
	RoutingNumber    string      `json:"routingNumber"`
	AvailableBalance json.Number `json:"availableBalance"`
	CurrentBalance   json.Number `json:"currentBalance"`
	CreatedAt        string      `json:"createdAt"`
	DashboardLink    string      `json:"dashboardLink"`
	LegalBusiness    string      `json:"legalBusinessName"`
	cents            int64
}

// Address is an address without a name, as Mercury writes a recipient's.
type Address struct {
	Address1   string `json:"address1"`
	Address2   string `json:"address2,omitempty"`
	City       string `json:"city"`
	Region     string `json:"region"`
	PostalCode string `json:"postalCode"`
	Country    string `json:"country"`
}

// RoutingInfo is a recipient's electronic routing information.
type RoutingInfo struct {
	AccountNumber         string   `json:"accountNumber"`
	RoutingNumber         string   `json:"routingNumber"`
	ElectronicAccountType string   `json:"electronicAccountType"`
	Address               *Address `json:"address,omitempty"`
}

// Recipient is a saved payee.
type Recipient struct {
	ID                    string       `json:"id"`
	Name                  string       `json:"name"`
	Emails                []string     `json:"emails"`
	Status                string       `json:"status"`
	DefaultPaymentMethod  string       `json:"defaultPaymentMethod"`
	Attachments           []any        `json:"attachments"`
	ElectronicRoutingInfo *RoutingInfo `json:"electronicRoutingInfo,omitempty"`
}

// Transaction is a movement of money.
type Transaction struct {
	ID                    string      `json:"id"`
	AccountID             string      `json:"accountId"`
	Amount                json.Number `json:"amount"`
	Status                string      `json:"status"`
	Kind                  string      `json:"kind"`
	CounterpartyID        string      `json:"counterpartyId"`
	CounterpartyName      string      `json:"counterpartyName"`
	Note                  *string     `json:"note"`
	ExternalMemo          *string     `json:"externalMemo"`
	CreatedAt             string      `json:"createdAt"`
	EstimatedDeliveryDate string      `json:"estimatedDeliveryDate"`
	DashboardLink         string      `json:"dashboardLink"`
	Attachments           []any       `json:"attachments"`
	RelatedTransactions   []any       `json:"relatedTransactions"`
	GLAllocations         []any       `json:"glAllocations"`
	CompliantWithPolicy   bool        `json:"compliantWithReceiptPolicy"`
	HasGeneratedReceipt   bool        `json:"hasGeneratedReceipt"`
	// PaymentMethod is how it was sent; Mercury keeps it under details,
	// which the fake does not write.
	PaymentMethod string `json:"-"`
	// Purpose is the purpose a wire was sent with.
	Purpose string `json:"-"`
	cents   int64
	key     string
}

// LineItem is one line of an invoice.
type LineItem struct {
	Name      string      `json:"name"`
	Quantity  json.Number `json:"quantity"`
	UnitPrice json.Number `json:"unitPrice"`
}

// Invoice is an invoice sent to a customer.
type Invoice struct {
	ID                   string      `json:"id"`
	InvoiceNumber        string      `json:"invoiceNumber"`
	Slug                 string      `json:"slug"`
	Status               string      `json:"status"`
	Amount               json.Number `json:"amount"`
	CurrencyCode         string      `json:"currencyCode"`
	CustomerID           string      `json:"customerId"`
	DestinationAccountID string      `json:"destinationAccountId"`
	InvoiceDate          string      `json:"invoiceDate"`
	DueDate              string      `json:"dueDate"`
	LineItems            []LineItem  `json:"lineItems"`
	PayerMemo            *string     `json:"payerMemo"`
	CcEmails             []string    `json:"ccEmails"`
	AchDebitEnabled      bool        `json:"achDebitEnabled"`
	CreditCardEnabled    bool        `json:"creditCardEnabled"`
	UseRealAccountNumber bool        `json:"useRealAccountNumber"`
	CreatedAt            string      `json:"createdAt"`
	UpdatedAt            string      `json:"updatedAt"`
	CanceledAt           *string     `json:"canceledAt"`
}

// Customer is an invoiced customer.
type Customer struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Email string `json:"email"`
}

// Fake is the fake Mercury. Its zero value is not usable: use New.
type Fake struct {
	mu              sync.Mutex
	token           string
	accounts        []*Account
	recipients      []*Recipient
	transactions    []*Transaction
	invoices        []*Invoice
	customers       []*Customer
	dropNextPayment bool
	failPayments    int // the next payments answered failStatus, unpaid
	failStatus      int
	payments        int // payment requests that paid
	now             func() time.Time
	srv             *httptest.Server
}

// New returns a fake seeded with sample data: a checking account holding
// $250,000.00 and a savings account, two saved payees, one customer and one
// unpaid invoice.
func New() *Fake {
	f := &Fake{token: Token, now: time.Now}
	created := "2026-01-05T15:00:00Z"
	f.accounts = []*Account{
		{ID: CheckingID, Name: "Mercury Checking ••1234", Status: "active", Type: "mercury", Kind: "checking", AccountNumber: "202201231234", RoutingNumber: "091311229",
			CreatedAt: created, LegalBusiness: "Sandbox Inc", DashboardLink: dashboard("accounts", CheckingID), cents: 25_000_000},
		{ID: SavingsID, Name: "Mercury Savings ••5678", Status: "active", Type: "mercury", Kind: "savings", AccountNumber: "202201235678", RoutingNumber: "091311229",
			CreatedAt: created, LegalBusiness: "Sandbox Inc", DashboardLink: dashboard("accounts", SavingsID), cents: 1_000_000},
	}
	address := &Address{Address1: "1 Market St", City: "San Francisco", Region: "CA", PostalCode: "94105", Country: "US"}
	f.recipients = []*Recipient{
		{ID: AcmeID, Name: "Acme Supplies LLC", Emails: []string{"billing@acme.example"}, Status: "active", DefaultPaymentMethod: "ach", Attachments: []any{},
			ElectronicRoutingInfo: &RoutingInfo{AccountNumber: "000123456789", RoutingNumber: "021000021", ElectronicAccountType: "businessChecking", Address: address}},
		{ID: GlobexID, Name: "Globex Corporation", Emails: []string{"ap@globex.example"}, Status: "active", DefaultPaymentMethod: "domesticWire", Attachments: []any{},
			ElectronicRoutingInfo: &RoutingInfo{AccountNumber: "000987654321", RoutingNumber: "026009593", ElectronicAccountType: "businessChecking", Address: address}},
	}
	f.customers = []*Customer{{ID: CustomerID, Name: "Initech", Email: "accounts@initech.example"}}
	f.invoices = []*Invoice{{ID: InvoiceID, InvoiceNumber: "INV-0001", Slug: "inv-0001-sandbox", Status: "Unpaid", Amount: "1500.00", CurrencyCode: "USD",
		CustomerID: CustomerID, DestinationAccountID: CheckingID, InvoiceDate: "2026-11-01", DueDate: "2026-12-01",
		LineItems: []LineItem{{Name: "Consulting, November", Quantity: "10", UnitPrice: "150.00"}}, CcEmails: []string{}, AchDebitEnabled: true,
		CreatedAt: "2026-11-01T10:00:00Z", UpdatedAt: "2026-11-01T10:00:00Z"}}
	return f
}

// dashboard is the fake's dashboardLink of an object.
func dashboard(kind, id string) string { return "https://app.mercury.com/" + kind + "/" + id }

// Start serves the fake on a loopback port until Close.
func (f *Fake) Start() *Fake {
	f.srv = httptest.NewServer(f)
	return f
}

// Serve serves the fake on l (countersign sandbox mercury).
func (f *Fake) Serve(l net.Listener) error { return http.Serve(l, f) }

// URL is the API's base URL, ending in /api/v1.
func (f *Fake) URL() string { return f.srv.URL + "/api/v1" }

// Close stops a started fake.
func (f *Fake) Close() {
	if f.srv != nil {
		f.srv.Close()
	}
}

// DropNextPayment makes the next payment happen and its answer be lost.
func (f *Fake) DropNextPayment() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.dropNextPayment = true
}

// FailNextPayments makes the next n payment requests answer status (a
// 5xx, say) without paying.
func (f *Fake) FailNextPayments(n, status int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failPayments, f.failStatus = n, status
}

// Payments is how many payment requests paid (answered again for a known
// idempotency key, a payment is not counted twice).
func (f *Fake) Payments() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.payments
}

// Transactions returns the outgoing payments made, oldest first.
func (f *Fake) Transactions() []Transaction {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]Transaction, len(f.transactions))
	for i, t := range f.transactions {
		out[i] = *t
	}
	return out
}

// Recipients returns the saved payees.
func (f *Fake) Recipients() []Recipient {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]Recipient, len(f.recipients))
	for i, r := range f.recipients {
		out[i] = *r
	}
	return out
}

// Invoice returns an invoice by id.
func (f *Fake) Invoice(id string) (Invoice, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, in := range f.invoices {
		if in.ID == id {
			return *in, true
		}
	}
	return Invoice{}, false
}

// Balance is an account's available balance in cents.
func (f *Fake) Balance(accountID string) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	if a := f.account(accountID); a != nil {
		return a.cents
	}
	return -1
}

func (f *Fake) account(id string) *Account {
	for _, a := range f.accounts {
		if a.ID == id {
			return a
		}
	}
	return nil
}

func (f *Fake) recipient(id string) *Recipient {
	for _, r := range f.recipients {
		if r.ID == id && r.Status == "active" {
			return r
		}
	}
	return nil
}

// ServeHTTP answers the API under /api/v1.
func (f *Fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer "+f.token {
		fail(w, http.StatusUnauthorized, "the API token is missing or not valid")
		return
	}
	path, ok := strings.CutPrefix(r.URL.Path, "/api/v1/")
	if !ok {
		fail(w, http.StatusNotFound, "not found")
		return
	}
	parts := strings.Split(path, "/")
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case r.Method == http.MethodGet && path == "accounts":
		out := make([]Account, len(f.accounts))
		for i, a := range f.accounts {
			out[i] = *a
			out[i].AvailableBalance, out[i].CurrentBalance = dollars(a.cents), dollars(a.cents)
		}
		reply(w, http.StatusOK, map[string]any{"accounts": out})
	case r.Method == http.MethodGet && path == "recipients":
		var out []*Recipient
		for _, rc := range f.recipients {
			if rc.Status == "active" {
				out = append(out, rc)
			}
		}
		reply(w, http.StatusOK, map[string]any{"recipients": nonNil(out)})
	case r.Method == http.MethodGet && len(parts) == 2 && parts[0] == "recipient":
		rc := f.recipient(parts[1])
		if rc == nil {
			fail(w, http.StatusNotFound, "recipient not found")
			return
		}
		reply(w, http.StatusOK, rc)
	case r.Method == http.MethodPost && path == "recipients":
		f.addRecipient(w, r)
	case len(parts) == 3 && parts[0] == "account" && parts[2] == "transactions":
		a := f.account(parts[1])
		if a == nil {
			fail(w, http.StatusNotFound, "accountId not found")
			return
		}
		if r.Method == http.MethodGet {
			var out []Transaction
			for i := len(f.transactions) - 1; i >= 0; i-- {
				if t := f.transactions[i]; t.AccountID == a.ID {
					out = append(out, *t)
				}
			}
			if n, err := strconv.Atoi(r.URL.Query().Get("limit")); err == nil && n > 0 && n < len(out) {
				out = out[:n]
			}
			reply(w, http.StatusOK, map[string]any{"total": len(out), "transactions": nonNil(out)})
			return
		}
		if r.Method == http.MethodPost {
			f.pay(w, r, a)
			return
		}
		fail(w, http.StatusMethodNotAllowed, "method not allowed")
	case r.Method == http.MethodGet && path == "ar/invoices":
		reply(w, http.StatusOK, map[string]any{"invoices": nonNil(f.invoices)})
	case r.Method == http.MethodGet && len(parts) == 3 && parts[0] == "ar" && parts[1] == "invoices":
		if in := f.invoice(parts[2]); in != nil {
			reply(w, http.StatusOK, in)
			return
		}
		fail(w, http.StatusNotFound, "invoice not found")
	case r.Method == http.MethodPost && path == "ar/invoices":
		f.sendInvoice(w, r)
	case r.Method == http.MethodPost && len(parts) == 4 && parts[0] == "ar" && parts[1] == "invoices" && parts[3] == "cancel":
		in := f.invoice(parts[2])
		switch {
		case in == nil:
			fail(w, http.StatusNotFound, "invoice not found")
		case in.Status != "Unpaid":
			fail(w, http.StatusBadRequest, "only unpaid invoices can be cancelled")
		default:
			now := f.now().UTC().Format(time.RFC3339)
			in.Status, in.CanceledAt, in.UpdatedAt = "Cancelled", &now, now
			w.WriteHeader(http.StatusOK) // the reference names no body
		}
	case r.Method == http.MethodGet && path == "ar/customers":
		reply(w, http.StatusOK, map[string]any{"customers": nonNil(f.customers)})
	case r.Method == http.MethodGet && len(parts) == 3 && parts[0] == "ar" && parts[1] == "customers":
		for _, c := range f.customers {
			if c.ID == parts[2] {
				reply(w, http.StatusOK, c)
				return
			}
		}
		fail(w, http.StatusNotFound, "customer not found")
	default:
		fail(w, http.StatusNotFound, "not found")
	}
}

func (f *Fake) invoice(id string) *Invoice {
	for _, in := range f.invoices {
		if in.ID == id {
			return in
		}
	}
	return nil
}

// payment is the body of POST /account/{accountId}/transactions.
type payment struct {
	RecipientID    string      `json:"recipientId"`
	Amount         json.Number `json:"amount"`
	PaymentMethod  string      `json:"paymentMethod"`
	IdempotencyKey string      `json:"idempotencyKey"`
	Note           *string     `json:"note"`
	ExternalMemo   *string     `json:"externalMemo"`
	Purpose        *struct {
		Simple *struct {
			Category       string  `json:"category"`
			AdditionalInfo *string `json:"additionalInfo"`
		} `json:"simple"`
	} `json:"purpose"`
}

// purposes are the categories of a payment's purpose; needsInfo says, of
// those that take additionalInfo, whether they need it (the others refuse
// it).
var purposes = []string{"Employee", "Landlord", "Vendor", "Contractor", "Subsidiary", "TransferToMyExternalAccount", "FamilyMemberOrFriend",
	"ForGoodsOrServices", "AngelInvestment", "SavingsOrInvestments", "Expenses", "Travel", "Other"}

var needsInfo = map[string]bool{"Vendor": true, "Contractor": true, "Other": true, "Subsidiary": false}

func (f *Fake) pay(w http.ResponseWriter, r *http.Request, a *Account) {
	if f.failPayments > 0 {
		f.failPayments--
		fail(w, f.failStatus, "the service is unavailable")
		return
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, 1<<16))
	var p payment
	if err != nil || decode(raw, &p) != nil {
		fail(w, http.StatusBadRequest, "Invalid body: not a payment")
		return
	}
	cents, ok := parseDollars(string(p.Amount))
	switch {
	case p.RecipientID == "" || p.IdempotencyKey == "" || p.Amount == "" || p.PaymentMethod == "":
		fail(w, http.StatusBadRequest, "Invalid body: recipientId, amount, paymentMethod and idempotencyKey are required")
		return
	case !ok || cents <= 0:
		fail(w, http.StatusBadRequest, "Invalid body: amount must be a positive dollar amount with at least 1 cent")
		return
	case p.PaymentMethod != "ach" && p.PaymentMethod != "check" && p.PaymentMethod != "domesticWire":
		fail(w, http.StatusBadRequest, "Invalid body: paymentMethod must be ach, check or domesticWire")
		return
	case p.PaymentMethod == "domesticWire" && (p.Purpose == nil || p.Purpose.Simple == nil):
		fail(w, http.StatusBadRequest, "Invalid body: if domesticWire is used, then the purpose field is required")
		return
	}
	purpose := ""
	if p.Purpose != nil {
		if p.Purpose.Simple == nil || !slices.Contains(purposes, p.Purpose.Simple.Category) {
			fail(w, http.StatusBadRequest, "Invalid body: purpose.simple.category is not a payment category")
			return
		}
		c, info := p.Purpose.Simple.Category, p.Purpose.Simple.AdditionalInfo
		needed, takes := needsInfo[c]
		switch {
		case needed && (info == nil || strings.TrimSpace(*info) == ""):
			fail(w, http.StatusBadRequest, "Invalid body: purpose.simple.additionalInfo is required for "+c)
			return
		case !takes && info != nil:
			fail(w, http.StatusBadRequest, "Invalid body: purpose.simple.additionalInfo is not accepted for "+c)
			return
		}
		purpose = c
		if info != nil {
			purpose += ": " + *info
		}
	}
	for _, t := range f.transactions {
		if t.key == p.IdempotencyKey {
			// Mercury: a repeated key creates nothing and answers 409
			// with the transaction the key made.
			reply(w, http.StatusConflict, t)
			return
		}
	}
	rc := f.recipient(p.RecipientID)
	if rc == nil {
		fail(w, http.StatusNotFound, "recipient not found")
		return
	}
	now := f.now()
	for _, t := range f.transactions {
		at, _ := time.Parse(time.RFC3339, t.CreatedAt)
		if t.AccountID == a.ID && t.CounterpartyID == rc.ID && t.cents == -cents && now.Sub(at) < 24*time.Hour {
			fail(w, http.StatusBadRequest, "a transaction to this recipient for this amount was made in the last 24 hours")
			return
		}
	}
	if cents > a.cents {
		fail(w, http.StatusBadRequest, "insufficient funds")
		return
	}
	a.cents -= cents
	id := newID()
	t := &Transaction{ID: id, AccountID: a.ID, Amount: dollars(-cents), Status: "pending", Kind: "externalTransfer",
		CounterpartyID: rc.ID, CounterpartyName: rc.Name, Note: p.Note, ExternalMemo: p.ExternalMemo, PaymentMethod: p.PaymentMethod, Purpose: purpose,
		CreatedAt: now.UTC().Format(time.RFC3339), EstimatedDeliveryDate: now.UTC().Add(72 * time.Hour).Format(time.RFC3339),
		DashboardLink: dashboard("transactions", id), Attachments: []any{}, RelatedTransactions: []any{}, GLAllocations: []any{},
		cents: -cents, key: p.IdempotencyKey}
	f.transactions = append(f.transactions, t)
	f.payments++
	if f.dropNextPayment {
		f.dropNextPayment = false
		if hj, ok := w.(http.Hijacker); ok {
			if c, _, err := hj.Hijack(); err == nil {
				_ = c.Close()
				return
			}
		}
	}
	reply(w, http.StatusOK, t)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// electronicAccountTypes are the kinds of bank account an ACH payee has.
var electronicAccountTypes = []string{"businessChecking", "businessSavings", "personalChecking", "personalSavings"}

func (f *Fake) addRecipient(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(io.LimitReader(r.Body, 1<<16))
	var in struct {
		Name                  string       `json:"name"`
		Emails                []string     `json:"emails"`
		Nickname              *string      `json:"nickname"`
		ContactEmail          *string      `json:"contactEmail"`
		ElectronicRoutingInfo *RoutingInfo `json:"electronicRoutingInfo"`
	}
	if err != nil || decode(raw, &in) != nil || strings.TrimSpace(in.Name) == "" || len(in.Emails) == 0 {
		fail(w, http.StatusBadRequest, "Invalid body: name and emails are required")
		return
	}
	if ri := in.ElectronicRoutingInfo; ri != nil {
		ad := ri.Address
		switch {
		case len(ri.RoutingNumber) != 9 || ri.AccountNumber == "":
			fail(w, http.StatusBadRequest, "Invalid body: electronicRoutingInfo needs a 9-digit routingNumber and an accountNumber")
			return
		case !slices.Contains(electronicAccountTypes, ri.ElectronicAccountType):
			fail(w, http.StatusBadRequest, "Invalid body: electronicRoutingInfo.electronicAccountType is required")
			return
		case ad == nil || ad.Address1 == "" || ad.City == "" || ad.Region == "" || ad.PostalCode == "" || len(ad.Country) != 2:
			fail(w, http.StatusBadRequest, "Invalid body: electronicRoutingInfo.address needs address1, city, region, postalCode and a two-letter country")
			return
		}
	}
	rc := &Recipient{ID: newID(), Name: in.Name, Emails: in.Emails, Status: "active", DefaultPaymentMethod: "ach", Attachments: []any{},
		ElectronicRoutingInfo: in.ElectronicRoutingInfo}
	f.recipients = append(f.recipients, rc)
	reply(w, http.StatusOK, rc)
}

func (f *Fake) sendInvoice(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(io.LimitReader(r.Body, 1<<16))
	var in struct {
		CustomerID           string     `json:"customerId"`
		DestinationAccountID string     `json:"destinationAccountId"`
		InvoiceDate          string     `json:"invoiceDate"`
		DueDate              string     `json:"dueDate"`
		LineItems            []LineItem `json:"lineItems"`
		PayerMemo            *string    `json:"payerMemo"`
		InternalNote         *string    `json:"internalNote"`
		InvoiceNumber        *string    `json:"invoiceNumber"`
		PoNumber             *string    `json:"poNumber"`
		CurrencyCode         *string    `json:"currencyCode"`
		SendEmailOption      string     `json:"sendEmailOption"`
		AchDebitEnabled      *bool      `json:"achDebitEnabled"`
		CreditCardEnabled    *bool      `json:"creditCardEnabled"`
		UseRealAccountNumber *bool      `json:"useRealAccountNumber"`
		CcEmails             []string   `json:"ccEmails"`
	}
	if err != nil || decode(raw, &in) != nil || in.CustomerID == "" || in.DueDate == "" || in.InvoiceDate == "" || len(in.LineItems) == 0 ||
		in.AchDebitEnabled == nil || in.CreditCardEnabled == nil || in.UseRealAccountNumber == nil || in.CcEmails == nil {
		fail(w, http.StatusBadRequest, "Invalid body: customerId, destinationAccountId, invoiceDate, dueDate, lineItems, achDebitEnabled, creditCardEnabled, useRealAccountNumber and ccEmails are required")
		return
	}
	if in.SendEmailOption != "" && in.SendEmailOption != "SendNow" && in.SendEmailOption != "DontSend" {
		fail(w, http.StatusBadRequest, "Invalid body: sendEmailOption is DontSend or SendNow")
		return
	}
	known := false
	for _, c := range f.customers {
		known = known || c.ID == in.CustomerID
	}
	if !known {
		fail(w, http.StatusNotFound, "customer not found")
		return
	}
	if f.account(in.DestinationAccountID) == nil {
		fail(w, http.StatusNotFound, "account not found")
		return
	}
	var total int64
	for _, li := range in.LineItems {
		q, err := strconv.ParseInt(string(li.Quantity), 10, 64)
		p, ok := parseDollars(string(li.UnitPrice))
		if err != nil || !ok || q <= 0 || li.Name == "" {
			fail(w, http.StatusBadRequest, "Invalid body: each line item needs a name, a whole quantity and a unitPrice")
			return
		}
		total += q * p
	}
	now := f.now().UTC().Format(time.RFC3339)
	n := len(f.invoices) + 1
	currency := "USD"
	if in.CurrencyCode != nil {
		currency = *in.CurrencyCode
	}
	inv := &Invoice{ID: newID(), InvoiceNumber: fmt.Sprintf("INV-%04d", n), Slug: fmt.Sprintf("inv-%04d-%s", n, randomHex(4)), Status: "Unpaid",
		Amount: dollars(total), CurrencyCode: currency, CustomerID: in.CustomerID, DestinationAccountID: in.DestinationAccountID,
		InvoiceDate: in.InvoiceDate, DueDate: in.DueDate, LineItems: in.LineItems, PayerMemo: in.PayerMemo, CcEmails: in.CcEmails,
		AchDebitEnabled: *in.AchDebitEnabled, CreditCardEnabled: *in.CreditCardEnabled, UseRealAccountNumber: *in.UseRealAccountNumber,
		CreatedAt: now, UpdatedAt: now}
	f.invoices = append(f.invoices, inv)
	reply(w, http.StatusOK, inv)
}

// decode reads a request body strictly: one JSON object holding only
// members the reference names.
func decode(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("more than one JSON value")
	}
	return nil
}

func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func fail(w http.ResponseWriter, status int, message string) {
	reply(w, status, map[string]any{"errors": map[string]string{"message": message}})
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// dollars writes cents as a JSON number of dollars with two decimals.
func dollars(c int64) json.Number {
	// The magnitude is unsigned so that the most negative int64 has one.
	sign, u := "", uint64(c)
	if c < 0 {
		sign, u = "-", -u
	}
	return json.Number(fmt.Sprintf("%s%d.%02d", sign, u/100, u%100))
}

// parseDollars reads a JSON number of dollars with at most two decimals.
func parseDollars(s string) (int64, bool) {
	if len(s) > 32 || strings.ContainsAny(s, "eE/") {
		return 0, false
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return 0, false
	}
	r.Mul(r, big.NewRat(100, 1))
	if !r.IsInt() || !r.Num().IsInt64() {
		return 0, false
	}
	return r.Num().Int64(), true
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
