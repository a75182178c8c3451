package delivery

import (
	"testing"

	"countersign/webhook"
)

func TestAttemptOutcome(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a        webhook.Attempt
		unusable bool
		want     string
	}{
		{webhook.Attempt{StatusCode: 204}, false, "delivered"},
		{webhook.Attempt{StatusCode: 500}, false, "refused"},
		{webhook.Attempt{StatusCode: 410, Final: true}, false, "refused"},
		{webhook.Attempt{Error: "connection refused"}, false, "unreachable"},
		{webhook.Attempt{Error: "connection refused", Final: true}, false, "unreachable"},
		{webhook.Attempt{Error: "the webhook's secret cannot be opened", Final: true}, true, "unusable"},
	} {
		if got := attemptOutcome(tc.a, tc.unusable); got != tc.want {
			t.Errorf("%+v (unusable %v): %s, want %s", tc.a, tc.unusable, got, tc.want)
		}
	}
}
