package sealing_test

import (
	"crypto/ecdh"
	"fmt"

	"countersign/sealing"
)

// One task's trip: the enclave seals it, a device opens its copy and seals
// the owner's answer to the task's reply key, and the enclave opens that.
func Example() {
	keys := sealing.GenerateKeyring()
	const taskID = "r1-1"

	// Enclave: derive the task's keys under the current master key id and
	// seal its content and copy. The key id is stored beside the blobs.
	tk, err := keys.TaskKeys(keys.Current(), "4f1c2b9e-8a55-4c6e-9d0f-2b7a1e3c5d60", "alice.near", taskID)
	if err != nil {
		panic(err)
	}
	replyPubkey := sealing.FormatP256PublicKey(tk.ReplyKey().PublicKey()) // goes into the envelope
	ck := sealing.NewContentKey()
	content, _ := ck.SealContent(taskID, []byte(`{"envelope":"…","request":"…"}`))
	sealedCopy, _ := tk.Seal(sealing.TaskRecord, []byte(`{"content_key":"…"}`))

	// Device: its key pair; the enclave wraps the content key to it.
	device, _ := ecdh.P256().GenerateKey(nil)
	deviceCopy, _ := sealing.WrapContentKey(device.PublicKey(), taskID, ck)

	// Device: open the copy, read the content, answer to the reply key.
	key, err := sealing.UnwrapContentKey(device, taskID, deviceCopy)
	if err != nil {
		panic(err)
	}
	shown, _ := key.OpenContent(taskID, content)
	to, _ := sealing.ParseP256PublicKey(replyPubkey)
	answer, _ := sealing.SealTo(to, sealing.Answer, taskID, []byte("7"))

	// Enclave: open the answer and its own copy.
	got, err := sealing.OpenWith(tk.ReplyKey(), sealing.Answer, taskID, answer)
	if err != nil {
		panic(err)
	}
	_, err = tk.Open(sealing.TaskRecord, sealedCopy)
	fmt.Println(string(shown), string(got), err, keys)
	// Output: {"envelope":"…","request":"…"} 7 <nil> keyring{ids:[1], current:1}
}
