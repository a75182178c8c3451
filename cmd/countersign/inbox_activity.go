package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"countersign"
	"countersign/client"
	"countersign/device"
	"countersign/inbox"
)

func init() {
	inboxCommands["activity"] = inboxActivity
}

const activityUsage = "usage: countersign inbox activity [--project NAME] [--agent ACCOUNT] [--limit N] [--before ID]"

// inboxActivity prints the owner's history, newest first: each write
// carried out, asked or not, and each task that ended, opened on this
// terminal. A failure is printed loudly: FAILED, and the sentence of what
// happened.
func inboxActivity(ctx context.Context, a *app, args []string) error {
	fset, dirOf := a.inboxFlags("activity")
	project := fset.String("project", "", "only this project's entries")
	agent := fset.String("agent", "", "only this agent's entries")
	limit := fset.Int("limit", 0, fmt.Sprintf("at most this many entries, 1 to %d (default %d)", inbox.MaxListLimit, inbox.DefaultListLimit))
	before := fset.String("before", "", "list the entries after this one (the last id of the previous page)")
	pos, err := parseArgs(fset, args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) != 0:
		return errors.New(activityUsage)
	case *limit < 0 || *limit > inbox.MaxListLimit:
		return fmt.Errorf("--limit: 1 to %d", inbox.MaxListLimit)
	case *before != "" && !countersign.ValidTaskID(*before):
		return errors.New("--before: an entry's id is needed")
	case *project != "" && !countersign.ValidProjectName(*project):
		return fmt.Errorf("--project: %q is not a project name", clean(*project))
	case *agent != "" && !countersign.ValidAccountID(*agent):
		return fmt.Errorf("--agent: %q is not an account id", clean(*agent))
	}
	t, d, err := a.terminalDevice(dirOf(), false, false)
	if err != nil {
		return err
	}
	page, err := t.client.Activity(ctx, client.ActivityQuery{Before: *before, Project: *project, Preparer: *agent, Limit: *limit})
	if err != nil {
		return t.explain(err)
	}
	if len(page.Entries) == 0 {
		fmt.Fprintln(a.stdout, "nothing in the history")
		return nil
	}
	locked := false
	for i, e := range page.Entries {
		if i > 0 {
			fmt.Fprintln(a.stdout)
		}
		locked = printEntry(a.stdout, d, e) || locked
	}
	if locked {
		fmt.Fprintln(a.stdout, "\nsome entries are locked on this terminal: run `countersign inbox unlock`, then list again")
	}
	if page.More {
		next := "countersign inbox activity"
		if *project != "" {
			next += " --project " + clean(*project)
		}
		if *agent != "" {
			next += " --agent " + clean(*agent)
		}
		fmt.Fprintf(a.stdout, "\nmore: %s --before %s\n", next, clean(page.Entries[len(page.Entries)-1].ID))
	}
	return nil
}

// printEntry prints one entry, opened on this device: a line of who, what
// and how it ended, then its title, summary, what it did and its link. It
// reports whether the entry is locked on this device.
//
//	2026-11-29T12:00:00Z  ledger  bot.near  asked  FAILED run_refused:conflict  r7k2…-1
//	  Pay Acme Corp
//	  pay $750.25 to Acme Corp from Checking ••1234 by ACH; it cannot be undone
//	  FAILED: The payee changed after you saw it. Nothing was written.
func printEntry(w io.Writer, d *device.Device, e client.ActivityEntry) (locked bool) {
	asked := "asked"
	if e.Via == client.ViaDirect {
		asked = "not asked"
	}
	state := clean(e.State)
	switch e.State {
	case string(countersign.StateFailed):
		state = "FAILED"
	case string(countersign.StateVoid):
		state = "VOID"
	}
	if e.FailureReason != "" {
		state += " " + clean(e.FailureReason)
	}
	fmt.Fprintf(w, "%s  %s  %s  %s  %s  %s\n", clean(e.At), clean(e.Project), clean(e.Preparer), asked, state, clean(e.ID))
	o, err := d.OpenEntry(e)
	switch {
	case errors.Is(err, device.ErrNoEntryCopy):
		fmt.Fprintf(w, "  (%s of %s; locked on this terminal)\n", clean(e.Operation), clean(e.Connector))
		switch e.State {
		case string(countersign.StateFailed):
			fmt.Fprintf(w, "  FAILED: %s\n", clean(device.Ending(e.State, e.FailureReason)))
		case string(countersign.StateVoid):
			fmt.Fprintln(w, "  NOT CARRIED OUT: nothing was written (unlock to read why)")
		}
		return true
	case err != nil:
		fmt.Fprintf(w, "  (%s of %s; cannot be read on this terminal: %s)\n", clean(e.Operation), clean(e.Connector), clean(oneLine(err)))
		return false
	}
	title := o.Title
	if title == "" {
		title = e.Operation + " of " + e.Connector
	}
	fmt.Fprintf(w, "  %s\n", clean(title))
	if o.Summary != "" {
		fmt.Fprintf(w, "  %s\n", clean(o.Summary))
	}
	switch {
	case o.Failed():
		fmt.Fprintf(w, "  FAILED: %s\n", clean(o.Told()))
	case o.State == string(countersign.StateVoid):
		// Approved and not carried out: as loud as a failure.
		fmt.Fprintf(w, "  NOT CARRIED OUT: %s\n", clean(o.Told()))
	default:
		fmt.Fprintf(w, "  %s\n", clean(o.Told()))
	}
	if o.Result.URL != "" {
		fmt.Fprintf(w, "  %s\n", clean(o.Result.URL))
	}
	return false
}
