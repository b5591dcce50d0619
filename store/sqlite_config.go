package store

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

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
	if err := sqliteConfig(tls, sqlite3.SQLITE_CONFIG_STMTJRNL_SPILL, "SQLITE_CONFIG_STMTJRNL_SPILL", int32(stmtJournalSpill)); err != nil {
		return err
	}
	return wrapPageCacheRekey(tls)
}

// sqliteConfig calls sqlite3_config(op, arg); name is op's, for the error.
func sqliteConfig(tls *libc.TLS, op int32, name string, arg any) error {
	va := libc.NewVaList(arg)
	if va == 0 {
		return errors.New("store: sqlite3_config: out of memory")
	}
	defer libc.Xfree(tls, va)
	if rc := sqlite3.Xsqlite3_config(tls, op, va); rc != sqlite3.SQLITE_OK {
		return fmt.Errorf("store: sqlite3_config(%s) returned %d", name, rc)
	}
	return nil
}

// The page cache's temporary key.
//
// When SQLite rebalances a B-tree it renumbers the new pages so that they
// follow each other in the file, swapping two pages' numbers through a
// temporary one: the lock-byte page, at 1 GiB (page 262,145 with 4 KiB
// pages), which never holds data. SQLite's default page cache (pcache1)
// remembers the largest page number it has held (iMaxKey) and, at every
// commit, drops the pages past the end of the database. Once the temporary
// number has been used, the largest one is far past the end of any database
// under 1 GiB, so that commit walks the whole cache instead of the few slots
// past the end. With the writer's 64 MiB cache this walk was 8 % of the CPU
// and a fifth of the writer's time under TestLoad's POSTs (docs/storage.md,
// "The writer's page cache").
//
// wrapPageCacheRekey therefore wraps the page cache's rekey method: when a
// page leaves the temporary number, the largest number held goes back to
// what it was before the page took it (or the page's new number, if that is
// larger). No page holds the temporary number at that point, so iMaxKey is
// again an upper bound of the keys held, which is all pcache1 needs of it.
// The swap's three rekeys run one after the other on one connection's
// cache, inside one rebalance, with nothing in between.

// lockBytePage is the page holding the database's lock bytes (SQLite's
// PENDING_BYTE, 0x40000000, on a page of pageSize bytes).
func lockBytePage(pageSize int32) uint32 { return 0x40000000/uint32(pageSize) + 1 }

var (
	// pcacheRekey is the default page cache's xRekey.
	pcacheRekey uintptr
	// maxBeforeTemp holds, per page cache, its largest key before a page
	// took the temporary number.
	maxBeforeTemp sync.Map // uintptr → uint32
	// tempKeysUndone counts rekeys out of the temporary number whose raised
	// largest key was put back, for tests.
	tempKeysUndone atomic.Int64
)

// wrapPageCacheRekey installs rekeyPage in place of the default page cache's
// rekey method, keeping its other methods.
func wrapPageCacheRekey(tls *libc.TLS) error {
	var m sqlite3.Tsqlite3_pcache_methods2 // SQLite copies it in and out
	defer runtime.KeepAlive(&m)
	if err := sqliteConfig(tls, sqlite3.SQLITE_CONFIG_GETPCACHE2, "SQLITE_CONFIG_GETPCACHE2", uintptr(unsafe.Pointer(&m))); err != nil {
		return err
	}
	if m.FxRekey == 0 {
		return errors.New("store: the SQLite page cache has no rekey method")
	}
	pcacheRekey, m.FxRekey = m.FxRekey, cFunc(rekeyPage)
	return sqliteConfig(tls, sqlite3.SQLITE_CONFIG_PCACHE2, "SQLITE_CONFIG_PCACHE2", uintptr(unsafe.Pointer(&m)))
}

// rekeyPage is the page cache's rekey method: the default one, then the
// largest key put back when a page leaves the temporary number (above).
func rekeyPage(tls *libc.TLS, cache, page uintptr, from, to uint32) {
	c := (*sqlite3.TPCache1)(*(*unsafe.Pointer)(unsafe.Pointer(&cache))) // C memory: SQLite's own PCache1
	temp := lockBytePage(c.FszPage)
	before := c.FiMaxKey
	(*(*func(*libc.TLS, uintptr, uintptr, uint32, uint32))(unsafe.Pointer(&struct{ uintptr }{pcacheRekey})))(tls, cache, page, from, to)
	switch {
	case to == temp && before < temp:
		maxBeforeTemp.Store(cache, before)
	case from == temp:
		if v, ok := maxBeforeTemp.LoadAndDelete(cache); ok && c.FiMaxKey == temp {
			c.FiMaxKey = max(v.(uint32), to)
			tempKeysUndone.Add(1)
		}
	}
}

// cFunc returns the function pointer the C code translated by modernc.org
// calls f through (the data word of f in an interface, as its own ccgo
// function pointers are made). f must be a top-level function.
func cFunc(f any) uintptr { return (*[2]uintptr)(unsafe.Pointer(&f))[1] }
