package chat

import "strings"

// MatchModel says whether a server that lists offered serves the model a
// config calls name, and the name to send it by: the one the server lists.
// It is the one rule for config validation and the fleet alike:
//
//  1. a listed name equal to name;
//  2. else one equal to name ignoring case (LM Studio lists ids in lower case);
//  3. else, for a name with no tag, name + ":latest" (Ollama's implicit tag);
//  4. else, for a name with no publisher, the one listed id that ends in
//     "/" + name (LM Studio's publisher/model ids), ignoring case.
//
// A rule that matches more than one listed name matches none: pitwall never
// guesses between two models.
func MatchModel(offered []string, name string) (string, bool) {
	if name == "" {
		return "", false
	}
	for _, o := range offered {
		if o == name {
			return o, true
		}
	}
	rules := []func(o string) bool{
		func(o string) bool { return strings.EqualFold(o, name) },
		func(o string) bool {
			return !strings.Contains(name, ":") && strings.EqualFold(o, name+":latest")
		},
		func(o string) bool {
			return !strings.Contains(name, "/") && len(o) > len(name) &&
				strings.EqualFold(o[len(o)-len(name)-1:], "/"+name)
		},
	}
	for _, rule := range rules {
		found, n := "", 0
		for _, o := range offered {
			if rule(o) {
				found, n = o, n+1
			}
		}
		if n == 1 {
			return found, true
		}
		if n > 1 {
			return "", false
		}
	}
	return "", false
}

// ModelKey is what two names a config gives are compared by to say they
// name one model: the name ignoring case, without Ollama's implicit
// ":latest" tag, as MatchModel's rules 2 and 3 would match them to one
// listed model. "tiny-a", "Tiny-A" and "tiny-a:latest" have one key.
func ModelKey(name string) string {
	k := strings.ToLower(name)
	return strings.TrimSuffix(k, ":latest")
}
