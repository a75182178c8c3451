package guest

import (
	"context"
	"encoding/json"

	"countersign/connectors/wasm/abi"
)

// Request is an https request to one of the connector's hosts.
type Request struct {
	Method string
	URL    string // https://host[:port]/path?query, the host one of Connector.Hosts
	Header map[string][]string
	Body   []byte
}

// Response is the host's answer.
type Response struct {
	Status int
	Header map[string][]string
	Body   []byte
}

// HTTPError is a request the host refused before it left, or that got no
// answer. Its Code and Message are the refusal the agent may be given; Sent
// says whether the request may have reached the host (a write may have
// happened).
type HTTPError struct {
	Code    string
	Message string
	Sent    bool
}

func (e *HTTPError) Error() string { return e.Code + ": " + e.Message }

// Err is the refusal as a *countersign.Error, to return as a call's.
func (e *HTTPError) Err() error { return (&abi.Error{Code: e.Code, Message: e.Message}).Err() }

// Fetch makes one https request through the host: only to the hosts the
// connector declares, through the service's egress guard, with the
// project's credentials attached by the host as the connector declares
// (the module never sees them).
func Fetch(ctx context.Context, r Request) (Response, error) {
	b, err := json.Marshal(abi.HTTPRequest{Method: r.Method, URL: r.URL, Header: r.Header, Body: r.Body})
	if err != nil {
		return Response{}, err
	}
	out, err := callHost(abi.ImportHTTP, b)
	if err != nil {
		return Response{}, err
	}
	var resp abi.HTTPResponse
	if err := json.Unmarshal(out, &resp); err != nil {
		return Response{}, errNoHost("the host's answer does not read", err)
	}
	if resp.Error != nil {
		return Response{}, &HTTPError{Code: resp.Error.Code, Message: resp.Error.Message, Sent: resp.Sent}
	}
	return Response{Status: resp.Status, Header: resp.Header, Body: resp.Body}, nil
}
