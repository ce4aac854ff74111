// Package redact masks credentials in what pitwall prints, logs, stores or
// exports: the userinfo of a URL (user:password@), the value of every query
// parameter but the few on an allow-list (api-version, model, deployment),
// so that ?code=, ?pass= and names no list foresees are masked too, URLs
// inside free text such as a transport error, bearer tokens and key-like
// settings in text, and the values of credential headers (Authorization,
// X-Api-Key, Api-Key, cookies).
//
// It is one set of rules for every channel, so that a URL masked in the
// ledger is masked the same way on the screen. Redaction keeps everything
// else byte for byte (host, path, the order of the other parameters), so a
// masked URL still says which server was meant. It imports nothing of
// pitwall's.
package redact
