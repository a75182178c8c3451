package web

import (
	"embed"
	"errors"
	"html/template"
	"io"
	"strings"
)

// The page's shell: shell/page.html, an html/template, and its style sheet
// shell/style.css, written inline (the page's CSP takes inline styles, not
// style sheets by address).
//
//go:embed shell
var shellFS embed.FS

var (
	shellPage  = template.Must(template.ParseFS(shellFS, "shell/page.html"))
	shellStyle = func() template.CSS {
		b, err := shellFS.ReadFile("shell/style.css")
		if err != nil {
			panic("web: the embedded shell cannot be read: " + err.Error())
		}
		return template.CSS(b)
	}()
)

// Shell is what one answer of the page says besides its fixed parts.
type Shell struct {
	// Nonce is the response's CSP nonce, under which the page's script
	// runs.
	Nonce string
	// Recipient is the NEP-413 recipient the page has owners sign for, and
	// Network the NEAR network its wallets use.
	Recipient, Network string
	// SandboxWallet offers serve --dev's wallet (see SandboxWallet).
	SandboxWallet bool
}

// WriteShell writes the web inbox's page: a shell that loads the bundle
// (Script) under s.Nonce and tells the page the recipient its owners sign
// for. Without script it says where else to read a task.
func WriteShell(w io.Writer, s Shell) error {
	if s.Nonce == "" || strings.Trim(s.Nonce, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=") != "" {
		return errors.New("web: a page's nonce is base64")
	}
	data := struct {
		Nonce                 template.HTMLAttr
		Script, SandboxWallet string
		Recipient, Network    string
		Style                 template.CSS
	}{
		// A nonce is base64, safe inside a quoted attribute: it is written
		// as it is, as the CSP names it.
		Nonce:     template.HTMLAttr(`nonce="` + s.Nonce + `"`),
		Script:    Script(),
		Recipient: s.Recipient,
		Network:   s.Network,
		Style:     shellStyle,
	}
	if s.SandboxWallet {
		data.SandboxWallet = SandboxWallet()
	}
	return shellPage.Execute(w, data)
}
