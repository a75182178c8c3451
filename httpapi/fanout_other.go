//go:build !linux

package httpapi

import (
	"errors"
	"syscall"
	"time"
)

// handOffSupported: elsewhere than Linux every event stream keeps its
// handler's goroutine.
const handOffSupported = false

type poller struct{}

func newPoller() (*poller, error) { return nil, errors.New("not on this platform") }

func (p *poller) add(syscall.RawConn, uint64) error { return errors.ErrUnsupported }
func (p *poller) wait([]uint64, time.Duration) int  { return 0 }
func (p *poller) wake()                             {}
func (p *poller) close()                            {}
func rawWrite(syscall.RawConn, []byte) (int, error) { return 0, errors.ErrUnsupported }
