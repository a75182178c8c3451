package sqlstore

// ParseEvent reads a task event's NOTIFY payload, for tests.
var ParseEvent = parseEvent
