package approval

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"

	"countersign"
)

// Limits of a batch approval (SPEC §12).
const (
	// MinBatchTasks and MaxBatchTasks bound the tasks one batch approves.
	MinBatchTasks = 2
	MaxBatchTasks = 10
	// MaxBatchSentenceBytes bounds the batch sentence, in bytes: a longer
	// batch is split by the client.
	MaxBatchSentenceBytes = 1000
)

const (
	batchTasksOf   = " tasks of "
	batchSeparator = "; "
	batchLinesPart = ". Tasks "
)

// BatchLine is one task of a batch as the sentence's hash covers it: the
// line "{id} {task hash} {supply hash}\n".
type BatchLine struct {
	ID         string `json:"id"`
	TaskHash   string `json:"task_hash"`
	SupplyHash string `json:"supply_hash"`
}

// LinesHash is the lowercase hex SHA-256 of the lines
// "{id} {task hash} {supply hash}\n" of the tasks, in the order given.
func LinesHash(lines []BatchLine) string {
	h := sha256.New()
	for _, l := range lines {
		h.Write([]byte(l.ID + " " + l.TaskHash + " " + l.SupplyHash + "\n"))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// BatchApproval is the batch approval sentence (SPEC §7): one
// signature over 2–10 confirm tasks of one project, naming each task's
// summary, in the order of the tasks:
//
//	Approve in Countersign as {account}: {n} tasks of {project}: {summary 1}; {summary 2}; …. Tasks {lines hash}. At {time}.
//
// where the lines hash is LinesHash of the tasks. The sentence is at most
// MaxBatchSentenceBytes.
type BatchApproval struct {
	Account   string
	Project   string // the project's name
	Tasks     []BatchLine
	Summaries []string // Summaries[i] is the display.summary of Tasks[i]
	At        time.Time
}

// ErrBatchTooLong is wrapped by the refusal of a batch whose sentence is
// longer than MaxBatchSentenceBytes; the client splits such a batch.
var ErrBatchTooLong = errors.New("the batch sentence is longer than 1,000 bytes")

// Sentence returns the exact text to sign, after checking every part: an
// account, a project name, 2–10 tasks with distinct ids and hashes, one
// summary per task (each a summary: one line of shown text, 1–200
// characters) and a time; the whole at most MaxBatchSentenceBytes (else
// the refusal wraps ErrBatchTooLong).
func (b BatchApproval) Sentence() (string, error) {
	if err := ValidateAccountID(b.Account); err != nil {
		return "", err
	}
	if !countersign.ValidProjectName(b.Project) {
		return "", refuse(Malformed, "the project name is not 1–64 of a-z, 0-9, '.', '_' and '-'")
	}
	n := len(b.Tasks)
	if n < MinBatchTasks || n > MaxBatchTasks {
		return "", refuse(Malformed, "a batch approves 2 to 10 tasks")
	}
	if len(b.Summaries) != n {
		return "", refuse(Malformed, "a batch names one summary per task")
	}
	seen := make(map[string]bool, n)
	for _, l := range b.Tasks {
		if !countersign.ValidTaskID(l.ID) {
			return "", refuse(Malformed, "a task id is not 1–80 of a-z, 0-9 and -")
		}
		if seen[l.ID] {
			return "", refuse(Malformed, "a batch names a task twice")
		}
		seen[l.ID] = true
		if !isHash(l.TaskHash) || !isHash(l.SupplyHash) {
			return "", refuse(Malformed, "a hash is not 64 lowercase hex characters")
		}
	}
	for _, s := range b.Summaries {
		if s == "" {
			return "", refuse(Malformed, "every task of a batch has a summary")
		}
		if err := countersign.ValidateSummary(s); err != nil {
			return "", refuse(Malformed, countersign.ErrorMessage(err))
		}
	}
	t, err := FormatTime(b.At)
	if err != nil {
		return "", err
	}
	s := approvePrefix + b.Account + accountEnd + strconv.Itoa(n) + batchTasksOf + b.Project + accountEnd +
		strings.Join(b.Summaries, batchSeparator) + batchLinesPart + LinesHash(b.Tasks) + atPart + t + sentenceEnd
	if len(s) > MaxBatchSentenceBytes {
		return "", refuseCause(Malformed, "the batch sentence is "+strconv.Itoa(len(s))+" bytes; at most 1,000 are signed at once: split the batch", ErrBatchTooLong)
	}
	return s, nil
}

// ParsedBatch is what a batch sentence says on its own. The summaries are
// one text (Listed): a summary may itself hold "; ", so only the list a
// caller expects can be checked against it (Matches).
type ParsedBatch struct {
	Account   string
	Count     int
	Project   string
	Listed    string // the summaries joined by "; "
	LinesHash string
	At        time.Time
}

// Matches reports whether the parsed sentence is the one b builds.
func (p ParsedBatch) Matches(b BatchApproval) bool {
	s, err := b.Sentence()
	if err != nil {
		return false
	}
	again, err := p.sentence()
	return err == nil && again == s
}

func (p ParsedBatch) sentence() (string, error) {
	t, err := FormatTime(p.At)
	if err != nil {
		return "", err
	}
	return approvePrefix + p.Account + accountEnd + strconv.Itoa(p.Count) + batchTasksOf + p.Project + accountEnd +
		p.Listed + batchLinesPart + p.LinesHash + atPart + t + sentenceEnd, nil
}

// ParseBatchApproval parses a batch sentence strictly: each part of the
// form BatchApproval.Sentence writes, 2–10 tasks, at most
// MaxBatchSentenceBytes, the summaries' text one line of shown text.
func ParseBatchApproval(text string) (ParsedBatch, error) {
	bad := refuse(Malformed, "the text is not a batch approval sentence")
	if len(text) > MaxBatchSentenceBytes {
		return ParsedBatch{}, bad
	}
	rest, ok := strings.CutPrefix(text, approvePrefix)
	if !ok {
		return ParsedBatch{}, bad
	}
	account, rest, ok := strings.Cut(rest, accountEnd)
	if !ok {
		return ParsedBatch{}, bad
	}
	count, rest, ok := strings.Cut(rest, batchTasksOf)
	if !ok || len(count) == 0 || len(count) > 2 || count[0] == '0' || strings.Trim(count, "0123456789") != "" {
		return ParsedBatch{}, bad
	}
	n, _ := strconv.Atoi(count)
	// A project name holds no ':', so its end is the first ": ".
	project, rest, ok := strings.Cut(rest, accountEnd)
	if !ok {
		return ParsedBatch{}, bad
	}
	// After the summaries come a hash and a time, neither of which holds
	// ". Tasks ": its last one ends them.
	i := strings.LastIndex(rest, batchLinesPart)
	if i <= 0 {
		return ParsedBatch{}, bad
	}
	listed, rest := rest[:i], rest[i+len(batchLinesPart):]
	hash, rest, ok := strings.Cut(rest, atPart)
	if !ok {
		return ParsedBatch{}, bad
	}
	when, ok := strings.CutSuffix(rest, sentenceEnd)
	if !ok {
		return ParsedBatch{}, bad
	}
	at, err := ParseTime(when)
	if err != nil {
		return ParsedBatch{}, err
	}
	if err := ValidateAccountID(account); err != nil {
		return ParsedBatch{}, err
	}
	switch {
	case n < MinBatchTasks || n > MaxBatchTasks,
		!countersign.ValidProjectName(project),
		!isHash(hash),
		// n summaries joined hold at least n-1 separators.
		strings.Count(listed, batchSeparator) < n-1,
		countersign.ValidateShownLine(listed, MaxBatchSentenceBytes) != nil:
		return ParsedBatch{}, bad
	}
	p := ParsedBatch{Account: account, Count: n, Project: project, Listed: listed, LinesHash: hash, At: at}
	if again, err := p.sentence(); err != nil || again != text {
		return ParsedBatch{}, bad
	}
	return p, nil
}

// BatchPlan splits tasks of one project, in order, into the batches a
// client sends: consecutive runs of at most MaxBatchTasks whose sentence,
// signed by account at at, fits MaxBatchSentenceBytes. A task left alone
// (a batch needs two) is a group of one, to approve with the single
// sentence. It returns the groups as index ranges [from, to).
func BatchPlan(account, project string, tasks []BatchLine, summaries []string, at time.Time) ([][2]int, error) {
	if len(summaries) != len(tasks) {
		return nil, refuse(Malformed, "a batch names one summary per task")
	}
	var out [][2]int
	for from := 0; from < len(tasks); {
		to := from + 1
		for to < len(tasks) && to-from < MaxBatchTasks {
			_, err := BatchApproval{Account: account, Project: project, Tasks: tasks[from : to+1], Summaries: summaries[from : to+1], At: at}.Sentence()
			if errors.Is(err, ErrBatchTooLong) {
				break
			}
			if err != nil {
				return nil, err
			}
			to++
		}
		out = append(out, [2]int{from, to})
		from = to
	}
	return out, nil
}
