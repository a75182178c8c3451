package mercury

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"countersign"
	"countersign/egress"
	"countersign/egress/egresstest"
)

// An id that would make an empty, . or .. segment of the path, even one
// Mercury's own answer gave, is refused before the request leaves.
func TestDotSegmentsAreRefused(t *testing.T) {
	t.Parallel()
	srv := egresstest.NewServer(t, false, http.NotFoundHandler())
	conn := &connector{cfg: Config{BaseURL: srv.URL + "/api/v1", Egress: egress.Options{AllowPrivate: true}}, http: egress.NewClient(egress.Options{AllowPrivate: true})}
	cl, err := conn.client([]byte(`{"token": "t"}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"..", ".", ""} {
		err := cl.do(context.Background(), http.MethodGet, at{"account", id, "transactions"}, nil, nil)
		if got := readRefusal(err); countersign.ErrorCode(got) != countersign.InvalidRequest || countersign.ErrorMessage(got) != "an id would make an empty, . or .. segment of Mercury's URL path" {
			t.Errorf("%q: %v", id, readRefusal(err))
		}
		var ae *apiError
		if !errors.As(err, &ae) || !ae.certain() {
			t.Errorf("%q: a request that never left is not certain: %v", id, err)
		}
	}
	if srv.Requests() != 0 {
		t.Fatalf("%d requests left", srv.Requests())
	}
}
