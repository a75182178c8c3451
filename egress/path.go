package egress

import (
	"errors"
	"net/url"
	"sort"
	"strings"
)

// ErrSegment refuses a value that would make an empty, "." or ".." segment
// of a URL path: a server or a proxy on the way may read it as a move
// within the path, reaching a resource other than the one named.
var ErrSegment = errors.New("a URL path segment would be empty, . or ..")

// Path joins segments into a URL path, "/" before each, every segment
// escaped whole with url.PathEscape (so a "/" inside one is %2F, never a
// separator). It refuses an empty, "." or ".." segment with ErrSegment.
func Path(segments ...string) (string, error) {
	var b strings.Builder
	for _, s := range segments {
		if s == "" || s == "." || s == ".." {
			return "", ErrSegment
		}
		b.WriteByte('/')
		b.WriteString(url.PathEscape(s))
	}
	return b.String(), nil
}

// Query encodes v as a URL query without the "?": names sorted, each name
// and value percent-encoded as RFC 3986 and OpenAPI's default query style
// (form, allowReserved false) require, every byte but the unreserved
// letters, digits and "-._~" written %XX. A space is %20 and "+" is %2B,
// so no server reads a "+" as a space or an "&" or "=" in a value as a
// separator.
func Query(v url.Values) string {
	keys := make([]string, 0, len(v))
	for k := range v {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		for _, val := range v[k] {
			if b.Len() > 0 {
				b.WriteByte('&')
			}
			b.WriteString(queryEscape(k))
			b.WriteByte('=')
			b.WriteString(queryEscape(val))
		}
	}
	return b.String()
}

// queryEscape escapes every byte but the unreserved ones. url.QueryEscape
// leaves exactly those, but writes a space as "+" (and a "+" as %2B).
func queryEscape(s string) string { return strings.ReplaceAll(url.QueryEscape(s), "+", "%20") }
