package agentmcp

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"countersign"
)

// grantsDoor is a door whose grants the test sets; each call records its
// target, and answers it.
type grantsDoor struct {
	mu     sync.Mutex
	grants []countersign.Grant
}

func (d *grantsDoor) set(gs []countersign.Grant) {
	d.mu.Lock()
	d.grants = slices.Clone(gs)
	d.mu.Unlock()
}

func (d *grantsDoor) Grants(context.Context) ([]countersign.Grant, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.grants), nil
}

func (d *grantsDoor) Call(_ context.Context, owner, project, _ string, body []byte) ([]byte, error) {
	var call struct {
		Operation string `json:"operation"`
	}
	_ = json.Unmarshal(body, &call)
	return json.Marshal(map[string]any{"ok": true, "target": owner + "/" + project + "#" + call.Operation})
}

// namingCatalogue has operations whose names are awkward beside project
// names that end in _ or hold __.
var namingCatalogue = Catalogue{
	"probe": {{Name: "guess_start", Kind: "write", Schema: []byte(`{"type":"object"}`)}},
	"odd": {
		{Name: "b", Kind: "read", Schema: []byte(`{"type":"object"}`)},
		{Name: "_b", Kind: "read", Schema: []byte(`{"type":"object"}`)},
		{Name: "b__c", Kind: "read", Schema: []byte(`{"type":"object"}`)},
		{Name: "guess_start", Kind: "read", Schema: []byte(`{"type":"object"}`)},
	},
}

// adversarialGrants are three owners' projects granted to one agent: bob's
// game, and names chosen to take its tool or each other's.
var adversarialGrants = []countersign.Grant{
	{Owner: "bob.near", Project: "game", Connector: "probe"},
	{Owner: "alice.near", Project: "game.bob.near", Connector: "probe"},
	{Owner: "carol.near", Project: "game", Connector: "probe"},
	{Owner: "alice.near", Project: "game", Connector: "odd"},
	{Owner: "carol.near", Project: "a_", Connector: "odd"},
	{Owner: "carol.near", Project: "a", Connector: "odd"},
	{Owner: "bob.near", Project: "a__b", Connector: "odd"},
	{Owner: "alice.near", Project: "bob.near__game", Connector: "probe"},
	{Owner: "bob.near", Project: strings.Repeat("g", 64), Connector: "probe"},
	{Owner: strings.Repeat("b", 64), Project: strings.Repeat("g", 64), Connector: "odd"},
	{Owner: "b.near", Project: "ob.near__game", Connector: "probe"},
}

// toolTargets connects a client to s and calls each of its tools: the
// target each name reaches (owner/project#operation), by name.
func toolTargets(t *testing.T, s *Server) map[string]string {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, tl := range res.Tools {
		if slices.Contains(taskTools, tl.Name) {
			out[tl.Name] = "task"
			continue
		}
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tl.Name, Arguments: map[string]any{}})
		if err != nil || r.IsError {
			t.Fatalf("%s: %v %v", tl.Name, err, r)
		}
		var a struct {
			Target string `json:"target"`
		}
		if err := json.Unmarshal([]byte(Text(r)), &a); err != nil {
			t.Fatalf("%s: %s", tl.Name, Text(r))
		}
		if !strings.Contains(tl.Description, strings.Split(a.Target, "/")[0]) {
			t.Errorf("%s's description %q does not name the owner of %s", tl.Name, tl.Description, a.Target)
		}
		out[tl.Name] = a.Target
	}
	return out
}

// TestToolNamesUniqueAndStable grants three owners' projects, named to take
// each other's tools, in many orders and subsets: every operation of every
// granted project has a tool of its own, the task tools stay the platform's,
// and a tool's name and target never change with the other grants.
func TestToolNamesUniqueAndStable(t *testing.T) {
	t.Parallel()
	nameOf := map[string]string{}   // target → its name, across every configuration
	targetOf := map[string]string{} // name → its target
	check := func(label string, grants []countersign.Grant, got map[string]string) {
		t.Helper()
		want := 0
		for _, g := range grants {
			for _, op := range namingCatalogue[g.Connector] {
				want++
				target := g.Owner + "/" + g.Project + "#" + op.Name
				if !slices.Contains(mapsValues(got), target) {
					t.Fatalf("%s: no tool reaches %s: %v", label, target, got)
				}
			}
		}
		if len(grants) > 0 {
			want += len(taskTools)
		}
		if len(got) != want {
			t.Fatalf("%s: %d tools for %d operations and task tools: %v", label, len(got), want, got)
		}
		for name, target := range got {
			if target == "task" {
				if !slices.Contains(taskTools, name) {
					t.Fatalf("%s: %s is a task tool", label, name)
				}
				continue
			}
			if prev, ok := targetOf[name]; ok && prev != target {
				t.Fatalf("%s: %s reaches %s, and %s elsewhere", label, name, target, prev)
			}
			if prev, ok := nameOf[target]; ok && prev != name {
				t.Fatalf("%s: %s is named %s, and %s elsewhere", label, target, name, prev)
			}
			targetOf[name], nameOf[target] = target, name
		}
	}

	rng := rand.New(rand.NewPCG(1, 2))
	door := &grantsDoor{}
	live := New(Config{Door: door, Catalogue: namingCatalogue})
	for i := range 60 {
		gs := slices.Clone(adversarialGrants)
		rng.Shuffle(len(gs), func(a, b int) { gs[a], gs[b] = gs[b], gs[a] })
		if i%3 != 0 { // a subset, in that order
			gs = gs[:rng.IntN(len(gs))]
		}
		// A server of its own, and the live one whose grants come and go.
		fresh := New(Config{Door: &grantsDoor{grants: gs}, Catalogue: namingCatalogue})
		check(fmt.Sprintf("order %d", i), gs, toolTargets(t, fresh))
		door.set(gs)
		check(fmt.Sprintf("live %d", i), gs, toolTargets(t, live))
	}
	if n := nameOf["bob.near/game#guess_start"]; !strings.HasPrefix(n, "bob.near__game") {
		t.Errorf("bob.near's game's tool is %q", n)
	}
}

func mapsValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// readBack is a readable tool name's owner, project and operation, read as
// ToolName's comment says: the first __ ends the owner, the last begins
// the operation.
func readBack(name string) (owner, project, operation string, ok bool) {
	owner, rest, ok := strings.Cut(name, "__")
	if !ok {
		return "", "", "", false
	}
	i := strings.LastIndex(rest, "__")
	if i < 0 {
		return "", "", "", false
	}
	return owner, rest[:i], rest[i+2:], true
}

var mcpToolName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)

// checkToolName: the name is one MCP takes, is no task tool's, and a
// readable one (no upper case) reads back to what it names.
func checkToolName(t *testing.T, owner, project, op string) string {
	t.Helper()
	name := ToolName(owner, project, op)
	if !mcpToolName.MatchString(name) || slices.Contains(taskTools, name) {
		t.Fatalf("%q %q %q: %q", owner, project, op, name)
	}
	if strings.ToLower(name) == name {
		o, p, x, ok := readBack(name)
		if !ok || o != owner || p != project || x != op {
			t.Fatalf("%q reads back as %q %q %q, not %q %q %q", name, o, p, x, owner, project, op)
		}
	} else if !strings.Contains(name, "__H") || len(name) < 35 {
		t.Fatalf("%q %q %q: %q", owner, project, op, name)
	}
	return name
}

var opNameRule = regexp.MustCompile(`^[a-z0-9_]{1,64}$`)

func validTriple(owner, project, op string) bool {
	return countersign.ValidAccountID(owner) && countersign.ValidProjectName(project) && opNameRule.MatchString(op)
}

func TestToolName(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ owner, project, op, want string }{
		{"bob.near", "game", "guess_start", "bob.near__game__guess_start"},
		{"alice.near", "game.bob.near", "guess_start", "alice.near__game.bob.near__guess_start"},
		{"carol.near", "a_", "b", "carol.near__a___b"},
		{"carol.near", "a__b", "c", "carol.near__a__b__c"},
	} {
		if got := checkToolName(t, c.owner, c.project, c.op); got != c.want {
			t.Errorf("%s %s %s: %q, want %q", c.owner, c.project, c.op, got, c.want)
		}
	}
	// Operations that begin with _ or hold __, and names past 128
	// characters, have the hashed form.
	long := strings.Repeat("g", 64)
	for _, c := range [][3]string{{"carol.near", "a", "_b"}, {"carol.near", "a", "b__c"}, {strings.Repeat("b", 64), long, "guess_start"}, {"bob.near", long, strings.Repeat("o", 64)}} {
		n := checkToolName(t, c[0], c[1], c[2])
		if !strings.Contains(n, "__H") || len(n) > MaxToolName {
			t.Errorf("%v: %q", c, n)
		}
	}
	if a, b := ToolName("a.near", "b", "_c"), ToolName("a.near", "b_", "c"); a == b {
		t.Errorf("both %q", a)
	}
}

// TestToolNamesInjective names every owner, project and operation of a
// small alphabet that holds the separators, and finds no two alike.
func TestToolNamesInjective(t *testing.T) {
	t.Parallel()
	words := func(alphabet string, max int) []string {
		out := []string{""}
		for n, from := 0, 0; n < max; n++ {
			to := len(out)
			for _, w := range out[from:to] {
				for _, c := range alphabet {
					out = append(out, w+string(c))
				}
			}
			from = to
		}
		return out[1:]
	}
	var owners, projects, ops []string
	for _, w := range words("a_.", 5) {
		if countersign.ValidAccountID(w) {
			owners = append(owners, w)
		}
	}
	for _, w := range words("a_.", 5) {
		if countersign.ValidProjectName(w) {
			projects = append(projects, w)
		}
	}
	ops = words("a_", 4)
	seen := map[string][3]string{}
	for _, o := range owners {
		for _, p := range projects {
			for _, x := range ops {
				n := checkToolName(t, o, p, x)
				if prev, ok := seen[n]; ok {
					t.Fatalf("%q names both %v and %v", n, prev, [3]string{o, p, x})
				}
				seen[n] = [3]string{o, p, x}
			}
		}
	}
	if len(seen) < 50_000 {
		t.Fatalf("only %d names tried", len(seen))
	}
}

// FuzzToolName: two different operations of granted projects never share
// a name, and every name is one MCP takes and reads back.
func FuzzToolName(f *testing.F) {
	f.Add("bob.near", "game", "guess_start", "alice.near", "game.bob.near", "guess_start")
	f.Add("carol.near", "a_", "b", "carol.near", "a", "_b")
	f.Add("carol.near", "a__b", "c", "carol.near", "a", "b__c")
	f.Add("b.near", "ob.near__game", "guess_start", "bob.near", "game", "guess_start")
	f.Add(strings.Repeat("b", 64), strings.Repeat("g", 64), "guess_start", "bob.near", strings.Repeat("g", 64), strings.Repeat("o", 64))
	f.Fuzz(func(t *testing.T, o1, p1, x1, o2, p2, x2 string) {
		if !validTriple(o1, p1, x1) || !validTriple(o2, p2, x2) {
			return
		}
		n1, n2 := checkToolName(t, o1, p1, x1), checkToolName(t, o2, p2, x2)
		if n1 == n2 && (o1 != o2 || p1 != p2 || x1 != x2) {
			t.Fatalf("%q names both %q %q %q and %q %q %q", n1, o1, p1, x1, o2, p2, x2)
		}
	})
}
