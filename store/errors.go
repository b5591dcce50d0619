package store

import (
	"database/sql"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"payd"
)

// PostgreSQL SQLSTATE codes the store acts on.
const (
	pgUniqueViolation      = "23505"
	pgSerializationFailure = "40001"
	pgDeadlockDetected     = "40P01"
	pgLockNotAvailable     = "55P03"
)

// fail maps a driver error to payd's error type and adds context once. It is
// deferred by every query method: defer fail(&err, "business", "store.X(%s)", id).
// Errors are recognised by code, never by message text, so a driver's
// wording or language cannot change what a client sees.
func fail(errp *error, noun, format string, args ...any) {
	if *errp == nil {
		return
	}
	*errp = mapError(*errp, noun)
	payd.Wrap(errp, format, args...)
}

// mapError turns "no rows" into not_found and a unique violation into
// conflict; every other error passes through unchanged.
func mapError(err error, noun string) error {
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return payd.Errorf(payd.ErrNotFound, "%s not found", noun)
	case isUniqueViolation(err):
		return payd.Errorf(payd.ErrConflict, "%s already exists", noun)
	}
	return err
}

// isUniqueViolation reports a UNIQUE or PRIMARY KEY violation on either
// database.
func isUniqueViolation(err error) bool {
	if code, ok := sqliteCode(err); ok {
		return code == sqlite3.SQLITE_CONSTRAINT_UNIQUE || code == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
	}
	return pgCode(err) == pgUniqueViolation
}

// isBusy reports that another connection (usually another process) holds
// SQLite's write lock for longer than busy_timeout.
func isBusy(err error) bool {
	code, ok := sqliteCode(err)
	return ok && code&0xff == sqlite3.SQLITE_BUSY
}

// isRetryablePG reports a PostgreSQL failure after which the whole
// transaction can safely run again.
func isRetryablePG(err error) bool {
	code := pgCode(err)
	return code == pgSerializationFailure || code == pgDeadlockDetected
}

// sqliteCode returns SQLite's extended result code.
func sqliteCode(err error) (int, bool) {
	var e *sqlite.Error
	if errors.As(err, &e) {
		return e.Code(), true
	}
	return 0, false
}

// pgCode returns PostgreSQL's SQLSTATE, or "" for other errors.
func pgCode(err error) string {
	var e *pgconn.PgError
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// errClosed answers calls made after Close.
var errClosed = errors.New("store: database is closed")

// errTxEnded breaks a batch whose transaction ended while one of its jobs ran.
var errTxEnded = errors.New("store: the transaction ended inside a transaction function")

// panicError is what a transaction function's panic becomes: the panic
// fails that transaction only, never its batch or the process.
type panicError struct{ value any }

func (e panicError) Error() string {
	return fmt.Sprintf("store: transaction function panicked: %v", e.value)
}
