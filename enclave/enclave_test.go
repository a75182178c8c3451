package enclave_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"countersign"
	"countersign/connectors"
	"countersign/enclave"
	"countersign/enclave/calls"
	"countersign/sealing"
	"countersign/store"
	"countersign/store/sqlstore"
	"countersign/store/storetest"
)

var ctx = context.Background()

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func newEnclave(t *testing.T) (*calls.Service, *sealing.Keyring) {
	keys := sealing.GenerateKeyring()
	return calls.New(calls.Config{Deps: enclave.Deps{Keys: enclave.New(enclave.Config{Keyring: keys, PublicURL: "https://inbox.example"}),
		Now: func() time.Time { return t0 }}, PublicURL: "https://inbox.example"}), keys
}

func project(owner string) calls.Project {
	return calls.Project{
		Owner: owner, Name: "probe", UUID: "4f1c2b9e-8a55-4c6e-9d0f-2b7a1e3c5d60",
		Connector: "probe", Build: "probe@1.0.0",
		PolicyHash: "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a",
	}
}

func newRun(owner, agent string) *calls.Run {
	return &calls.Run{ID: countersign.NewRunID(), Agent: agent, Project: project(owner),
		Request: []byte(`{"operation":"guess_start"}`), ComputeLimit: 30 * time.Second}
}

func inputSpec(title string) connectors.TaskSpec {
	return connectors.TaskSpec{
		Kind: countersign.KindInput,
		Display: countersign.Display{Title: title, Summary: "give the agent your guess", Fields: []countersign.Field{
			{Kind: countersign.FieldText, Label: "Question", Values: []string{"Your guess?"}, WrittenBy: "project"},
		}},
		AnswerBy: &countersign.AnswerBy{Operation: "guess", Supplies: countersign.SuppliesText},
		State:    []byte("state"),
	}
}

func open(t *testing.T, e *calls.Service, db store.Store, run *calls.Run, spec connectors.TaskSpec) (calls.Opened, error) {
	return openIn(t, e, db, run, spec, "")
}

func openIn(t *testing.T, e *calls.Service, db store.Store, run *calls.Run, spec connectors.TaskSpec, thread string) (calls.Opened, error) {
	t.Helper()
	var got calls.Opened
	err := db.Tx(ctx, func(tx store.Tx) (err error) {
		got, err = e.OpenTask(ctx, tx, run, spec, thread)
		return err
	})
	return got, err
}

// TestOpenTaskIsReadableByTheRightKeysOnly opens a task with files and reads
// it back as the owner's device and as the enclave would.
func TestOpenTaskIsReadableByTheRightKeysOnly(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		e, keys := newEnclave(t)
		run := newRun("alice.near", "bot.near")
		spec := inputSpec("Guess my number")
		spec.Files = []connectors.File{{Name: "a.pdf", ContentType: "application/pdf", Data: []byte("%PDF-1.7 stand-in")}}
		got, err := open(t, e, db, run, spec)
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != run.ID+"-1" || got.Thread != got.ID || !got.ExpiresAt.Equal(t0.Add(24*time.Hour)) || got.Kind != countersign.KindInput {
			t.Fatalf("opened %+v", got)
		}
		var task store.Task
		var sealed, content, file []byte
		var keyID uint32
		_ = db.Tx(ctx, func(tx store.Tx) (err error) {
			task, _ = tx.Task(ctx, got.ID)
			sealed, keyID, _ = tx.Sealed(ctx, got.ID)
			content, _ = tx.Content(ctx, got.ID)
			file, _ = tx.File(ctx, got.ID, 0)
			return nil
		})
		if task.State != countersign.StateOpen || task.TaskHash != got.Hash || task.Operation != "guess" || task.Supplies != "text" || keyID != keys.Current() {
			t.Fatalf("stored task %+v", task)
		}
		tk, err := keys.TaskKeys(keyID, task.ProjectUUID, task.Owner, task.ID)
		if err != nil {
			t.Fatal(err)
		}
		plain, err := tk.Open(sealing.TaskRecord, sealed)
		if err != nil {
			t.Fatal(err)
		}
		var sc struct {
			ContentKey string          `json:"content_key"`
			Envelope   string          `json:"envelope"`
			State      []byte          `json:"state"`
			Voucher    json.RawMessage `json:"voucher"`
		}
		if err := json.Unmarshal(plain, &sc); err != nil {
			t.Fatal(err)
		}
		if countersign.TaskHash([]byte(sc.Envelope)) != got.Hash || string(sc.State) != "state" {
			t.Fatalf("sealed copy does not match the task: %s", plain)
		}
		env, err := countersign.ParseEnvelope([]byte(sc.Envelope))
		if err != nil {
			t.Fatal(err)
		}
		if env.ReplyPubkey != sealing.FormatP256PublicKey(tk.ReplyKey().PublicKey()) || env.ReplyPubkey != task.ReplyPubkey {
			t.Fatal("the envelope's reply key is not the task's derived reply key")
		}
		if env.Files[0].Size != int64(len(spec.Files[0].Data)) || env.Thread != got.ID || env.Preparer != "bot.near" {
			t.Fatalf("envelope %+v", env)
		}
		raw, _ := hex.DecodeString(sc.ContentKey)
		ck, err := sealing.ContentKeyFromBytes(raw)
		if err != nil {
			t.Fatal(err)
		}
		cplain, err := ck.OpenContent(got.ID, content)
		if err != nil {
			t.Fatal(err)
		}
		var c struct{ Envelope, Request string }
		if err := json.Unmarshal(cplain, &c); err != nil || c.Envelope != sc.Envelope || c.Request != string(run.Request) {
			t.Fatalf("content %s (%v)", cplain, err)
		}
		fplain, err := ck.OpenFile(got.ID, 0, file)
		if err != nil || !bytes.Equal(fplain, spec.Files[0].Data) {
			t.Fatalf("file: %q %v", fplain, err)
		}
		// Another keyring derives other keys: the sealed copy does not open.
		other, _ := sealing.GenerateKeyring().TaskKeys(1, task.ProjectUUID, task.Owner, task.ID)
		if _, err := other.Open(sealing.TaskRecord, sealed); err == nil {
			t.Fatal("a sealed copy opened under another master key")
		}
	})
}

func code(err error) countersign.Code { return countersign.ErrorCode(err) }

// TestOpenTaskLimits: every limit holds whatever the connector asks, and a
// refused task writes nothing.
func TestOpenTaskLimits(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		e, _ := newEnclave(t)

		t.Run("five per run", func(t *testing.T) {
			run := newRun("runlimit.near", "bot.near")
			for i := 0; i < countersign.MaxTasksPerRun; i++ {
				if _, err := open(t, e, db, run, inputSpec("Task")); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := open(t, e, db, run, inputSpec("Task")); code(err) != countersign.TaskRunLimit {
				t.Fatalf("6th task of a run: %v", err)
			}
		})
		t.Run("ten per preparer, twenty per owner", func(t *testing.T) {
			for i := 0; i < countersign.MaxActiveTasksPerPreparer; i++ {
				if _, err := open(t, e, db, newRun("full.near", "bot.near"), inputSpec("Task")); err != nil {
					t.Fatal(err)
				}
			}
			run := newRun("full.near", "bot.near")
			if _, err := open(t, e, db, run, inputSpec("Task")); code(err) != countersign.InboxFull {
				t.Fatalf("11th task of a preparer: %v", err)
			}
			assertNoTask(t, db, run.ID+"-1")
			for i := 0; i < 10; i++ {
				if _, err := open(t, e, db, newRun("full.near", fmt.Sprintf("bot%d.near", i)), inputSpec("Task")); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := open(t, e, db, newRun("full.near", "late.near"), inputSpec("Task")); code(err) != countersign.InboxFull {
				t.Fatalf("21st task of an owner: %v", err)
			}
		})
		t.Run("64 MiB waiting", func(t *testing.T) {
			big := make([]byte, 6<<20-1024) // ten fit in 64 MiB, the eleventh does not
			for i := 0; i < 11; i++ {
				spec := inputSpec("Files")
				spec.Files = []connectors.File{{Name: "f.bin", ContentType: "application/octet-stream", Data: big}}
				_, err := open(t, e, db, newRun("heavy.near", fmt.Sprintf("bot%d.near", i)), spec)
				switch {
				case i < 10 && err != nil:
					t.Fatalf("task %d: %v", i+1, err)
				case i == 10 && code(err) != countersign.InboxFull:
					t.Fatalf("the task past 64 MiB: %v", err)
				}
			}
		})
		t.Run("refusals of the task itself", func(t *testing.T) {
			cases := []struct {
				name string
				edit func(*connectors.TaskSpec)
				want countersign.Code
			}{
				{"life over 24 h", func(s *connectors.TaskSpec) { s.Life = 24*time.Hour + time.Second }, countersign.TaskLifeTooLong},
				{"negative life", func(s *connectors.TaskSpec) { s.Life = -time.Second }, countersign.TaskLifeTooLong},
				{"state over 256 KiB", func(s *connectors.TaskSpec) { s.State = make([]byte, 256<<10+1) }, countersign.TaskTooLarge},
				{"title too long", func(s *connectors.TaskSpec) { s.Display.Title = strings.Repeat("x", 81) }, countersign.DisplayInvalid},
				{"bidi in a value", func(s *connectors.TaskSpec) { s.Display.Fields[0].Values[0] = "a\u202eb" }, countersign.DisplayInvalid},
				{"files over 6 MiB", func(s *connectors.TaskSpec) {
					s.Files = []connectors.File{{Name: "a", ContentType: "text/plain", Data: make([]byte, 6<<20+1)}}
				}, countersign.TaskTooLarge},
				{"notice with an answer", func(s *connectors.TaskSpec) { s.Kind = countersign.KindNotice }, countersign.InvalidRequest},
				{"input without an answer", func(s *connectors.TaskSpec) { s.AnswerBy = nil }, countersign.InvalidRequest},
			}
			for _, tc := range cases {
				spec := inputSpec("Task")
				tc.edit(&spec)
				run := newRun("refusals.near", "bot.near")
				if _, err := open(t, e, db, run, spec); code(err) != tc.want {
					t.Errorf("%s: %v, want %s", tc.name, err, tc.want)
				}
				assertNoTask(t, db, run.ID+"-1")
			}
		})
		t.Run("threads stay with their preparer", func(t *testing.T) {
			first, err := open(t, e, db, newRun("thread.near", "bot.near"), inputSpec("Turn 1"))
			if err != nil {
				t.Fatal(err)
			}
			spec := inputSpec("Turn 2")
			next, err := openIn(t, e, db, newRun("thread.near", "bot.near"), spec, first.ID)
			if err != nil || next.Thread != first.ID {
				t.Fatalf("next turn: %+v %v", next, err)
			}
			if _, err := openIn(t, e, db, newRun("thread.near", "intruder.near"), spec, first.ID); code(err) != countersign.InvalidRequest {
				t.Fatalf("another agent joined the thread: %v", err)
			}
			if _, err := openIn(t, e, db, newRun("thread.near", "bot.near"), spec, "nosuch-1"); code(err) != countersign.InvalidRequest {
				t.Fatalf("an unknown thread: %v", err)
			}
		})
	})
}

func assertNoTask(t *testing.T, db store.Store, id string) {
	t.Helper()
	_ = db.Tx(ctx, func(tx store.Tx) error {
		if _, err := tx.Task(ctx, id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a refused task %s was written (%v)", id, err)
		}
		return nil
	})
}

func canary(t *testing.T, what string) string {
	var b [10]byte
	_, _ = rand.Read(b[:])
	return "canary" + what + hex.EncodeToString(b[:])
}

// TestCiphertextOnly opens tasks whose every shown part holds a canary, then
// reads every byte of every table of the store: no canary may appear, in
// clear, hex or base64.
func TestCiphertextOnly(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		e, _ := newEnclave(t)
		var canaries []string
		c := func(what string) string {
			s := canary(t, what)
			canaries = append(canaries, s)
			return s
		}
		for i := 0; i < 3; i++ {
			run := newRun("alice.near", "bot.near")
			run.Request = []byte(`{"operation":"send","to":"` + c("request") + `"}`)
			spec := connectors.TaskSpec{
				Kind: countersign.KindConfirm,
				Display: countersign.Display{Title: "Send " + c("title"), Summary: "send " + c("summary"), Fields: []countersign.Field{
					{Kind: countersign.FieldMoney, Label: "Amount " + c("label"), Values: []string{c("money")}, WrittenBy: "agent"},
					{Kind: countersign.FieldAccount, Label: "To", Values: []string{c("account")}, WrittenBy: "agent"},
					{Kind: countersign.FieldAddress, Label: "Where", Values: []string{c("address")}, WrittenBy: "project"},
					{Kind: countersign.FieldText, Label: "Subject", Values: []string{c("text")}, WrittenBy: "agent"},
					{Kind: countersign.FieldLongText, Label: "Body", Values: []string{"line\n" + c("longtext")}, WrittenBy: "agent"},
					{Kind: countersign.FieldList, Label: "Cc", Values: []string{c("list1"), c("list2")}, WrittenBy: "agent"},
				}},
				Files: []connectors.File{
					{Name: c("filename") + ".txt", ContentType: "text/plain", Data: []byte("body " + c("filebytes"))},
				},
				AnswerBy: &countersign.AnswerBy{Operation: "confirm", Supplies: countersign.SuppliesNone},
				State:    []byte(`{"secret":"` + c("state") + `"}`),
			}
			got, err := open(t, e, db, run, spec)
			if err != nil {
				t.Fatal(err)
			}
			if i == 2 {
				// A closed task leaves its ciphertext behind in dead rows and
				// freed pages: still no canary.
				if err := db.Tx(ctx, func(tx store.Tx) error {
					k, err := tx.Task(ctx, got.ID)
					if err != nil {
						return err
					}
					reject, err := countersign.Transition(k.Kind, countersign.StateOpen, countersign.StateRejected, countersign.ActorOwner, "")
					if err != nil {
						return err
					}
					_, err = tx.MoveTask(ctx, store.Move{ID: got.ID, Move: reject, At: t0})
					return err
				}); err != nil {
					t.Fatal(err)
				}
			}
		}
		if found := storetest.Find(t, db, canaries...); len(found) > 0 {
			t.Fatalf("what a task shows is stored in clear:\n%s", strings.Join(found, "\n"))
		}
	})
}

// TestCanaryScanFindsClearText proves the scan above can fail: a value put in
// clear into any table is found, in each of its forms.
func TestCanaryScanFindsClearText(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		e, _ := newEnclave(t)
		got, err := open(t, e, db, newRun("alice.near", "bot.near"), inputSpec("Task"))
		if err != nil {
			t.Fatal(err)
		}
		for _, form := range []string{"clear", "hex", "base64"} {
			secret := canary(t, form)
			stored := secret
			switch form {
			case "hex":
				stored = hex.EncodeToString([]byte(secret))
			case "base64":
				stored = base64.StdEncoding.EncodeToString([]byte("ab" + secret + "cd"))
			}
			if err := db.Tx(ctx, func(tx store.Tx) error {
				return tx.PutDeviceCopy(ctx, got.ID, "dev-"+form, []byte("prefix "+stored+" suffix"))
			}); err != nil {
				t.Fatal(err)
			}
			if found := storetest.Find(t, db, secret); len(found) == 0 {
				t.Errorf("a %s secret stored in a table was not found", form)
			}
		}
	})
}
