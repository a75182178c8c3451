package connectors

import (
	"bytes"
	"encoding/json"
)

// The answers the platform gives an agent's call of any read or write,
// besides the operation's own output (Operation.Result), as JSON Schemas
// (2020-12): a task opened (AwaitingOwner, Notified) and a refusal. The
// OpenAPI document and the MCP tools' output schemas are made of these and
// the operations' Result (SPEC §14).
var (
	// AwaitingOwnerSchema is the answer AwaitingOwner writes.
	AwaitingOwnerSchema = taskAnswerSchema("awaiting_owner",
		"A task was opened and nothing happened yet: the owner must approve it in their inbox before expires_at. Wait with task_wait; do not call again.")
	// NotifiedSchema is the answer Notified writes.
	NotifiedSchema = taskAnswerSchema("notified",
		"A notice was opened: the owner was told, and is asked nothing.")
	// RefusalSchema is a refusal of a call: "<code>: <sentence>".
	RefusalSchema = json.RawMessage(`{"type": "object", "title": "refusal",
  "description": "The call was refused: error is the refusal's code, a colon and its sentence.",
  "properties": {"success": {"const": false}, "error": {"type": "string", "pattern": "^[a-z0-9_:]+: "}},
  "required": ["success", "error"], "additionalProperties": false}`)
)

// timeSchema is a time as answers write it (countersign.TimeFormat).
const timeSchema = `{"type": "string", "format": "date-time", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$"}`

// taskIDResult is a task id in an answer.
const taskIDResult = `{"type": "string", "pattern": "^[a-z0-9-]{1,80}$"}`

func taskAnswerSchema(status, description string) json.RawMessage {
	return json.RawMessage(`{"type": "object", "title": "` + status + `", "description": "` + description + `",
  "properties": {"ok": {"const": true}, "status": {"const": "` + status + `"},
    "task_id": ` + taskIDResult + `, "task_hash": {"type": "string", "pattern": "^[0-9a-f]{64}$", "description": "the SHA-256 of the task's envelope, which the owner signs"},
    "thread": ` + taskIDResult + `, "expires_at": ` + timeSchema + `,
    "link": {"type": "string", "format": "uri", "description": "where the owner reads the task"}},
  "required": ["ok", "status", "task_id", "task_hash", "thread", "expires_at", "link"], "additionalProperties": false}`)
}

// TaskOnly is the Result of a read or write that answers only by opening a
// task (AwaitingOwner or Notified), never with an output of its own: a
// schema nothing fits.
var TaskOnly = json.RawMessage(`{"not": {}, "description": "answers only by opening a task"}`)

// IsTaskOnly tells whether a result schema says the operation never answers
// with an output of its own (TaskOnly: "not" an empty schema).
func IsTaskOnly(result json.RawMessage) bool {
	var m struct {
		Not json.RawMessage `json:"not"`
	}
	if json.Unmarshal(result, &m) != nil {
		return false
	}
	var not map[string]json.RawMessage
	return bytes.HasPrefix(bytes.TrimSpace(m.Not), []byte("{")) && json.Unmarshal(m.Not, &not) == nil && len(not) == 0
}

// The results of the task operations (SPEC §5).
const (
	taskStatusResult = `{"type": "object",
  "properties": {
    "task_id": ` + taskIDResult + `,
    "kind": {"enum": ["confirm", "input", "notice"]},
    "state": {"enum": ["open", "approved", "answering", "done", "failed", "rejected", "cancelled", "expired", "void"]},
    "thread": ` + taskIDResult + `,
    "created_at": ` + timeSchema + `,
    "expires_at": ` + timeSchema + `,
    "outcome_class": {"enum": ["claimed", "observed"], "description": "once the task ended: claimed (the connector reported) or observed (the platform ended it)"},
    "result": {"type": "object", "description": "what the answer run reported for the preparer (at most 16 KiB): the answer operation's result"},
    "reason": {"type": "string", "description": "the owner's reason for a rejection, if they gave one"},
    "run": {"type": "string", "description": "the answer run's id"},
    "failure_reason": {"type": "string", "pattern": "^[a-z0-9_]+(:[a-z0-9_]+)?$", "description": "why a failed task failed, e.g. run_unfinished or run_refused:<code>"},
    "next_task_id": ` + taskIDResult + `,
    "notice_task_id": ` + taskIDResult + `,
    "status": {"const": "awaiting_owner", "description": "while a task that needs the approvals of several accounts waits (the project's approvers)"},
    "approvals": {"type": "object", "description": "while a task that needs the approvals of several accounts waits: how many distinct accounts approved it, and how many must",
      "properties": {"have": {"type": "integer", "minimum": 0}, "need": {"type": "integer", "minimum": 1}},
      "required": ["have", "need"], "additionalProperties": false}
  },
  "required": ["task_id", "kind", "state", "thread", "created_at", "expires_at"], "additionalProperties": false}`
	tasksResult = `{"type": "object",
  "properties": {"tasks": {"type": "array", "maxItems": 100, "items": {"type": "object",
    "properties": {"task_id": ` + taskIDResult + `, "kind": {"enum": ["confirm", "input", "notice"]},
      "state": {"enum": ["open", "approved", "answering", "done", "failed", "rejected", "cancelled", "expired", "void"]},
      "thread": ` + taskIDResult + `, "created_at": ` + timeSchema + `},
    "required": ["task_id", "kind", "state", "thread", "created_at"], "additionalProperties": false}}},
  "required": ["tasks"], "additionalProperties": false}`
	taskCancelResult = `{"type": "object", "properties": {"task_id": ` + taskIDResult + `, "state": {"const": "cancelled"}},
  "required": ["task_id", "state"], "additionalProperties": false}`
	taskDeleteResult = `{"type": "object", "properties": {"task_id": ` + taskIDResult + `, "deleted": {"const": true}},
  "required": ["task_id", "deleted"], "additionalProperties": false}`
)
