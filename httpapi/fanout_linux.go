package httpapi

import (
	"errors"
	"syscall"
	"time"
)

// handOffSupported: event streams are handed over to the fan-out here.
const handOffSupported = true

// poller is an epoll set of the streams' sockets, each added with its
// stream's id, and a pipe that wakes its waiter (id 0).
type poller struct {
	epfd         int
	wakeR, wakeW int
	events       []syscall.EpollEvent
}

func newPoller() (*poller, error) {
	epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	var pipe [2]int
	if err := syscall.Pipe2(pipe[:], syscall.O_NONBLOCK|syscall.O_CLOEXEC); err != nil {
		syscall.Close(epfd)
		return nil, err
	}
	p := &poller{epfd: epfd, wakeR: pipe[0], wakeW: pipe[1], events: make([]syscall.EpollEvent, 256)}
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN}
	if err := syscall.EpollCtl(epfd, syscall.EPOLL_CTL_ADD, p.wakeR, &ev); err != nil {
		p.close()
		return nil, err
	}
	return p, nil
}

// add watches a socket: anything to read on it, its peer's hang-up or an
// error is reported once, with id.
func (p *poller) add(raw syscall.RawConn, id uint64) error {
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLRDHUP | syscall.EPOLLONESHOT,
		Fd: int32(uint32(id)), Pad: int32(uint32(id >> 32))}
	var err error
	if cerr := raw.Control(func(fd uintptr) {
		err = syscall.EpollCtl(p.epfd, syscall.EPOLL_CTL_ADD, int(fd), &ev)
	}); cerr != nil {
		return cerr
	}
	return err
}

// wait waits up to d for sockets to report and puts their ids in ids,
// returning how many.
func (p *poller) wait(ids []uint64, d time.Duration) int {
	ms := int(d.Milliseconds())
	if d > 0 && ms == 0 {
		ms = 1
	}
	n, err := syscall.EpollWait(p.epfd, p.events[:min(len(ids), len(p.events))], ms)
	if err != nil {
		if !errors.Is(err, syscall.EINTR) {
			time.Sleep(10 * time.Millisecond) // not expected; do not spin
		}
		return 0
	}
	k := 0
	for _, ev := range p.events[:n] {
		id := uint64(uint32(ev.Fd)) | uint64(uint32(ev.Pad))<<32
		if id == 0 {
			var b [64]byte
			for {
				if m, _ := syscall.Read(p.wakeR, b[:]); m <= 0 {
					break
				}
			}
			continue
		}
		ids[k] = id
		k++
	}
	return k
}

// wake ends a wait now.
func (p *poller) wake() { _, _ = syscall.Write(p.wakeW, []byte{1}) }

func (p *poller) close() {
	syscall.Close(p.epfd)
	syscall.Close(p.wakeR)
	syscall.Close(p.wakeW)
}

// rawWrite writes to a socket what it takes without waiting.
func rawWrite(raw syscall.RawConn, b []byte) (int, error) {
	n := 0
	var werr error
	err := raw.Write(func(fd uintptr) bool {
		for n < len(b) {
			m, err := syscall.Write(int(fd), b[n:])
			if err == syscall.EINTR {
				continue
			}
			if err == syscall.EAGAIN {
				break
			}
			if err != nil {
				werr = err
				break
			}
			if m <= 0 {
				break
			}
			n += m
		}
		return true
	})
	if err != nil {
		return n, err
	}
	return n, werr
}
