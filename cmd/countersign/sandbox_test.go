package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// countersign sandbox github serves the seeded fake until it is stopped.
func TestSandboxGitHub(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb syncBuffer
	a := &app{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	done := make(chan int, 1)
	go func() {
		done <- a.main(ctx, []string{"sandbox", "github", "--listen", "127.0.0.1:0", "--token", "tok"})
	}()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), "credentials") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	line := out.String()
	i := strings.Index(line, "http://")
	if i < 0 {
		t.Fatalf("%q %q", line, errb.String())
	}
	base := line[i : i+strings.IndexAny(line[i:], ", \n")]
	req, _ := http.NewRequest("GET", base+"/repos/sandbox/hello/pulls/1", nil)
	req.Header.Set("Authorization", "Bearer tok")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var pr struct {
		State string               `json:"state"`
		Head  struct{ Ref string } `json:"head"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&pr)
	resp.Body.Close()
	if resp.StatusCode != 200 || pr.State != "open" || pr.Head.Ref != "add-greeting" {
		t.Fatalf("%d %+v", resp.StatusCode, pr)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if r := run(t, context.Background(), nil, "sandbox", "gitlab"); r.code == 0 || !strings.Contains(r.stderr, "usage: countersign sandbox github|gmail|mercury") {
		t.Fatalf("%+v", r)
	}
}
