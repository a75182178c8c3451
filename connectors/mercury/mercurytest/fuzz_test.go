package mercurytest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzRequests: whatever body a request carries, the fake answers JSON (or
// nothing, to a cancellation) and never pays a payment it cannot read.
func FuzzRequests(f *testing.F) {
	f.Add("/api/v1/account/"+CheckingID+"/transactions", []byte(`{"recipientId":"`+AcmeID+`","amount":1.5,"paymentMethod":"ach","idempotencyKey":"k"}`))
	f.Add("/api/v1/recipients", []byte(`{"name":"n","emails":["e@x"]}`))
	f.Add("/api/v1/ar/invoices", []byte(`{"customerId":"`+CustomerID+`","lineItems":[{"name":"a","quantity":1,"unitPrice":"x"}]}`))
	f.Add("/api/v1/account/"+CheckingID+"/transactions", []byte(`{"amount":1e400}`))
	f.Add("/api/v1/ar/invoices/"+InvoiceID+"/cancel", []byte(``))
	f.Fuzz(func(t *testing.T, path string, body []byte) {
		fk := New()
		req, err := http.NewRequest(http.MethodPost, "http://fake"+path, bytes.NewReader(body))
		if err != nil {
			return
		}
		req.Header.Set("Authorization", "Bearer "+Token)
		rec := httptest.NewRecorder()
		fk.ServeHTTP(rec, req)
		if !json.Valid(rec.Body.Bytes()) && !(rec.Code == 200 && rec.Body.Len() == 0 && strings.HasSuffix(path, "/cancel")) {
			t.Fatalf("%d %q", rec.Code, rec.Body.String())
		}
		if rec.Code != 200 && fk.Payments() != 0 {
			t.Fatal("a refused payment paid")
		}
		if fk.Balance(CheckingID) < 0 {
			t.Fatal("a negative balance")
		}
	})
}

func FuzzParseDollars(f *testing.F) {
	for _, s := range []string{"1", "1.5", "-2.25", "1e2", "0.001", "1e999999", "-92233720368547758.08"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, ok := parseDollars(s)
		if !ok {
			return
		}
		if back, ok := parseDollars(string(dollars(c))); !ok || back != c {
			t.Fatalf("%q read as %d, written %s, read back %d", s, c, dollars(c), back)
		}
	})
}
