// Package chat is the wire vocabulary every layer shares: a chat request and
// its messages, tools and tool calls, a server's reply, why a request is
// made (Purpose), which dialect a server speaks (Kind), and the classified
// error a request can end in (Error, ErrorClass).
//
// It holds types and their small methods only: no client, no HTTP, no
// imports of pitwall's. The client that speaks these over HTTP is the gpu
// package's; configs, checks, judges and run snapshots use the types.
package chat
