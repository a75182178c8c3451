package storetest

import (
	"os/exec"
	"runtime"
	"syscall"
)

// asAccount runs cmd as a (when set), killed if the starting thread dies.
func asAccount(cmd *exec.Cmd, a *account) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if a != nil {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(a.uid), Gid: uint32(a.gid)}
	}
}

// StartOwned starts cmd so that it dies with this process: with a
// parent-death signal (SIGKILL), from an OS thread that lives as long as the
// process, so the signal fires when the process exits and not when a thread
// of the Go runtime does. Tests start the servers they kill with it.
func StartOwned(cmd *exec.Cmd) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	return startOwned(cmd)
}

// startOwned starts cmd from an OS thread that lives as long as the process,
// so the server's parent-death signal fires when the process exits and not
// when a thread of the Go runtime does.
func startOwned(cmd *exec.Cmd) error {
	errc := make(chan error)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread lives on, parked
		errc <- cmd.Start()
		select {}
	}()
	return <-errc
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }
