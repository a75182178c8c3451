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

// SessionCookie names the browser's session cookie (SPEC §6): the session
// token in an HttpOnly cookie, so no script of the page can read it.
const SessionCookie = "countersign_session"

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

// cookie is the session cookie carrying token until validUntil; an empty
// token clears it.
func (b browserOrigin) cookie(token string, validUntil time.Time) *http.Cookie {
	c := &http.Cookie{Name: SessionCookie, Value: token, Path: "/", HttpOnly: true, Secure: b.secure,
		SameSite: http.SameSiteStrictMode}
	if token == "" {
		c.MaxAge = -1
	} else {
		c.Expires = validUntil.UTC()
	}
	return c
}

// sessionToken is the owner's session token and whether it came in the
// cookie. A request carrying both a cookie and a bearer token is refused; so
// is a state change authenticated by the cookie whose Origin is not the
// public origin (a cross-site request the browser sent with the cookie).
func (s *Server) sessionToken(r *http.Request) (token string, fromCookie bool, err error) {
	token = bearer(r)
	c, cerr := r.Cookie(SessionCookie)
	switch {
	case cerr != nil || s.browser.origin == "":
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
