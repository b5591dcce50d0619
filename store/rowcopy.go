package store

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"payd"
)

// RowSet is the rows one piece of work inserted, table by table, as
// captured by RowsWritten: what the load benchmarks' same-rows baselines
// write again and again, without the request chain or the domain around
// them (docs/benchmarks.md, "Writes at scale").
type RowSet struct {
	tables []copiedTable
	// unique are the values of the rows' key-like columns (id, code, key,
	// address, reference), each replaced in every copy.
	unique []string
}

type copiedTable struct {
	name    string
	columns []string
	rows    [][]any
	insert  string
}

// derivedTables are written by triggers on the tables a RowSet copies, so
// a copy writes them too, as the original did; copying them would write
// them twice.
var derivedTables = []string{"search_queue", "payment_days", "payment_day_deltas", "stats_deltas"}

// parentTables are referred to by other tables' rows, in the order a copy
// inserts them.
var parentTables = []string{"customers", "links", "payments", "checkouts", "events"}

func parentRank(table string) int {
	if i := slices.Index(parentTables, table); i >= 0 {
		return i
	}
	return len(parentTables)
}

// uniqueColumns name the columns whose values a copy must not repeat.
var uniqueColumns = []string{"id", "code", "key", "address", "reference"}

// RowsWritten runs fn and returns the rows it inserted, found by comparing
// every table before and after; it is for small databases (a benchmark's
// set-up), and fails when a table changed by more than inserts, since an
// update cannot be copied as a row. Rows of the tables triggers derive are
// left out (derivedTables).
func (db *DB) RowsWritten(ctx context.Context, fn func() error) (*RowSet, error) {
	names, err := db.tableNames(ctx)
	if err != nil {
		return nil, err
	}
	before := map[string][][]any{}
	for _, name := range names {
		if _, before[name], err = db.allRows(ctx, name); err != nil {
			return nil, err
		}
	}
	if err := fn(); err != nil {
		return nil, err
	}
	set := &RowSet{}
	seen := map[string]bool{}
	for _, name := range names {
		cols, after, err := db.allRows(ctx, name)
		if err != nil {
			return nil, err
		}
		added := len(after) - len(before[name])
		if added <= 0 {
			continue
		}
		old := map[string]int{}
		for _, r := range before[name] {
			old[fmt.Sprint(r...)]++
		}
		var rows [][]any
		for _, r := range after {
			if k := fmt.Sprint(r...); old[k] > 0 {
				old[k]--
				continue
			}
			rows = append(rows, r)
		}
		if len(rows) != added {
			return nil, fmt.Errorf("store: %s gained %d rows but %d differ: it was updated too", name, added, len(rows))
		}
		params := make([]string, len(cols))
		for i, c := range cols {
			params[i] = "$" + strconv.Itoa(i+1)
			if !slices.Contains(uniqueColumns, c) {
				continue
			}
			for _, r := range rows {
				if s, ok := r[i].(string); ok && s != "" && !seen[s] {
					seen[s] = true
					set.unique = append(set.unique, s)
				}
			}
		}
		set.tables = append(set.tables, copiedTable{name: name, columns: cols, rows: rows,
			insert: "INSERT INTO " + name + " (" + strings.Join(cols, ", ") + ") VALUES (" + strings.Join(params, ", ") + ")"})
	}
	// Parents before the rows that refer to them.
	slices.SortStableFunc(set.tables, func(a, b copiedTable) int { return parentRank(a.name) - parentRank(b.name) })
	// Longer values first, so that no value is replaced inside a longer one.
	slices.SortFunc(set.unique, func(a, b string) int { return len(b) - len(a) })
	return set, nil
}

// Tables names the tables the set writes and how many rows each, for logs.
func (s *RowSet) Tables() string {
	var b strings.Builder
	for i, t := range s.tables {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %d", t.name, len(t.rows))
	}
	return b.String()
}

// InsertCopy writes one copy of the set in one transaction, one statement
// a row, with every key-like value replaced by a fresh one of the same
// shape (in every column, JSON text included).
func (db *DB) InsertCopy(ctx context.Context, s *RowSet) error {
	pairs := make([]string, 0, 2*len(s.unique))
	for _, u := range s.unique {
		pairs = append(pairs, u, freshLike(u))
	}
	r := strings.NewReplacer(pairs...)
	return db.transact(ctx, func(ctx context.Context, q *queries) error {
		for _, t := range s.tables {
			for _, row := range t.rows {
				args := make([]any, len(row))
				for i, v := range row {
					switch v := v.(type) {
					case string:
						args[i] = r.Replace(v)
					case []byte:
						args[i] = []byte(r.Replace(string(v)))
					default:
						args[i] = v
					}
				}
				if _, err := q.ex.ExecContext(ctx, t.insert, args...); err != nil {
					return fmt.Errorf("store: copying a row of %s: %w", t.name, err)
				}
			}
		}
		return nil
	})
}

// freshLike is a new value shaped like v: an id with v's prefix (so ids
// keep their time order), else v's first two characters and random ones.
func freshLike(v string) string {
	if i := strings.LastIndexByte(v, '_'); i >= 0 && len(v)-i-1 == 24 {
		return payd.NewID(v[:i+1])
	}
	keep := min(2, len(v))
	return v[:keep] + payd.RandomString(max(len(v)-keep, 8))
}

// tableNames lists the database's tables (in the DB's schema on
// PostgreSQL), the derived ones left out.
func (db *DB) tableNames(ctx context.Context) ([]string, error) {
	query := `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`
	if db.dialect == dialectPostgres {
		query = `SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename`
	}
	names, err := queryAll(ctx, db.read, func(rows rowScanner) (string, error) {
		var s string
		return s, rows.Scan(&s)
	}, query)
	return slices.DeleteFunc(names, func(n string) bool { return slices.Contains(derivedTables, n) }), err
}

// allRows reads every row of table with its column names.
func (db *DB) allRows(ctx context.Context, table string) ([]string, [][]any, error) {
	rows, err := db.read.QueryContext(ctx, "SELECT * FROM "+table)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, nil, err
	}
	var out [][]any
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, nil, err
		}
		out = append(out, vals)
	}
	return cols, out, rows.Err()
}
