package httpapi

import "net/http"

// landing is what the links given to agents and in webhooks
// (PUBLIC_URL/#/tasks/{id}) open until the web inbox is built: where to
// read the task instead. It loads nothing and runs nothing.
const landing = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Countersign</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body style="font-family: system-ui, sans-serif; max-width: 40em; margin: 3em auto; line-height: 1.5">
<h1>Countersign</h1>
<p>This link names a task waiting for its owner: the part of the address after
<code>#/tasks/</code> is its id.</p>
<p>Tasks are read and answered on a signed-in device. In a terminal:</p>
<pre>countersign inbox login --wallet YOUR-WALLET.json
countersign inbox show TASK-ID</pre>
</body></html>
`

func (s *Server) landing(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Cross-Origin-Opener-Policy", "same-origin")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write([]byte(landing))
}
