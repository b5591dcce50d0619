package store

import (
	"context"
	"database/sql"
	"strings"
)

// TextValue is one stored text value: a row's value of one column.
type TextValue struct {
	Table, Column, Value string
}

// TextValues calls fn with every text value of every column of every
// table of the database (on SQLite every value whose type is text or
// blob, whatever the column declares; on PostgreSQL every text, character,
// JSON, array and bytea column), stopping at fn's first error. It is an
// audit: tests show with it that no password, code, token or session id
// is stored in plain text (docs/accounts.md). It reads the whole database:
// never call it on a request path.
func (db *DB) TextValues(ctx context.Context, fn func(TextValue) error) error {
	cols, err := db.textColumns(ctx)
	if err != nil {
		return err
	}
	for _, c := range cols {
		if err := db.eachText(ctx, c, fn); err != nil {
			return err
		}
	}
	return nil
}

// textColumn is a column TextValues reads, with the expression that reads
// it as text.
type textColumn struct {
	table, column, expr string
}

// quoteIdent quotes a name read from the catalogue for splicing into SQL.
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

func (db *DB) textColumns(ctx context.Context) ([]textColumn, error) {
	if db.dialect == "postgres" {
		return queryAll(ctx, db.read, func(row rowScanner) (textColumn, error) {
			var c textColumn
			var typ string
			err := row.Scan(&c.table, &c.column, &typ)
			c.expr = "CAST(" + quoteIdent(c.column) + " AS TEXT)"
			if typ == "bytea" {
				c.expr = "encode(" + quoteIdent(c.column) + ", 'escape')"
			}
			return c, err
		}, `SELECT c.table_name, c.column_name, c.data_type FROM information_schema.columns c
			JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
			WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'
			  AND c.data_type IN ('text', 'character varying', 'character', 'json', 'jsonb', 'ARRAY', 'bytea')
			ORDER BY c.table_name, c.ordinal_position`)
	}
	tables, err := queryAll(ctx, db.read, func(row rowScanner) (string, error) {
		var s string
		return s, row.Scan(&s)
	}, `SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`)
	if err != nil {
		return nil, err
	}
	var out []textColumn
	for _, t := range tables {
		cols, err := queryAll(ctx, db.read, func(row rowScanner) (string, error) {
			var s string
			return s, row.Scan(&s)
		}, `SELECT name FROM pragma_table_info($1) ORDER BY cid`, t)
		if err != nil {
			return nil, err
		}
		for _, c := range cols {
			q := quoteIdent(c)
			out = append(out, textColumn{table: t, column: c,
				expr: "CASE WHEN typeof(" + q + ") IN ('text', 'blob') THEN CAST(" + q + " AS TEXT) END"})
		}
	}
	return out, nil
}

// eachText calls fn with the non-null text values of one column.
func (db *DB) eachText(ctx context.Context, c textColumn, fn func(TextValue) error) error {
	rows, err := db.read.QueryContext(ctx, `SELECT v FROM (SELECT `+c.expr+` AS v FROM `+quoteIdent(c.table)+`) x WHERE v IS NOT NULL`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var v sql.RawBytes
		if err := rows.Scan(&v); err != nil {
			return err
		}
		if err := fn(TextValue{Table: c.table, Column: c.column, Value: string(v)}); err != nil {
			return err
		}
	}
	return rows.Err()
}
