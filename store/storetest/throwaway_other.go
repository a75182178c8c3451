//go:build !linux

package storetest

import (
	"errors"
	"os/exec"
)

func asAccount(*exec.Cmd, *account) {}

func startOwned(*exec.Cmd) error {
	return errors.New("a throwaway PostgreSQL is started on Linux only; set TEST_DATABASE_URL")
}

func alive(int) bool { return true }

// StartOwned starts cmd so that it dies with this process; only on Linux.
func StartOwned(*exec.Cmd) error {
	return errors.New("a process that dies with the tests is started on Linux only")
}
