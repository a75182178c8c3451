package approval

import (
	"errors"
	"net/url"
	"strings"
)

// PublicOrigin returns the canonical form of a service's public origin
// (`scheme://host[:port]`): http or https, the scheme and host lowercased,
// the scheme's default port (`:443` for https, `:80` for http) dropped, and
// nothing else (no user, path, query or fragment; a lone `/` is allowed).
// Every comparison with the origin (a browser's Origin, a callback URL) and
// the default recipient start from this form, so `https://host:443` and
// `https://host` are one origin.
func PublicOrigin(raw string) (string, error) {
	bad := errors.New("expected an origin such as https://inbox.example.com")
	u, err := url.Parse(raw)
	if err != nil || u.Opaque != "" || u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" ||
		(u.Path != "" && u.Path != "/") || u.Host == "" {
		return "", bad
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return "", bad
	}
	host := strings.ToLower(u.Host)
	if u.Port() == "" && strings.HasSuffix(host, ":") {
		return "", bad
	}
	return scheme + "://" + dropDefaultPort(scheme, host), nil
}

// RecipientOf is the default NEP-413 recipient for a public origin (SPEC
// §7): its host, lowercased, with its port unless it is the scheme's
// default. A signature made for one deployment names its host and so is
// refused by every other.
func RecipientOf(origin string) (string, error) {
	o, err := PublicOrigin(origin)
	if err != nil {
		return "", err
	}
	_, host, _ := strings.Cut(o, "://")
	return host, nil
}

// CallbackUnder reports whether a signed callback URL is the public origin
// itself or starts with it followed by `/` (SPEC §7), after the callback's
// scheme and host are lowercased and a default port in it is dropped.
// origin must be canonical (PublicOrigin); an empty origin has nothing
// under it. A callback whose authority holds anything else (a user, another
// host, another port, a longer name) is not under the origin.
func CallbackUnder(origin, callback string) bool {
	if origin == "" {
		return false
	}
	scheme, rest, ok := strings.Cut(callback, "://")
	if !ok {
		return false
	}
	scheme = strings.ToLower(scheme)
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	authority, path := strings.ToLower(rest[:end]), rest[end:]
	normal := scheme + "://" + dropDefaultPort(scheme, authority)
	if normal != origin {
		return false
	}
	return path == "" || path[0] == '/'
}

// dropDefaultPort removes the scheme's default port from host.
func dropDefaultPort(scheme, host string) string {
	switch scheme {
	case "https":
		return strings.TrimSuffix(host, ":443")
	case "http":
		return strings.TrimSuffix(host, ":80")
	}
	return host
}
