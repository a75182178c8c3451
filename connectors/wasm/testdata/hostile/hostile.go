// Command hostile is a WebAssembly connector that misbehaves on purpose,
// for the host's tests: it loops forever, allocates without bound, traps,
// exits, reaches for hosts and echoes everything it can see.
//
// go generate builds hostile.wasm and its manifest; a test holds them to
// what this source builds.
package main

import (
	"context"
	"encoding/json"
	"os"
	"unsafe"

	"countersign"
	"countersign/connectors/wasm/guest"
)

//go:generate sh -c "GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -buildvcs=false -ldflags='-s -buildid=' -o hostile.wasm . && go run . hostile.wasm > manifest.json"

func init() { guest.Register(New()) }

func main() { guest.Main() }

var (
	hoard [][]byte
	seed  = make([]byte, 8)
)

const anyResult = `{"type": "object"}`

func op(name, description, schema string, limitMS int64, run func(context.Context, *guest.Call) (any, error)) guest.Operation {
	return guest.Operation{Name: name, Kind: guest.Read, Run: run, Description: description,
		Schema: json.RawMessage(schema), Result: json.RawMessage(anyResult), Limit: limitDuration(limitMS)}
}

const noArgs = `{"type": "object", "additionalProperties": false}`
const urlArgs = `{"type": "object", "properties": {"url": {"type": "string"}}, "additionalProperties": false}`

// New is the hostile connector.
func New() *guest.Connector {
	return &guest.Connector{
		Name: "hostile", Version: "1.0.0", Tasks: true,
		Hosts: []string{"allowed.example"},
		Credentials: &guest.Credentials{Members: []string{"key", "token"},
			Header: map[string]string{"Authorization": "Bearer {token}"}, Query: map[string]string{"key": "{key}"}},
		Operations: []guest.Operation{
			op("spin", "Loops forever.", noArgs, 1000, func(context.Context, *guest.Call) (any, error) {
				for {
				}
			}),
			op("hog", "Allocates memory without bound.", noArgs, 120_000, func(context.Context, *guest.Call) (any, error) {
				for {
					b := make([]byte, 1<<20)
					for i := 0; i < len(b); i += 4096 {
						b[i] = 1
					}
					hoard = append(hoard, b)
				}
			}),
			op("trap", "Writes outside its memory.", noArgs, 0, func(context.Context, *guest.Call) (any, error) {
				// 2 GiB past a live buffer: past any memory a module may have.
				p := (*byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(seed)), 1<<31))
				return map[string]any{"read": *p}, nil
			}),
			op("exit", "Exits the module.", noArgs, 0, func(context.Context, *guest.Call) (any, error) {
				os.Exit(3)
				return nil, nil
			}),
			op("boom", "Panics.", noArgs, 0, func(context.Context, *guest.Call) (any, error) {
				panic("a secret the panic must not carry")
			}),
			op("reach", "Fetches a URL.", urlArgs, 0, func(ctx context.Context, c *guest.Call) (any, error) {
				var args struct {
					URL string `json:"url"`
				}
				if err := c.Decode(&args); err != nil {
					return nil, err
				}
				resp, err := guest.Fetch(ctx, guest.Request{Method: "GET", URL: args.URL})
				if he, ok := err.(*guest.HTTPError); ok {
					return nil, he.Err()
				} else if err != nil {
					return nil, err
				}
				return map[string]any{"status": resp.Status}, nil
			}),
			op("echo", "Answers everything it can see: its call, its environment, a file, and what a URL answers.", urlArgs, 0, echo),
			{Name: "ask", Kind: guest.Write, Price: 1, Run: ask, Description: "Opens a confirm task whose answer misbehaves as `then` says.",
				Schema:   json.RawMessage(`{"type": "object", "properties": {"then": {"enum": ["trap", "spin", "reach"]}}, "required": ["then"], "additionalProperties": false}`),
				Examples: []json.RawMessage{json.RawMessage(`{"then": "trap"}`)}, Result: guest.TaskOnly},
			{Name: "act", Kind: guest.Answer, Answer: act, Limit: limitDuration(1000),
				Description: "Misbehaves as the task's state says: traps, loops, or reaches its host and then traps.",
				Result:      json.RawMessage(anyResult)},
		},
	}
}

func echo(ctx context.Context, c *guest.Call) (any, error) {
	var args struct {
		URL string `json:"url"`
	}
	if err := c.Decode(&args); err != nil {
		return nil, err
	}
	out := map[string]any{"call": c, "args": string(c.Args), "policy_hash": c.Policy.Hash(), "environ": os.Environ(), "argv": os.Args}
	for _, f := range []string{"/etc/passwd", "/proc/self/environ", "."} {
		b, err := os.ReadFile(f)
		out["file "+f] = string(b)
		if err != nil {
			out["file error "+f] = err.Error()
		}
	}
	if args.URL != "" {
		resp, err := guest.Fetch(ctx, guest.Request{Method: "GET", URL: args.URL})
		if err != nil {
			return nil, err
		}
		out["status"], out["header"], out["body"] = resp.Status, resp.Header, string(resp.Body)
	}
	return out, nil
}

func ask(ctx context.Context, c *guest.Call) (any, error) {
	var args struct {
		Then string `json:"then"`
	}
	if err := c.Decode(&args); err != nil {
		return nil, err
	}
	task, err := c.OpenTask(ctx, guest.TaskSpec{Kind: countersign.KindConfirm,
		Display:  countersign.Display{Title: "Misbehave", Summary: "The answer run misbehaves; nothing is written."},
		AnswerBy: &countersign.AnswerBy{Operation: "act", Supplies: countersign.SuppliesNone}, State: []byte(args.Then)})
	if err != nil {
		return nil, err
	}
	return guest.AwaitingOwner(task), nil
}

func act(ctx context.Context, a *guest.AnswerCall) (guest.Report, error) {
	switch string(a.State) {
	case "spin":
		for {
		}
	case "reach":
		_, _ = guest.Fetch(ctx, guest.Request{Method: "POST", URL: "https://allowed.example/"})
	}
	p := (*byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(seed)), 1<<31))
	return guest.Report{Result: map[string]any{"read": *p}}, nil
}
