package github

import (
	"path"
	"strings"
)

// Match reports whether name matches the glob pattern: segments are cut at
// "/", "*" and "?" and [classes] match within one segment (path.Match),
// and a segment "**" matches any number of segments, none included.
func Match(pattern, name string) bool {
	return matchSegs(strings.Split(pattern, "/"), strings.Split(name, "/"))
}

func matchSegs(p, n []string) bool {
	for len(p) > 0 {
		if p[0] == "**" {
			for i := 0; i <= len(n); i++ {
				if matchSegs(p[1:], n[i:]) {
					return true
				}
			}
			return false
		}
		if len(n) == 0 {
			return false
		}
		if ok, err := path.Match(p[0], n[0]); err != nil || !ok {
			return false
		}
		p, n = p[1:], n[1:]
	}
	return len(n) == 0
}

// matchAny reports whether name matches one of patterns; fold compares
// ignoring case (repository names).
func matchAny(patterns []string, name string, fold bool) bool {
	if fold {
		name = strings.ToLower(name)
	}
	for _, p := range patterns {
		if fold {
			p = strings.ToLower(p)
		}
		if Match(p, name) {
			return true
		}
	}
	return false
}
