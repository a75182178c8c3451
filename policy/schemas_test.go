package policy

// Schemas shaped like the connectors of SPEC §14, for the tests.

var mercury = Schema{
	Writes: []string{"pay_invoice", "add_recipient", "send_invoice", "cancel_invoice"},
	Reads:  []string{"accounts", "recipients", "transactions"},
	Keys: map[string]KeyKind{
		"max_payment_usd":     Amount,
		"max_spend_usd_month": Amount,
	},
	Conditions: []Condition{
		AmountRange("amount", "min_usd", "max_usd"),
		AnyOf("method", "methods", "ach", "wire", "check"),
		Equals("payee", "payee", "saved", "new"),
	},
	Carries: map[string][]string{
		"pay_invoice":  {"amount", "method", "payee"},
		"send_invoice": {"amount"},
	},
	Nouns: map[string]string{
		"pay_invoice":    "payment",
		"cancel_invoice": "cancellation",
	},
}

var github = Schema{
	Writes: []string{"branch_create", "file_put", "commit", "issue_create", "issue_comment", "issue_update",
		"pr_create", "pr_review", "pr_merge", "gist_create", "gist_update", "repo_star", "repo_unstar"},
	Reads: []string{"pr_get", "issue_get", "repo_get", "file_get"},
	Keys: map[string]KeyKind{
		"actions":            WriteList,
		"repos":              List,
		"max_writes_per_day": Count,
	},
}

var gmail = Schema{
	Writes: []string{"send"},
	Reads:  []string{"messages_list", "message_get"},
	Keys: map[string]KeyKind{
		"recipient_domains": List,
		"recipients":        List,
		"max_per_day":       Count,
		"max_recipients":    Count,
		"max_attachment_kb": Count,
		"subject_prefix":    Text,
	},
}

var probe = Schema{Writes: []string{"guess_start"}}

// payment is the facts of a pay_invoice.
func payment(cents Cents, method, payee string) Facts {
	return Facts{
		Amounts: map[string]Cents{"amount": cents},
		Words:   map[string]string{"method": method, "payee": payee},
	}
}
