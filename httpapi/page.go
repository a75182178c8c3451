package httpapi

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"html"
	"net/http"
	"strings"
	"time"

	"countersign/approval"
	"countersign/web"
)

// pageShell is the web inbox's page: a shell that loads the bundle (the
// hashed script web.Script names) under a nonce fresh in every response, and
// tells the page the NEP-413 recipient its owners sign for. Without script
// it says where else to read a task.
const pageShell = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Countersign</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<link rel="manifest" href="/manifest.webmanifest">
<meta name="countersign-recipient" content="{{recipient}}">
<meta name="countersign-network" content="{{network}}">{{sandbox}}
<style>` + pageStyle + `</style>
<script type="module" nonce="{{nonce}}" src="{{script}}"></script>
</head><body>
<main id="inbox-app">
<h1>Countersign</h1>
<noscript><p>The inbox runs in this page's script. Without it, read and answer
tasks in a terminal: <code>countersign inbox login</code>, then
<code>countersign inbox show TASK-ID</code>.</p></noscript>
</main>
</body></html>
`

const pageStyle = `
:root { color-scheme: light dark; --fg: #1b1d21; --bg: #fbfbfc; --muted: #5b616b; --line: #d6d9de; --accent: #1f5fbf; --card: #ffffff; --warn: #8a4b00;
  --add-bg: #e6f4ea; --add-fg: #0f5323; --del-bg: #fdecea; --del-fg: #8e1b14; --hunk-bg: #eef2fa; }
@media (prefers-color-scheme: dark) { :root { --fg: #e8eaee; --bg: #16181c; --muted: #a3a9b3; --line: #363a42; --accent: #7fb0ff; --card: #1e2126; --warn: #f0b45a;
  --add-bg: #14301e; --add-fg: #9be3ad; --del-bg: #3a1a1a; --del-fg: #ffb3ab; --hunk-bg: #1d2636; } }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
main { max-width: 56rem; margin: 0 auto; padding: 1.5rem 1rem 3rem; }
h1 { font-size: 1.5rem; margin: 0; }
h2 { font-size: 1.15rem; margin: 1.5rem 0 .5rem; }
header { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: center; justify-content: space-between; border-bottom: 1px solid var(--line); padding-bottom: .75rem; }
.who { color: var(--muted); overflow-wrap: anywhere; }
button { font: inherit; padding: .4rem .9rem; border-radius: .4rem; border: 1px solid var(--accent); background: var(--accent); color: var(--bg); cursor: pointer; }
button.secondary { background: transparent; color: var(--accent); }
button:focus-visible, input:focus-visible, textarea:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
label { display: block; font-weight: 600; margin: 1rem 0 .25rem; }
input, textarea { font: inherit; width: 100%; padding: .4rem .5rem; border: 1px solid var(--line); border-radius: .3rem; background: var(--card); color: var(--fg); }
textarea { min-height: 9rem; font-family: ui-monospace, monospace; font-size: .85rem; }
dl { display: grid; grid-template-columns: fit-content(16rem) minmax(0, 1fr); gap: .35rem 1rem; }
@media (max-width: 40rem) { dl { grid-template-columns: minmax(0, 1fr); gap: .1rem; } dl > dd { margin-bottom: .5rem; } }
dl > * { min-width: 0; overflow-wrap: anywhere; }
dt { font-weight: 600; }
dd { margin: 0; }
code, pre, .mono { font-family: ui-monospace, monospace; font-size: .85rem; overflow-wrap: anywhere; }
pre { white-space: pre-wrap; background: var(--card); border: 1px solid var(--line); border-radius: .3rem; padding: .6rem; }
.actions { display: flex; gap: .5rem; flex-wrap: wrap; margin-top: 1rem; }
.status { min-height: 1.5em; color: var(--muted); overflow-wrap: anywhere; }
.status.error { color: var(--warn); }
ul.tasks { list-style: none; padding: 0; margin: 0; border-top: 1px solid var(--line); }
ul.tasks > li { padding: .75rem .25rem; border-bottom: 1px solid var(--line); }
.task-title { font-weight: 600; display: block; }
.task-meta { color: var(--muted); font-size: .9rem; }
.task-locked .task-title { color: var(--warn); }
.empty { color: var(--muted); }
ul.tasks button.task-open { display: block; width: 100%; text-align: left; font: inherit; color: inherit; background: transparent; border: 0; border-radius: .3rem; padding: 0; cursor: pointer; }
ul.tasks button.task-open:hover { background: var(--card); }
ul.tasks button.task-open:focus { outline: 3px solid var(--accent); outline-offset: 2px; }
ul.tasks > li.pickable { display: flex; gap: .6rem; align-items: flex-start; }
ul.tasks > li.pickable > button.task-open { flex: 1; min-width: 0; }
ul.tasks > li.picked { background: var(--card); }
input.task-pick { width: 1.4rem; height: 1.4rem; margin: .1rem 0 0; flex: none; accent-color: var(--accent); cursor: pointer; }
.batch { margin: .75rem 0; }
.batch-why { color: var(--muted); font-size: .9rem; margin: .35rem 0 0; }
#batch-step code { overflow-wrap: anywhere; }
h3 { font-size: 1rem; margin: 1.25rem 0 .4rem; }
.receipt { padding: .5rem .75rem; border: 1px solid var(--line); border-radius: .3rem; }
.receipt.ok { border-color: var(--accent); }
.receipt.error { border-color: var(--warn); color: var(--warn); }
.field-value.wide { grid-column: 1 / -1; }
pre.long-text { margin: 0; white-space: pre-wrap; overflow-wrap: anywhere; font-size: .9rem; }
.field-value ul { margin: 0; padding-left: 1.2rem; }
.by-agent { background: color-mix(in srgb, var(--warn) 10%, transparent); }
.agent-mark { display: inline-block; font-size: .7rem; font-weight: 700; text-transform: uppercase; letter-spacing: .04em; padding: 0 .35rem; border: 1px solid var(--warn); border-radius: .6rem; color: var(--warn); vertical-align: .1em; }
pre.raw { max-height: 20rem; overflow: auto; }
button:disabled { opacity: .45; cursor: not-allowed; }
.failure { display: block; color: var(--warn); }
kbd { font-family: ui-monospace, monospace; font-size: .8rem; padding: .05rem .35rem; border: 1px solid var(--line); border-bottom-width: 2px; border-radius: .25rem; color: var(--muted); }
.with-key { display: inline-flex; align-items: center; gap: .35rem; }
summary:focus-visible, .keys:focus-visible, a:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
.keys { margin-top: 1.5rem; padding: .5rem 1rem 1rem; border: 1px solid var(--line); border-radius: .4rem; background: var(--card); }
.keys-hint { color: var(--muted); font-size: .9rem; }
.settings-part { margin-top: 1rem; }
.settings-part > h3 { font-size: 1.1rem; }
.settings h4 { font-size: .95rem; margin: 1rem 0 .3rem; }
.settings ul.tasks > li { display: flex; flex-direction: column; gap: .15rem; min-width: 0; }
.settings ul.tasks > li .actions { margin-top: .35rem; }
.settings { overflow-wrap: anywhere; }
.settings input[type=checkbox], .settings input[type=radio] { width: auto; margin: 0; accent-color: var(--accent); }
.settings input[type=checkbox]:focus-visible, .settings input[type=radio]:focus-visible, .settings select:focus-visible, .table-scroll:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
.settings select { font: inherit; width: 100%; padding: .4rem .5rem; border: 1px solid var(--line); border-radius: .3rem; background: var(--card); color: var(--fg); }
.settings label.choice { display: flex; align-items: center; flex-wrap: wrap; gap: .1rem .4rem; font-weight: 400; margin: .35rem 0; }
.settings fieldset { border: 1px solid var(--line); border-radius: .4rem; margin: 1rem 0 0; padding: .25rem .75rem .5rem; min-width: 0; }
.settings legend { font-weight: 600; padding: 0 .25rem; }
.setting-form { margin-top: 1rem; padding: .25rem 1rem 1rem; border: 1px solid var(--line); border-radius: .4rem; background: var(--card); }
.settings .this-device { color: var(--accent); }
.policy-mode { font-size: .9rem; }
.policy-mode.failure { color: var(--warn); }
.confirm-step { margin-top: .75rem; padding: .25rem 1rem .75rem; border: 1px solid var(--accent); border-radius: .4rem; }
.secret { margin-top: 1rem; padding: .25rem 1rem .75rem; border: 2px solid var(--warn); border-radius: .4rem; }
.secret code { font-size: .95rem; }
.secret-once { font-weight: 600; }
.table-scroll { overflow-x: auto; }
table.log { border-collapse: collapse; width: 100%; font-size: .9rem; overflow-wrap: normal; }
table.log caption { text-align: left; color: var(--muted); padding-bottom: .25rem; }
table.log th, table.log td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; white-space: nowrap; }
table.log td.failure { color: var(--warn); }
ol.rules { list-style: none; padding: 0; margin: .5rem 0 0; }
ol.rules li.rule { display: block; padding: .5rem 0; border-top: 1px solid var(--line); }
ol.rules li.rule label { margin-top: .5rem; }
.sr-only { position: absolute; width: 1px; height: 1px; padding: 0; margin: -1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; border: 0; }
:is(h2, h3, h4, legend)[tabindex="-1"]:focus { outline: none; text-decoration: underline 3px var(--accent); text-underline-offset: .3em; }
a { color: var(--accent); }
h1 a.home { color: inherit; text-decoration: none; }
a.button { display: inline-block; font: inherit; padding: .4rem .9rem; border-radius: .4rem; border: 1px solid var(--accent); text-decoration: none; }
a.button.secondary { color: var(--accent); background: transparent; }
button.danger { background: var(--del-fg); border-color: var(--del-fg); color: var(--bg); }
button.copy { font-size: .8rem; padding: .05rem .45rem; margin-left: .25rem; vertical-align: baseline; }
.account { overflow-wrap: anywhere; }
time[tabindex]:focus::after { content: " (" attr(data-exact) ")"; }
time[tabindex]:focus { outline: 2px solid var(--accent); outline-offset: 2px; border-radius: .2rem; }
#countdown:focus { outline: 2px solid var(--accent); outline-offset: 2px; }
#countdown:focus::after { content: " (" attr(title) ")"; }
.lede { font-size: 1.1rem; margin: 1.25rem 0 0; }
.empty-inbox { padding: .75rem 1rem; border: 1px dashed var(--line); border-radius: .4rem; }
.empty-inbox p { margin: .4rem 0; }
.task-gist { display: block; }
.summary { font-size: 1.05rem; }
textarea.answer { min-height: 2.6rem; field-sizing: content; max-height: 20rem; font-family: inherit; font-size: 1rem; }
input.answer.one-line { max-width: 24rem; font-size: 1rem; }
.answer[aria-invalid="true"] { border: 2px solid var(--warn); }
.answer-error { margin: .35rem 0 0; color: var(--warn); font-weight: 600; }
.form-result { margin: .5rem 0 0; padding: .35rem .6rem; border-left: 4px solid var(--accent); }
.form-result.failure { border-left-color: var(--warn); }
details.precise { margin-top: .35rem; font-size: .9rem; }
details.precise summary, details summary { cursor: pointer; color: var(--accent); }
dl.details { font-size: .9rem; }
.diff-part { margin: .25rem 0 1rem; }
.diff-file { margin: 0 0 .25rem; font-weight: 600; }
.diff-note { margin: 0 0 .25rem; color: var(--muted); }
table.diff-table { width: 100%; table-layout: fixed; border-collapse: collapse; font-family: ui-monospace, monospace; font-size: .82rem; line-height: 1.45; border: 1px solid var(--line); }
table.diff-table col.diff-ln-col { width: 3.2em; }
table.diff-table col.diff-sign-col { width: 1.6em; }
table.diff-table td { padding: 0 .3rem; vertical-align: top; }
td.diff-ln { color: var(--muted); text-align: right; user-select: none; border-right: 1px solid var(--line); }
td.diff-sign { text-align: center; font-weight: 700; user-select: none; }
td.diff-code { white-space: pre-wrap; overflow-wrap: anywhere; word-break: break-word; }
tr.diff-add { background: var(--add-bg); color: var(--add-fg); }
tr.diff-del { background: var(--del-bg); color: var(--del-fg); }
tr.diff-del td.diff-code { text-decoration: line-through; text-decoration-thickness: 1px; text-decoration-color: color-mix(in srgb, var(--del-fg) 45%, transparent); }
tr.diff-hunk td, tr.diff-eol td { background: var(--hunk-bg); color: var(--muted); padding: .15rem .5rem; overflow-wrap: anywhere; }
dialog.picker { max-width: min(28rem, calc(100vw - 2rem)); width: 100%; border: 1px solid var(--line); border-radius: .6rem; background: var(--card); color: var(--fg); padding: 1rem 1.25rem; }
dialog.picker::backdrop { background: rgba(0, 0, 0, .5); }
dialog.picker h2 { margin-top: 0; }
ul.wallets { list-style: none; padding: 0; margin: .75rem 0 0; display: grid; gap: .5rem; }
button.wallet { display: flex; align-items: center; gap: .75rem; width: 100%; text-align: left; background: transparent; color: var(--fg); border: 1px solid var(--line); padding: .6rem .75rem; }
button.wallet:hover { border-color: var(--accent); }
button.wallet img { border-radius: .4rem; flex: none; }
.settings-nav ul { list-style: none; display: flex; flex-wrap: wrap; gap: .25rem 1rem; padding: 0; margin: 1rem 0 0; }
.settings-nav a[aria-current="page"] { font-weight: 700; text-decoration: none; color: var(--fg); border-bottom: 3px solid var(--accent); }
ul.overview { list-style: none; padding: 0; }
ul.overview li { padding: .5rem 0; border-bottom: 1px solid var(--line); }
ul.overview li a { font-weight: 600; font-size: 1.05rem; }
ul.overview li p { margin: .2rem 0 0; }
.write-row { display: grid; grid-template-columns: minmax(0, 1fr) auto; gap: .1rem 1rem; align-items: center; border-top: 1px solid var(--line); padding: .35rem 0; }
.write-about { display: flex; flex-direction: column; min-width: 0; }
.write-name { font-weight: 600; }
.write-row .row-choices { display: flex; flex-wrap: wrap; gap: 0 1rem; }
.settings .write-row label.choice { margin: .15rem 0; }
@media (max-width: 40rem) { .write-row { grid-template-columns: minmax(0, 1fr); } }
ol.log li { display: flex; flex-direction: column; }
select { font: inherit; max-width: 100%; padding: .3rem .4rem; border: 1px solid var(--line); border-radius: .3rem; background: var(--card); color: var(--fg); }
select:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
.outcomes:empty { display: none; }
.outcome { margin: 1rem 0 0; padding: .25rem 1rem .75rem; border: 2px solid var(--accent); border-radius: .4rem; background: var(--card); overflow-wrap: anywhere; }
.outcome.failure { border-color: var(--warn); border-left-width: 8px; }
.outcome p { margin: .5rem 0 0; }
.outcome-title { font-size: 1.05rem; }
.outcome.failure .outcome-title strong, .outcome-text.failure { color: var(--warn); }
.outcome-text.failure { font-weight: 600; }
.history-filters { display: flex; flex-wrap: wrap; gap: .5rem 1.25rem; margin: .5rem 0 .75rem; }
.history-filters .filter { display: flex; align-items: center; gap: .5rem; min-width: 0; max-width: 100%; }
.history-filters label { margin: 0; }
.history-locked { margin: 0 0 .75rem; padding: .25rem 1rem .75rem; border: 1px dashed var(--warn); border-radius: .4rem; }
ul.history li { overflow-wrap: anywhere; }
ul.history li.entry-failed { border-left: 6px solid var(--warn); padding-left: .6rem; }
ul.history summary { display: block; list-style: none; cursor: pointer; color: inherit; border-radius: .3rem; }
ul.history summary::-webkit-details-marker { display: none; }
ul.history summary:hover { background: var(--card); }
ul.history summary .task-title::before { content: "▸ " / ""; color: var(--accent); }
ul.history details[open] > summary .task-title::before { content: "▾ " / ""; }
.entry-outcome { display: block; }
.entry-outcome.failure { color: var(--warn); }
.not-asked { display: inline-block; font-size: .75rem; font-weight: 700; letter-spacing: .03em; padding: 0 .45rem; margin: .15rem .5rem .15rem 0; border: 1px solid var(--muted); border-radius: .6rem; color: var(--muted); }
dl.entry-details { margin: .5rem 0 .25rem 1.1rem; }
.explained { margin-top: .25rem; font-size: .9rem; }
.explained-head { margin: .4rem 0 .1rem; font-weight: 600; }
.explained ul, .explained ol { margin: 0; padding-left: 1.3rem; }
.explained-writes > li { margin: .15rem 0; }
.write-outcome-refuse { color: var(--warn); }
.write-now { display: block; }
.card-summary { margin: .5rem 0; padding: .5rem .75rem; border-left: 4px solid var(--accent); background: var(--card); font-size: 1.05rem; overflow-wrap: anywhere; }
.card-summary .summary-label { display: block; font-size: .85rem; font-weight: 600; color: var(--muted); }
button.approve-summary { text-align: left; max-width: 100%; overflow-wrap: anywhere; }
`

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

// page serves the web inbox's page. The links given to agents and in
// webhooks (PUBLIC_URL/#/tasks/{id}) open it.
func (s *Server) page(w http.ResponseWriter, _ *http.Request) {
	nonce := pageNonce()
	network := "mainnet"
	if s.opts.NearNetwork == "testnet" {
		network = "testnet"
	}
	sandbox := ""
	if s.opts.SandboxWallet {
		sandbox = "\n" + `<meta name="countersign-sandbox-wallet" content="` + html.EscapeString(web.SandboxWallet()) + `">`
	}
	body := strings.NewReplacer("{{nonce}}", nonce, "{{script}}", html.EscapeString(web.Script()),
		"{{recipient}}", html.EscapeString(s.recipient()), "{{network}}", network, "{{sandbox}}", sandbox).Replace(pageShell)
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
	_, _ = w.Write([]byte(body))
}
