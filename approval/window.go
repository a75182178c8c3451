package approval

import "time"

// The time windows of the contract (SPEC §7, §12).
const (
	// SessionMaxLife is the longest a sign-in may ask for.
	SessionMaxLife = 30 * 24 * time.Hour
	// SignInSlack is added to SessionMaxLife for a client clock that runs ahead.
	SignInSlack = 10 * time.Minute
	// ConfirmationMaxAge is how old a confirmation or approval may be when it
	// reaches the service.
	ConfirmationMaxAge = 10 * time.Minute
	// ConfirmationMaxAhead is how far ahead of the service's clock a
	// confirmation or approval may be dated.
	ConfirmationMaxAhead = time.Minute
	// RunMaxAhead and RunMaxAge bound the approval time the answer run
	// accepts, on its own clock, when it re-verifies the sealed approval.
	RunMaxAhead = 10 * time.Minute
	RunMaxAge   = 30 * time.Minute
)

// CheckSignIn checks a sign-in's valid-until time: strictly after now, and
// no later than now + 30 days + 10 minutes.
func CheckSignIn(now, validUntil time.Time) error {
	if !validUntil.After(now) {
		return refuse(OutOfWindow, "the sign-in is valid until a time already past")
	}
	if validUntil.After(now.Add(SessionMaxLife + SignInSlack)) {
		return refuse(OutOfWindow, "the sign-in asks for more than 30 days")
	}
	return nil
}

// CheckConfirmation checks the `at` time of a confirmation or approval at the
// door: at most 10 minutes old and at most 1 minute ahead of now, both ends
// included. The window is asymmetric on purpose: a signature is good for 10
// minutes from the time it names, and a clock ahead of ours must not stretch
// that life; one minute absorbs ordinary skew of a synchronised device.
func CheckConfirmation(now, at time.Time) error {
	if at.Before(now.Add(-ConfirmationMaxAge)) {
		return refuse(OutOfWindow, "the signature is more than 10 minutes old")
	}
	if at.After(now.Add(ConfirmationMaxAhead)) {
		return refuse(OutOfWindow, "the signature is dated more than a minute ahead")
	}
	return nil
}

// CheckRun checks an approval again on the run side, from the sealed task:
// `at` no more than 10 minutes ahead of now and no more than 30 minutes
// behind it, and `at` strictly before the task's expiry — an approval given
// while the task waited is carried out even if its run starts after the
// expiry (the 30-minute rule still bounds it).
func CheckRun(now, at, expiresAt time.Time) error {
	if !at.Before(expiresAt) {
		return refuse(OutOfWindow, "the approval is dated at or after the task's expiry")
	}
	if at.After(now.Add(RunMaxAhead)) {
		return refuse(OutOfWindow, "the approval is dated more than 10 minutes ahead")
	}
	if at.Before(now.Add(-RunMaxAge)) {
		return refuse(OutOfWindow, "the approval is more than 30 minutes old")
	}
	return nil
}
