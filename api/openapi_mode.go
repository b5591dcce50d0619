package api

import (
	"encoding/json"
	"strings"
)

// devPathPrefix starts every path that only a --dev server routes.
const devPathPrefix = "/devnet/"

// mustWithoutDevRoutes returns the document without the /devnet/* paths
// and without the components and tags that only those paths use.
// Components no path reaches in the full document stay: leaving them is
// the source's business (the linters report them), not this filter's.
func mustWithoutDevRoutes(full []byte) []byte {
	var doc map[string]any
	if err := json.Unmarshal(full, &doc); err != nil {
		panic(err)
	}
	before, tagsBefore := reachableComponents(doc), usedTags(doc)
	paths, _ := doc["paths"].(map[string]any)
	for p := range paths {
		if strings.HasPrefix(p, devPathPrefix) {
			delete(paths, p)
		}
	}
	after := reachableComponents(doc)
	comps, _ := doc["components"].(map[string]any)
	for ref := range before {
		if after[ref] {
			continue
		}
		section, name, _ := strings.Cut(strings.TrimPrefix(ref, "#/components/"), "/")
		if m, ok := comps[section].(map[string]any); ok {
			delete(m, name)
		}
	}
	dropTags(doc, tagsBefore, usedTags(doc))
	b, err := json.Marshal(doc)
	if err != nil {
		panic(err)
	}
	return b
}

// usedTags returns the tags the operations name.
func usedTags(doc map[string]any) map[string]bool {
	used := map[string]bool{}
	paths, _ := doc["paths"].(map[string]any)
	for _, item := range paths {
		ops, _ := item.(map[string]any)
		for _, op := range ops {
			o, _ := op.(map[string]any)
			tags, _ := o["tags"].([]any)
			for _, t := range tags {
				if s, ok := t.(string); ok {
					used[s] = true
				}
			}
		}
	}
	return used
}

// dropTags removes from the document's tag list the tags that were used
// before and are not after.
func dropTags(doc map[string]any, before, after map[string]bool) {
	tags, ok := doc["tags"].([]any)
	if !ok {
		return
	}
	kept := tags[:0]
	for _, t := range tags {
		m, _ := t.(map[string]any)
		name, _ := m["name"].(string)
		if !before[name] || after[name] {
			kept = append(kept, t)
		}
	}
	doc["tags"] = kept
}

// reachableComponents returns the "#/components/…" references reachable
// from everything outside components (paths, security, …), following
// references through the components they name.
func reachableComponents(doc map[string]any) map[string]bool {
	seen := map[string]bool{}
	var todo []string
	visit := func(v any) { collectRefs(v, &todo) }
	for k, v := range doc {
		if k != "components" {
			visit(v)
		}
	}
	// Security schemes are named, not referenced, by security requirements.
	comps, _ := doc["components"].(map[string]any)
	if schemes, ok := comps["securitySchemes"].(map[string]any); ok {
		for name := range schemes {
			todo = append(todo, "#/components/securitySchemes/"+name)
		}
	}
	for len(todo) > 0 {
		ref := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if seen[ref] {
			continue
		}
		seen[ref] = true
		visit(componentAt(comps, ref))
	}
	return seen
}

// componentAt returns the component a local reference names, or nil.
func componentAt(comps map[string]any, ref string) any {
	section, name, ok := strings.Cut(strings.TrimPrefix(ref, "#/components/"), "/")
	if !ok {
		return nil
	}
	m, _ := comps[section].(map[string]any)
	return m[name]
}

// collectRefs appends every local component reference found in v: the
// $refs and the discriminator mappings' values alike.
func collectRefs(v any, out *[]string) {
	switch v := v.(type) {
	case string:
		if strings.HasPrefix(v, "#/components/") {
			*out = append(*out, v)
		}
	case map[string]any:
		for _, c := range v {
			collectRefs(c, out)
		}
	case []any:
		for _, c := range v {
			collectRefs(c, out)
		}
	}
}
