// Package calls serves agents' calls on the enclave side: it authenticates
// agent keys, lists their grants, runs the connectors' operations within
// their compute limits (charging their price, keeping idempotent answers,
// signing receipts), serves the task operations, and opens tasks —
// validating what they show, building the envelope, deriving the task's
// keys, sealing its copy and encrypting its content and files — with the
// key-holder's keys. An answer run (package answers) runs its operation
// through the same machinery (Service.Execute, Service.Sign).
package calls

import (
	"fmt"
	"log/slog"
	"strings"
	"time"

	"countersign/argschema"
	"countersign/connectors"
	"countersign/enclave"
	"countersign/enclave/history"
	"countersign/store"
)

// Service serves agents' calls and opens their tasks.
type Service struct {
	keys       *enclave.Keys
	store      store.Port[callsTx]
	connectors connectors.Catalogue
	// schemas are the compiled argument schemas of the catalogue's
	// operations and of the task operations.
	schemas   *argschema.Set
	publicURL string
	now       func() time.Time
	log       *slog.Logger
	history   *history.Writer
	// taskWaitPoll is how often task_wait looks at a task besides listening
	// to its events; not positive: never.
	taskWaitPoll time.Duration
	// admissions are the granted admissions earlier calls read.
	admissions admissions
}

// Config is what a Service is built from.
type Config struct {
	enclave.Deps
	Connectors connectors.Catalogue
	// PublicURL is the service's origin, for the links agents are given.
	PublicURL string
	// TaskWaitPoll is how often task_wait looks at a task besides listening
	// to its events (0: DefaultTaskWaitPoll; negative: never, events only).
	TaskWaitPoll time.Duration
}

// DefaultTaskWaitPoll is how often task_wait looks at a task in case an event
// was missed.
const DefaultTaskWaitPoll = 5 * time.Second

// New returns the calls service. It panics when an operation's argument
// schema does not compile or an example does not fit it: check a catalogue
// with argschema.NewSet first.
func New(c Config) *Service {
	c.Deps = c.Deps.WithDefaults()
	if c.TaskWaitPoll == 0 {
		c.TaskWaitPoll = DefaultTaskWaitPoll
	}
	schemas, err := argschema.NewSet(c.Connectors)
	if err != nil {
		panic(fmt.Sprintf("calls: %v", err))
	}
	return &Service{keys: c.Keys, store: port(c.Store), connectors: c.Connectors, schemas: schemas,
		publicURL: strings.TrimSuffix(c.PublicURL, "/"), now: c.Now, log: c.Logger,
		history: history.New(c.Keys, c.Logger), taskWaitPoll: c.TaskWaitPoll}
}

// clock is the time in whole seconds, UTC.
func (s *Service) clock() time.Time { return s.now().UTC().Truncate(time.Second) }

// Link is where the owner reads a task.
func (s *Service) Link(taskID string) string { return s.publicURL + "/#/tasks/" + taskID }
