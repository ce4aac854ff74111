// Package redact masks credentials in what pitwall prints, logs, stores or
// exports: the userinfo of a URL (user:password@), query parameters whose
// names say they hold a key, token, signature or password (?key=, ?api_key=,
// ?sig=), URLs inside free text such as a transport error, bearer tokens in
// text, and the values of credential headers (Authorization, X-Api-Key,
// Api-Key, cookies).
//
// It is one set of rules for every channel, so that a URL masked in the
// ledger is masked the same way on the screen. Redaction keeps everything
// else byte for byte (host, path, the order of the other parameters), so a
// masked URL still says which server was meant. It imports nothing of
// pitwall's.
package redact
