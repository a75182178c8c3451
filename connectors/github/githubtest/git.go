package githubtest

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
)

// entry is one file of a tree snapshot: its mode and blob. The modes are
// git's: 100644 a file, 100755 an executable file, 120000 a symbolic link
// (its blob holds the target).
type entry struct {
	Mode string
	Blob string
}

// Git's file modes.
const (
	ModeFile       = "100644"
	ModeExecutable = "100755"
	ModeSymlink    = "120000"
)

// commit is a commit object.
type commit struct {
	SHA     string
	Tree    string
	Parents []string
	Message string
	Author  string
	When    string
}

// gitSHA is the object id git gives an object of kind with body.
func gitSHA(kind string, body []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "%s %d\x00", kind, len(body))
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// treeSHA computes the id of the tree a flat snapshot makes, with its
// subtrees, as git writes them.
func treeSHA(files map[string]entry) string { return writeTree(files, nil) }

// writeTree is treeSHA that also hands put every tree it makes, the
// snapshot's own and each subtree's, with its files by path within it.
func writeTree(files map[string]entry, put func(sha string, files map[string]entry)) string {
	type node struct {
		files map[string]entry
		dirs  map[string]map[string]entry
	}
	n := node{files: map[string]entry{}, dirs: map[string]map[string]entry{}}
	for p, e := range files {
		dir, rest, ok := strings.Cut(p, "/")
		if !ok {
			n.files[p] = e
			continue
		}
		if n.dirs[dir] == nil {
			n.dirs[dir] = map[string]entry{}
		}
		n.dirs[dir][rest] = e
	}
	type item struct{ name, sortKey, mode, sha string }
	var items []item
	for name, e := range n.files {
		items = append(items, item{name, name, e.Mode, e.Blob})
	}
	for name, sub := range n.dirs {
		items = append(items, item{name, name + "/", "40000", writeTree(sub, put)})
	}
	sort.Slice(items, func(i, j int) bool { return items[i].sortKey < items[j].sortKey })
	var body bytes.Buffer
	for _, it := range items {
		raw, _ := hex.DecodeString(it.sha)
		fmt.Fprintf(&body, "%s %s\x00", it.mode, it.name)
		body.Write(raw)
	}
	sha := gitSHA("tree", body.Bytes())
	if put != nil {
		put(sha, files)
	}
	return sha
}

// commitSHA is a commit's id.
func commitSHA(c commit) string {
	var b strings.Builder
	fmt.Fprintf(&b, "tree %s\n", c.Tree)
	for _, p := range c.Parents {
		fmt.Fprintf(&b, "parent %s\n", p)
	}
	fmt.Fprintf(&b, "author %s <%s@users.noreply.github.com> %s +0000\n", c.Author, c.Author, c.When)
	fmt.Fprintf(&b, "committer %s <%s@users.noreply.github.com> %s +0000\n\n%s", c.Author, c.Author, c.When, c.Message)
	return gitSHA("commit", []byte(b.String()))
}
