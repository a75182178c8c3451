//go:build unix

package wasm

import (
	"syscall"

	"github.com/tetratelabs/wazero/experimental"
)

// mmapAllocator backs each instance's memory with a mapping of its whole
// limit, never moved: growing it is a longer slice of the same mapping (no
// copy), the kernel hands out zeroed pages only as they are touched, and
// closing the instance gives them back at once, outside the Go heap. When
// no mapping can be had, the memory is an ordinary slice.
type mmapAllocator struct{}

type mmapMemory struct{ buf []byte }

func (mmapAllocator) Allocate(_, max uint64) experimental.LinearMemory {
	if max == 0 || max > MemoryLimit {
		max = MemoryLimit
	}
	buf, err := syscall.Mmap(-1, 0, int(max), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return &sliceMemory{max: max}
	}
	return &mmapMemory{buf: buf}
}

func (m *mmapMemory) Reallocate(size uint64) []byte {
	if m.buf == nil || size > uint64(len(m.buf)) {
		return nil
	}
	return m.buf[:size:size]
}

func (m *mmapMemory) Free() {
	if m.buf != nil {
		_ = syscall.Munmap(m.buf)
		m.buf = nil
	}
}

func memoryAllocator() experimental.MemoryAllocator { return mmapAllocator{} }

// sliceMemory is a memory on the Go heap, grown by copying.
type sliceMemory struct {
	buf []byte
	max uint64
}

func (m *sliceMemory) Reallocate(size uint64) []byte {
	if size > m.max {
		return nil
	}
	if size > uint64(cap(m.buf)) {
		grown := make([]byte, size, min(max(size, 2*uint64(cap(m.buf))), m.max))
		copy(grown, m.buf)
		m.buf = grown
	}
	m.buf = m.buf[:size]
	return m.buf
}

func (m *sliceMemory) Free() { m.buf = nil }
