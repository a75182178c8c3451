package countersign

// Actor is who moved a task, as its audit trail records it.
type Actor string

// The actors.
const (
	ActorOwner    Actor = "owner"    // the owner: an approval, a rejection, an acknowledgement
	ActorApprover Actor = "approver" // an approver of a shared task: an approval, a rejection
	ActorAgent    Actor = "agent"    // the preparer: a cancellation
	ActorPlatform Actor = "platform" // the service: answer runs, sweeps, expiry
)

// Actors lists the actors.
func Actors() []Actor { return []Actor{ActorOwner, ActorApprover, ActorAgent, ActorPlatform} }

// Valid reports whether a is one of the actors.
func (a Actor) Valid() bool {
	return a == ActorOwner || a == ActorApprover || a == ActorAgent || a == ActorPlatform
}

// EventType names a task event an owner's webhook is told of (SPEC §10).
type EventType string

// The task events. Each is sent when a task reaches one state.
const (
	EventTaskCreated  EventType = "task_created"  // a task (or notice) was opened
	EventTaskApproved EventType = "task_approved" // the owner approved; its run is queued
	EventTaskAnswered EventType = "task_answered" // the answer run finished: done
	EventTaskFailed   EventType = "task_failed"   // the task ended failed; its failure reason says why
	EventTaskExpired  EventType = "task_expired"  // the task expired unanswered
)

// EventTypes lists the task events in the contract's order.
func EventTypes() []EventType {
	return []EventType{EventTaskCreated, EventTaskApproved, EventTaskAnswered, EventTaskFailed, EventTaskExpired}
}

// eventStates maps each task event to the state the task is in once its
// change has committed.
var eventStates = map[EventType]State{
	EventTaskCreated:  StateOpen,
	EventTaskApproved: StateApproved,
	EventTaskAnswered: StateDone,
	EventTaskFailed:   StateFailed,
	EventTaskExpired:  StateExpired,
}

// State is the state a task is in when the event is sent, and false for a
// type that is no task event.
func (t EventType) State() (State, bool) {
	s, ok := eventStates[t]
	return s, ok
}

// EventFor is the event a task of kind k reaching state s sends, and "" for
// none: a notice only has task_created and task_expired (its Got it, done,
// sends nothing), and answering, rejected, cancelled and void send nothing.
func EventFor(k Kind, s State) EventType {
	for t, state := range eventStates {
		if state == s && t.Concerns(k) {
			return t
		}
	}
	return ""
}

// Concerns reports whether a task of kind k can send an event of type t.
func (t EventType) Concerns(k Kind) bool {
	if _, ok := eventStates[t]; !ok || !k.Valid() {
		return false
	}
	return k != KindNotice || t == EventTaskCreated || t == EventTaskExpired
}
