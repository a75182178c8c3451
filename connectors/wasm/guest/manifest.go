package guest

import (
	"bytes"
	"encoding/json"

	"countersign/connectors/wasm/abi"
)

// ManifestJSON writes a manifest as manifest.json holds it: indented, its
// schemas as declared, ending in a newline.
func ManifestJSON(m abi.Manifest) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(m); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
