package enclave_test

import (
	"errors"

	"countersign/client"
	"countersign/enclave/calls"
)

func enclaveHash(k string) []byte { return calls.HashAgentKey(k) }

func reason(err error) string {
	var e *client.Error
	if errors.As(err, &e) {
		return e.Reason
	}
	if err != nil {
		return err.Error()
	}
	return ""
}
