package config

import (
	"fmt"
	"pitwall/gpu/chat"
	"slices"
	"strings"
)

// CheckOffered runs after discovery, with offered mapping each server's
// name to the models it says it serves (a server that did not answer may be
// left out). Every model to run must be offered by some server, and every
// judge on a fleet server by that server; judges on a hosted url are not
// checked. Names match as chat.MatchModel says (Ollama's implicit
// ":latest", LM Studio's publisher/model ids, case). Nothing is renamed: a
// model keeps the config's name everywhere pitwall shows or records it, and
// the fleet sends each server the name that server lists it by (two servers
// may spell one model two ways).
//
// Each problem names the model, the config file and the line it is on.
func CheckOffered(c *Config, offered map[string][]string) error {
	var src *Source
	if c.meta != nil {
		src = c.meta.src
	}
	if src == nil {
		src = NewSource(c.Path)
	}
	v := NewCollector(src)
	names := sortedKeys(offered)
	for _, m := range c.Models {
		if offeredBySome(offered, names, m) {
			continue
		}
		v.Add(c.modelField(m), offeredHint(m, names, offered), "no reachable server offers model %q", m)
	}
	for i, j := range c.Scoring.Judges {
		if j.Server == "" || !slices.Contains(c.JudgeNames(), j.Name) {
			continue
		}
		if j.Server == AnyServer {
			if !offeredBySome(offered, names, j.Model) {
				v.Add(JoinPath(IndexPath("scoring.judges", i), "model"), offeredHint(j.Model, names, offered),
					"judge %q: no reachable server offers model %q", j.Name, j.Model)
			}
			continue
		}
		if _, ok := chat.MatchModel(offered[j.Server], j.Model); !ok {
			list := strings.Join(offered[j.Server], ", ")
			if list == "" {
				list = "nothing (is it up?)"
			}
			hint := fmt.Sprintf("server %s offers %s", j.Server, list)
			if n := nearest(j.Model, offered[j.Server]); n != "" {
				hint = fmt.Sprintf("did you mean `%s`? ", n) + hint
			}
			v.Add(JoinPath(IndexPath("scoring.judges", i), "model"), hint,
				"judge %q: server %q does not offer model %q", j.Name, j.Server, j.Model)
		}
	}
	return v.Errs.Err()
}

// offeredBySome reports whether any server serves model, by whatever name.
func offeredBySome(offered map[string][]string, names []string, model string) bool {
	for _, s := range names {
		if _, ok := chat.MatchModel(offered[s], model); ok {
			return true
		}
	}
	return false
}

func offeredHint(model string, names []string, offered map[string][]string) string {
	var all, parts []string
	for _, s := range names {
		all = append(all, offered[s]...)
		list := strings.Join(offered[s], ", ")
		if list == "" {
			list = "nothing"
		}
		parts = append(parts, fmt.Sprintf("%s offers %s", s, list))
	}
	if len(parts) == 0 {
		return "no server answered discovery; check `pitwall servers`"
	}
	hint := strings.Join(parts, "; ")
	if n := nearest(model, all); n != "" {
		hint = fmt.Sprintf("did you mean `%s`? ", n) + hint
	}
	return hint
}
