package store

import (
	"fmt"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// stmtJournalSpill is how large SQLite lets a statement journal grow in
// memory before it moves it to a temporary file (SQLITE_CONFIG_STMTJRNL_SPILL;
// SQLite's default is 64 KiB). A statement that may fail after changing
// some rows (several rows, or a trigger: the payment's insert, the events'
// multi-row insert) copies each page it first changes there, so that it
// alone can be undone. The payment's insert touches more pages of its
// table, indexes and triggers' tables than 64 KiB holds; once
// spilled the journal stays a file for the rest of the batch's transaction,
// and each page cost two pwrite calls. The in-memory journal is one chunk of
// this size, so it must stay below the 128 KiB that SQLite's unix VFS
// writes in one call when the journal does spill: with more, the spill's
// write comes up short and fails as SQLITE_FULL. (temp_store(MEMORY) has no
// limit but keeps the journal in 1 KiB chunks that every statement's
// release walks, which made large transactions nine times slower.)
const stmtJournalSpill = 127 << 10

// sqliteConfigErr is the outcome of configuring the SQLite library, which
// must happen before the process opens its first connection: this package
// is initialized before any code that uses it can open one. A failure only
// costs speed, so it is reported when a database is opened, not fatal.
var sqliteConfigErr = configureSQLite()

// configureSQLite sets the process-wide SQLite options (sqlite3_config).
func configureSQLite() error {
	tls := libc.NewTLS()
	defer tls.Close()
	va := libc.NewVaList(int32(stmtJournalSpill))
	if va == 0 {
		return fmt.Errorf("store: sqlite3_config: out of memory")
	}
	defer libc.Xfree(tls, va)
	if rc := sqlite3.Xsqlite3_config(tls, sqlite3.SQLITE_CONFIG_STMTJRNL_SPILL, va); rc != sqlite3.SQLITE_OK {
		return fmt.Errorf("store: sqlite3_config(SQLITE_CONFIG_STMTJRNL_SPILL) returned %d", rc)
	}
	return nil
}
