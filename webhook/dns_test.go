package webhook

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
)

// fakeDNS is a tiny DNS server on a loopback UDP port, enough for Go's own
// resolver: it answers A and AAAA questions from a function of the name,
// the type and how many times that name and type were asked before.
type fakeDNS struct {
	conn   net.PacketConn
	answer func(name string, qtype uint16, n int) (addrs []netip.Addr, found bool)

	mu    sync.Mutex
	asked map[string]int // "name/type" → count
}

const (
	typeA    = 1
	typeAAAA = 28
)

func newFakeDNS(t *testing.T, answer func(name string, qtype uint16, n int) ([]netip.Addr, bool)) *fakeDNS {
	t.Helper()
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	d := &fakeDNS{conn: conn, answer: answer, asked: map[string]int{}}
	go d.serve()
	t.Cleanup(func() { conn.Close() })
	return d
}

// resolver returns a Go resolver that sends every query to d.
func (d *fakeDNS) resolver() *net.Resolver {
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var dialer net.Dialer
			return dialer.DialContext(ctx, "udp", d.conn.LocalAddr().String())
		},
	}
}

// count returns how many questions of qtype were asked for name.
func (d *fakeDNS) count(name string, qtype uint16) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.asked[qkey(name, qtype)]
}

func qkey(name string, qtype uint16) string {
	return fmt.Sprintf("%s/%d", strings.ToLower(strings.TrimSuffix(name, ".")), qtype)
}

func (d *fakeDNS) serve() {
	buf := make([]byte, 1500)
	for {
		n, from, err := d.conn.ReadFrom(buf)
		if err != nil {
			return
		}
		if resp := d.reply(buf[:n]); resp != nil {
			_, _ = d.conn.WriteTo(resp, from)
		}
	}
}

// reply builds the answer to one query, or nil for a packet it cannot read.
func (d *fakeDNS) reply(q []byte) []byte {
	if len(q) < 12 || binary.BigEndian.Uint16(q[4:6]) != 1 {
		return nil
	}
	// The question: labels up to the root, then type and class.
	i := 12
	var labels []string
	for {
		if i >= len(q) {
			return nil
		}
		l := int(q[i])
		if l == 0 {
			i++
			break
		}
		if l > 63 || i+1+l > len(q) {
			return nil
		}
		labels = append(labels, string(q[i+1:i+1+l]))
		i += 1 + l
	}
	if i+4 > len(q) {
		return nil
	}
	qtype := binary.BigEndian.Uint16(q[i : i+2])
	question := q[12 : i+4]
	name := strings.ToLower(strings.Join(labels, "."))

	d.mu.Lock()
	k := qkey(name, qtype)
	seen := d.asked[k]
	d.asked[k]++
	d.mu.Unlock()

	addrs, found := d.answer(name, qtype, seen)
	var answers [][]byte
	for _, a := range addrs {
		var rdata []byte
		switch {
		case qtype == typeA && a.Is4():
			b := a.As4()
			rdata = b[:]
		case qtype == typeAAAA && a.Is6():
			b := a.As16()
			rdata = b[:]
		default:
			continue
		}
		rr := []byte{0xc0, 12} // the name: a pointer to the question's
		rr = binary.BigEndian.AppendUint16(rr, qtype)
		rr = binary.BigEndian.AppendUint16(rr, 1) // class IN
		rr = binary.BigEndian.AppendUint32(rr, 0) // TTL
		rr = binary.BigEndian.AppendUint16(rr, uint16(len(rdata)))
		answers = append(answers, append(rr, rdata...))
	}
	flags := uint16(0x8180) // response, recursion desired and available
	if !found {
		flags |= 3 // NXDOMAIN
	}
	resp := binary.BigEndian.AppendUint16(nil, binary.BigEndian.Uint16(q[0:2]))
	resp = binary.BigEndian.AppendUint16(resp, flags)
	resp = binary.BigEndian.AppendUint16(resp, 1)
	resp = binary.BigEndian.AppendUint16(resp, uint16(len(answers)))
	resp = binary.BigEndian.AppendUint16(resp, 0)
	resp = binary.BigEndian.AppendUint16(resp, 0)
	resp = append(resp, question...)
	for _, rr := range answers {
		resp = append(resp, rr...)
	}
	return resp
}

// fixedAnswers answers names from a table; other names do not exist.
func fixedAnswers(table map[string][]string) func(string, uint16, int) ([]netip.Addr, bool) {
	return func(name string, _ uint16, _ int) ([]netip.Addr, bool) {
		ss, ok := table[name]
		var out []netip.Addr
		for _, s := range ss {
			out = append(out, netip.MustParseAddr(s))
		}
		return out, ok
	}
}

func TestFakeDNS(t *testing.T) {
	t.Parallel()
	d := newFakeDNS(t, fixedAnswers(map[string][]string{"a.example.com": {"192.0.2.1", "2001:db8::1"}}))
	addrs, err := d.resolver().LookupNetIP(context.Background(), "ip", "a.example.com")
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
	if d.count("a.example.com", typeA) != 1 || d.count("a.example.com", typeAAAA) != 1 {
		t.Fatalf("counts A=%d AAAA=%d", d.count("a.example.com", typeA), d.count("a.example.com", typeAAAA))
	}
	_, err = d.resolver().LookupNetIP(context.Background(), "ip4", "missing.example.com")
	var dnsErr *net.DNSError
	if !errors.As(err, &dnsErr) || !dnsErr.IsNotFound {
		t.Fatalf("lookup of a missing name = %v", err)
	}
}
