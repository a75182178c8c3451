package sqlstore_test

import (
	"testing"

	"countersign/store"
	"countersign/store/storetest"
)

func TestConformancePostgres(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return storetest.Postgres(t) })
}

func TestConformanceSQLite(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return storetest.SQLite(t) })
}
