//go:build unix

package wasm_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"countersign/connectors"
	"countersign/connectors/connectortest"
	"countersign/connectors/probe"
	"countersign/connectors/wasm"
	"countersign/connectors/wasm/wasmtest"
)

// cpuTime is the CPU time this process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the CPU time per operation since start: on a shared
// machine, a steadier figure than the wall clock's.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64((cpuTime()-start).Microseconds())/float64(b.N), "cpu-µs/op")
}

// benchStart is guess_start through the harness, over c.
func benchStart(b *testing.B, c *connectors.Connector) {
	h := connectortest.New(b, c)
	start := cpuTime()
	for b.Loop() {
		if _, err := h.Call(ctx, `{"operation":"guess_start","max":1000}`); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, start)
}

// BenchmarkStart: the probe's guess_start compiled in and as a module (a
// fresh instance per call): the difference is a module call's cost.
func BenchmarkStart(b *testing.B) {
	b.Run("compiled", func(b *testing.B) { benchStart(b, probe.New()) })
	b.Run("module", func(b *testing.B) {
		var size int
		m := wasmtest.Load(b, wasmtest.Example("probe"), wasm.Options{Inspect: func(mem []byte) { size = len(mem) }})
		benchStart(b, m.Connector)
		// The instance's memory when it answered.
		b.ReportMetric(float64(size)/(1<<20), "instance-MiB")
	})
}

// BenchmarkGuess: one wrong guess, turn after turn, compiled in and as a
// module.
func BenchmarkGuess(b *testing.B) {
	for _, tc := range []struct {
		name string
		c    func() *connectors.Connector
	}{
		{"compiled", probe.New},
		{"module", func() *connectors.Connector {
			return wasmtest.Load(b, wasmtest.Example("probe"), wasm.Options{}).Connector
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			h := connectortest.New(b, tc.c())
			out, err := h.Call(ctx, `{"operation":"guess_start","max":1000}`)
			if err != nil {
				b.Fatal(err)
			}
			turn, err := h.Awaiting(out)
			if err != nil {
				b.Fatal(err)
			}
			start := cpuTime()
			for b.Loop() {
				_, opened, err := h.Answer(ctx, turn, []byte("not a number"), "")
				if err != nil {
					b.Fatal(err)
				}
				turn = opened[0]
			}
			reportCPU(b, start)
		})
	}
}

// BenchmarkLoad20 loads 20 distinct modules (the probe, each with a
// custom section of its own) on a host, compiling them and from the
// compilation cache: the start time CONNECTORS_DIR adds. It reports the
// host's heap after the load.
func BenchmarkLoad20(b *testing.B) {
	dir := b.TempDir()
	src := wasmtest.Example("probe")
	for i := range 20 {
		sub := filepath.Join(dir, fmt.Sprintf("c%02d", i))
		if err := os.Mkdir(sub, 0o755); err != nil {
			b.Fatal(err)
		}
		m := readManifest(b, src)
		bin, err := os.ReadFile(filepath.Join(src, m.Module))
		if err != nil {
			b.Fatal(err)
		}
		m.Name = fmt.Sprintf("probe-%02d", i)
		writeConnector(b, sub, m, append(withCustomSection(bin), byte(i)))
	}
	// The custom section's size grows by the byte appended.
	fixSections(b, dir)
	// cold compiles into an empty cache; warm loads from what cold left.
	// Run it with -benchtime=1x: a second cold iteration would be warm.
	cache := b.TempDir()
	for _, name := range []string{"cold", "warm"} {
		b.Run(name, func(b *testing.B) {
			start := cpuTime()
			for b.Loop() {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				h := wasmtest.Host(b, wasm.Options{CacheDir: cache})
				mods, err := h.Load(ctx, dir)
				if err != nil || len(mods) != 20 {
					b.Fatal(err)
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "heap-MiB")
			}
			reportCPU(b, start)
		})
	}
}

// fixSections rewrites each module's last custom section to hold the byte
// appended after it.
func fixSections(b *testing.B, dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		m := readManifest(b, filepath.Join(dir, e.Name()))
		p := filepath.Join(dir, e.Name(), m.Module)
		bin, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		// ... 0x00 0x07 0x05 "otherx" <i>: the section is now 8 bytes.
		bin[len(bin)-9] = 0x08
		if err := os.WriteFile(p, bin, 0o644); err != nil {
			b.Fatal(err)
		}
	}
}
