package mercurytest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// post sends body to path as the seeded token does.
func post(f *Fake, path, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, "http://fake/api/v1"+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+Token)
	rec := httptest.NewRecorder()
	f.ServeHTTP(rec, req)
	return rec
}

// The fake answers as Mercury's reference says: a repeated idempotency key
// pays nothing and answers 409 with the transaction it made; a Vendor wire
// needs additionalInfo; a new payee's ACH account needs its type and the
// payee's address; a member the reference does not name is refused;
// cancelling an invoice answers no body.
func TestReferenceShapes(t *testing.T) {
	t.Parallel()
	f := New()
	pay := `{"recipientId": "` + AcmeID + `", "amount": 12.5, "paymentMethod": "ach", "idempotencyKey": "k1"}`
	first := post(f, "/account/"+CheckingID+"/transactions", pay)
	again := post(f, "/account/"+CheckingID+"/transactions", pay)
	var a, b Transaction
	_ = json.Unmarshal(first.Body.Bytes(), &a)
	_ = json.Unmarshal(again.Body.Bytes(), &b)
	if first.Code != 200 || again.Code != 409 || a.ID == "" || b.ID != a.ID || f.Payments() != 1 || f.Balance(CheckingID) != 25_000_000-1250 {
		t.Fatalf("first %d %s, again %d %s, %d payments", first.Code, first.Body, again.Code, again.Body, f.Payments())
	}
	if a.Amount != "-12.50" || a.DashboardLink == "" || a.EstimatedDeliveryDate == "" || a.Attachments == nil {
		t.Fatalf("the transaction reads %s", first.Body)
	}
	for _, tc := range []struct{ name, path, body string }{
		{"a Vendor wire without additionalInfo", "/account/" + CheckingID + "/transactions",
			`{"recipientId": "` + GlobexID + `", "amount": 5, "paymentMethod": "domesticWire", "idempotencyKey": "k2", "purpose": {"simple": {"category": "Vendor"}}}`},
		{"a wire without a purpose", "/account/" + CheckingID + "/transactions",
			`{"recipientId": "` + GlobexID + `", "amount": 5, "paymentMethod": "domesticWire", "idempotencyKey": "k3"}`},
		{"a purpose that is not a category", "/account/" + CheckingID + "/transactions",
			`{"recipientId": "` + GlobexID + `", "amount": 5, "paymentMethod": "domesticWire", "idempotencyKey": "k4", "purpose": {"simple": {"category": "Bribe"}}}`},
		{"a member the reference does not name", "/account/" + CheckingID + "/transactions",
			`{"recipientId": "` + AcmeID + `", "amount": 5, "paymentMethod": "ach", "idempotencyKey": "k5", "sendNow": true}`},
		{"a payee without an address", "/recipients",
			`{"name": "Hooli", "emails": ["ap@hooli.example"], "electronicRoutingInfo": {"accountNumber": "1234", "routingNumber": "021000021", "electronicAccountType": "businessChecking"}}`},
		{"a payee without an account type", "/recipients",
			`{"name": "Hooli", "emails": ["ap@hooli.example"], "electronicRoutingInfo": {"accountNumber": "1234", "routingNumber": "021000021", ` +
				`"address": {"address1": "1 A St", "city": "B", "region": "CA", "postalCode": "94000", "country": "US"}}}`},
		{"a payee's defaultPaymentMethod, which creation does not take", "/recipients",
			`{"name": "Hooli", "emails": ["ap@hooli.example"], "defaultPaymentMethod": "ach"}`},
	} {
		rec := post(f, tc.path, tc.body)
		if rec.Code != http.StatusBadRequest {
			t.Errorf("%s: %d %s", tc.name, rec.Code, rec.Body)
		}
	}
	if f.Payments() != 1 || len(f.Recipients()) != 2 {
		t.Fatal("a refused request wrote")
	}
	wire := post(f, "/account/"+CheckingID+"/transactions",
		`{"recipientId": "`+GlobexID+`", "amount": 5, "paymentMethod": "domesticWire", "idempotencyKey": "k6", "purpose": {"simple": {"category": "Vendor", "additionalInfo": "Globex Corporation"}}}`)
	if wire.Code != 200 || f.Transactions()[1].Purpose != "Vendor: Globex Corporation" {
		t.Fatalf("the wire: %d %s", wire.Code, wire.Body)
	}
	rec := post(f, "/ar/invoices/"+InvoiceID+"/cancel", "")
	if inv, _ := f.Invoice(InvoiceID); rec.Code != 200 || rec.Body.Len() != 0 || inv.Status != "Cancelled" || inv.CanceledAt == nil {
		t.Fatalf("cancel: %d %q, %+v", rec.Code, rec.Body, inv)
	}
	req := httptest.NewRequest(http.MethodGet, "http://fake/api/v1/ar/customers/"+CustomerID, nil)
	req.Header.Set("Authorization", "Bearer "+Token)
	get := httptest.NewRecorder()
	f.ServeHTTP(get, req)
	if get.Code != 200 || !bytes.Contains(get.Body.Bytes(), []byte(`"name":"Initech"`)) {
		t.Fatalf("a customer: %d %s", get.Code, get.Body)
	}
}
