package chat

import "encoding/json"

// MessagesJSON is ms as encoding/json writes them: the input every
// request's row keeps in the ledger, and the text its cache key was made
// from when it was written.
func MessagesJSON(ms []Message) string {
	b, err := json.Marshal(ms)
	if err != nil {
		// Strings and lists of them always encode: an error is a bug.
		panic("chat: a message list did not encode: " + err.Error())
	}
	return string(b)
}
