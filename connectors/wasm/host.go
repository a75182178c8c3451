package wasm

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"countersign/argschema"
	"countersign/connectors"
	"countersign/connectors/wasm/abi"
	"countersign/egress"
	"countersign/policy"
)

// Limits of a module's run.
const (
	// MemoryLimit is the most memory one instance of a module may have.
	MemoryLimit = 64 << 20
	// DefaultInstances is how many instances may run at once by default.
	DefaultInstances = 16
	// MaxMessageBytes bounds one message from a module to the host.
	MaxMessageBytes = 16 << 20
	// MaxRequests bounds the requests (http_do) of one run.
	MaxRequests = 100
	// MaxResponseBytes bounds an answer http_do reads.
	MaxResponseBytes = 8 << 20
	// MaxRequestBodyBytes bounds a request body a module sends.
	MaxRequestBodyBytes = 8 << 20
	// describeLimit bounds the check at load that asks a module what it
	// serves.
	describeLimit = 10 * time.Second
)

const pageBytes = 64 << 10

// Options say how a host runs its modules and reaches their hosts.
type Options struct {
	// Egress is how http_do reaches hosts: the egress guard's options
	// (AllowPrivate only for serve --dev and tests).
	Egress egress.Options
	// Redirect sends the requests a module makes to one of its hosts
	// ("name" or "name:port", as the manifest writes it) to another origin
	// ("http://127.0.0.1:8443") instead, still through the guard: for
	// serve --dev and tests, whose fakes listen on loopback. The module is
	// still held to its manifest's hosts.
	Redirect map[string]string
	// Instances bounds the instances running at once (default
	// DefaultInstances); a call waits for a free one within its limit.
	Instances int
	// CacheDir, when set, keeps compiled modules there across starts.
	CacheDir string
	// Stderr, when set, receives what modules write to their standard
	// error (for connector check; the service discards it, since it may
	// quote what a run read).
	Stderr io.Writer
	// Dry makes every http_do a refusal with no request sent (connector
	// check).
	Dry bool
	// Inspect, when set, is handed each instance's whole memory once it
	// has answered, before it is freed: for tests that look for what a
	// module must never hold.
	Inspect func(memory []byte)
}

// Host runs WebAssembly connectors: one runtime, one compiled module per
// connector, one fresh instance per call.
type Host struct {
	opts    Options
	rt      wazero.Runtime
	cache   wazero.CompilationCache
	client  httpDoer
	slots   chan struct{}
	mu      sync.Mutex
	modules []*Module
}

// Module is one loaded connector.
type Module struct {
	// Dir is the connector's directory; Manifest what it declares.
	Dir      string
	Manifest abi.Manifest
	// SHA256 is the module file's hash, in hex; Build is
	// name@version+<first 12 hex of it>.
	SHA256    string
	Build     string
	Connector *connectors.Connector
	// Size is the module file's size in bytes; Compile how long compiling
	// it took.
	Size    int
	Compile time.Duration

	host     *Host
	dry      bool // http_do sends nothing (Check)
	compiled wazero.CompiledModule
	hosts    []hostPort
}

// NewHost makes a host with its runtime.
func NewHost(ctx context.Context, opts Options) (*Host, error) {
	if opts.Instances <= 0 {
		opts.Instances = DefaultInstances
	}
	h := &Host{opts: opts, slots: make(chan struct{}, opts.Instances)}
	var err error
	if opts.CacheDir != "" {
		if h.cache, err = wazero.NewCompilationCacheWithDir(opts.CacheDir); err != nil {
			return nil, fmt.Errorf("the compilation cache at %s: %w", opts.CacheDir, err)
		}
	} else {
		h.cache = wazero.NewCompilationCache()
	}
	cfg := wazero.NewRuntimeConfig().
		WithMemoryLimitPages(MemoryLimit / pageBytes).
		WithCloseOnContextDone(true).
		WithCompilationCache(h.cache)
	h.rt = wazero.NewRuntimeWithConfig(ctx, cfg)
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, h.rt); err != nil {
		return nil, err
	}
	_, err = h.rt.NewHostModuleBuilder(abi.ImportModule).
		NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(hostHTTP), []api.ValueType{api.ValueTypeI32, api.ValueTypeI32}, []api.ValueType{api.ValueTypeI32}).Export(abi.ImportHTTP).
		NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(hostPlatform), []api.ValueType{api.ValueTypeI32, api.ValueTypeI32}, []api.ValueType{api.ValueTypeI32}).Export(abi.ImportPlatform).
		NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(hostTake), []api.ValueType{api.ValueTypeI32}, nil).Export(abi.ImportTake).
		Instantiate(ctx)
	if err != nil {
		return nil, err
	}
	h.client = newClient(opts)
	return h, nil
}

// Close frees the runtime and every module.
func (h *Host) Close(ctx context.Context) error {
	err := h.rt.Close(ctx)
	if cerr := h.cache.Close(ctx); err == nil {
		err = cerr
	}
	return err
}

// Modules lists the loaded modules, in load order.
func (h *Host) Modules() []*Module {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.modules)
}

// Load loads every connector under dir: each subdirectory holds one
// manifest.json and the module it names. Entries whose names start with a
// dot are skipped; anything else that is not such a directory is refused.
// Modules compile in parallel; the first failure is returned, naming the
// directory.
func (h *Host) Load(ctx context.Context, dir string) ([]*Module, error) {
	dirs, err := connectorDirs(dir)
	if err != nil {
		return nil, err
	}
	mods := make([]*Module, len(dirs))
	errs := make([]error, len(dirs))
	work := make(chan int)
	var wg sync.WaitGroup
	for range min(len(dirs), max(1, runtimeCPUs())) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				mods[i], errs[i] = h.LoadDir(ctx, dirs[i])
			}
		}()
	}
	for i := range dirs {
		work <- i
	}
	close(work)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	seen := map[string]string{}
	for _, m := range mods {
		if d, dup := seen[m.Manifest.Name]; dup {
			return nil, fmt.Errorf("connectors %s and %s are both named %s", d, m.Dir, m.Manifest.Name)
		}
		seen[m.Manifest.Name] = m.Dir
	}
	return mods, nil
}

// LoadDir loads the connector in dir: its manifest read and checked, the
// connector it declares validated with every schema and example compiled
// as the service compiles them, the module compiled, its imports and
// exports checked, and one instance asked which operations it serves,
// which must be the manifest's.
func (h *Host) LoadDir(ctx context.Context, dir string) (*Module, error) {
	m, err := h.loadDir(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("connector %s: %w", dir, err)
	}
	h.mu.Lock()
	h.modules = append(h.modules, m)
	h.mu.Unlock()
	return m, nil
}

func (h *Host) loadDir(ctx context.Context, dir string) (*Module, error) {
	m, bin, err := declare(dir)
	if err != nil {
		return nil, err
	}
	m.host = h
	man := m.Manifest
	start := time.Now()
	if m.compiled, err = h.rt.CompileModule(experimental.WithCompilationWorkers(ctx, runtimeCPUs()), bin); err != nil {
		return nil, fmt.Errorf("the module %s does not compile: %w", man.Module, err)
	}
	m.Compile = time.Since(start)
	if err := checkInterface(m.compiled); err != nil {
		return nil, fmt.Errorf("the module %s: %w", man.Module, err)
	}
	if err := m.checkOperations(ctx); err != nil {
		return nil, fmt.Errorf("the module %s: %w", man.Module, err)
	}
	return m, nil
}

// declare reads the connector in dir without compiling its module: the
// manifest read and checked, the module's hash, the connector it declares
// validated with every schema and example compiled.
func declare(dir string) (*Module, []byte, error) {
	raw, err := readBounded(filepath.Join(dir, ManifestFile), MaxManifestBytes)
	if err != nil {
		return nil, nil, err
	}
	man, err := ParseManifest(raw)
	if err != nil {
		return nil, nil, err
	}
	bin, err := readBounded(filepath.Join(dir, man.Module), MaxModuleBytes)
	if err != nil {
		return nil, nil, err
	}
	sum := sha256.Sum256(bin)
	m := &Module{Dir: dir, Manifest: man, SHA256: hex.EncodeToString(sum[:]), Size: len(bin)}
	m.hosts, _ = parseHosts(man.Egress.Hosts)
	if m.Connector, err = m.connector(); err != nil {
		return nil, nil, err
	}
	m.Build = m.Connector.Build()
	if err := m.Connector.Validate(); err != nil {
		return nil, nil, err
	}
	if _, err := argschema.NewSet(connectors.Catalogue{m.Connector.Name: m.Connector}); err != nil {
		return nil, nil, err
	}
	return m, bin, nil
}

// Declared reads the connectors under dir (as Load finds them) without
// compiling their modules: their declarations, for commands that read
// policies and projects but run nothing. A declared connector's runs
// refuse.
func Declared(dir string) ([]*connectors.Connector, error) {
	dirs, err := connectorDirs(dir)
	if err != nil {
		return nil, err
	}
	var out []*connectors.Connector
	for _, d := range dirs {
		m, _, err := declare(d)
		if err != nil {
			return nil, fmt.Errorf("connector %s: %w", d, err)
		}
		for i := range m.Connector.Operations {
			op := &m.Connector.Operations[i]
			if op.Run != nil {
				op.Run = func(context.Context, *connectors.Call) (any, error) { return nil, errNotLoaded }
			}
			if op.Answer != nil {
				op.Answer = func(context.Context, *connectors.AnswerCall) (connectors.Report, error) {
					return connectors.Report{}, errNotLoaded
				}
			}
		}
		out = append(out, m.Connector)
	}
	return out, nil
}

var errNotLoaded = errors.New("the connector's module is declared, not loaded")

// connectorDirs lists the connectors' directories under dir.
func connectorDirs(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("connectors directory: %w", err)
	}
	var dirs []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if !e.IsDir() {
			return nil, fmt.Errorf("connectors directory: %s is not a directory of one connector (manifest.json and its module)", e.Name())
		}
		dirs = append(dirs, filepath.Join(dir, e.Name()))
	}
	sort.Strings(dirs)
	return dirs, nil
}

func readBounded(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", filepath.Base(path), limit)
	}
	return b, nil
}

// BuildOf is a module's build: name@version+<first 12 hex of its SHA-256>.
func BuildOf(name, version string, module []byte) string {
	sum := sha256.Sum256(module)
	return name + "@" + version + "+" + hex.EncodeToString(sum[:])[:hashHex]
}

// connector is the connectors.Connector the manifest declares, each
// operation served by the module.
func (m *Module) connector() (*connectors.Connector, error) {
	man := m.Manifest
	c := &connectors.Connector{Name: man.Name, Version: man.Version + "+" + m.SHA256[:hashHex], Tasks: man.Tasks, Allowed: man.Allowed}
	if len(man.PolicyKeys) > 0 {
		c.PolicyKeys = map[string]policy.KeyKind{}
		for k, kind := range man.PolicyKeys {
			c.PolicyKeys[k] = keyKinds[kind]
		}
	}
	for _, d := range man.Operations {
		op := connectors.Operation{Name: d.Name, Kind: connectors.OpKind(d.Kind), Price: d.Price, Description: d.Description,
			Schema: d.Schema, Examples: d.Examples, Result: d.Result, SuppliedText: d.SuppliedText, Limit: time.Duration(d.LimitMS) * time.Millisecond,
			InProcess: d.InProcess}
		switch op.Kind {
		case connectors.Answer:
			op.Answer = m.answerFunc(d.Name)
		case connectors.Read, connectors.Write:
			op.Run = m.runFunc(d.Name)
		}
		c.Operations = append(c.Operations, op)
	}
	return c, nil
}

// checkInterface holds a compiled module to the ABI: it imports only WASI
// preview 1 and the host's functions, and exports memory and the three
// functions with their signatures.
func checkInterface(cm wazero.CompiledModule) error {
	i32, i64 := api.ValueTypeI32, api.ValueTypeI64
	host := map[string][2][]api.ValueType{
		abi.ImportHTTP:     {{i32, i32}, {i32}},
		abi.ImportPlatform: {{i32, i32}, {i32}},
		abi.ImportTake:     {{i32}, nil},
	}
	for _, f := range cm.ImportedFunctions() {
		mod, name, _ := f.Import()
		switch mod {
		case wasi_snapshot_preview1.ModuleName:
		case abi.ImportModule:
			sig, ok := host[name]
			if !ok || !slices.Equal(f.ParamTypes(), sig[0]) || !slices.Equal(f.ResultTypes(), sig[1]) {
				return fmt.Errorf("it imports %s.%s, which the host does not offer with that signature", mod, name)
			}
		default:
			return fmt.Errorf("it imports from %q; a connector imports only from %s and %s", mod, wasi_snapshot_preview1.ModuleName, abi.ImportModule)
		}
	}
	exports := cm.ExportedFunctions()
	for _, want := range []struct {
		name string
		sig  [2][]api.ValueType
	}{
		{abi.ExportABI, [2][]api.ValueType{nil, {i32}}},
		{abi.ExportAlloc, [2][]api.ValueType{{i32}, {i32}}},
		{abi.ExportHandle, [2][]api.ValueType{{i32, i32}, {i64}}},
		{"_initialize", [2][]api.ValueType{nil, nil}},
	} {
		name, sig := want.name, want.sig
		f, ok := exports[name]
		if !ok {
			return fmt.Errorf("it does not export %s (a connector is a WASI reactor: for Go, -buildmode=c-shared)", name)
		}
		if !slices.Equal(f.ParamTypes(), sig[0]) || !slices.Equal(f.ResultTypes(), sig[1]) {
			return fmt.Errorf("its export %s does not have the ABI's signature", name)
		}
	}
	if _, ok := cm.ExportedMemories()["memory"]; !ok {
		return errors.New("it does not export its memory")
	}
	return nil
}

// checkOperations asks one instance which operations the module serves:
// exactly the manifest's, each of the manifest's kind.
func (m *Module) checkOperations(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, describeLimit)
	defer cancel()
	resp, _, err := m.call(ctx, &callState{}, abi.Request{Kind: abi.KindDescribe}, describeLimit)
	if err != nil {
		return err
	}
	if resp.Error != nil {
		return fmt.Errorf("asked what it serves, it answered %s: %s", resp.Error.Code, resp.Error.Message)
	}
	var got, want []string
	for _, op := range resp.Operations {
		got = append(got, op.Name+" ("+op.Kind+")")
	}
	for _, op := range m.Manifest.Operations {
		want = append(want, op.Name+" ("+op.Kind+")")
	}
	sort.Strings(got)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		return fmt.Errorf("it serves %s, but its manifest declares %s", strings.Join(got, ", "), strings.Join(want, ", "))
	}
	return nil
}

// oomMargin: an instance that stopped with less than this left of its
// memory limit ran out of memory.
const oomMargin = 8 << 20

// stopped is why an instance ended without an answer.
type stopped struct {
	sentence string
}

func (s *stopped) Error() string { return s.sentence }

// call runs one request in a fresh instance of the module, within limit
// (ctx's deadline bounds it too), and returns the module's response and
// the state its host calls left.
func (m *Module) call(ctx context.Context, st *callState, req abi.Request, limit time.Duration) (abi.Response, *callState, error) {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	select {
	case m.host.slots <- struct{}{}:
	case <-ctx.Done():
		return abi.Response{}, st, &stopped{fmt.Sprintf("the connector's module did not get to run within its compute limit of %s: the service is running as many modules as it may", limit)}
	}
	defer func() { <-m.host.slots }()
	st.module = m
	ctx = context.WithValue(ctx, stateKey{}, st)
	ctx = experimental.WithMemoryAllocator(ctx, memoryAllocator())
	body, err := json.Marshal(req)
	if err != nil {
		return abi.Response{}, st, err
	}
	cfg := wazero.NewModuleConfig().WithName("").WithStartFunctions("_initialize").
		WithRandSource(rand.Reader).WithSysWalltime().WithSysNanotime().WithSysNanosleep()
	if m.host.opts.Stderr != nil {
		cfg = cfg.WithStderr(m.host.opts.Stderr)
	}
	inst, err := m.host.rt.InstantiateModule(ctx, m.compiled, cfg)
	if err != nil {
		return abi.Response{}, st, m.stoppedBy(ctx, err, limit, nil)
	}
	defer inst.Close(context.WithoutCancel(ctx))
	if req.Kind == abi.KindDescribe {
		v, err := inst.ExportedFunction(abi.ExportABI).Call(ctx)
		if err != nil {
			return abi.Response{}, st, m.stoppedBy(ctx, err, limit, inst)
		}
		if uint32(v[0]) != abi.Version {
			return abi.Response{}, st, &stopped{fmt.Sprintf("the module speaks abi %d; this service speaks abi %d", uint32(v[0]), abi.Version)}
		}
	}
	ret, err := inst.ExportedFunction(abi.ExportAlloc).Call(ctx, uint64(len(body)))
	if err != nil {
		return abi.Response{}, st, m.stoppedBy(ctx, err, limit, inst)
	}
	ptr := uint32(ret[0])
	if !inst.Memory().Write(ptr, body) {
		return abi.Response{}, st, &stopped{"the connector's module gave a buffer outside its memory"}
	}
	ret, err = inst.ExportedFunction(abi.ExportHandle).Call(ctx, uint64(ptr), uint64(len(body)))
	if err != nil {
		return abi.Response{}, st, m.stoppedBy(ctx, err, limit, inst)
	}
	rp, rn := uint32(ret[0]>>32), uint32(ret[0])
	if rn > MaxMessageBytes {
		return abi.Response{}, st, &stopped{fmt.Sprintf("the connector's module answered more than %d bytes", MaxMessageBytes)}
	}
	out, ok := inst.Memory().Read(rp, rn)
	if !ok {
		return abi.Response{}, st, &stopped{"the connector's module answered from outside its memory"}
	}
	if m.host.opts.Inspect != nil {
		if all, ok := inst.Memory().Read(0, inst.Memory().Size()); ok {
			m.host.opts.Inspect(all)
		}
	}
	var resp abi.Response
	if err := json.Unmarshal(out, &resp); err != nil {
		return abi.Response{}, st, &stopped{"the connector's module answered something that is not its ABI's response"}
	}
	return resp, st, nil
}

// stoppedBy words why an instance stopped: its compute limit, an exit (the
// Go runtime exits when it runs out of memory or panics outside a
// handler), or a trap. The words name no content.
func (m *Module) stoppedBy(ctx context.Context, err error, limit time.Duration, inst api.Module) error {
	if ctx.Err() != nil {
		return &stopped{fmt.Sprintf("the connector's module ran past its compute limit of %s and was stopped", limit)}
	}
	// A module that stops with its memory at the limit ran out of it (Go's
	// runtime aborts when the memory cannot grow).
	if inst != nil && inst.Memory() != nil && inst.Memory().Size() > MemoryLimit-oomMargin {
		return &stopped{fmt.Sprintf("the connector's module ran out of memory (at most %d MiB) and was stopped", MemoryLimit>>20)}
	}
	var exit interface{ ExitCode() uint32 }
	if errors.As(err, &exit) {
		return &stopped{fmt.Sprintf("the connector's module exited with code %d", exit.ExitCode())}
	}
	msg := err.Error()
	trap := "it trapped"
	for _, t := range []string{"unreachable", "out of bounds memory access", "stack overflow", "integer divide by zero", "integer overflow", "invalid table access", "indirect call type mismatch"} {
		if strings.Contains(msg, t) {
			trap = "it trapped: " + t
			break
		}
	}
	return &stopped{"the connector's module failed: " + trap}
}
