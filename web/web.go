// Package web is the web inbox's page as the binary serves it: the bundle
// built from the TypeScript in src/ by esbuild (run as a Go tool, so neither
// building the bundle nor go build needs Node), committed in dist/ under
// names that carry a hash of their content, and embedded here; and the
// page's shell (shell/page.html, an html/template, with its style sheet
// shell/style.css written inline), which WriteShell fills in for each
// answer.
//
// The page's wire types, src/wire.gen.ts, are written from the service's
// OpenAPI document by internal/wiregen. Write them again and rebuild the
// bundle after changing src/ or the service's routes and bodies with
//
//	go generate ./web
//
// and commit src/wire.gen.ts and dist/; CI does both and fails if either
// differs.
package web

//go:generate go run ./internal/wiregen -o src/wire.gen.ts
//go:generate sh -c "rm -rf dist && go tool esbuild src/inbox.ts src/sandboxwallet.ts src/sw.ts --bundle --minify --format=esm --target=es2022 --platform=browser --charset=utf8 --legal-comments=none --outdir=dist --entry-names=[name]-[hash] --log-level=warning"

import (
	"bytes"
	"embed"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"
)

//go:embed dist
var dist embed.FS

// Prefix is the path under which Assets serves the bundle's files.
const Prefix = "/assets/"

// files maps each file name in dist/ to its bytes.
var files = func() map[string][]byte {
	m := map[string][]byte{}
	entries, err := fs.ReadDir(dist, "dist")
	if err != nil {
		panic("web: the embedded bundle cannot be read: " + err.Error())
	}
	for _, e := range entries {
		b, err := dist.ReadFile("dist/" + e.Name())
		if err != nil {
			panic("web: the embedded bundle cannot be read: " + err.Error())
		}
		m[e.Name()] = b
	}
	return m
}()

// contentTypes are the types of the files a bundle holds; a file of any
// other extension is not served.
var contentTypes = map[string]string{
	".js":  "text/javascript; charset=utf-8",
	".css": "text/css; charset=utf-8",
}

// Script returns the path at which Assets serves the page's script, the
// bundle of src/inbox.ts: Prefix + "inbox-{hash}.js".
func Script() string { return bundled("inbox") }

// SandboxWallet returns the path at which Assets serves the sandbox
// wallet's code (src/sandboxwallet.ts), which near-connect runs in a
// sandboxed iframe when serve --dev offers it.
func SandboxWallet() string { return bundled("sandboxwallet") }

// Worker returns the service worker's code, the bundle of src/sw.ts, which
// the binary serves at a fixed address of its own (a worker's scope is its
// path's directory, and browsers look for updates at the same address).
func Worker() []byte { return files[strings.TrimPrefix(bundled("sw"), Prefix)] }

func bundled(entry string) string {
	for name := range files {
		if strings.HasPrefix(name, entry+"-") && strings.HasSuffix(name, ".js") {
			return Prefix + name
		}
	}
	panic("web: the embedded bundle holds no " + entry + "-*.js; run go generate ./web")
}

// Assets serves the bundle's files at Prefix + name, for GET and HEAD. A
// name carries a hash of its content, so every answer may be cached for a
// year and never revalidated; anything else is 404.
func Assets() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		name, ok := strings.CutPrefix(r.URL.Path, Prefix)
		b, found := files[name]
		ctype := contentTypes[path.Ext(name)]
		if !ok || !found || ctype == "" || strings.Contains(name, "/") {
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		h.Set("Content-Type", ctype)
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
		h.Set("X-Content-Type-Options", "nosniff")
		http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(b))
	})
}
