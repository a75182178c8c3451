package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"countersign/webhook"
)

// TestInboxTerminalWebhook names a loopback receiver from the terminal,
// pings it, watches a task's event arrive signed, reads the log, removes it.
func TestInboxTerminalWebhook(t *testing.T) {
	t.Parallel()
	s := newService(t)
	s.env["COUNTERSIGN_WEBHOOK_ALLOW_PRIVATE"] = "true"
	s.start()
	agent := s.agent("bot.near", 1_000_000)
	o := newOwner(t, s)
	s.project(o.account, "probe", "{}", "bot.near")
	o.login()

	var mu sync.Mutex
	var secret string
	var types []string
	arrived := make(chan struct{}, 1) // a delivery came since it was last read
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		key, err := webhook.DecodeSecret(secret)
		mac := hmac.New(sha256.New, key)
		mac.Write(body)
		if err != nil || r.Header.Get("X-Webhook-Signature") != hex.EncodeToString(mac.Sum(nil)) {
			t.Errorf("a delivery that does not verify")
		}
		types = append(types, r.Header.Get("X-Event-Type"))
		select {
		case arrived <- struct{}{}:
		default:
		}
	}))
	defer recv.Close()

	out := o.ok("webhook", "set", recv.URL+"/hook")
	m := regexp.MustCompile(`secret \(shown once[^)]*\): (whsec_\S+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("webhook set printed %q", out)
	}
	mu.Lock()
	secret = m[1]
	mu.Unlock()
	if shown := o.ok("webhook", "show"); !strings.Contains(shown, recv.URL+"/hook") || strings.Contains(shown, "whsec_") {
		t.Fatalf("webhook show: %q", shown)
	}
	if out := o.ok("webhook", "test"); !strings.Contains(out, "ping delivered: HTTP 200") {
		t.Fatalf("webhook test: %q", out)
	}
	startGame(t, agent, o.account, "probe")
	deadline := time.After(30 * time.Second)
	for {
		mu.Lock()
		got := strings.Join(types, " ")
		mu.Unlock()
		if got == "ping task_created" {
			break
		}
		select {
		case <-arrived:
		case <-deadline:
			t.Fatalf("events %q", got)
		}
	}
	// The service logs an attempt once it is in the delivery log.
	attempted := regexp.MustCompile(`(?m)^\{.*"msg":"webhook attempt".*"type":"task_created"`)
	if !s.log.await(attempted.MatchString, 30*time.Second) {
		t.Fatalf("the service logged no task_created attempt:\n%s", s.log.String())
	}
	if log := o.ok("webhook", "log"); !strings.Contains(log, "task_created") || !strings.Contains(log, "ping") {
		t.Fatalf("webhook log:\n%s", log)
	}
	o.ok("webhook", "rm")
	if out := o.ok("webhook", "show"); !strings.Contains(out, "no webhook is named") {
		t.Fatalf("after rm: %q", out)
	}
	o.fails([]string{"webhook", "set", "ftp://x.example/"}, "invalid_request")
}
