package httpapi

import (
	"countersign"
	"countersign/inbox"
)

// The bodies the handlers read and write, named once: the handlers use
// them, and the OpenAPI document (openapi.go) describes them from these
// same types.

// Requests.
type (
	webhookRequest struct {
		URL          string             `json:"url"`
		Confirmation inbox.Confirmation `json:"confirmation"`
	}
	confirmationRequest struct {
		Confirmation inbox.Confirmation `json:"confirmation"`
	}
	rejectRequest struct {
		Reason []byte `json:"reason,omitempty"` // sealed to the task's reply key
	}
	muteRequest struct {
		SubjectIs     string `json:"subject_is"`
		Subject       string `json:"subject"`
		DeleteWaiting bool   `json:"delete_waiting,omitempty"`
	}
	unmuteRequest struct {
		SubjectIs string `json:"subject_is"`
		Subject   string `json:"subject"`
	}
	projectRequest struct {
		Project      string             `json:"project"` // the JSON text of {connector, policy, credentials?, agents}
		Confirmation inbox.Confirmation `json:"confirmation"`
	}
)

// Answers.
type (
	signedIn struct {
		Token      string `json:"token"`
		DeviceID   string `json:"device_id"`
		AccountID  string `json:"account_id"`
		ValidUntil string `json:"valid_until"`
	}
	revokedAnswer struct {
		Revoked bool `json:"revoked"`
	}
	removedAnswer struct {
		Removed bool `json:"removed"`
	}
	deletedAnswer struct {
		Deleted bool `json:"deleted"`
	}
	countAnswer struct {
		Deleted int `json:"deleted"`
	}
	waitingAnswer struct {
		Waiting int `json:"waiting"`
	}
	taskPage struct {
		Tasks []inbox.TaskView `json:"tasks"`
		More  bool             `json:"more"`
	}
	fileAnswer struct {
		Ciphertext []byte `json:"ciphertext"`
	}
	activityPage struct {
		Entries []inbox.ActivityView `json:"entries"`
		More    bool                 `json:"more"`
	}
	historyAnswer struct {
		Events []inbox.HistoryEntry `json:"events"`
	}
	deliveriesAnswer struct {
		Deliveries []inbox.DeliveryView `json:"deliveries"`
	}
	mutesAnswer struct {
		Mutes []inbox.MuteView `json:"mutes"`
	}
	projectsAnswer struct {
		Projects []inbox.ProjectView `json:"projects"`
	}
	devicesAnswer struct {
		Devices []inbox.DeviceView `json:"devices"`
	}
	grantsAnswer struct {
		Projects []countersign.Grant `json:"projects"`
	}
	healthAnswer struct {
		Service string `json:"service"`
		Version string `json:"version"`
		Schema  int    `json:"schema"`
	}
	readyAnswer struct {
		Status string `json:"status"`
	}
	runKeysAnswer struct {
		Algorithm string            `json:"algorithm"`
		KeyID     uint32            `json:"key_id"`
		PublicKey string            `json:"public_key"`
		Keys      map[string]string `json:"keys"`
	}
	catalogueConnector struct {
		Name       string        `json:"name"`
		Version    string        `json:"version"`
		Build      string        `json:"build"`
		Tasks      bool          `json:"tasks"`
		Operations []catalogueOp `json:"operations"`
		PolicyKeys []string      `json:"policy_keys"`
		// AllowedKey is the policy key listing the writes allowed at all
		// (GitHub's `actions`), when the connector has one.
		AllowedKey string `json:"allowed_key,omitempty"`
	}
	catalogueAnswer struct {
		Connectors     []catalogueConnector `json:"connectors"`
		TaskOperations []catalogueOp        `json:"task_operations"`
	}
	// agentRefusal is every refusal an agent reads, with HTTP 200 or a
	// transport-level status: "<code>: <sentence>".
	agentRefusal struct {
		Success bool   `json:"success"`
		Error   string `json:"error"`
	}
)
