package probe_test

import (
	"testing"

	"countersign/connectors/connectortest"
)

// BenchmarkStart is guess_start through the harness: secret, salt, envelope
// and task hash.
func BenchmarkStart(b *testing.B) {
	h := connectortest.New(b, newProbe(b))
	for b.Loop() {
		if _, err := h.Call(ctx, `{"operation":"guess_start","max":1000}`); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGuess is one wrong guess through the harness, turn after turn of
// one game: the approval's checks, the judgement and the next turn.
func BenchmarkGuess(b *testing.B) {
	h := connectortest.New(b, newProbe(b))
	turn := start(b, h, `{"operation":"guess_start","max":1000}`)
	for b.Loop() {
		_, opened, err := h.Answer(ctx, turn, []byte("not a number"), "")
		if err != nil {
			b.Fatal(err)
		}
		turn = opened[0]
	}
}
