package config

import (
	"fmt"
	"slices"
	"strings"
)

// Notes gathers what a battery asked for that pitwall loads but will not do
// as written (an assertion it cannot run, a key it does not read), once per
// kind with a count and the first tests it concerns, so that a file with
// forty unmapped assertions gives one line, not forty.
type Notes struct {
	file  string
	order []string
	kinds map[string]*note
}

type note struct {
	count    int
	examples []string
}

func newNotes(file string) *Notes { return &Notes{file: file, kinds: map[string]*note{}} }

// add counts one instance of kind (a sentence saying what is not done and
// what happens instead) in the test named by example ("" for the file).
func (n *Notes) Add(kind, example string) {
	if n == nil {
		return
	}
	k, ok := n.kinds[kind]
	if !ok {
		k = &note{}
		n.kinds[kind] = k
		n.order = append(n.order, kind)
	}
	k.count++
	if example != "" && len(k.examples) < 3 && !slices.Contains(k.examples, example) {
		k.examples = append(k.examples, example)
	}
}

// list renders the notes in the order their kinds first appeared:
// "file: 15× kind (in a, b, c, …)".
func (n *Notes) list() []string {
	if n == nil {
		return nil
	}
	var out []string
	for _, kind := range n.order {
		k := n.kinds[kind]
		s := fmt.Sprintf("%s: %d× %s", n.file, k.count, kind)
		if len(k.examples) > 0 {
			s += " (in " + strings.Join(k.examples, ", ")
			if k.count > len(k.examples) {
				s += ", …"
			}
			s += ")"
		}
		out = append(out, s)
	}
	return out
}
