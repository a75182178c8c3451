//go:build wasip1

package guest

import (
	"runtime"
	"unsafe"

	"countersign/connectors/wasm/abi"
)

//go:wasmimport countersign http_do
func hostHTTP(ptr, size uint32) uint32

//go:wasmimport countersign platform
func hostImportPlatform(ptr, size uint32) uint32

//go:wasmimport countersign take
func hostTake(ptr uint32)

func init() {
	callHost = func(fn string, req []byte) ([]byte, error) {
		if len(req) == 0 {
			req = []byte("{}")
		}
		p := uint32(uintptr(unsafe.Pointer(unsafe.SliceData(req))))
		var n uint32
		switch fn {
		case abi.ImportHTTP:
			n = hostHTTP(p, uint32(len(req)))
		default:
			n = hostImportPlatform(p, uint32(len(req)))
		}
		runtime.KeepAlive(req)
		out := make([]byte, n)
		if n > 0 {
			hostTake(uint32(uintptr(unsafe.Pointer(unsafe.SliceData(out)))))
		}
		return out, nil
	}
}

// held keeps the buffers the host writes into, and the last response,
// reachable until the host has read them.
var (
	held     = map[uint32][]byte{}
	response []byte
)

//go:wasmexport countersign_abi
func exportABI() uint32 { return abi.Version }

//go:wasmexport countersign_alloc
func exportAlloc(size uint32) uint32 {
	b := make([]byte, max(size, 1))
	p := uint32(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
	held[p] = b
	return p
}

//go:wasmexport countersign_handle
func exportHandle(ptr, size uint32) uint64 {
	in := held[ptr]
	delete(held, ptr)
	if uint32(len(in)) < size {
		in = nil
	} else {
		in = in[:size]
	}
	response = handle(in)
	p := uint32(uintptr(unsafe.Pointer(unsafe.SliceData(response))))
	return uint64(p)<<32 | uint64(len(response))
}

// Main does nothing in a module, whose main never runs.
func Main() {}
