// Command strata is the Strata server and its management CLI. It only
// reads its arguments and signals; internal/cli and internal/app do the work.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"strata/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], cli.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Lookup: os.LookupEnv})
	stop()
	os.Exit(code)
}
