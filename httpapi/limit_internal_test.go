package httpapi

import (
	"strconv"
	"testing"
)

// TestLimiterMapsAreBounded: a limiter and the set of good credentials
// remember at most maxTracked keys however many they are shown, forgetting
// the least recently seen, and a key still remembered keeps its bucket.
func TestLimiterMapsAreBounded(t *testing.T) {
	t.Parallel()
	l := newLimiter(1, 1)
	if ok, _ := l.allow("kept"); !ok {
		t.Fatal("a first request was limited")
	}
	for i := 0; i < 3*maxTracked; i++ {
		l.allow(strconv.Itoa(i))
		if i%1000 == 0 {
			l.allow("kept") // seen lately: not the one forgotten
		}
	}
	if n := l.size(); n > maxTracked {
		t.Fatalf("the limiter remembers %d keys", n)
	}
	if ok, _ := l.allow("kept"); ok {
		t.Fatal("a key seen lately lost its bucket")
	}
	if ok, _ := l.allow("0"); !ok {
		t.Fatal("the least recently seen key was not the one forgotten")
	}
	c := newCredentials()
	for i := 0; i < 3*maxTracked; i++ {
		c.add(strconv.Itoa(i))
	}
	if n := c.seen.len(); n > maxTracked || !c.known(strconv.Itoa(3*maxTracked-1)) || c.known("0") {
		t.Fatalf("the good credentials hold %d keys", n)
	}
}
