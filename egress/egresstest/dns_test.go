package egresstest

import (
	"context"
	"errors"
	"net"
	"testing"
)

func TestDNS(t *testing.T) {
	t.Parallel()
	d := NewDNS(t, Fixed(map[string][]string{"a.example.com": {"192.0.2.1", "2001:db8::1"}}))
	addrs, err := d.Resolver().LookupNetIP(context.Background(), "ip", "a.example.com")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, a := range addrs {
		got[a.String()] = true
	}
	if len(got) != 2 || !got["192.0.2.1"] || !got["2001:db8::1"] {
		t.Fatalf("lookup = %v", addrs)
	}
	if d.Count("a.example.com", TypeA) != 1 || d.Count("a.example.com", TypeAAAA) != 1 {
		t.Fatalf("counts A=%d AAAA=%d", d.Count("a.example.com", TypeA), d.Count("a.example.com", TypeAAAA))
	}
	_, err = d.Resolver().LookupNetIP(context.Background(), "ip4", "missing.example.com")
	var dnsErr *net.DNSError
	if !errors.As(err, &dnsErr) || !dnsErr.IsNotFound {
		t.Fatalf("lookup of a missing name = %v", err)
	}
}
