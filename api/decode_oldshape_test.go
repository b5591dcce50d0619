package api

import (
	"cmp"
	"reflect"
	"slices"
	"strings"
	"sync"
	"unicode"
)

// shapeKind says which JSON values a Go type accepts, as far as strict
// decoding cares. It follows encoding/json's own rules, so that whatever the
// strict check lets through, json.Decoder then decodes without complaint.
type shapeKind uint8

// The shape kinds. shapeAny covers interface{} and the inside of values that
// decode themselves: any JSON goes, but strings and keys are still checked.
const (
	shapeAny shapeKind = iota
	shapeUnmarshaler
	shapeText
	shapePointer
	shapeStruct
	shapeMap
	shapeSlice
	shapeArray
	shapeString
	shapeNumber
	shapeBool
	shapeInt
	shapeUint
	shapeFloat
	shapeQuoted
	shapeInvalid
)

// jsonShape is what the strict decoder knows about one Go type: the JSON
// kinds it takes and, for containers, the shapes of what it holds.
type jsonShape struct {
	kind   shapeKind
	typ    reflect.Type          // the Go type, for unmarshalers, range checks and messages
	elem   *jsonShape            // pointer target, slice, array or map element, quoted scalar
	key    *jsonShape            // map key: shapeString, shapeInt, shapeUint or shapeText
	fields map[string]*jsonShape // struct members by exact JSON name
	bytes  bool                  // a []byte, which also takes a base64 string
	length int                   // an array's fixed length
}

// anyShape is the shape of interface{}, shared because it has no parts.
var anyShape = &jsonShape{kind: shapeAny}

// invalidShape is the shape of Go types that JSON cannot fill (channels,
// functions, non-empty interfaces, unsupported map keys).
var invalidShape = &jsonShape{kind: shapeInvalid}

// shapeKey names a cached shape. encoding/json looks for UnmarshalJSON on an
// unnamed type only when it reached the value through a pointer, so for
// unnamed types the way in is part of the key.
type shapeKey struct {
	t      reflect.Type
	viaPtr bool
}

// newShapeKey normalises viaPtr away for named types, which behave the same
// either way.
func newShapeKey(t reflect.Type, viaPtr bool) shapeKey {
	return shapeKey{t: t, viaPtr: viaPtr && t.Name() == ""}
}

// shapeCache holds finished shapes by shapeKey; reflection runs once per type.
var shapeCache sync.Map

// jsonShapeOf returns the shape of t, building and caching it on first use.
func jsonShapeOf(t reflect.Type, viaPtr bool) *jsonShape {
	if v, ok := shapeCache.Load(newShapeKey(t, viaPtr)); ok {
		return v.(*jsonShape)
	}
	b := shapeBuilder{seen: map[shapeKey]*jsonShape{}}
	sh := b.build(t, viaPtr)
	// Publish only now: shapes of recursive types are incomplete until the
	// outermost build returns.
	for k, v := range b.seen {
		shapeCache.LoadOrStore(k, v)
	}
	return sh
}

// shapeBuilder builds the shapes of one type and of everything it contains,
// remembering those under construction so that recursive types terminate.
type shapeBuilder struct {
	seen map[shapeKey]*jsonShape
}

// build returns the shape of t reached directly (viaPtr false) or through a
// pointer.
func (b *shapeBuilder) build(t reflect.Type, viaPtr bool) *jsonShape {
	k := newShapeKey(t, viaPtr)
	if sh := b.seen[k]; sh != nil {
		return sh
	}
	sh := &jsonShape{typ: t}
	b.seen[k] = sh
	b.fill(sh, t, viaPtr)
	return sh
}

// fill sets sh's kind and parts, checking the decoding interfaces in the
// order encoding/json does.
func (b *shapeBuilder) fill(sh *jsonShape, t reflect.Type, viaPtr bool) {
	methods := viaPtr || t.Name() != ""
	switch {
	case t.Kind() == reflect.Pointer:
		sh.kind, sh.elem = shapePointer, b.build(t.Elem(), true)
	case methods && reflect.PointerTo(t).Implements(jsonUnmarshalerType):
		sh.kind = shapeUnmarshaler
	case methods && reflect.PointerTo(t).Implements(textUnmarshalerType):
		sh.kind = shapeText
	case t == jsonNumberType:
		sh.kind = shapeNumber
	default:
		b.fillByKind(sh, t)
	}
}

// fillByKind handles types without decoding methods.
func (b *shapeBuilder) fillByKind(sh *jsonShape, t reflect.Type) {
	switch t.Kind() {
	case reflect.Interface:
		sh.kind = shapeInvalid
		if t.NumMethod() == 0 {
			sh.kind = shapeAny
		}
	case reflect.Struct:
		sh.kind = shapeStruct
		sh.fields = map[string]*jsonShape{}
		b.fillFields(sh, t)
	case reflect.Map:
		sh.kind, sh.key, sh.elem = shapeMap, mapKeyShape(t.Key()), b.build(t.Elem(), false)
		if sh.key == nil {
			sh.kind = shapeInvalid
		}
	case reflect.Slice:
		sh.kind, sh.elem = shapeSlice, b.build(t.Elem(), false)
		sh.bytes = t.Elem().Kind() == reflect.Uint8
	case reflect.Array:
		sh.kind, sh.elem, sh.length = shapeArray, b.build(t.Elem(), false), t.Len()
	default:
		sh.kind = scalarShapeKind(t.Kind())
	}
}

// scalarShapeKind maps Go's scalar kinds to shape kinds; anything else cannot be
// decoded from JSON.
func scalarShapeKind(k reflect.Kind) shapeKind {
	switch k {
	case reflect.String:
		return shapeString
	case reflect.Bool:
		return shapeBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return shapeInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return shapeUint
	case reflect.Float32, reflect.Float64:
		return shapeFloat
	}
	return shapeInvalid
}

// mapKeyShape returns how a map's keys are checked, or nil when encoding/json
// cannot decode into maps with such keys.
func mapKeyShape(kt reflect.Type) *jsonShape {
	if reflect.PointerTo(kt).Implements(textUnmarshalerType) {
		return &jsonShape{kind: shapeText, typ: kt}
	}
	switch k := scalarShapeKind(kt.Kind()); k {
	case shapeString, shapeInt, shapeUint:
		return &jsonShape{kind: k, typ: kt}
	}
	return nil
}

// fillFields adds the struct's JSON members, wrapping those with the
// ",string" option and refusing those encoding/json cannot set.
func (b *shapeBuilder) fillFields(sh *jsonShape, t reflect.Type) {
	for _, f := range jsonFields(t) {
		fs := b.build(fieldTypeByIndex(t, f.index), false)
		switch {
		case f.unsettable:
			fs = invalidShape
		case f.quoted:
			fs = quotedShape(fs)
		}
		sh.fields[f.name] = fs
	}
}

// quotedShape wraps the shape of a ",string" field. Only plain scalars are
// supported; a scalar that decodes itself is refused rather than guessed at.
func quotedShape(inner *jsonShape) *jsonShape {
	s := inner
	for s.kind == shapePointer {
		s = s.elem
	}
	switch s.kind {
	case shapeString, shapeBool, shapeInt, shapeUint, shapeFloat:
		return &jsonShape{kind: shapeQuoted, elem: inner, typ: inner.typ}
	}
	return invalidShape
}

// fieldTypeByIndex follows a field index through embedded structs and pointers.
func fieldTypeByIndex(t reflect.Type, index []int) reflect.Type {
	for _, i := range index {
		if t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		t = t.Field(i).Type
	}
	return t
}

// jsonField is one JSON member of a struct as encoding/json sees it.
type jsonField struct {
	name       string
	tagged     bool
	index      []int
	quoted     bool
	unsettable bool // behind an embedded pointer to an unexported struct
}

// embeddedStruct is a struct type queued for the next depth of the field search.
type embeddedStruct struct {
	typ        reflect.Type
	index      []int
	unsettable bool
}

// jsonFields lists t's JSON members with encoding/json's rules: embedded
// structs are searched breadth first, a shallower field hides a deeper one,
// a tagged field beats an untagged one at the same depth, and a tie drops
// the name altogether.
func jsonFields(t reflect.Type) []jsonField {
	var fields []jsonField
	visited := map[reflect.Type]bool{}
	next := []embeddedStruct{{typ: t}}
	count := map[reflect.Type]int{}
	for len(next) > 0 {
		current := next
		next = nil
		nextCount := map[reflect.Type]int{}
		for _, e := range current {
			if visited[e.typ] {
				continue
			}
			visited[e.typ] = true
			for i := range e.typ.NumField() {
				f, emb, ok := jsonMemberOf(e, i)
				switch {
				case !ok:
				case emb != nil:
					if nextCount[emb.typ]++; nextCount[emb.typ] == 1 {
						next = append(next, *emb)
					}
				default:
					fields = append(fields, f)
					if count[e.typ] > 1 {
						// The same struct embedded twice at one depth: add
						// a twin so that the tie below removes the name.
						fields = append(fields, f)
					}
				}
			}
		}
		count = nextCount
	}
	return dominantJSONFields(fields)
}

// jsonMemberOf classifies field i of e.typ: a JSON member (f), an embedded
// struct to search next (emb), or nothing (ok false).
func jsonMemberOf(e embeddedStruct, i int) (f jsonField, emb *embeddedStruct, ok bool) {
	sf := e.typ.Field(i)
	ft := sf.Type
	if sf.Anonymous {
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if !sf.IsExported() && ft.Kind() != reflect.Struct {
			return f, nil, false
		}
	} else if !sf.IsExported() {
		return f, nil, false
	}
	tag := sf.Tag.Get("json")
	if tag == "-" {
		return f, nil, false
	}
	name, opts, _ := strings.Cut(tag, ",")
	if !validJSONTagName(name) {
		name = ""
	}
	index := append(slices.Clone(e.index), i)
	unsettable := e.unsettable
	if ft.Name() == "" && ft.Kind() == reflect.Pointer {
		ft = ft.Elem()
	}
	if name == "" && sf.Anonymous && ft.Kind() == reflect.Struct {
		behindPtr := sf.Type.Kind() == reflect.Pointer && !sf.IsExported()
		return f, &embeddedStruct{typ: ft, index: index, unsettable: unsettable || behindPtr}, true
	}
	f = jsonField{name: name, tagged: name != "", index: index, unsettable: unsettable}
	if f.name == "" {
		f.name = sf.Name
	}
	f.quoted = hasTagOption(opts, "string") && scalarShapeKind(ft.Kind()) != shapeInvalid
	return f, nil, true
}

// hasTagOption reports whether a tag's comma-separated options include name.
func hasTagOption(opts, name string) bool {
	for o := range strings.SplitSeq(opts, ",") {
		if o == name {
			return true
		}
	}
	return false
}

// validJSONTagName is encoding/json's rule for a usable name in a json tag.
func validJSONTagName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}

// dominantJSONFields keeps, for each name, the one field that wins under Go's
// embedding rules as amended by encoding/json (tags promote), and drops the
// names that tie.
func dominantJSONFields(fields []jsonField) []jsonField {
	slices.SortFunc(fields, func(a, b jsonField) int {
		if c := strings.Compare(a.name, b.name); c != 0 {
			return c
		}
		if c := cmp.Compare(len(a.index), len(b.index)); c != 0 {
			return c
		}
		if a.tagged != b.tagged {
			if a.tagged {
				return -1
			}
			return 1
		}
		return slices.Compare(a.index, b.index)
	})
	var out []jsonField
	for i := 0; i < len(fields); {
		j := i + 1
		for j < len(fields) && fields[j].name == fields[i].name {
			j++
		}
		tie := j-i > 1 && len(fields[i].index) == len(fields[i+1].index) && fields[i].tagged == fields[i+1].tagged
		if !tie {
			out = append(out, fields[i])
		}
		i = j
	}
	return out
}
