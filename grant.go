package countersign

// Grant is a project an agent key may call: its owner, its name and the
// connector it installs.
type Grant struct {
	Owner     string `json:"owner"`
	Project   string `json:"project"`
	Connector string `json:"connector"`
}
