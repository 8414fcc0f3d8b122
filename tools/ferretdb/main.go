// Command ferretdb-test runs an embedded FerretDB v1 (Apache-2.0,
// https://github.com/FerretDB/FerretDB) with the SQLite backend (the default)
// or the PostgreSQL backend. It is a MongoDB-wire-compatible server for
// tests/CI; do not use it for real data.
//
// Usage:
//
//	ferretdb-test [-listen 127.0.0.1:0] [-dir /path/to/data] [-log-level warn]
//	ferretdb-test -handler postgresql -postgresql-url postgres://127.0.0.1:5432/ferretdb
//
// When the listener is bound it prints exactly one line to stdout:
//
//	ready mongodb://127.0.0.1:PORT/
//
// and then runs until SIGINT/SIGTERM, after which it closes all connections
// and the SQLite backend and exits 0.
//
// Why this program exists: `go install github.com/FerretDB/FerretDB/cmd/ferretdb`
// panics at init ("Invalid build/version/version.txt file content", upstream
// issue #2982) because build/version/version.txt is generated and not part of
// the module zip. That check in build/version/version.go only runs when the
// main module path is "github.com/FerretDB/FerretDB"; for any other main
// module (i.e. when the embeddable package github.com/FerretDB/FerretDB/ferretdb
// is imported, as here) it is skipped and version info is reported as
// "unknown" (package "embedded"). So no ldflags/build-tag workaround is needed:
// embedding the package *is* the workaround.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "ferretdb-test: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	listen := flag.String("listen", "127.0.0.1:0", "TCP address to listen on (port 0 = pick a free port)")
	dir := flag.String("dir", "", "directory for SQLite data files (default: a new temporary directory, removed on exit)")
	logLevel := flag.String("log-level", "warn", "log level: debug, info, warn, error")
	handler := flag.String("handler", "sqlite", "backend: sqlite or postgresql")
	postgresqlURL := flag.String("postgresql-url", "", "PostgreSQL connection string for -handler postgresql")
	flag.Parse()

	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return fmt.Errorf("invalid -log-level %q: %w", *logLevel, err)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	if _, _, err := net.SplitHostPort(*listen); err != nil {
		return fmt.Errorf("invalid -listen %q: %w", *listen, err)
	}

	config := ferretdb.Config{
		Listener: ferretdb.ListenerConfig{TCP: *listen},
		Logger:   logger,
		Handler:  *handler,
	}
	switch *handler {
	case "postgresql":
		if *postgresqlURL == "" {
			return errors.New("-handler postgresql needs -postgresql-url")
		}
		config.PostgreSQLURL = *postgresqlURL
		return serve(&config)
	case "sqlite":
	default:
		return fmt.Errorf("invalid -handler %q: sqlite or postgresql", *handler)
	}

	dataDir := *dir
	if dataDir == "" {
		d, err := os.MkdirTemp("", "ferretdb-test-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dataDir = d
	} else if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return err
	}
	absDir, err := filepath.Abs(dataDir)
	if err != nil {
		return err
	}

	// The SQLite handler wants a "file:" URI of an existing directory ending with "/".
	config.SQLiteURL = (&url.URL{Scheme: "file", Path: filepath.ToSlash(absDir) + "/"}).String()
	return serve(&config)
}

func serve(config *ferretdb.Config) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	// New binds the listener synchronously, so MongoDBURI() is safe right after it.
	f, err := ferretdb.New(config)
	if err != nil {
		return err
	}

	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()

	fmt.Printf("ready %s\n", f.MongoDBURI())

	err = <-done
	if err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}
