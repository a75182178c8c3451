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
