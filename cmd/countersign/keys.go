package main

import (
	"context"
	"errors"
	"fmt"

	"countersign/sealing"
)

func runKeys(ctx context.Context, a *app, args []string) error {
	if len(args) == 0 {
		return errors.New("usage: countersign keys new | keys rotate")
	}
	switch args[0] {
	case "new":
		fset := a.flags("keys new")
		if err := fset.Parse(args[1:]); err != nil {
			return err
		}
		fmt.Fprintln(a.stdout, sealing.GenerateKeyring().Export())
		return nil
	}
	return fmt.Errorf("unknown keys command %q: keys new | keys rotate", args[0])
}
