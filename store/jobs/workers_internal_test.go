package jobs

import (
	"errors"
	"fmt"
	"testing"

	"github.com/riverqueue/river/rivertype"

	"countersign/store"
)

// TestUnavailableSnoozes: a job the store was unavailable for is snoozed,
// which uses up none of its attempts (an outage gives no job up); any other
// error is the job's own failure, and none is none.
func TestUnavailableSnoozes(t *testing.T) {
	t.Parallel()
	var snooze *rivertype.JobSnoozeError
	if err := unavailableSnoozes(fmt.Errorf("deliver: %w: connection refused", store.ErrUnavailable)); !errors.As(err, &snooze) || snooze.Duration != storeSnooze {
		t.Errorf("an outage: %v, want a snooze of %s", err, storeSnooze)
	}
	boom := errors.New("boom")
	if err := unavailableSnoozes(boom); err != boom {
		t.Errorf("another error: %v", err)
	}
	if err := unavailableSnoozes(nil); err != nil {
		t.Errorf("no error: %v", err)
	}
}
