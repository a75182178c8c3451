// Package todotest is a small to-do API, the upstream of the to-do
// example connector (connectors/wasm/examples/todo), for its tests: JSON
// over HTTP, every request needing the bearer token it was made with, and
// a record of the requests it saw.
//
//	GET    /v1/todos        200 {"todos": [{"id", "title", "done"}…]}
//	POST   /v1/todos        201 {"id", "title", "done"}   body {"title"}
//	PATCH  /v1/todos/{id}   200 {"id", "title", "done"}   body {"done"}
//	DELETE /v1/todos/{id}   204
//
// Refusals are {"error": "…"}: 401 without the token, 404 for an unknown
// id, 400 for a body that does not read, 405 for another method.
package todotest

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// Todo is one to-do.
type Todo struct {
	ID    int    `json:"id"`
	Title string `json:"title"`
	Done  bool   `json:"done"`
}

// Request is a request the fake saw.
type Request struct {
	Method, Path, Query, Authorization string
	Body                               string
}

// Fake is the to-do API.
type Fake struct {
	// Token is the bearer token every request must carry.
	Token string

	mu       sync.Mutex
	todos    []Todo
	next     int
	requests []Request
}

// New is a fake with token and no to-dos.
func New(token string) *Fake { return &Fake{Token: token, next: 1} }

// Todos lists the to-dos.
func (f *Fake) Todos() []Todo {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Todo(nil), f.todos...)
}

// Requests lists the requests seen, in order.
func (f *Fake) Requests() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Request(nil), f.requests...)
}

// Add adds a to-do, as a seed.
func (f *Fake) Add(title string) Todo {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := Todo{ID: f.next, Title: title}
	f.next++
	f.todos = append(f.todos, t)
	return t
}

func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if v != nil {
		_ = json.NewEncoder(w).Encode(v)
	}
}

func refuse(w http.ResponseWriter, status int, msg string) {
	reply(w, status, map[string]string{"error": msg})
}

// ServeHTTP serves the API.
func (f *Fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<10))
	f.mu.Lock()
	f.requests = append(f.requests, Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery,
		Authorization: r.Header.Get("Authorization"), Body: string(body)})
	f.mu.Unlock()
	if r.Header.Get("Authorization") != "Bearer "+f.Token {
		refuse(w, http.StatusUnauthorized, "bad credentials")
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/v1/todos")
	switch {
	case !ok:
		refuse(w, http.StatusNotFound, "not found")
	case rest == "" && r.Method == http.MethodGet:
		reply(w, http.StatusOK, map[string]any{"todos": f.Todos()})
	case rest == "" && r.Method == http.MethodPost:
		var in struct {
			Title string `json:"title"`
		}
		if json.Unmarshal(body, &in) != nil || strings.TrimSpace(in.Title) == "" {
			refuse(w, http.StatusBadRequest, "a to-do needs a title")
			return
		}
		reply(w, http.StatusCreated, f.Add(in.Title))
	case strings.HasPrefix(rest, "/"):
		id, err := strconv.Atoi(rest[1:])
		if err != nil {
			refuse(w, http.StatusNotFound, "not found")
			return
		}
		f.item(w, r, id, body)
	default:
		refuse(w, http.StatusMethodNotAllowed, "method not allowed")
	}
}

func (f *Fake) item(w http.ResponseWriter, r *http.Request, id int, body []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	i := -1
	for j, t := range f.todos {
		if t.ID == id {
			i = j
		}
	}
	if i < 0 {
		refuse(w, http.StatusNotFound, "no such to-do")
		return
	}
	switch r.Method {
	case http.MethodPatch:
		var in struct {
			Done *bool `json:"done"`
		}
		if json.Unmarshal(body, &in) != nil || in.Done == nil {
			refuse(w, http.StatusBadRequest, "a change needs done")
			return
		}
		f.todos[i].Done = *in.Done
		reply(w, http.StatusOK, f.todos[i])
	case http.MethodDelete:
		f.todos = append(f.todos[:i], f.todos[i+1:]...)
		reply(w, http.StatusNoContent, nil)
	default:
		refuse(w, http.StatusMethodNotAllowed, "method not allowed")
	}
}
