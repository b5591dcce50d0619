package store

import (
	"context"
	"database/sql"
	"embed"
	"hash/fnv"
	"io/fs"
	"strings"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"payd"
)

// migrations holds the numbered schema changes. NNNNN_name.sql is shared by
// both databases; a change the dialects spell differently comes as a pair,
// NNNNN_name.sqlite.sql and NNNNN_name.postgres.sql, of which each database
// runs its own.
//
//go:embed migrations/*.sql
var migrations embed.FS

// sqliteMigrateAttempts covers two processes migrating one SQLite file at
// once: the loser's first attempt fails on tables the winner just made,
// and its next attempt finds nothing left to do.
const sqliteMigrateAttempts = 3

// Migrate brings the schema up to date. Each migration runs in its own
// transaction and is recorded in goose_db_version. On PostgreSQL a
// session advisory lock makes replicas that start together take turns.
func (db *DB) Migrate(ctx context.Context) (err error) {
	defer payd.Wrap(&err, "store.Migrate(%s)", db.dialect)
	return db.migrateTo(ctx, 0)
}

// migrateTo applies the pending migrations up to version to, or all of
// them when to is 0 (tests stop early to write rows as older versions
// did).
func (db *DB) migrateTo(ctx context.Context, to int64) error {
	fsys, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return err
	}
	if db.dialect == dialectPostgres {
		return db.migratePostgres(ctx, fsys, to)
	}
	return db.migrateSQLite(ctx, fsys, to)
}

// migrateSQLite runs goose on a connection of its own: the writer's
// connection belongs to the writer goroutine.
func (db *DB) migrateSQLite(ctx context.Context, fsys fs.FS, to int64) error {
	mdb, err := openSQLiteDB(ctx, db.path, "migrate", 1)
	if err != nil {
		return err
	}
	defer mdb.Close()
	for range sqliteMigrateAttempts {
		if err = db.up(ctx, goose.DialectSQLite3, mdb, fsys, to); err == nil {
			return nil
		}
		// Info, not Warn: losing the race to another process is expected.
		db.log.InfoContext(ctx, "store: migration failed, retrying", "error", err)
	}
	return err
}

// migratePostgres holds an advisory lock while it migrates. The lock id is
// derived from the schema, so that databases in different schemas of one
// server (tests, several installations) do not wait for each other.
func (db *DB) migratePostgres(ctx context.Context, fsys fs.FS, to int64) error {
	var schema string
	if err := db.read.QueryRowContext(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
		return err
	}
	h := fnv.New64a()
	h.Write([]byte("payd migrate " + schema))
	locker, err := lock.NewPostgresSessionLocker(lock.WithLockID(int64(h.Sum64())), lock.WithLockTimeout(1, 600))
	if err != nil {
		return err
	}
	return db.up(ctx, goose.DialectPostgres, db.read, fsys, to, goose.WithSessionLocker(locker))
}

// up applies every pending migration of this dialect up to version to (0:
// all) and logs each one.
func (db *DB) up(ctx context.Context, dialect goose.Dialect, sdb *sql.DB, fsys fs.FS, to int64, opts ...goose.ProviderOption) error {
	other, err := otherDialectFiles(fsys, db.dialect)
	if err != nil {
		return err
	}
	opts = append(opts, goose.WithDisableGlobalRegistry(true), goose.WithExcludeNames(other),
		goose.WithGoMigrations(db.keyIDsMigration()))
	p, err := goose.NewProvider(dialect, sdb, fsys, opts...)
	if err != nil {
		return err
	}
	var results []*goose.MigrationResult
	if to > 0 {
		results, err = p.UpTo(ctx, to)
	} else {
		results, err = p.Up(ctx)
	}
	for _, r := range results {
		db.log.InfoContext(ctx, "store: migrated", "version", r.Source.Version, "file", r.Source.Path, "duration", r.Duration)
	}
	return err
}

// otherDialectFiles lists the migrations written for the other database.
func otherDialectFiles(fsys fs.FS, dialect string) ([]string, error) {
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return nil, err
	}
	var other []string
	for _, n := range names {
		base := strings.TrimSuffix(n, ".sql")
		if i := strings.LastIndexByte(base, '.'); i >= 0 && base[i+1:] != dialect {
			other = append(other, n)
		}
	}
	return other, nil
}
