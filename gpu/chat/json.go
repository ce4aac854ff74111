package chat

import "unicode/utf8"

// MessagesJSON is ms as encoding/json writes them (json.Marshal(ms)),
// written by hand: every request's messages go into the ledger as this
// text, and reflection was most of what writing it cost.
// TestMessagesJSONIsEncodingJSONs holds it to json.Marshal.
func MessagesJSON(ms []Message) string {
	if ms == nil {
		return "null"
	}
	n := 2
	for i := range ms {
		n += 32 + len(ms[i].Role) + len(ms[i].Content) + len(ms[i].Content)/16 + len(ms[i].Name) + len(ms[i].ToolCallID)
	}
	dst := make([]byte, 0, n)
	dst = append(dst, '[')
	for i := range ms {
		if i > 0 {
			dst = append(dst, ',')
		}
		m := &ms[i]
		dst = append(dst, `{"role":`...)
		dst = AppendJSONString(dst, m.Role)
		dst = append(dst, `,"content":`...)
		dst = AppendJSONString(dst, m.Content)
		if m.Name != "" {
			dst = append(dst, `,"name":`...)
			dst = AppendJSONString(dst, m.Name)
		}
		if len(m.ToolCalls) > 0 {
			dst = append(dst, `,"tool_calls":[`...)
			for j := range m.ToolCalls {
				if j > 0 {
					dst = append(dst, ',')
				}
				tc := &m.ToolCalls[j]
				dst = append(dst, '{')
				if tc.ID != "" {
					dst = append(dst, `"id":`...)
					dst = AppendJSONString(dst, tc.ID)
					dst = append(dst, ',')
				}
				dst = append(dst, `"name":`...)
				dst = AppendJSONString(dst, tc.Name)
				dst = append(dst, `,"arguments":`...)
				dst = AppendJSONString(dst, tc.Arguments)
				dst = append(dst, '}')
			}
			dst = append(dst, ']')
		}
		if m.ToolCallID != "" {
			dst = append(dst, `,"tool_call_id":`...)
			dst = AppendJSONString(dst, m.ToolCallID)
		}
		dst = append(dst, '}')
	}
	return string(append(dst, ']'))
}

const hexDigits = "0123456789abcdef"

// AppendJSONString appends s quoted as encoding/json quotes a string: <, >
// and & escaped (HTML-safe), control characters as \n, \r, \t, \b, \f or
// \u00XX, invalid UTF-8 as \ufffd, and U+2028 and U+2029 escaped.
func AppendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
