package inbox

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"

	"countersign"
	"countersign/approval"
	"countersign/policy"
	"countersign/store"
)

// Catalogue is what the door knows of the connectors: which there are, and
// how each reads a policy.
type Catalogue interface {
	// ExplainPolicy reads a policy with a connector's schema: ok, unreadable
	// or broken, with a sentence, and what it does with each write; known
	// is false for no such connector.
	ExplainPolicy(connector string, raw []byte) (e policy.Explanation, known bool)
	// PolicyWidened reports whether updated is old with one "Always allow
	// this" rule added, as the connector's policy reads it
	// (policy.WidenedBy).
	PolicyWidened(connector string, old, updated []byte) bool
	// AlwaysAllow is the policy raw with the rule allowing the write when
	// names inserted first (policy.AlwaysAllowWhen); known is false for no
	// such connector.
	AlwaysAllow(connector string, raw, when []byte) (a policy.Allowance, known bool, err error)
}

// MaxPolicyWidens bounds the policies a project's policy is kept as
// widening: the last 50 "Always allow this" in a row (a task lives a day).
const MaxPolicyWidens = 50

// ProjectView is a project as its owner sees it: never its credentials.
type ProjectView struct {
	Name           string   `json:"name"`
	ProjectUUID    string   `json:"project_uuid"`
	Connector      string   `json:"connector"`
	Agents         []string `json:"agents"`
	Policy         string   `json:"policy"`
	PolicyMode     string   `json:"policy_mode"`
	PolicySentence string   `json:"policy_sentence,omitempty"`
	// PolicyExplained is what the policy does, written by the code that
	// decides (policy.Policy.Explain): the owner is told nothing else.
	PolicyExplained PolicyExplained `json:"policy_explained"`
	Credentials     bool            `json:"credentials"`
	CreatedAt       string          `json:"created_at"`
	UpdatedAt       string          `json:"updated_at"`
}

// PolicyExplained is what a project's policy does, for the owner: one
// entry per write of its connector, one sentence per rule, and the other
// keys as set.
type PolicyExplained struct {
	Writes []WriteExplained `json:"writes"`
	Rules  []string         `json:"rules"`
	Limits []string         `json:"limits"`
	// Approvers is who approves the project's confirm tasks besides the
	// owner (SPEC §13 `approvers`); absent when the owner alone does.
	Approvers *ApproversExplained `json:"approvers,omitempty" jsonschema:"the policy's approvers (SPEC §13): the accounts besides the owner who approve its confirm tasks and the threshold; absent when the owner alone approves"`
}

// ApproversExplained is a policy's `approvers`: the other accounts, how
// many distinct accounts (the owner counting as one) must approve, and
// that in one sentence.
type ApproversExplained struct {
	Accounts  []string `json:"accounts"`
	Threshold int      `json:"threshold"`
	Text      string   `json:"text"`
}

// WriteExplained is what the policy does with one write: Always when one
// outcome is all there is, else Cases in order (the first that matches
// decides) and Otherwise; Text says it all in one line.
type WriteExplained struct {
	Op        string        `json:"op"`
	Noun      string        `json:"noun"`
	Always    string        `json:"always,omitempty"` // allow, ask or refuse
	Cases     []CaseExplain `json:"cases"`
	Otherwise string        `json:"otherwise,omitempty"`
	Text      string        `json:"text"`
}

// CaseExplain is one step of a write's plan: when it decides, what, and
// where it comes from ("rule 2", "max_payment_usd").
type CaseExplain struct {
	When    string `json:"when"`
	Outcome string `json:"outcome"`
	Because string `json:"because"`
}

func explained(e policy.Explanation) PolicyExplained {
	out := PolicyExplained{Writes: []WriteExplained{}, Rules: append([]string{}, e.Rules...), Limits: append([]string{}, e.Limits...)}
	word := func(o policy.Outcome) string {
		if o == 0 {
			return ""
		}
		return o.String()
	}
	if a := e.Approvers; a != nil {
		out.Approvers = &ApproversExplained{Accounts: append([]string{}, a.Accounts...), Threshold: a.Threshold, Text: a.Text}
	}
	for _, w := range e.Writes {
		v := WriteExplained{Op: w.Op, Noun: w.Noun, Always: word(w.Always), Cases: []CaseExplain{}, Otherwise: word(w.Otherwise), Text: w.Text}
		for _, c := range w.Cases {
			v.Cases = append(v.Cases, CaseExplain{When: c.When, Outcome: c.Outcome.String(), Because: c.Because})
		}
		out.Writes = append(out.Writes, v)
	}
	return out
}

func (s *Service) projectView(p store.Project) ProjectView {
	e, _ := s.catalogue.ExplainPolicy(p.Connector, p.Policy)
	agents := p.Agents
	if agents == nil {
		agents = []string{}
	}
	return ProjectView{Name: p.Name, ProjectUUID: p.UUID, Connector: p.Connector, Agents: agents,
		Policy: string(p.Policy), PolicyMode: string(e.Mode), PolicySentence: e.Sentence, PolicyExplained: explained(e), Credentials: p.Creds != nil,
		CreatedAt: p.CreatedAt.Format(countersign.TimeFormat), UpdatedAt: p.UpdatedAt.Format(countersign.TimeFormat)}
}

// Projects lists the owner's projects.
func (s *Service) Projects(ctx context.Context, sess Session) ([]ProjectView, error) {
	out := []ProjectView{}
	err := s.store.Tx(ctx, func(tx doorTx) error {
		ps, err := tx.Projects(ctx, sess.AccountID)
		for _, p := range ps {
			out = append(out, s.projectView(p))
		}
		return err
	})
	return out, storeErr(err)
}

// projectText is the JSON text an owner signs to set a project.
type projectText struct {
	Connector   string          `json:"connector"`
	Policy      json.RawMessage `json:"policy"`
	Credentials json.RawMessage `json:"credentials"`
	Agents      []string        `json:"agents"`
}

// parseProjectText reads the project text an owner signs: exactly
// {connector, policy, credentials?, agents}, the policy a JSON object of at
// most 64 KiB, agents NEAR account ids.
func parseProjectText(text string) (projectText, error) {
	var p projectText
	refused := countersign.Errorf(countersign.InvalidRequest, "the project text is not {connector, policy, credentials?, agents}")
	// The service's one rule for JSON bodies, down into the policy and the
	// credentials: a member named twice, ignoring case, is refused here.
	if err := countersign.DecodeStrict([]byte(text), &p); err != nil {
		var je *countersign.JSONError
		if errors.As(err, &je) && (je.Problem == countersign.JSONRepeated || je.Problem == countersign.JSONOtherCase) {
			return p, countersign.Errorf(countersign.InvalidRequest, "%s", je.Sentence("the project text"))
		}
		return p, refused
	}
	if len(p.Policy) == 0 || p.Policy[0] != '{' {
		return p, countersign.Errorf(countersign.InvalidRequest, "the project's policy must be a JSON object")
	}
	if len(p.Policy) > countersign.MaxPolicyBytes {
		return p, countersign.Errorf(countersign.InvalidRequest, "the policy is larger than 64 KiB")
	}
	for _, a := range p.Agents {
		if approval.ValidateAccountID(a) != nil {
			return p, countersign.Errorf(countersign.InvalidRequest, "agents are NEAR account ids")
		}
	}
	return p, nil
}

// PutProject sets a project from the text the owner confirmed ("set the
// project {name} to {sha256hex(text)}"). The policy is kept as the exact
// bytes of its member; credentials are sealed at once and never returned. A
// text without "credentials" keeps the project's credentials; "credentials":
// null removes them.
func (s *Service) PutProject(ctx context.Context, sess Session, name, text string, c Confirmation) (ProjectView, error) {
	if !countersign.ValidProjectName(name) {
		return ProjectView{}, countersign.Errorf(countersign.InvalidRequest, "a project name is 1–64 of a-z 0-9 . _ -, beginning with a letter or digit")
	}
	if len(text) > countersign.MaxPolicyBytes+64<<10 {
		return ProjectView{}, countersign.Errorf(countersign.InvalidRequest, "the project text is too large")
	}
	p, err := parseProjectText(text)
	if err != nil {
		return ProjectView{}, err
	}
	explainedNew, known := s.catalogue.ExplainPolicy(p.Connector, p.Policy)
	if !known {
		return ProjectView{}, countersign.Errorf(countersign.InvalidRequest, "there is no such connector (GET /connectors lists them)")
	}
	if a := explainedNew.Approvers; a != nil && slices.Contains(a.Accounts, sess.AccountID) {
		return ProjectView{}, countersign.Errorf(countersign.InvalidRequest, "the policy's `approvers` names you, the owner, who approves already: list the other accounts")
	}
	var out ProjectView
	err = s.confirmed(ctx, sess.AccountID, approval.ActionSetProject(name, text), c, func(tx doorTx, _ approval.PublicKey) error {
		// One change of the owner's projects at a time: two creations of
		// one name must agree on its uuid, which the credentials are
		// sealed to.
		if err := tx.LockOwner(ctx, sess.AccountID); err != nil {
			return err
		}
		now := s.clock()
		proj := store.Project{Owner: sess.AccountID, Name: name, UUID: countersign.NewProjectUUID(), Connector: p.Connector,
			Policy: []byte(p.Policy), Agents: p.Agents, CreatedAt: now, UpdatedAt: now}
		old, err := tx.Project(ctx, sess.AccountID, name)
		switch {
		case err == nil:
			proj.UUID, proj.CreatedAt = old.UUID, old.CreatedAt
			if p.Credentials == nil {
				proj.CredsKeyID, proj.Creds = old.CredsKeyID, old.Creds
			}
			proj.PolicyWidens = widens(s.catalogue, old, proj)
		case !errors.Is(err, store.ErrNotFound):
			return err
		}
		if p.Credentials != nil && !bytes.Equal(p.Credentials, []byte("null")) {
			if proj.CredsKeyID, proj.Creds, err = s.keeper.SealCredentials(proj.UUID, p.Credentials); err != nil {
				return err
			}
		}
		if err := tx.PutProject(ctx, proj); err != nil {
			return err
		}
		if old.UUID != "" {
			// An approver the new policy no longer names is taken off the
			// project's waiting tasks, with its approvals, at once.
			if err := s.dropApprovers(ctx, tx, old, approversOf(s.catalogue, old), approversOf(s.catalogue, proj)); err != nil {
				return err
			}
		}
		saved, err := tx.Project(ctx, sess.AccountID, name)
		out = s.projectView(saved)
		return err
	})
	return out, err
}

// widens is what the policy of updated, replacing old, only widens: old's
// list when the policy is the same; old's policy and its list when the new
// one is old's with one "Always allow this" rule (SPEC §13: a task opened
// under old and approved is still the owner's yes, not void); none after
// any other change.
func widens(c Catalogue, old, updated store.Project) []string {
	switch {
	case old.Connector != updated.Connector:
		return nil
	case bytes.Equal(old.Policy, updated.Policy):
		return old.PolicyWidens
	case c.PolicyWidened(updated.Connector, old.Policy, updated.Policy):
		sum := sha256.Sum256(old.Policy)
		out := append([]string{hex.EncodeToString(sum[:])}, old.PolicyWidens...)
		return out[:min(len(out), MaxPolicyWidens)]
	}
	return nil
}

// AllowRequest is the body of POST /inbox/projects/{name}/allow: the
// `when` of the rule "Always allow this" adds, naming the write of a task
// the owner's device opened and its values (SPEC §13), e.g.
// {"op": "pay_invoice", "max_usd": 120, "methods": ["ach"], "payee":
// "saved", "recipients": ["…"]}.
type AllowRequest struct {
	When json.RawMessage `json:"when"`
}

// AllowProposal is what "Always allow this" would set the project to: the
// project text to confirm ("set the project {name} to {sha256hex(project)}")
// and PUT as it is, the policy in it, the rule inserted first and its
// sentence, and whether the write was taken out of `confirm` (the rules
// then keep asking about every other such write).
type AllowProposal struct {
	Project  string `json:"project"`
	Policy   string `json:"policy"`
	Rule     string `json:"rule"`
	Sentence string `json:"sentence"`
	Moved    bool   `json:"moved"`
}

// ProposeAllow answers what the project's text becomes with the "Always
// allow this" rule req names inserted first. It changes nothing: the owner
// confirms the text it answers with PutProject, and a project put so is
// kept as widening its policy before (a task approved under it is carried
// out, not void). It never holds or returns credentials: the text has no
// "credentials" member, which keeps them.
func (s *Service) ProposeAllow(ctx context.Context, sess Session, name string, req AllowRequest) (AllowProposal, error) {
	if !countersign.ValidProjectName(name) {
		return AllowProposal{}, countersign.Errorf(countersign.InvalidRequest, "no such project")
	}
	if len(req.When) == 0 || req.When[0] != '{' {
		return AllowProposal{}, countersign.Errorf(countersign.InvalidRequest, "`when` is the JSON object of the rule's conditions")
	}
	var p store.Project
	err := s.store.Read(ctx, func(tx doorTx) (err error) {
		p, err = tx.Project(ctx, sess.AccountID, name)
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return AllowProposal{}, countersign.Errorf(countersign.InvalidRequest, "no such project")
	}
	if err != nil {
		return AllowProposal{}, storeErr(err)
	}
	a, known, err := s.catalogue.AlwaysAllow(p.Connector, p.Policy, req.When)
	if !known {
		return AllowProposal{}, countersign.Errorf(countersign.InvalidRequest, "the project's connector is not served here")
	}
	if err != nil {
		return AllowProposal{}, countersign.Errorf(countersign.InvalidRequest, "%s", err.Error())
	}
	text, err := ProjectText(p.Connector, a.Policy, p.Agents)
	if err != nil {
		return AllowProposal{}, err
	}
	return AllowProposal{Project: text, Policy: string(a.Policy), Rule: string(a.Rule), Sentence: a.Sentence, Moved: a.Moved}, nil
}

// ProjectText is the project text of a connector, a policy and the agents
// it is granted to, without credentials (a project put with it keeps its
// own): {"connector":…,"policy":…,"agents":[…]}.
func ProjectText(connector string, policyText []byte, agents []string) (string, error) {
	if agents == nil {
		agents = []string{}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	err := enc.Encode(struct {
		Connector string          `json:"connector"`
		Policy    json.RawMessage `json:"policy"`
		Agents    []string        `json:"agents"`
	}{connector, json.RawMessage(policyText), agents})
	return strings.TrimSuffix(b.String(), "\n"), err
}

// DeleteProject removes a project with the owner's confirmation ("remove
// the project {name}").
func (s *Service) DeleteProject(ctx context.Context, sess Session, name string, c Confirmation) error {
	if !countersign.ValidProjectName(name) {
		return countersign.Errorf(countersign.InvalidRequest, "no such project")
	}
	err := s.mustExist(ctx, "no such project", func(tx doorTx) error {
		_, err := tx.Project(ctx, sess.AccountID, name)
		return err
	})
	if err != nil {
		return err
	}
	return s.confirmed(ctx, sess.AccountID, approval.ActionRemoveProject(name), c, func(tx doorTx, _ approval.PublicKey) error {
		old, err := tx.Project(ctx, sess.AccountID, name)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		} else if err != nil {
			return err
		}
		// Its waiting tasks will never run (void): its approvers are
		// taken off them at once.
		if err := s.dropApprovers(ctx, tx, old, approversOf(s.catalogue, old), nil); err != nil {
			return err
		}
		_, err = tx.DeleteProject(ctx, sess.AccountID, name)
		return err
	})
}

// approversOf lists the accounts besides the owner p's policy names as
// approvers.
func approversOf(c Catalogue, p store.Project) []string {
	e, _ := c.ExplainPolicy(p.Connector, p.Policy)
	if e.Approvers == nil {
		return nil
	}
	return e.Approvers.Accounts
}

// dropApprovers takes each account of before that after does not name off
// the waiting tasks of project p (store.Approvals.DropApprover), and tells
// everyone who still sees such a task that its approvals changed.
func (s *Service) dropApprovers(ctx context.Context, tx store.Approvals, p store.Project, before, after []string) error {
	touched := map[string]bool{}
	for _, acc := range before {
		if slices.Contains(after, acc) {
			continue
		}
		ids, err := tx.DropApprover(ctx, p.UUID, acc)
		if err != nil {
			return err
		}
		for _, id := range ids {
			touched[id] = true
		}
		if len(ids) > 0 {
			s.log.Info("approver taken off waiting tasks", "owner", p.Owner, "project", p.Name, "approver", acc, "tasks", len(ids))
		}
	}
	for _, id := range slices.Sorted(maps.Keys(touched)) {
		if err := tx.NotifyTask(ctx, id, countersign.StateOpen); err != nil {
			return err
		}
	}
	return nil
}

// MuteView is one of the owner's mutes.
type MuteView struct {
	SubjectIs string `json:"subject_is"`
	Subject   string `json:"subject"`
	CreatedAt string `json:"created_at"`
}

func checkSubject(subjectIs, subject string) error {
	switch {
	case subjectIs == "agent" && approval.ValidateAccountID(subject) == nil:
	case subjectIs == "project" && countersign.ValidProjectName(subject):
	default:
		return countersign.Errorf(countersign.InvalidRequest, "subject_is is agent (a NEAR account id) or project (a project name)")
	}
	return nil
}

// Mute silences an agent or a project: its next tasks are refused at
// opening (muted); with deleteWaiting its waiting tasks are cancelled now.
// It returns how many were.
func (s *Service) Mute(ctx context.Context, sess Session, subjectIs, subject string, deleteWaiting bool) (int, error) {
	if err := checkSubject(subjectIs, subject); err != nil {
		return 0, err
	}
	n := 0
	err := s.store.Tx(ctx, func(tx doorTx) error {
		now := s.clock()
		if err := tx.PutMute(ctx, store.Mute{Owner: sess.AccountID, SubjectIs: subjectIs, Subject: subject, CreatedAt: now}); err != nil {
			return err
		}
		if !deleteWaiting {
			return nil
		}
		var err error
		if subjectIs == "agent" {
			n, err = cancelWaiting(ctx, tx, sess.AccountID, subject, "", now)
		} else {
			n, err = cancelWaiting(ctx, tx, sess.AccountID, "", subject, now)
		}
		return err
	})
	return n, storeErr(err)
}

// Mutes lists the owner's mutes.
func (s *Service) Mutes(ctx context.Context, sess Session) ([]MuteView, error) {
	out := []MuteView{}
	err := s.store.Tx(ctx, func(tx doorTx) error {
		ms, err := tx.Mutes(ctx, sess.AccountID)
		for _, m := range ms {
			out = append(out, MuteView{SubjectIs: m.SubjectIs, Subject: m.Subject, CreatedAt: m.CreatedAt.Format(countersign.TimeFormat)})
		}
		return err
	})
	return out, storeErr(err)
}

// Unmute lifts a mute; it returns how many were lifted (0 or 1).
func (s *Service) Unmute(ctx context.Context, sess Session, subjectIs, subject string) (int, error) {
	if err := checkSubject(subjectIs, subject); err != nil {
		return 0, err
	}
	n := 0
	err := s.store.Tx(ctx, func(tx doorTx) error {
		ok, err := tx.DeleteMute(ctx, sess.AccountID, subjectIs, subject)
		if ok {
			n = 1
		}
		return err
	})
	return n, storeErr(err)
}
