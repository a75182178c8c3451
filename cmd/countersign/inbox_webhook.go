package main

import (
	"context"
	"errors"
	"fmt"

	"countersign/approval"
)

func init() {
	inboxCommands["webhook"] = inboxWebhook
}

const webhookUsage = "usage: countersign inbox webhook set URL [--external] | show | test | log | rm [--external]"

// inboxWebhook names, shows, tests, logs and removes the owner's webhook.
// Naming and removing are signed by the owner's wallet; the secret is shown
// once, when a URL is named.
func inboxWebhook(ctx context.Context, a *app, args []string) error {
	if len(args) == 0 {
		return errors.New(webhookUsage)
	}
	fset, dir := a.inboxFlags("webhook " + args[0])
	external := fset.Bool("external", false, "sign with an external wallet (print the sentence, read its JSON answer)")
	pos, err := parseArgs(fset, args[1:])
	if err != nil {
		return err
	}
	t, err := openTerminal(dir())
	if err != nil {
		return err
	}
	switch {
	case args[0] == "set" && len(pos) == 1:
		d, err := t.device(a, true, *external)
		if err != nil {
			return err
		}
		conf, err := d.Confirm(approval.ActionNameWebhook(pos[0]))
		if err != nil {
			return err
		}
		wh, err := t.client.PutWebhook(ctx, pos[0], conf)
		if err != nil {
			return t.explain(err)
		}
		fmt.Fprintf(a.stdout, "webhook: %s\nsecret (shown once; receivers verify signatures with it): %s\n", clean(*wh.URL), wh.Secret)
	case args[0] == "show" && len(pos) == 0:
		wh, err := t.client.Webhook(ctx)
		if err != nil {
			return t.explain(err)
		}
		if wh.URL == nil {
			fmt.Fprintln(a.stdout, "no webhook is named")
			return nil
		}
		fmt.Fprintf(a.stdout, "webhook: %s\nnamed:   %s by %s\n", clean(*wh.URL), clean(wh.SetAt), clean(wh.SetByKey))
	case args[0] == "test" && len(pos) == 0:
		d, err := t.client.TestWebhook(ctx)
		if err != nil {
			return t.explain(err)
		}
		if d.Error != "" {
			fmt.Fprintf(a.stdout, "ping failed: %s (HTTP %d)\n", clean(d.Error), d.StatusCode)
			return exitError{1}
		}
		fmt.Fprintf(a.stdout, "ping delivered: HTTP %d\n", d.StatusCode)
	case args[0] == "log" && len(pos) == 0:
		log, err := t.client.Deliveries(ctx)
		if err != nil {
			return t.explain(err)
		}
		tw := a.table("AT\tTYPE\tTASK\tATTEMPT\tSTATUS\tERROR")
		for _, d := range log {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\n", clean(d.At), clean(d.Type), clean(d.TaskID), d.Attempt, d.StatusCode, clean(d.Error))
		}
		return tw.Flush()
	case args[0] == "rm" && len(pos) == 0:
		d, err := t.device(a, true, *external)
		if err != nil {
			return err
		}
		conf, err := d.Confirm(approval.ActionRemoveWebhook())
		if err != nil {
			return err
		}
		if err := t.client.DeleteWebhook(ctx, conf); err != nil {
			return t.explain(err)
		}
		fmt.Fprintln(a.stdout, "webhook removed")
	default:
		return errors.New(webhookUsage)
	}
	return nil
}
