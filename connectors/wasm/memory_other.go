//go:build !unix

package wasm

import "github.com/tetratelabs/wazero/experimental"

// memoryAllocator is wazero's own where mappings are not at hand.
func memoryAllocator() experimental.MemoryAllocator { return nil }
