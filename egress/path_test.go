package egress_test

import (
	"errors"
	"net/url"
	"testing"

	"countersign/egress"
)

func TestPath(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		segs []string
		want string
	}{
		{[]string{"repos", "octocat", "hello"}, "/repos/octocat/hello"},
		{[]string{"contents", "a b", "c+d", "e&f", "g#h", "i%j", "k?l", "é", "m/n", "o;p=q"}, "/contents/a%20b/c+d/e&f/g%23h/i%25j/k%3Fl/%C3%A9/m%2Fn/o%3Bp=q"},
		{[]string{"..."}, "/..."},
		{[]string{".x", "x."}, "/.x/x."},
		{nil, ""},
	} {
		got, err := egress.Path(tt.segs...)
		if err != nil || got != tt.want {
			t.Errorf("Path(%q) = %q, %v; want %q", tt.segs, got, err, tt.want)
		}
	}
	for _, segs := range [][]string{{""}, {"."}, {".."}, {"a", "", "b"}, {"a", ".."}, {"..", "a"}} {
		if got, err := egress.Path(segs...); !errors.Is(err, egress.ErrSegment) || got != "" {
			t.Errorf("Path(%q) = %q, %v; want ErrSegment", segs, got, err)
		}
	}
}

func TestQuery(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		v    url.Values
		want string
	}{
		{url.Values{"ref": {"main"}}, "ref=main"},
		{url.Values{"ref": {"docs+notes"}}, "ref=docs%2Bnotes"},
		{url.Values{"q": {"from:dana is:unread"}, "maxResults": {"20"}}, "maxResults=20&q=from%3Adana%20is%3Aunread"},
		{url.Values{"ref": {"a&b=c#d?e%f/g"}}, "ref=a%26b%3Dc%23d%3Fe%25f%2Fg"},
		{url.Values{"ref": {"ветка~1._-"}}, "ref=%D0%B2%D0%B5%D1%82%D0%BA%D0%B0~1._-"},
		{url.Values{"a b": {"1", "2"}}, "a%20b=1&a%20b=2"},
		{url.Values{}, ""},
	} {
		got := egress.Query(tt.v)
		if got != tt.want {
			t.Errorf("Query(%v) = %q, want %q", tt.v, got, tt.want)
		}
		// What goes on the wire reads back as the values.
		back, err := url.ParseQuery(got)
		if err != nil || back.Encode() != tt.v.Encode() {
			t.Errorf("Query(%v) reads back as %v, %v", tt.v, back, err)
		}
	}
}
