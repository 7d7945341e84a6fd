// Package console is a small web page, embedded in the frontend, to watch
// and steer tasks and graphs. It talks only to the A2A HTTP+JSON binding,
// with the same credentials as any client.
package console

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed static
var files embed.FS

// Handler serves the console (mount it at /console/).
func Handler() http.Handler {
	sub, err := fs.Sub(files, "static")
	if err != nil {
		panic(err) // the embedded directory is part of the build
	}
	return http.StripPrefix("/console/", http.FileServer(http.FS(sub)))
}
