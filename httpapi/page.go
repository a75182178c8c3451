package httpapi

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"strings"
	"time"

	"countersign/approval"
	"countersign/web"
)

// pageNonce is a fresh CSP nonce: 16 random bytes in base64.
func pageNonce() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return base64.StdEncoding.EncodeToString(b[:])
}

// walletHosts are the hosts the page's wallets need, as each wallet
// publishes them (web/src/wallet.ts lists the wallets; a test holds the two
// together): where near-connect fetches each wallet's code (one commit of
// near-selector's repository, so the code cannot change), the NEAR RPC the
// wallets' code asks, and the relay and API HOT talks to. Wallet code runs
// in near-connect's sandboxed iframes, which share this policy. None is a
// script source: scripts run under the nonce alone.
var walletHosts = []string{
	"https://raw.githubusercontent.com", // MyNearWallet, Meteor and HOT executors (near-selector, pinned commit)
	"https://rpc.mainnet.near.org",
	"https://rpc.testnet.near.org",
	"https://h4n.app",             // HOT's relay
	"https://api0.herewallet.app", // HOT's API
}

// pageCSP is the page's Content-Security-Policy: the nonced scripts only
// (the shell's, and those near-connect puts in its wallets' iframes), and
// as a worker only this origin's (the service worker at /sw.js) and its
// manifest;
// requests to this origin and the wallets' hosts only; images from data:
// URLs (the wallets' icons); no framing, no base, no form posting
// elsewhere. Styles are 'unsafe-inline' because near-connect's picker and
// iframes carry style elements without a nonce; no markup from a task or
// the service ever reaches the page (it writes text only).
func pageCSP(nonce string) string {
	return "default-src 'none'; script-src 'nonce-" + nonce + "'; style-src 'unsafe-inline'; img-src data:; " +
		"connect-src 'self' " + strings.Join(walletHosts, " ") + "; " +
		"worker-src 'self'; manifest-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
}

// workerCSP is the service worker's own policy: it fetches nothing and
// loads no script (it shows a notification and opens a window).
const workerCSP = "default-src 'none'"

// worker serves the service worker (SPEC §10) at /sw.js, so that its scope
// is the whole inbox. It is revalidated on every update check, never
// cached for long: a fixed address serves whichever version the binary
// holds.
func (s *Server) worker(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/javascript; charset=utf-8")
	h.Set("Content-Security-Policy", workerCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-cache")
	http.ServeContent(w, r, "sw.js", time.Time{}, bytes.NewReader(web.Worker()))
}

// manifest is the web app manifest: a browser may install the inbox as an
// app, which on iOS and iPadOS is the only way it receives pushes.
const manifestJSON = `{"name":"Countersign","short_name":"Countersign","description":"Your owner-confirmation inbox",` +
	`"start_url":"/","scope":"/","display":"standalone","background_color":"#fbfbfc","theme_color":"#1f5fbf"}`

func (s *Server) manifest(w http.ResponseWriter, _ *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "application/manifest+json")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-cache")
	_, _ = w.Write([]byte(manifestJSON))
}

// recipient is the NEP-413 recipient the page has owners sign for: the
// inbox's, or with no inbox the public origin's host.
func (s *Server) recipient() string {
	if s.opts.Inbox != nil {
		return s.opts.Inbox.Recipient()
	}
	r, _ := approval.RecipientOf(s.opts.PublicURL)
	return r
}

// page serves the web inbox's page (web.WriteShell). The links given to
// agents and in webhooks (PUBLIC_URL/#/tasks/{id}) open it.
func (s *Server) page(w http.ResponseWriter, _ *http.Request) {
	nonce := pageNonce()
	network := "mainnet"
	if s.opts.NearNetwork == "testnet" {
		network = "testnet"
	}
	var body bytes.Buffer
	if err := web.WriteShell(&body, web.Shell{Nonce: nonce, Recipient: s.recipient(), Network: network, SandboxWallet: s.opts.SandboxWallet}); err != nil {
		s.opts.Logger.Error("the page's shell", "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", pageCSP(nonce))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	// Isolated from any page that opened it, but keeping the wallets' popups
	// it opens: MyNearWallet and Meteor answer through their opener, which
	// same-origin would cut.
	h.Set("Cross-Origin-Opener-Policy", "same-origin-allow-popups")
	h.Set("Cache-Control", "no-store")
	_, _ = w.Write(body.Bytes())
}
