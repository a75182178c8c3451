package wasm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"countersign/connectors"
	"countersign/connectors/wasm/abi"
	"countersign/policy"
)

// ManifestFile is the manifest's name in a connector's directory.
const ManifestFile = "manifest.json"

// MaxManifestBytes bounds a manifest.
const MaxManifestBytes = 1 << 20

// MaxModuleBytes bounds a module file.
const MaxModuleBytes = 64 << 20

// hashHex is how many hex digits of the module's SHA-256 its build names.
const hashHex = 12

// maxVersion is the longest version a manifest may give: the build's
// version adds "+" and hashHex digits, within the 64 a build allows.
const maxVersion = 64 - 1 - hashHex

var (
	versionRE    = regexp.MustCompile(`^[0-9A-Za-z.-]{1,51}$`)
	moduleFileRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}\.wasm$`)
	memberRE     = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
	templateRE   = regexp.MustCompile(`\{([^{}]*)\}`)
	headerNameRE = regexp.MustCompile(`^[A-Za-z0-9!#$%&'*+.^_|~-]{1,64}$`)
	queryNameRE  = regexp.MustCompile(`^[A-Za-z0-9._~-]{1,64}$`)
)

var keyKinds = map[string]policy.KeyKind{"count": policy.Count, "amount": policy.Amount, "text": policy.Text,
	"list": policy.List, "write_list": policy.WriteList}

// headersNotSet are headers neither a module nor a credential template may
// set: the transport writes them.
var headersNotSet = []string{"host", "content-length", "transfer-encoding", "connection", "te", "trailer", "upgrade",
	"keep-alive", "proxy-authorization", "proxy-connection", "accept-encoding"}

// ParseManifest reads a manifest strictly: unknown members, a repeated
// member (in any case) and trailing data are refused, and every rule
// CheckManifest states is checked.
func ParseManifest(b []byte) (abi.Manifest, error) {
	var m abi.Manifest
	if len(b) > MaxManifestBytes {
		return m, fmt.Errorf("the manifest is larger than %d bytes", MaxManifestBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return m, fmt.Errorf("the manifest does not read: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return m, errors.New("the manifest does not read: data after its object")
	}
	if err := checkRepeats(b); err != nil {
		return m, err
	}
	return m, CheckManifest(m)
}

// checkRepeats refuses a member written twice in one object, in any case:
// a manifest must read one way only.
func checkRepeats(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	type frame struct {
		object bool
		seen   map[string]bool
		key    bool // the next string token is a key
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("the manifest does not read: %w", err)
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if name, isKey := tok.(string); isKey && top != nil && top.object && top.key {
			k := strings.ToLower(name)
			if top.seen[k] {
				return fmt.Errorf("the manifest names the member %q twice", name)
			}
			top.seen[k] = true
			top.key = false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{object: true, seen: map[string]bool{}, key: true})
			continue
		case json.Delim('['):
			stack = append(stack, &frame{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		if len(stack) > 0 && stack[len(stack)-1].object {
			stack[len(stack)-1].key = true
		}
	}
}

// CheckManifest checks what the connectors package does not: the ABI
// version, the version's room for the module's hash, the module's file
// name, the policy keys' kinds, the operations' limits, the hosts and the
// credential templates. The rest (names, kinds, prices, descriptions,
// schemas) is checked when the connector is built.
func CheckManifest(m abi.Manifest) error {
	switch {
	case m.ABI != abi.Version:
		return fmt.Errorf("the manifest's abi is %d; this service speaks abi %d", m.ABI, abi.Version)
	case !versionRE.MatchString(m.Version):
		return fmt.Errorf("the manifest's version is not 1 to %d of [0-9A-Za-z.-] (the service adds +<hash>)", maxVersion)
	case !moduleFileRE.MatchString(m.Module):
		return errors.New("the manifest's module is not a file name ending in .wasm, beside the manifest")
	case len(m.Operations) == 0:
		return errors.New("the manifest declares no operation")
	}
	for k, kind := range m.PolicyKeys {
		if _, ok := keyKinds[kind]; !ok {
			return fmt.Errorf("policy key %s: its kind is not count, amount, text, list or write_list", k)
		}
	}
	for _, op := range m.Operations {
		if op.LimitMS < 0 || time.Duration(op.LimitMS)*time.Millisecond > connectors.MaxLimit {
			return fmt.Errorf("operation %s: limit_ms is outside 0 to %d", op.Name, connectors.MaxLimit.Milliseconds())
		}
	}
	if _, err := parseHosts(m.Egress.Hosts); err != nil {
		return err
	}
	return checkCredentials(m.Egress.Credentials)
}

// hostPort is one host a module may reach.
type hostPort struct {
	host string // lowercase name or IP literal (IPv6 without brackets)
	port int
}

func (h hostPort) String() string { return net.JoinHostPort(h.host, strconv.Itoa(h.port)) }

// parseHosts reads the manifest's hosts: "name" (port 443) or
// "name:port", a name a lowercase DNS name or an IP literal.
func parseHosts(hosts []string) ([]hostPort, error) {
	var out []hostPort
	for _, h := range hosts {
		hp, ok := parseHost(h)
		if !ok {
			return nil, fmt.Errorf("egress host %q is not a lowercase host name or address with an optional port", h)
		}
		if slices.Contains(out, hp) {
			return nil, fmt.Errorf("egress host %q is listed twice", h)
		}
		out = append(out, hp)
	}
	return out, nil
}

func parseHost(s string) (hostPort, bool) {
	host, port := s, 443
	if h, p, err := net.SplitHostPort(s); err == nil {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != p {
			return hostPort{}, false
		}
		host, port = h, n
	}
	if host == "" || strings.ContainsAny(host, "[]") {
		return hostPort{}, false
	}
	if ip := net.ParseIP(host); ip != nil {
		if strings.Contains(host, "%") {
			return hostPort{}, false
		}
		return hostPort{host: ip.String(), port: port}, true
	}
	if len(host) > 253 || strings.ToLower(host) != host {
		return hostPort{}, false
	}
	for _, label := range strings.Split(host, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return hostPort{}, false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return hostPort{}, false
			}
		}
	}
	return hostPort{host: host, port: port}, true
}

// checkCredentials checks the credential templates: members well named,
// each template naming only declared members, headers and query names
// well formed and none the transport writes.
func checkCredentials(c *abi.Credentials) error {
	if c == nil {
		return nil
	}
	if len(c.Members) == 0 {
		return errors.New("egress credentials: no members are declared")
	}
	for _, m := range c.Members {
		if !memberRE.MatchString(m) {
			return fmt.Errorf("egress credentials: member %q is not [a-z][a-z0-9_]{0,63}", m)
		}
	}
	if len(c.Header)+len(c.Query) == 0 {
		return errors.New("egress credentials: neither a header nor a query template attaches them")
	}
	used := map[string]bool{}
	check := func(where, tmpl string) error {
		if tmpl == "" || strings.ContainsFunc(tmpl, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			return fmt.Errorf("egress credentials: %s is empty or holds a control character", where)
		}
		rest := templateRE.ReplaceAllString(tmpl, "")
		if strings.ContainsAny(rest, "{}") {
			return fmt.Errorf("egress credentials: %s has a brace outside a {member}", where)
		}
		for _, sub := range templateRE.FindAllStringSubmatch(tmpl, -1) {
			if !slices.Contains(c.Members, sub[1]) {
				return fmt.Errorf("egress credentials: %s names %q, which is not a declared member", where, sub[1])
			}
			used[sub[1]] = true
		}
		return nil
	}
	for name, tmpl := range c.Header {
		if !headerNameRE.MatchString(name) || slices.Contains(headersNotSet, strings.ToLower(name)) {
			return fmt.Errorf("egress credentials: header %q is not one a template may set", name)
		}
		if err := check("header "+name, tmpl); err != nil {
			return err
		}
	}
	for name, tmpl := range c.Query {
		if !queryNameRE.MatchString(name) {
			return fmt.Errorf("egress credentials: query name %q is not [A-Za-z0-9._~-]{1,64}", name)
		}
		if err := check("query "+name, tmpl); err != nil {
			return err
		}
	}
	for _, m := range c.Members {
		if !used[m] {
			return fmt.Errorf("egress credentials: member %s is declared but no template attaches it", m)
		}
	}
	return nil
}
