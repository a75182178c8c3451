// Package gmail is the Gmail connector (SPEC §14): it sends email as the
// owner, and reads their mailbox. `send` builds the RFC 5322 message once,
// when the call is made; the owner is shown its recipients, subject and
// body, each attachment as a file, and the whole message as message.eml,
// under a summary such as: send "Quarterly numbers" to 3 recipients with
// 2 attachments. The answer run sends those exact bytes
// (users.messages.send, raw), never a message built again. Every header
// line is folded within 78 characters and decodes, by MIME's rules, to
// exactly the text the owner was shown (RFC 2047 encoded words for a
// subject that is not plain ASCII or that looks like one, RFC 2231 for
// file names). A message is checked against the limits of the task that
// would show it under any policy, before the policy is read. A send tells
// the owner's history what it sent; every operation declares the schema
// of its result.
//
// Credentials are an OAuth2 refresh token with the OAuth client's id and
// secret, refreshed at Google's token endpoint with golang.org/x/oauth2 for
// each run; the three Gmail calls are plain net/http. Every request, the
// token's too, goes through the egress guard (SPEC §14, connector egress):
// a base_url or token_url is https (http only when wiring allows private
// hosts, for serve --dev and tests) without userinfo, query, fragment or
// dot segments, refused before any request when it is not; every address
// dialed is public; no redirect is followed; a message id goes in the path
// as an escaped segment and query values are encoded as RFC 3986 requires.
package gmail

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/oauth2"

	"countersign"
	"countersign/connectors"
	"countersign/egress"
	"countersign/policy"
)

// The connector's declaration.
const (
	Name    = "gmail"
	Version = "1.0.0"
	// DefaultBaseURL is Gmail's API and DefaultTokenURL Google's token
	// endpoint.
	DefaultBaseURL  = "https://gmail.googleapis.com"
	DefaultTokenURL = "https://oauth2.googleapis.com/token"
	// SendPrice and ReadPrice are the operations' prices in micro-USD.
	SendPrice = 10_000
	ReadPrice = 1_000
)

// Policy keys besides confirm.
const (
	keyDomains        = "recipient_domains"
	keyRecipients     = "recipients"
	keyMaxPerDay      = "max_per_day"
	keyMaxRecipients  = "max_recipients"
	keyMaxAttachments = "max_attachment_kb"
	keyPrefix         = "subject_prefix"
)

// messageFile is the name of the task file holding the whole message.
const messageFile = "message.eml"

// Config is how the service builds the connector.
type Config struct {
	// BaseURL and TokenURL are used when a project's credentials do not
	// name their own (defaults: Google's).
	BaseURL, TokenURL string
	// Egress is how Google is reached: only public addresses over https, no
	// redirects followed, unless wiring sets AllowPrivate (serve --dev and
	// tests, whose fake listens on loopback http).
	Egress egress.Options
	// SandboxCredentials stand in for a project's credentials when it has
	// none: serve --dev sets them to its fake's, never real ones.
	SandboxCredentials []byte
}

type connector struct {
	cfg  Config
	http *http.Client
}

// New returns the Gmail connector.
func New(cfg Config) *connectors.Connector {
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	if cfg.TokenURL == "" {
		cfg.TokenURL = DefaultTokenURL
	}
	e := cfg.Egress
	e.Timeout, e.Redirects = 30*time.Second, 0
	c := &connector{cfg: cfg, http: egress.NewClient(e)}
	return &connectors.Connector{
		Name: Name, Version: Version, Tasks: true,
		PolicyKeys: map[string]policy.KeyKind{keyDomains: policy.List, keyRecipients: policy.List, keyMaxPerDay: policy.Count,
			keyMaxRecipients: policy.Count, keyMaxAttachments: policy.Count, keyPrefix: policy.Text},
		// What a rule may name: every recipient of a message (to, cc and
		// bcc), one mailbox as sameAddress tells them (the local part as
		// written, the domain in lower case), and every recipient's domain,
		// ignoring case.
		Conditions: []policy.Condition{
			policy.Names("recipient", "recipients", false),
			policy.Names("domain", "domains", true),
		},
		TaskFacts: taskFacts,
		Operations: []connectors.Operation{
			{Name: "send", Kind: connectors.Write, Price: SendPrice, Run: c.send, Noun: "message", Carries: []string{"recipient", "domain"},
				Description: "Sends an email from the owner's Gmail: to, cc, bcc, subject, a plain-text body and attachments.",
				Schema:      json.RawMessage(sendSchema), Result: json.RawMessage(sentSchema),
				Examples: []json.RawMessage{
					json.RawMessage(`{"to": ["dana@example.com"], "subject": "Lunch on Friday", "body": "Friday at noon works for me."}`),
					json.RawMessage(`{"to": ["dana@example.com"], "cc": ["lee@example.com"], "subject": "The report", "body": "Attached.", ` +
						`"attachments": [{"name": "report.txt", "content_type": "text/plain", "data_base64": "SGVsbG8="}]}`),
				}},
			{Name: "messages_list", Kind: connectors.Read, Price: ReadPrice, Run: c.list,
				Description: "Lists the mailbox's messages, newest first, optionally matching a Gmail search query.",
				Schema: json.RawMessage(`{"type": "object", "properties": {"q": {"type": "string", "maxLength": 500, "description": "Gmail search syntax, such as from:dana is:unread"}, ` +
					`"max_results": {"type": "integer", "minimum": 1, "maximum": 500, "default": 20}, "page_token": {"type": "string", "maxLength": 200}}, "additionalProperties": false}`),
				Examples: []json.RawMessage{json.RawMessage(`{}`), json.RawMessage(`{"q": "is:unread", "max_results": 5}`)},
				Result:   json.RawMessage(listSchema)},
			{Name: "message_get", Kind: connectors.Read, Price: ReadPrice, Run: c.get,
				Description: "Reads one message: its headers and snippet, or its raw RFC 5322 bytes (format raw).",
				Schema: json.RawMessage(`{"type": "object", "properties": {"id": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$"}, ` +
					`"format": {"enum": ["metadata", "full", "raw"], "default": "metadata"}}, "required": ["id"], "additionalProperties": false}`),
				Examples: []json.RawMessage{json.RawMessage(`{"id": "18c0000000000001"}`)},
				Result:   json.RawMessage(getSchema)},
			{Name: "confirm", Kind: connectors.Answer, Answer: c.confirm,
				Description: "Sends the message the owner approved, byte for byte as built.",
				Result:      json.RawMessage(sentSchema)},
		},
	}
}

// addressList is a list of recipients as the owner is shown it: a list
// field holds at most 20 values of at most 200 characters.
var addressList = fmt.Sprintf(`{"type": "array", "maxItems": %d, "items": {"type": "string", "minLength": 3, "maxLength": %d, `+
	`"description": "one bare address, such as dana@example.com, without a display name"}}`, countersign.MaxListValues, countersign.MaxValueChars)

// fileName is an attachment's name as a task's file may have it (SPEC §12):
// at most 200 characters, none of / \ < > : " | ? * or a control
// character, no space or dot at either end. The connector checks the rest
// of the rules (invisible characters, names Windows keeps for devices,
// names alike but for case) before the policy is read.
var fileName = fmt.Sprintf(`{"type": "string", "minLength": 1, "maxLength": %d, "pattern": %s}`, countersign.MaxFileNameChars,
	jsonString(`^[^\s./\\<>:"|?*\x00-\x1f\x7f]([^/\\<>:"|?*\x00-\x1f\x7f]*[^\s./\\<>:"|?*\x00-\x1f\x7f])?$`))

// jsonString is s as a JSON string, < > & as they are.
func jsonString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSpace(b.String())
}

// sendSchema states the limits a message meets before anything else: those
// of the task that would show it (recipients per list, file names, the
// body's length, nine attachments beside message.eml).
var sendSchema = fmt.Sprintf(`{
  "type": "object",
  "properties": {
    "to": %[1]s,
    "cc": %[1]s,
    "bcc": %[1]s,
    "subject": {"type": "string", "maxLength": 400},
    "body": {"type": "string", "maxLength": %[2]d},
    "attachments": {"type": "array", "maxItems": %[3]d, "items": {"type": "object", "properties": {
      "name": %[4]s,
      "content_type": {"type": "string", "pattern": "^[a-z0-9.+-]+/[a-z0-9.+-]+$", "maxLength": %[5]d},
      "data_base64": {"type": "string", "contentEncoding": "base64"}
    }, "required": ["name", "content_type", "data_base64"], "additionalProperties": false}}
  },
  "required": ["to", "subject", "body"],
  "additionalProperties": false
}`, addressList, countersign.MaxLongTextChars, countersign.MaxFiles-1, fileName, countersign.MaxContentTypeChars)

// sentSchema is what a send answers once Gmail took the message (a direct
// send, and the answer of an approved one): Gmail's ids for it, and the
// size and SHA-256 of the bytes sent.
const sentSchema = `{"type": "object", "properties": {
    "ok": {"const": true}, "wrote": {"const": true}, "sent": {"const": true},
    "message_id": {"type": "string", "description": "Gmail's id of the message sent"},
    "thread_id": {"type": "string"},
    "bytes": {"type": "integer", "minimum": 1, "description": "the size of the RFC 5322 message sent"},
    "sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$", "description": "the SHA-256 of the message sent, as message.eml"}
  }, "required": ["ok", "wrote", "sent", "message_id", "thread_id", "bytes", "sha256"], "additionalProperties": false}`

// listSchema is what messages_list answers.
const listSchema = `{"type": "object", "properties": {
    "ok": {"const": true},
    "messages": {"type": "array", "items": {"type": "object", "properties": {"id": {"type": "string"}, "thread_id": {"type": "string"}},
      "required": ["id", "thread_id"], "additionalProperties": false}},
    "next_page_token": {"type": "string", "description": "page_token for the next page; absent on the last"}
  }, "required": ["ok", "messages"], "additionalProperties": false}`

// getSchema is what message_get answers: Gmail's Message resource as Gmail
// gives it (users.messages.get), which Google may extend.
const getSchema = `{"type": "object", "properties": {
    "ok": {"const": true},
    "message": {"type": "object", "description": "Gmail's Message resource", "properties": {
      "id": {"type": "string"}, "threadId": {"type": "string"},
      "labelIds": {"type": "array", "items": {"type": "string"}},
      "snippet": {"type": "string"}, "historyId": {"type": "string"},
      "internalDate": {"type": "string", "description": "milliseconds since the epoch, as a string"},
      "sizeEstimate": {"type": "integer"},
      "payload": {"type": "object", "description": "the MIME tree: partId, mimeType, filename, headers [{name, value}], body {size, data?, attachmentId?}, parts"},
      "raw": {"type": "string", "description": "the whole message in base64url (format raw only)"}
    }, "required": ["id", "threadId"]}
  }, "required": ["ok", "message"], "additionalProperties": false}`

// creds are a project's credentials.
type creds struct {
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
	RefreshToken string `json:"refresh_token"`
	BaseURL      string `json:"base_url,omitempty"`
	TokenURL     string `json:"token_url,omitempty"`
}

// sealed is a task's sealed state: what the message is, for the checks the
// answer makes again, and the hash of its bytes (the task's file).
type sealed struct {
	Recipients  []string `json:"recipients"`
	Subject     string   `json:"subject"`
	Attachments []int    `json:"attachments"` // sizes in bytes
	File        int      `json:"file"`        // the index of message.eml
	SHA256      string   `json:"sha256"`
}

// ---- policy

// check applies the policy's own keys to a message; the first refusal is
// returned. It is asked at prepare time and again in the answer.
func check(p *policy.Policy, recipients []string, subject string, sizes []int) error {
	if max, ok := p.Count(keyMaxRecipients); ok && len(recipients) > max {
		return connectors.Refuse(countersign.PolicyDenied, "the message has %d recipients, above the owner's max_recipients of %d", len(recipients), max)
	}
	domains, hasDomains := p.List(keyDomains)
	addrs, hasAddrs := p.List(keyRecipients)
	if hasDomains || hasAddrs {
		for _, r := range recipients {
			if !allowed(r, domains, addrs) {
				return connectors.Refuse(countersign.PolicyDenied, "the owner's policy does not allow the recipient %s (recipient_domains, recipients)", r)
			}
		}
	}
	if max, ok := p.Count(keyMaxAttachments); ok {
		for i, n := range sizes {
			if n > max*1024 {
				return connectors.Refuse(countersign.PolicyDenied, "attachment %d is %d KiB, above the owner's max_attachment_kb of %d", i+1, (n+1023)/1024, max)
			}
		}
	}
	if prefix, ok := p.Text(keyPrefix); ok && !strings.HasPrefix(subject, prefix) {
		return connectors.Refuse(countersign.PolicyDenied, "the subject does not start with the owner's subject_prefix")
	}
	return nil
}

// allowed: the address is listed (the same local part, case included, at
// the same domain, case ignored), or its domain (or a parent domain) is.
func allowed(addr string, domains, addrs []string) bool {
	for _, a := range addrs {
		if sameAddress(a, addr) {
			return true
		}
	}
	d := domain(addr)
	for _, want := range domains {
		want = strings.ToLower(strings.TrimPrefix(want, "@"))
		if want == "any" || d == want || strings.HasSuffix(d, "."+want) {
			return true
		}
	}
	return false
}

// mailFacts are a message's facts for the rules: its recipients, each with
// its domain in lower case (the local part is a mailbox's own), and their
// domains, each once.
func mailFacts(recipients []string) policy.Facts {
	domains, mailboxes := []string{}, []string{}
	for _, r := range recipients {
		d := domain(r)
		mailboxes = append(mailboxes, r[:strings.LastIndexByte(r, '@')+1]+d)
		if !slices.Contains(domains, d) {
			domains = append(domains, d)
		}
	}
	return policy.Facts{Names: map[string][]string{"recipient": mailboxes, "domain": domains}}
}

// taskFacts reads the message a task asks about from the agent's request,
// as send reads its recipients, for "Always allow this".
func taskFacts(request []byte, _ countersign.Envelope) (string, policy.Facts, error) {
	op, err := connectors.RequestOperation(request)
	if err != nil {
		return "", policy.Facts{}, err
	}
	var args struct {
		To  []string `json:"to"`
		Cc  []string `json:"cc"`
		Bcc []string `json:"bcc"`
	}
	if err := json.Unmarshal(request, &args); err != nil {
		return "", policy.Facts{}, err
	}
	var recipients []string
	for _, s := range slices.Concat(args.To, args.Cc, args.Bcc) {
		a, err := checkAddress(s)
		if err != nil {
			return "", policy.Facts{}, err
		}
		recipients = append(recipients, a)
	}
	return op, mailFacts(recipients), nil
}

// ---- send

func (c *connector) send(ctx context.Context, call *connectors.Call) (any, error) {
	var args struct {
		To          []string `json:"to"`
		Cc          []string `json:"cc"`
		Bcc         []string `json:"bcc"`
		Subject     string   `json:"subject"`
		Body        string   `json:"body"`
		Attachments []struct {
			Name        string `json:"name"`
			ContentType string `json:"content_type"`
			Data        string `json:"data_base64"`
		} `json:"attachments"`
	}
	if err := call.Decode(&args); err != nil {
		return nil, err
	}
	d := draft{Body: strings.ReplaceAll(args.Body, "\r\n", "\n")}
	var recipients []string
	seen := map[string]bool{}
	for _, l := range []struct {
		name string
		in   []string
		out  *[]string
	}{{"to", args.To, &d.To}, {"cc", args.Cc, &d.Cc}, {"bcc", args.Bcc, &d.Bcc}} {
		for i, s := range l.in {
			a, err := checkAddress(s)
			if err != nil {
				return nil, connectors.Refuse(countersign.InvalidRequest, "`%s` %d is not one bare email address (such as dana@example.com, without a name)", l.name, i+1)
			}
			if seen[a] {
				return nil, connectors.Refuse(countersign.InvalidRequest, "%s is named twice among the recipients", a)
			}
			seen[a] = true
			*l.out = append(*l.out, a)
			recipients = append(recipients, a)
		}
	}
	if len(d.To) == 0 {
		return nil, connectors.Refuse(countersign.InvalidRequest, "`to` names no recipient")
	}
	if strings.ContainsAny(args.Subject, "\r\n") || strings.IndexFunc(args.Subject, unicode.IsControl) >= 0 {
		return nil, connectors.Refuse(countersign.InvalidRequest, "the subject holds a line break or a control character")
	}
	d.Subject = args.Subject
	if prefix, ok := call.Policy.Text(keyPrefix); ok && !strings.HasPrefix(d.Subject, prefix) {
		d.Subject = prefix + d.Subject
	}
	var sizes []int
	for i, a := range args.Attachments {
		data, err := base64.StdEncoding.DecodeString(a.Data)
		if err != nil {
			return nil, connectors.Refuse(countersign.InvalidRequest, "attachment %d's data_base64 is not standard base64", i+1)
		}
		d.Attachments = append(d.Attachments, attachment{Name: a.Name, ContentType: a.ContentType, Data: data})
		sizes = append(sizes, len(data))
	}
	msg := build(d)
	// What the owner would be shown is checked whether or not they are
	// asked, so a message is refused for its own arguments alike under any
	// policy, before the policy is read.
	display, files := show(d, msg)
	if err := checkShown(display, files); err != nil {
		return nil, err
	}
	if err := check(call.Policy, recipients, d.Subject, sizes); err != nil {
		return nil, err
	}
	dec := call.Decide(mailFacts(recipients))
	if dec.Outcome == policy.Refuse {
		return nil, connectors.Refuse(countersign.Code(dec.Code), "%s", dec.Sentence)
	}
	sum := sha256.Sum256(msg)
	if dec.Outcome == policy.Allow {
		if max, ok := call.Policy.Count(keyMaxPerDay); ok {
			ok, err := call.Reserve(ctx, policy.Direct, max)
			if err != nil {
				return nil, err
			}
			if !ok {
				return nil, connectors.Refuse(countersign.PolicyDenied, "the owner's max_per_day of %d messages sent at once is reached today", max)
			}
		}
		out, err := c.deliver(ctx, call.Credentials, msg, hex.EncodeToString(sum[:]))
		var r *connectors.Refusal
		if errors.As(err, &r) {
			return nil, countersign.Errorf(r.Code, "%s", r.Message())
		}
		if err != nil {
			return nil, err
		}
		call.Did(connectors.Did{Title: display.Title, Summary: display.Summary, Outcome: sentOutcome(d.Subject, len(recipients), len(d.Attachments), out.MessageID)})
		return out, nil
	}
	state, err := json.Marshal(sealed{Recipients: recipients, Subject: d.Subject, Attachments: sizes, File: len(files) - 1,
		SHA256: hex.EncodeToString(sum[:])})
	if err != nil {
		return nil, err
	}
	t, err := call.OpenTask(ctx, connectors.TaskSpec{Kind: countersign.KindConfirm, Display: display, Files: files,
		AnswerBy: &countersign.AnswerBy{Operation: "confirm", Supplies: countersign.SuppliesNone}, State: state})
	if err != nil {
		return nil, err
	}
	return connectors.AwaitingOwner(t), nil
}

// show is what the owner is shown of a message: its recipients, subject,
// body and attachments' names as fields, with a summary of what approving
// does; each attachment as a file, and the whole message as message.eml,
// last.
func show(d draft, msg []byte) (countersign.Display, []connectors.File) {
	fields := []countersign.Field{list("To", d.To)}
	if len(d.Cc) > 0 {
		fields = append(fields, list("Cc", d.Cc))
	}
	if len(d.Bcc) > 0 {
		fields = append(fields, list("Bcc", d.Bcc))
	}
	subject := d.Subject
	if subject == "" {
		subject = "(no subject)"
	}
	fields = append(fields, countersign.Field{Kind: countersign.FieldText, Label: "Subject", Values: []string{subject}, WrittenBy: countersign.WrittenByAgent})
	body := d.Body
	if strings.TrimSpace(body) == "" {
		body = "(empty)"
	}
	fields = append(fields, countersign.Field{Kind: countersign.FieldLongText, Label: "Body", Values: []string{body}, WrittenBy: countersign.WrittenByAgent})
	files := make([]connectors.File, 0, len(d.Attachments)+1)
	var names []string
	for _, a := range d.Attachments {
		files = append(files, connectors.File{Name: a.Name, ContentType: a.ContentType, Data: a.Data})
		names = append(names, a.Name)
	}
	if len(names) > 0 {
		fields = append(fields, list("Attachments", names))
	}
	fields = append(fields, countersign.Field{Kind: countersign.FieldText, Label: "What is sent", WrittenBy: countersign.WrittenByProject,
		Values: []string{fmt.Sprintf("exactly the bytes of %s (%d bytes), from the owner's Gmail", messageFile, len(msg))}})
	files = append(files, connectors.File{Name: messageFile, ContentType: "message/rfc822", Data: msg})
	return countersign.Display{Title: cutRunes("Send an email: "+subject, countersign.MaxTitleChars),
		Summary: summary(d.Subject, len(d.To)+len(d.Cc)+len(d.Bcc), len(d.Attachments)), Fields: fields}, files
}

// checkShown refuses a message whose display or files the contract's
// limits would refuse (display_invalid, task_too_large), naming the
// argument rather than the field or file.
func checkShown(display countersign.Display, files []connectors.File) error {
	if err := countersign.ValidateDisplay(display); err != nil {
		return connectors.Refuse(countersign.ErrorCode(err), "%s", fieldWords(countersign.ErrorMessage(err), display.Fields))
	}
	meta := make([]countersign.File, len(files))
	for i, f := range files {
		sum := sha256.Sum256(f.Data)
		meta[i] = countersign.File{Name: f.Name, ContentType: f.ContentType, SHA256: hex.EncodeToString(sum[:]), Size: int64(len(f.Data))}
	}
	if err := countersign.ValidateFiles(meta); err != nil {
		// File n is attachment n (message.eml, last, is the connector's).
		return connectors.Refuse(countersign.ErrorCode(err), "%s", strings.ReplaceAll(countersign.ErrorMessage(err), "file ", "attachment "))
	}
	return nil
}

// fieldWords names the field a display refusal is about by its label:
// "field 4 value 1 holds …" becomes "the subject holds …", and "field 1
// value 3 …" of a list "the to field's value 3 …"; the title is the
// subject's.
func fieldWords(msg string, fields []countersign.Field) string {
	if rest, ok := strings.CutPrefix(msg, "the title "); ok {
		// The title is the subject's, after "Send an email: ".
		return "the subject " + rest
	}
	var n, v int
	if _, err := fmt.Sscanf(msg, "field %d value %d ", &n, &v); err != nil || n < 1 || n > len(fields) {
		return msg
	}
	rest := strings.TrimPrefix(msg, fmt.Sprintf("field %d value %d ", n, v))
	f := fields[n-1]
	if f.Kind != countersign.FieldList {
		return "the " + strings.ToLower(f.Label) + " " + rest
	}
	return fmt.Sprintf("the %s field's value %d %s", strings.ToLower(f.Label), v, rest)
}

// summary is the one line of what approving a message does:
// `send "Quarterly numbers" to 3 recipients with 2 attachments`, the
// subject quoted (a quote in it escaped) and cut with "…" to fit 200
// characters.
func summary(subject string, recipients, attachments int) string {
	rest := " to " + count(recipients, "recipient")
	if attachments > 0 {
		rest += " with " + count(attachments, "attachment")
	}
	if subject == "" {
		return "send a message with no subject" + rest
	}
	return "send " + quoted(subject, countersign.MaxSummaryChars-len("send ")-utf8.RuneCountInString(rest)) + rest
}

// sentOutcome tells the owner's history what a send did: `Sent "Quarterly
// numbers" to 3 recipients; Gmail message 18c…`.
func sentOutcome(subject string, recipients, attachments int, id string) connectors.Outcome {
	id = clean(id, 40)
	tail := "; Gmail message " + id
	what := " to " + count(recipients, "recipient")
	if attachments > 0 {
		what += " with " + count(attachments, "attachment")
	}
	room := 200 - len("Sent ") - utf8.RuneCountInString(what+tail)
	text := "Sent a message with no subject" + what + tail
	if subject != "" {
		text = "Sent " + quoted(subject, room) + what + tail
	}
	return connectors.Outcome{Text: text}
}

// count is "1 recipient", "3 recipients".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// quoted is s between double quotes as Go writes a string literal (a
// quote or backslash in it escaped, so it cannot close the quotation
// early; an invisible character written as its escape), cut with "…"
// inside the quotes to at most max characters.
func quoted(s string, max int) string {
	q := strconv.Quote(s)
	if utf8.RuneCountInString(q) <= max {
		return q
	}
	r := []rune(s)
	for n := min(len(r), max); n > 0; n-- {
		if q = strconv.Quote(string(r[:n]) + "…"); utf8.RuneCountInString(q) <= max {
			return q
		}
	}
	return `"…"`
}

func list(label string, values []string) countersign.Field {
	return countersign.Field{Kind: countersign.FieldList, Label: label, Values: values, WrittenBy: countersign.WrittenByAgent}
}

// confirm sends the approved message: the task's message.eml, whose hash
// was sealed, after the policy and the day's count as they are now allow it.
func (c *connector) confirm(ctx context.Context, a *connectors.AnswerCall) (connectors.Report, error) {
	var st sealed
	if err := countersign.DecodeStrict(a.State, &st); err != nil || st.File < 0 || st.File >= len(a.Files) {
		return connectors.Report{}, connectors.Refused(countersign.InvalidRequest, false, "The task's sealed message does not read; nothing was sent.")
	}
	msg := a.Files[st.File]
	if sum := sha256.Sum256(msg); hex.EncodeToString(sum[:]) != st.SHA256 {
		return connectors.Report{}, connectors.Refused(countersign.InvalidRequest, false, "The task's message is not the one sealed; nothing was sent.")
	}
	if err := check(a.Policy, st.Recipients, st.Subject, st.Attachments); err != nil {
		return connectors.Report{}, connectors.Refused(countersign.ErrorCode(err), false, "%s; nothing was sent.", upper(countersign.ErrorMessage(err)))
	}
	if d := a.Decide("send", mailFacts(st.Recipients)); d.Outcome == policy.Refuse {
		return connectors.Report{}, connectors.Refused(countersign.Code(d.Code), false, "%s; nothing was sent.", upper(d.Sentence))
	}
	if max, ok := a.Policy.Count(keyMaxPerDay); ok {
		ok, err := a.Reserve(ctx, max)
		if err != nil {
			return connectors.Report{}, err
		}
		if !ok {
			return connectors.Report{}, connectors.Refused(countersign.PolicyDenied, false, "The owner's max_per_day of %d confirmed messages is reached today; nothing was sent.", max)
		}
	}
	out, err := c.deliver(ctx, a.Credentials, msg, st.SHA256)
	if err != nil {
		return connectors.Report{}, err
	}
	return connectors.Report{Result: out, Outcome: sentOutcome(st.Subject, len(st.Recipients), len(st.Attachments), out.MessageID)}, nil
}

// sentResult is what a send answers: the message Gmail made of the bytes.
type sentResult struct {
	OK        bool   `json:"ok"`
	Wrote     bool   `json:"wrote"`
	Sent      bool   `json:"sent"`
	MessageID string `json:"message_id"`
	ThreadID  string `json:"thread_id"`
	Bytes     int    `json:"bytes"`
	SHA256    string `json:"sha256"`
}

// deliver refreshes the access token and sends msg as it is; sum is its
// SHA-256 in hex, already made by the caller.
func (c *connector) deliver(ctx context.Context, raw []byte, msg []byte, sum string) (*sentResult, error) {
	cl, err := c.session(ctx, raw)
	if err != nil {
		return nil, err
	}
	body, _ := json.Marshal(map[string]string{"raw": base64.URLEncoding.EncodeToString(msg)})
	var sent struct {
		ID       string `json:"id"`
		ThreadID string `json:"threadId"`
	}
	if err := cl.do(ctx, http.MethodPost, messages.with("send"), nil, body, &sent); err != nil {
		return nil, sendRefusal(err)
	}
	return &sentResult{OK: true, Wrote: true, Sent: true, MessageID: sent.ID, ThreadID: sent.ThreadID, Bytes: len(msg), SHA256: sum}, nil
}

// ---- reads

func (c *connector) list(ctx context.Context, call *connectors.Call) (any, error) {
	var args struct {
		Q          string `json:"q"`
		MaxResults int    `json:"max_results"`
		PageToken  string `json:"page_token"`
	}
	if err := call.Decode(&args); err != nil {
		return nil, err
	}
	if args.MaxResults == 0 {
		args.MaxResults = 20
	}
	cl, err := c.session(ctx, call.Credentials)
	if err != nil {
		return nil, asCall(err)
	}
	q := url.Values{"maxResults": {fmt.Sprint(args.MaxResults)}}
	if args.Q != "" {
		q.Set("q", args.Q)
	}
	if args.PageToken != "" {
		q.Set("pageToken", args.PageToken)
	}
	var out struct {
		Messages []struct {
			ID       string `json:"id"`
			ThreadID string `json:"threadId"`
		} `json:"messages"`
		NextPageToken string `json:"nextPageToken"`
	}
	if err := cl.do(ctx, http.MethodGet, messages, q, nil, &out); err != nil {
		return nil, readRefusal(err)
	}
	msgs := make([]map[string]string, 0, len(out.Messages))
	for _, m := range out.Messages {
		msgs = append(msgs, map[string]string{"id": m.ID, "thread_id": m.ThreadID})
	}
	res := map[string]any{"ok": true, "messages": msgs}
	if out.NextPageToken != "" {
		res["next_page_token"] = out.NextPageToken
	}
	return res, nil
}

func (c *connector) get(ctx context.Context, call *connectors.Call) (any, error) {
	var args struct {
		ID     string `json:"id"`
		Format string `json:"format"`
	}
	if err := call.Decode(&args); err != nil {
		return nil, err
	}
	if args.Format == "" {
		args.Format = "metadata"
	}
	cl, err := c.session(ctx, call.Credentials)
	if err != nil {
		return nil, asCall(err)
	}
	var m map[string]any
	if err := cl.do(ctx, http.MethodGet, messages.with(args.ID), url.Values{"format": {args.Format}}, nil, &m); err != nil {
		return nil, readRefusal(err)
	}
	return map[string]any{"ok": true, "message": m}, nil
}

// ---- HTTP and OAuth2

type client struct {
	http  *http.Client
	base  string // scheme, host and path, no trailing slash
	token string
	// own: the base came from the project's credentials.
	own bool
}

// at is a request's path: its segments, each escaped whole when the
// request is made (egress.Path), so no id can add or remove a level.
type at []string

func (a at) with(more ...string) at { return append(append(at{}, a...), more...) }

// messages is the path of the owner's messages.
var messages = at{"gmail", "v1", "users", "me", "messages"}

// apiError is Google's answer that is not a success, or no answer, or a
// request that never left.
type apiError struct {
	status  int
	message string
	// before: the request was refused before it left, for the reason
	// code and the sentence message. Nothing was sent.
	before bool
	code   countersign.Code
}

func (e *apiError) Error() string {
	if e.status == 0 {
		return "Gmail did not answer (" + e.message + ")"
	}
	return fmt.Sprintf("Gmail answered %d (%s)", e.status, e.message)
}

// endpoint is the URL a project's credentials name for what (base_url or
// token_url), or the connector's own, checked by the egress rules (https,
// no userinfo, query or fragment, a public host, no dot segments) before
// any request.
func (c *connector) endpoint(what, own, def string) (string, bool, error) {
	raw := def
	if own != "" {
		raw = own
	}
	u, err := egress.CheckBaseURL(raw, c.cfg.Egress.AllowPrivate)
	if err != nil {
		ue := egress.ErrURLSyntax
		errors.As(err, &ue)
		if own != "" {
			return "", true, connectors.Refused(countersign.InvalidRequest, false, "%s: the owner must correct the project's credentials; nothing was sent.", ue.Of("The project's "+what))
		}
		return "", false, connectors.Refused(countersign.Internal, false, "The service's Gmail %s is refused: %s; nothing was sent.", what, ue.Of("it"))
	}
	if what == "token_url" {
		// An endpoint, not a base: used as it was given.
		return raw, own != "", nil
	}
	return u.String(), own != "", nil
}

// session refreshes an access token with the project's refresh token. A
// refresh token Google no longer accepts ends in a refusal telling the
// owner to reconnect.
func (c *connector) session(ctx context.Context, raw []byte) (*client, error) {
	if len(raw) == 0 && c.cfg.SandboxCredentials != nil {
		raw = c.cfg.SandboxCredentials
	}
	var cr creds
	if len(raw) == 0 || countersign.DecodeStrict(raw, &cr) != nil || cr.RefreshToken == "" || cr.ClientID == "" {
		return nil, connectors.Refused(countersign.InvalidRequest, false, "The project has no Gmail credentials: its owner stores {\"client_id\", \"client_secret\", \"refresh_token\"}; nothing was sent.")
	}
	base, ownBase, err := c.endpoint("base_url", cr.BaseURL, c.cfg.BaseURL)
	if err != nil {
		return nil, err
	}
	tokenURL, ownToken, err := c.endpoint("token_url", cr.TokenURL, c.cfg.TokenURL)
	if err != nil {
		return nil, err
	}
	conf := &oauth2.Config{ClientID: cr.ClientID, ClientSecret: cr.ClientSecret,
		Endpoint: oauth2.Endpoint{TokenURL: tokenURL, AuthStyle: oauth2.AuthStyleInParams}}
	tctx := context.WithValue(ctx, oauth2.HTTPClient, c.http)
	tok, err := conf.TokenSource(tctx, &oauth2.Token{RefreshToken: cr.RefreshToken}).Token()
	if err != nil {
		var re *oauth2.RetrieveError
		switch {
		case egress.Refused(err) && ownToken:
			return nil, connectors.Refused(countersign.InvalidRequest, false, "The project's token_url leads to an address that is not public (loopback, private, link-local or reserved), so Google was not asked: the owner must correct the project's credentials; nothing was sent.")
		case egress.Refused(err):
			return nil, connectors.Refused(countersign.Internal, false, "Google's token endpoint resolves to an address that is not public, so it was not asked; nothing was sent.")
		case errors.As(err, &re) && re.ErrorCode == "invalid_grant":
			return nil, connectors.Refused("credentials_expired", false, "Google no longer accepts the project's refresh token (invalid_grant: expired or revoked): the owner must reconnect Gmail and store a new one; nothing was sent.")
		case errors.As(err, &re) && (re.ErrorCode == "invalid_client" || re.ErrorCode == "unauthorized_client"):
			return nil, connectors.Refused("credentials_rejected", false, "Google refused the project's OAuth client (%s): the owner must store its client id and secret again; nothing was sent.", re.ErrorCode)
		case errors.As(err, &re):
			return nil, connectors.Refused("upstream_unavailable", false, "Google's token endpoint answered %d; nothing was sent; try again later.", re.Response.StatusCode)
		}
		return nil, connectors.Refused("upstream_unavailable", false, "Google's token endpoint could not be reached; nothing was sent; try again later.")
	}
	return &client{http: c.http, base: base, token: tok.AccessToken, own: ownBase}, nil
}

// do sends one request to path with query and reads a success into out.
func (cl *client) do(ctx context.Context, method string, path at, query url.Values, body []byte, out any) error {
	p, err := egress.Path(path...)
	if err != nil {
		return &apiError{before: true, code: countersign.InvalidRequest, message: "an id would make an empty, . or .. segment of Gmail's URL path"}
	}
	if len(query) > 0 {
		p += "?" + egress.Query(query)
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, cl.base+p, rd)
	if err != nil {
		return &apiError{before: true, code: countersign.InvalidRequest, message: "the request to Gmail could not be made"}
	}
	req.Header.Set("Authorization", "Bearer "+cl.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := cl.http.Do(req)
	switch {
	case egress.Refused(err) && cl.own:
		return &apiError{before: true, code: countersign.InvalidRequest,
			message: "the project's base_url leads to an address that is not public (loopback, private, link-local or reserved), so Gmail was not asked: the owner must correct the project's credentials"}
	case egress.Refused(err):
		return &apiError{before: true, code: countersign.Internal, message: "Gmail's host resolves to an address that is not public, so it was not asked"}
	case err != nil:
		return &apiError{message: "the connection failed"}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return &apiError{status: resp.StatusCode, message: googleText(raw, resp.StatusCode)}
	}
	if err != nil {
		return &apiError{message: "the answer was cut off"}
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return &apiError{message: "the answer does not read"}
	}
	return nil
}

// googleText is Google's error message ({"error": {"code", "message",
// "status"}}), made safe for a sentence.
func googleText(raw []byte, status int) string {
	var body struct {
		Error struct {
			Message string `json:"message"`
			Status  string `json:"status"`
		} `json:"error"`
	}
	_ = json.Unmarshal(raw, &body)
	msg := clean(body.Error.Message, 200)
	if msg == "" {
		msg = strings.ToLower(http.StatusText(status))
	}
	if msg == "" {
		msg = "no reason given"
	}
	if s := clean(body.Error.Status, 40); s != "" {
		msg = s + ": " + msg
	}
	return msg
}

// clean keeps the printable characters of s, white space as spaces, cut to
// n characters.
func clean(s string, n int) string {
	var b strings.Builder
	count := 0
	for _, r := range strings.ToValidUTF8(s, "") {
		if count >= n {
			break
		}
		if unicode.IsSpace(r) {
			r = ' '
		} else if !unicode.IsPrint(r) {
			continue
		}
		b.WriteRune(r)
		count++
	}
	return strings.TrimSpace(b.String())
}

// sendRefusal words a failed send: a 4xx proves nothing was sent; a lost
// answer or a 5xx leaves it unknown.
func sendRefusal(err error) error {
	var ae *apiError
	if !errors.As(err, &ae) {
		return err
	}
	switch {
	case ae.before:
		return connectors.Refused(ae.code, false, "%s; nothing was sent.", upper(ae.message))
	case ae.status == http.StatusUnauthorized || ae.status == http.StatusForbidden:
		return connectors.Refused("credentials_rejected", false, "Gmail refused the send (%d, %s): the owner must reconnect Gmail with the gmail.send scope; nothing was sent.", ae.status, ae.message)
	case ae.status == http.StatusTooManyRequests:
		return connectors.Refused(countersign.RateLimited, false, "Gmail's sending limit is reached (%s); nothing was sent.", ae.message)
	case ae.status >= 400 && ae.status < 500:
		return connectors.Refused(countersign.InvalidRequest, false, "Gmail refused the message (%d, %s); nothing was sent.", ae.status, ae.message)
	}
	return connectors.RefusedUnknown("upstream_unavailable", "%s: the message may or may not have been sent; look in the Sent folder before preparing it again.", upper(ae.Error()))
}

func readRefusal(err error) error {
	var ae *apiError
	if !errors.As(err, &ae) {
		return err
	}
	switch {
	case ae.before:
		return connectors.Refuse(ae.code, "%s", upper(ae.message))
	case ae.status == http.StatusUnauthorized || ae.status == http.StatusForbidden:
		return connectors.Refuse("credentials_rejected", "Gmail refused the read (%d, %s): the owner must reconnect Gmail with a scope that reads mail", ae.status, ae.message)
	case ae.status == http.StatusNotFound:
		return connectors.Refuse(countersign.InvalidRequest, "Gmail has no such message")
	case ae.status >= 400 && ae.status < 500:
		return connectors.Refuse(countersign.InvalidRequest, "Gmail refused the read (%d, %s)", ae.status, ae.message)
	}
	return connectors.Refuse("upstream_unavailable", "%s; try again later", ae.Error())
}

// asCall is a read's answer for a refusal made for answers.
func asCall(err error) error {
	var r *connectors.Refusal
	if errors.As(err, &r) {
		return countersign.Errorf(r.Code, "%s", strings.TrimSuffix(strings.TrimSuffix(r.Sentence, "; nothing was sent."), "."))
	}
	return err
}

func upper(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
