// Package egresstest helps test what goes through the egress guard: a tiny
// DNS server whose answers a test chooses (names that resolve to loopback,
// names that change their answer between lookups), and an HTTP server that
// counts the connections reaching it.
package egresstest

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
)

// Question types the DNS answers.
const (
	TypeA    = 1
	TypeAAAA = 28
)

// Answer gives the addresses of name for a question of qtype asked n
// times before, and whether the name exists.
type Answer func(name string, qtype uint16, n int) (addrs []netip.Addr, found bool)

// DNS is a DNS server on a loopback UDP port, enough for Go's own
// resolver: it answers A and AAAA questions with an Answer.
type DNS struct {
	conn   net.PacketConn
	answer Answer

	mu    sync.Mutex
	asked map[string]int // "name/type" → count
}

// NewDNS starts a DNS server answering with answer until t ends.
func NewDNS(t testing.TB, answer Answer) *DNS {
	t.Helper()
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	d := &DNS{conn: conn, answer: answer, asked: map[string]int{}}
	go d.serve()
	t.Cleanup(func() { conn.Close() })
	return d
}

// Fixed answers names from a table of addresses; other names do not exist.
func Fixed(table map[string][]string) Answer {
	return func(name string, _ uint16, _ int) ([]netip.Addr, bool) {
		ss, ok := table[name]
		var out []netip.Addr
		for _, s := range ss {
			out = append(out, netip.MustParseAddr(s))
		}
		return out, ok
	}
}

// Resolver returns a Go resolver that sends every query to d.
func (d *DNS) Resolver() *net.Resolver {
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var dialer net.Dialer
			return dialer.DialContext(ctx, "udp", d.conn.LocalAddr().String())
		},
	}
}

// Count returns how many questions of qtype were asked for name.
func (d *DNS) Count(name string, qtype uint16) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.asked[qkey(name, qtype)]
}

func qkey(name string, qtype uint16) string {
	return fmt.Sprintf("%s/%d", strings.ToLower(strings.TrimSuffix(name, ".")), qtype)
}

func (d *DNS) serve() {
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
func (d *DNS) reply(q []byte) []byte {
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
		case qtype == TypeA && a.Is4():
			b := a.As4()
			rdata = b[:]
		case qtype == TypeAAAA && a.Is6():
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

// Hostile answers names that each lead to an address the guard refuses
// (Refused lists them), as an owner's base URL might name them; also
// example.com, which names the test certificate of net/http/httptest, at
// 127.0.0.1. rebind.example.com is public (1.1.1.1) at its first A lookup
// and loopback after: a check that resolves before the connection is
// fooled by it, the dial-time guard is not.
func Hostile(name string, qtype uint16, n int) ([]netip.Addr, bool) {
	if name == "rebind.example.com" && qtype == TypeA && n == 0 {
		return []netip.Addr{netip.MustParseAddr("1.1.1.1")}, true
	}
	if a, ok := hostile[name]; ok {
		return []netip.Addr{netip.MustParseAddr(a)}, true
	}
	return nil, false
}

var hostile = map[string]string{
	"example.com":            "127.0.0.1",
	"loopback.example.com":   "127.0.0.1",
	"rebind.example.com":     "127.0.0.1",
	"ten.example.com":        "10.0.0.7",
	"home.example.com":       "192.168.1.1",
	"metadata.example.com":   "169.254.169.254",
	"v6loopback.example.com": "::1",
	"ula.example.com":        "fd00::1",
	"mapped.example.com":     "::ffff:127.0.0.1",
}

// Refused are the names Hostile answers with an address the guard
// refuses without AllowPrivate: loopback, a rebinding name, 10/8,
// 192.168/16, link-local (cloud metadata), IPv6 loopback and ULA, and an
// IPv4-mapped loopback.
var Refused = []string{"loopback.example.com", "rebind.example.com", "ten.example.com", "home.example.com",
	"metadata.example.com", "v6loopback.example.com", "ula.example.com", "mapped.example.com"}
