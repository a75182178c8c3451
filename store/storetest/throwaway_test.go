package storetest

import (
	"context"
	"os"
	"testing"

	"countersign/store/sqlstore"
)

// A throwaway PostgreSQL, as a fresh machine without one running gets: it
// starts from the machine's binaries, takes the migrations, keeps them
// across a halt and a resume, and is gone, directory and all, when stopped.
func TestThrowawayPostgres(t *testing.T) {
	t.Parallel()
	if _, err := postgresBin(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	srv, err := StartPostgres("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	url, stop := srv.URL, srv.Stop
	if url == PostgresURL() {
		t.Fatalf("the throwaway server is the tests' own database %s", url)
	}
	ctx := context.Background()
	db, err := sqlstore.OpenPostgres(ctx, url, "")
	if err != nil {
		stop()
		t.Fatal(err)
	}
	if _, err := db.Migrate(ctx); err != nil {
		t.Errorf("migrate the throwaway database: %v", err)
	}
	if st, err := db.Schema(ctx); err != nil || st.Behind() {
		t.Errorf("the throwaway database's schema: %+v %v", st, err)
	}
	db.Close()

	// Halted, it answers nobody; resumed, it has kept its data.
	if err := srv.Halt(); err != nil {
		stop()
		t.Fatal(err)
	}
	if answers(url) {
		stop()
		t.Fatal("the throwaway server answers while halted")
	}
	if err := srv.Resume(); err != nil {
		stop()
		t.Fatal(err)
	}
	if db, err = sqlstore.OpenPostgres(ctx, url, ""); err != nil {
		stop()
		t.Fatal(err)
	}
	if st, err := db.Schema(ctx); err != nil || st.Behind() {
		t.Errorf("the resumed database's schema: %+v %v", st, err)
	}
	db.Close()
	stop()
	if answers(url) {
		t.Fatal("the throwaway server still answers after stop")
	}
}
