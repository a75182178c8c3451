package httpapi

import (
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"countersign"
	"countersign/approval"
	"countersign/inbox"
)

// The browser's session cookie (SPEC §6) carries the session token where
// no script of the page can read it (HttpOnly). Where it is Secure its name
// has the __Host- prefix, which browsers set only from a secure origin,
// with Path=/ and no Domain: a page on another port or a subdomain of the
// host cannot toss in a cookie of that name for the inbox's paths.
// SessionCookie is its name on a plain http loopback origin (development).
const (
	SessionCookie       = "countersign_session"
	SecureSessionCookie = "__Host-countersign_session"
)

// browserOrigin is how the public origin's browser sessions work: the
// origin a browser's Origin header must equal (canonical: lowercase, no
// default port, as browsers send it), and whether the cookie is Secure
// (always, but for plain http on a loopback address, in development).
type browserOrigin struct {
	origin string // "" when there is no public origin: no browser sessions
	secure bool
}

func newBrowserOrigin(publicURL string) browserOrigin {
	origin, err := approval.PublicOrigin(publicURL)
	if err != nil {
		return browserOrigin{}
	}
	u, _ := url.Parse(origin)
	b := browserOrigin{origin: origin, secure: true}
	if u.Scheme == "http" {
		host := u.Hostname()
		ip := net.ParseIP(host)
		b.secure = !(host == "localhost" || ip != nil && ip.IsLoopback())
	}
	return b
}

// fromPage reports whether a request's Origin is the public origin.
func (b browserOrigin) fromPage(r *http.Request) bool {
	return b.origin != "" && r.Header.Get("Origin") == b.origin
}

// cookieName is the session cookie's name on this origin.
func (b browserOrigin) cookieName() string {
	if b.secure {
		return SecureSessionCookie
	}
	return SessionCookie
}

// cookies are the session cookie carrying token until validUntil (an empty
// token clears it) and, on a secure origin, the clearing of a cookie by the
// plain name, which browsers signed in before the cookie took its prefix
// still hold: left, it would make every request carry two.
func (b browserOrigin) cookies(token string, validUntil time.Time) []*http.Cookie {
	c := &http.Cookie{Name: b.cookieName(), Value: token, Path: "/", HttpOnly: true, Secure: b.secure,
		SameSite: http.SameSiteStrictMode}
	if token == "" {
		c.MaxAge = -1
	} else {
		c.Expires = validUntil.UTC()
	}
	out := []*http.Cookie{c}
	if b.secure {
		out = append(out, &http.Cookie{Name: SessionCookie, Path: "/", MaxAge: -1, HttpOnly: true, Secure: true,
			SameSite: http.SameSiteStrictMode})
	}
	return out
}

// sessionToken is the owner's session token and whether it came in the
// cookie. A request carrying more than one session cookie (of either name:
// one may have been tossed in by another page of the host) is refused, as
// is one carrying both the cookie and a bearer token, and a state change
// authenticated by the cookie whose Origin is not the public origin (a
// cross-site request the browser sent with the cookie). A cookie by the
// name this origin does not use is not a session cookie.
func (s *Server) sessionToken(r *http.Request) (token string, fromCookie bool, err error) {
	token = bearer(r)
	var c *http.Cookie
	n := 0
	for _, k := range r.Cookies() {
		if k.Name != SessionCookie && k.Name != SecureSessionCookie {
			continue
		}
		n++
		if k.Name == s.browser.cookieName() {
			c = k
		}
	}
	switch {
	case n > 1:
		return "", false, countersign.Errorf(countersign.InvalidRequest, "the request carries more than one session cookie: clear this site's cookies and sign in again")
	case c == nil || s.browser.origin == "":
		return token, false, nil
	case r.Header.Get("Authorization") != "":
		return "", false, countersign.Errorf(countersign.InvalidRequest, "a request carries either the session cookie or a bearer token, not both")
	}
	if changes(r.Method) && !s.browser.fromPage(r) {
		return "", true, countersign.Errorf(countersign.OriginRefused, "a change made with the session cookie must come from the inbox's own page")
	}
	if !strings.HasPrefix(c.Value, inbox.TokenPrefix) {
		return "", true, nil
	}
	return c.Value, true, nil
}

// changes reports whether a method changes state.
func changes(method string) bool {
	return method != http.MethodGet && method != http.MethodHead && method != http.MethodOptions
}
