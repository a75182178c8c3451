package github

import (
	"strings"
	"unicode/utf8"

	"countersign"
)

// validRef reports whether name is a valid branch or tag name by the rules
// of `git check-ref-format --allow-onelevel`, which GitHub keeps too:
//   - it is not empty, and at most 250 bytes (the schema's bound);
//   - it does not begin or end with "/", and has no "//": no empty
//     component;
//   - no "/"-separated component begins with "." (so none is "." or
//     "..") or ends with ".lock";
//   - it has no ".." anywhere;
//   - it has no ASCII control character (below 0x20, or 0x7f), space,
//     "~", "^", ":", "?", "*", "[" or "\";
//   - it does not end with ".";
//   - it has no "@{", and is not "@".
//
// So a name is a run of path segments none of which is empty, "." or "..",
// and no path-normalising server or proxy can read it as another.
func validRef(name string) bool {
	if name == "" || len(name) > 250 || !utf8.ValidString(name) || name == "@" ||
		strings.Contains(name, "..") || strings.Contains(name, "@{") || strings.HasSuffix(name, ".") {
		return false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < 0x20 || c == 0x7f || strings.IndexByte(" ~^:?*[\\", c) >= 0 {
			return false
		}
	}
	for _, comp := range strings.Split(name, "/") {
		if comp == "" || comp[0] == '.' || strings.HasSuffix(comp, ".lock") {
			return false
		}
	}
	return true
}

// validBranch reports whether name is a valid branch name: validRef, and,
// as `git check-ref-format --branch` adds, it does not begin with "-" and
// is not "HEAD".
func validBranch(name string) bool {
	return validRef(name) && name[0] != '-' && name != "HEAD"
}

// validRepo reports whether full is "owner/name": an owner of 1–39
// letters, digits and inner hyphens, and a name of 1–100 letters, digits,
// ".", "_" and "-" that is not "." or "..".
func validRepo(full string) bool {
	owner, name, ok := strings.Cut(full, "/")
	return ok && validLogin(owner) && name != "." && name != ".." && len(name) <= 100 &&
		name != "" && strings.Trim(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == ""
}

// validLogin reports whether s is a GitHub account name: 1–39 letters,
// digits and hyphens, not starting with a hyphen.
func validLogin(s string) bool {
	return s != "" && len(s) <= 39 && s[0] != '-' &&
		strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-") == ""
}

// validPath reports whether p is a path within a repository: relative,
// segments neither empty, "." nor "..", no NUL or backslash.
func validPath(p string) bool {
	if p == "" || len(p) > 4096 || !utf8.ValidString(p) || strings.HasPrefix(p, "/") {
		return false
	}
	for _, s := range strings.Split(p, "/") {
		if s == "" || s == "." || s == ".." || strings.ContainsAny(s, "\x00\\") {
			return false
		}
	}
	return true
}

// Refusals of names, before GitHub is asked.
const (
	errRepo   = "`repo` is owner/name: an account name, and a repository name of letters, digits, ., _ and - that is not . or .."
	errPath   = "a path is a relative file path without empty, . or .. segments"
	errBranch = "`%s` is not a valid branch name: git's rules (check-ref-format --branch) allow no empty, . or .. component, no component starting with . or ending with .lock, no .., @{, space, control character or any of ~^:?*[\\, and no trailing / or ."
	errRef    = "`%s` is not a valid branch, tag or commit: git's rules (check-ref-format) allow no empty, . or .. component, no component starting with . or ending with .lock, no .., @{, space, control character or any of ~^:?*[\\, and no trailing / or ."
)

// The checks of names, before GitHub is asked: each refuses a name GitHub
// would not take, or which could move a request to another resource (the
// repository, every branch and ref, every path). A write's check runs
// them in the order of its members: the repository, its branches, then
// its paths. The policy's globs are matched against these names only once
// they pass.

// checkRepo refuses a repository that is not owner/name ("": none).
func checkRepo(repo string) error {
	if repo != "" && !validRepo(repo) {
		return countersign.Errorf(countersign.InvalidRequest, errRepo)
	}
	return nil
}

// checkBranch refuses the branch a member names ("": none).
func checkBranch(member, branch string) error {
	if branch != "" && !validBranch(branch) {
		return countersign.Errorf(countersign.InvalidRequest, errBranch, member)
	}
	return nil
}

// checkFrom refuses branch_create's from, a branch or a commit id.
func checkFrom(from string) error {
	if from != "" && !isSHA(from) && !validBranch(from) {
		return countersign.Errorf(countersign.InvalidRequest, errRef, "from")
	}
	return nil
}

// checkHead refuses a pull request's head: a branch, or "owner:branch" in
// another account's fork.
func checkHead(head string) error {
	if head == "" {
		return nil
	}
	owner, branch, fork := strings.Cut(head, ":")
	if !fork {
		branch = owner
	}
	if fork && !validLogin(owner) || !validBranch(branch) {
		return countersign.Errorf(countersign.InvalidRequest, errBranch, "head")
	}
	return nil
}

// checkRef refuses file_get's ref, a branch, tag or commit id.
func checkRef(ref string) error {
	if ref != "" && !isSHA(ref) && !validRef(ref) {
		return countersign.Errorf(countersign.InvalidRequest, errRef, "ref")
	}
	return nil
}

// checkPaths refuses a path that is not a relative file path.
func checkPaths(paths ...string) error {
	for _, p := range paths {
		if !validPath(p) {
			return countersign.Errorf(countersign.InvalidRequest, errPath)
		}
	}
	return nil
}

// firstError is the first of errs that is not nil.
func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func isSHA(s string) bool {
	if len(s) != 40 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !(s[i] >= '0' && s[i] <= '9' || s[i] >= 'a' && s[i] <= 'f') {
			return false
		}
	}
	return true
}
