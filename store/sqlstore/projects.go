package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"countersign/store"
)

// PutProject inserts a project, or updates the one the owner already has by
// that name in the same statement (so two concurrent puts of one new
// project cannot both insert), then replaces its grants. An existing project
// keeps its uuid and created_at; p.UUID is used only for a new one, and is
// ErrConflict if another project has it.
func (t *tx) PutProject(ctx context.Context, p store.Project) error {
	if err := checkProject(p); err != nil {
		return err
	}
	created := p.CreatedAt
	if created.IsZero() {
		created = p.UpdatedAt
	}
	var credsKeyID any
	var creds []byte
	if len(p.Creds) > 0 {
		credsKeyID, creds = int64(p.CredsKeyID), p.Creds
	}
	var uuid string
	err := t.q.queryRow(ctx, `INSERT INTO projects (owner, name, project_uuid, connector, policy, policy_widens,
		creds_key_id, creds, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (owner, name) DO UPDATE SET connector = excluded.connector, policy = excluded.policy,
		policy_widens = excluded.policy_widens,
		creds_key_id = excluded.creds_key_id, creds = excluded.creds, updated_at = excluded.updated_at,
		version = projects.version + 1
		RETURNING project_uuid`,
		p.Owner, p.Name, p.UUID, p.Connector, p.Policy, strings.Join(p.PolicyWidens, " "), credsKeyID, creds, created.Unix(), p.UpdatedAt.Unix()).
		Scan(&uuid)
	if err != nil {
		return fmt.Errorf("store: put project %s/%s: %w", p.Owner, p.Name, err)
	}
	if _, err := t.q.exec(ctx, "DELETE FROM project_agents WHERE project_uuid = ?", uuid); err != nil {
		return fmt.Errorf("store: replace the grants of project %s/%s: %w", p.Owner, p.Name, err)
	}
	for _, agent := range sortedAgents(p.Agents) {
		if _, err := t.q.exec(ctx, "INSERT INTO project_agents (project_uuid, agent) VALUES (?, ?)", uuid, agent); err != nil {
			return fmt.Errorf("store: grant project %s/%s to %s: %w", p.Owner, p.Name, agent, err)
		}
	}
	return nil
}

// checkProject refuses a project the table cannot hold as meant.
func checkProject(p store.Project) error {
	switch {
	case p.Owner == "" || p.Name == "" || p.UUID == "" || p.Connector == "":
		return errors.New("store: a project needs an owner, a name, a uuid and a connector")
	case len(p.Policy) == 0:
		return fmt.Errorf("store: project %s/%s has no policy", p.Owner, p.Name)
	case p.UpdatedAt.IsZero():
		return fmt.Errorf("store: project %s/%s has no update time", p.Owner, p.Name)
	case slices.Contains(p.Agents, ""):
		return fmt.Errorf("store: project %s/%s grants an agent with no name", p.Owner, p.Name)
	case slices.ContainsFunc(p.PolicyWidens, func(h string) bool { return h == "" || strings.ContainsAny(h, " \t\n") }):
		return fmt.Errorf("store: project %s/%s names a policy it widens by no hash", p.Owner, p.Name)
	}
	return nil
}

// sortedAgents returns agents sorted, each once.
func sortedAgents(agents []string) []string {
	out := slices.Clone(agents)
	slices.Sort(out)
	return slices.Compact(out)
}

const projectColumns = `owner, name, project_uuid, connector, policy, policy_widens, creds_key_id, creds, created_at, updated_at, version`

func scanProject(r row, extra ...any) (store.Project, error) {
	var p store.Project
	var credsKeyID *int64
	var created, updated int64
	var widens string
	if err := r.Scan(append([]any{&p.Owner, &p.Name, &p.UUID, &p.Connector, &p.Policy, &widens, &credsKeyID, &p.Creds,
		&created, &updated, &p.Version}, extra...)...); err != nil {
		return store.Project{}, err
	}
	if widens != "" {
		p.PolicyWidens = strings.Fields(widens)
	}
	if credsKeyID != nil {
		p.CredsKeyID = uint32(*credsKeyID)
	}
	if len(p.Creds) == 0 {
		p.Creds = nil
	}
	p.CreatedAt, p.UpdatedAt = unix(created), unix(updated)
	return p, nil
}

// projectAndAgents reads one project and its grants in one statement: a
// row per agent granted (one with no agent when none is).
const projectAndAgents = `SELECT p.owner, p.name, p.project_uuid, p.connector, p.policy, p.policy_widens, p.creds_key_id, p.creds,
	p.created_at, p.updated_at, p.version, a.agent
	FROM projects p LEFT JOIN project_agents a ON a.project_uuid = p.project_uuid WHERE `

const projectByName = "p.owner = ? AND p.name = ?"

func (t *tx) Project(ctx context.Context, owner, name string) (store.Project, error) {
	return t.projectWhere(ctx, projectByName, owner, name)
}

func (t *tx) ProjectByUUID(ctx context.Context, uuid string) (store.Project, error) {
	return t.projectWhere(ctx, "p.project_uuid = ?", uuid)
}

func (t *tx) projectWhere(ctx context.Context, where string, args ...any) (store.Project, error) {
	r, err := t.q.query(ctx, projectAndAgents+where, args...)
	if err != nil {
		return store.Project{}, err
	}
	return scanProjectAndAgents(r)
}

// scanProjectAndAgents reads a projectAndAgents query's rows, and closes
// them: ErrNotFound when there are none.
func scanProjectAndAgents(r rows) (store.Project, error) {
	defer r.Close()
	var p store.Project
	found := false
	for r.Next() {
		var agent *string
		row, err := scanProject(r, &agent)
		if err != nil {
			return store.Project{}, err
		}
		if !found {
			p, found = row, true
		}
		if agent != nil {
			p.Agents = append(p.Agents, *agent)
		}
	}
	if err := r.Err(); err != nil {
		return store.Project{}, err
	}
	if !found {
		return store.Project{}, store.ErrNotFound
	}
	// In byte order, the same on both databases, whatever the collation.
	slices.Sort(p.Agents)
	return p, nil
}

// grants runs a query of (project_uuid, agent) rows and groups the agents
// by project, each project's sorted in byte order (the same on both
// databases, whatever the PostgreSQL collation).
func (t *tx) grants(ctx context.Context, q string, args ...any) (map[string][]string, error) {
	r, err := t.q.query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	out := make(map[string][]string)
	for r.Next() {
		var uuid, agent string
		if err := r.Scan(&uuid, &agent); err != nil {
			return nil, err
		}
		out[uuid] = append(out[uuid], agent)
	}
	for _, agents := range out {
		slices.Sort(agents)
	}
	return out, r.Err()
}

func (t *tx) Projects(ctx context.Context, owner string) ([]store.Project, error) {
	r, err := t.q.query(ctx, "SELECT "+projectColumns+" FROM projects WHERE owner = ?", owner)
	if err != nil {
		return nil, err
	}
	var out []store.Project
	for r.Next() {
		p, err := scanProject(r)
		if err != nil {
			r.Close()
			return nil, err
		}
		out = append(out, p)
	}
	r.Close()
	if err := r.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, nil
	}
	slices.SortFunc(out, func(a, b store.Project) int { return strings.Compare(a.Name, b.Name) })
	grants, err := t.grants(ctx, `SELECT g.project_uuid, g.agent FROM project_agents g
		JOIN projects p ON p.project_uuid = g.project_uuid WHERE p.owner = ?`, owner)
	if err != nil {
		return nil, fmt.Errorf("store: grants of %s's projects: %w", owner, err)
	}
	for i := range out {
		out[i].Agents = grants[out[i].UUID]
	}
	return out, nil
}

func (t *tx) GrantedProjects(ctx context.Context, agent string) ([]store.Project, error) {
	r, err := t.q.query(ctx, "SELECT "+projectColumns+` FROM projects
		WHERE project_uuid IN (SELECT project_uuid FROM project_agents WHERE agent = ?)`, agent)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var out []store.Project
	for r.Next() {
		p, err := scanProject(r)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	// Sorted here, in byte order, the same on both databases.
	slices.SortFunc(out, func(a, b store.Project) int {
		if c := strings.Compare(a.Owner, b.Owner); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out, nil
}

func (t *tx) DeleteProject(ctx context.Context, owner, name string) (bool, error) {
	var uuid string
	err := t.q.queryRow(ctx, "DELETE FROM projects WHERE owner = ? AND name = ? RETURNING project_uuid", owner, name).Scan(&uuid)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("store: delete project %s/%s: %w", owner, name, err)
	}
	if _, err := t.q.exec(ctx, "DELETE FROM project_agents WHERE project_uuid = ?", uuid); err != nil {
		return false, fmt.Errorf("store: delete the grants of project %s/%s: %w", owner, name, err)
	}
	return true, nil
}

// ReserveDaily counts in one statement: the insert of a day's first write,
// or an update of the count that happens only while it is below limit. Both
// databases report the row as changed only when one of them happened, and
// both take the row's lock first, so concurrent reservations for one key
// admit at most limit in all.
func (t *tx) ReserveDaily(ctx context.Context, k store.DailyKey, limit int) (bool, error) {
	if k.Owner == "" || k.ProjectUUID == "" || k.Agent == "" || k.Day == "" || k.Kind == "" {
		return false, errors.New("store: a daily count key needs an owner, a project, an agent, a day and a kind")
	}
	if limit <= 0 {
		return false, nil
	}
	n, err := t.q.exec(ctx, `INSERT INTO daily_counts (owner, project_uuid, agent, day, kind, count)
		VALUES (?, ?, ?, ?, ?, 1)
		ON CONFLICT (owner, project_uuid, agent, day, kind)
		DO UPDATE SET count = daily_counts.count + 1 WHERE daily_counts.count < ?`,
		k.Owner, k.ProjectUUID, k.Agent, k.Day, k.Kind, int64(limit))
	if err != nil {
		return false, fmt.Errorf("store: reserve a daily %s write: %w", k.Kind, err)
	}
	return n == 1, nil
}

// ReserveSpend takes the owner's lock first, so concurrent reservations for
// one project are counted one after the other, each seeing what the others
// committed.
func (t *tx) ReserveSpend(ctx context.Context, s store.Spend, limit int64) (bool, error) {
	if s.Owner == "" || s.ProjectUUID == "" || s.Key == "" || s.Cents <= 0 {
		return false, errors.New("store: a spend needs an owner, a project, a key and a positive amount")
	}
	if err := t.LockOwner(ctx, s.Owner); err != nil {
		return false, fmt.Errorf("store: reserve a spend: %w", err)
	}
	var n int64
	if err := t.q.queryRow(ctx, "SELECT COUNT(*) FROM spend WHERE project_uuid = ? AND key = ?", s.ProjectUUID, s.Key).Scan(&n); err != nil {
		return false, fmt.Errorf("store: reserve a spend: %w", err)
	}
	if n > 0 {
		return true, nil
	}
	if limit >= 0 {
		var sum int64
		if err := t.q.queryRow(ctx, "SELECT COALESCE(SUM(cents), 0) FROM spend WHERE project_uuid = ? AND at > ?",
			s.ProjectUUID, s.Since.Unix()).Scan(&sum); err != nil {
			return false, fmt.Errorf("store: reserve a spend: %w", err)
		}
		if sum > limit || s.Cents > limit-sum {
			return false, nil
		}
	}
	if _, err := t.q.exec(ctx, "INSERT INTO spend (owner, project_uuid, key, cents, at) VALUES (?, ?, ?, ?, ?)",
		s.Owner, s.ProjectUUID, s.Key, s.Cents, s.At.Unix()); err != nil {
		return false, fmt.Errorf("store: reserve a spend: %w", err)
	}
	return true, nil
}

func (t *tx) ReleaseSpend(ctx context.Context, projectUUID, key string) error {
	if _, err := t.q.exec(ctx, "DELETE FROM spend WHERE project_uuid = ? AND key = ?", projectUUID, key); err != nil {
		return fmt.Errorf("store: release a spend: %w", err)
	}
	return nil
}
