// Package cli is the strata command line: `serve` runs the server,
// `version` prints the build, and the management commands (products, keys,
// tokens, flags, experiments) work whether or not a server holds the data directory, by going
// through its admin socket when one answers and opening the store directly
// otherwise.
package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime/debug"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"strata/internal/admin"
	"strata/internal/analytics"
	"strata/internal/app"
	"strata/internal/auth"
	"strata/internal/buildinfo"
	"strata/internal/config"
	"strata/internal/enrich/bots"
	"strata/internal/experiment"
	"strata/internal/store/duckdb"
	"strata/internal/store/postgres"
)

// Env is what a command may read of its surroundings; tests pass their own.
type Env struct {
	// Stdin is where --password-stdin reads a password; nil reads none.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Lookup         func(string) (string, bool)
}

const usage = `usage: strata <command> [flags]

commands:
  serve [--addr 127.0.0.1:8080] [--data ./data]   run the server (env STRATA_ADDR, STRATA_DATA)
        [--events clickhouse://HOST:9000/DB]       events in ClickHouse (env STRATA_EVENTS_URL)
        [--meta postgres://USER@HOST:5432/DB]      metadata in PostgreSQL (env STRATA_META_URL)
        [--help]                                   every flag of serve, with its STRATA_… variable
  products create --name NAME                      create a product; prints {"id": …, "name": …}
  products list [--json]                           list the products, with their time zones
  keys create --product ID [--test] [--rate-limit N]   create an API key; prints only the key
  keys list --product ID [--json]                  list a product's keys
  keys disable|enable|revoke KEY                   change a key's status (KEY is the key or its id)
  tokens create --product ID                       create a query token; prints only the token
  tokens list --product ID [--json]                list a product's query tokens (prefixes, never secrets)
  flags list --product ID [--json]                 list a product's feature flags
  experiments list --product ID [--json]           list a product's experiments
  experiments start|pause|resume ID --product ID   change an experiment's status
  experiments apply-winner ID --product ID --variant KEY
                                                   complete an experiment: its flag gives every user KEY
  users list [--json]                              list the dashboard's users and their roles
  users add EMAIL [--role admin|member|viewer] [--password-stdin]
                                                   add a user to every workspace; prints a generated password
  users reset-password EMAIL [--password-stdin]    set a new password (printed when generated); ends their sessions
  users remove EMAIL                               remove a user; ends their sessions at once
  persons delete --product ID [--file FILE] ID…    delete persons everywhere (docs/privacy.md); waits until done
  persons rebuild --product ID                     write the product's person profiles from its stored events (docs/ingest.md)
  persons export --product ID ID                   print everything stored about a person, as JSON
  import --from SOURCE --product ID [--fast] [--dry-run] FILE…
                                                   import another tool's export (posthog, mixpanel, amplitude,
                                                   umami, ga4; docs/import.md): paced through the running server,
                                                   or --fast into a stopped data directory
  backup --to DIR                                  online backup of the data directory into a new DIR
                                                   (through the running server, or of the directory when none runs)
  restore --from DIR --data NEWDIR                 a new data directory from a backup; NEWDIR must be new or empty
  bots list [--json]                               the AI-bot allowlist this build classifies with, and its version
  version                                          print the version, commit and Go version (or --version)
  help                                             print this text (or -h, --help)

Every command takes --data DIR (env STRATA_DATA, default ./data). The
products, keys, tokens, flags, experiments and users commands take --meta URL (env
STRATA_META_URL) to manage the PostgreSQL metadata a cluster of nodes shares.
`

// Main runs one command and returns the process exit code.
func Main(ctx context.Context, args []string, env Env) int {
	if len(args) == 0 {
		fmt.Fprint(env.Stderr, usage)
		return 2
	}
	privateFiles()
	var err error
	switch args[0] {
	case "serve":
		err = serve(ctx, args[1:], env)
	case "products", "keys", "tokens", "flags", "experiments", "users":
		err = manage(ctx, args, env)
	case "persons":
		err = persons(ctx, args[1:], env)
	case "import":
		err = importCmd(ctx, args[1:], env)
	case "backup":
		err = backupCmd(ctx, args[1:], env)
	case "restore":
		err = restoreCmd(args[1:], env)
	case "version", "--version":
		err = version(args[1:], env)
	case "bots":
		err = listBots(args[1:], env)
	case "help", "-h", "--help":
		fmt.Fprint(env.Stdout, usage)
		return 0
	default:
		fmt.Fprintf(env.Stderr, "strata: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			// -h or --help after a management command: the usage, as asked.
			fmt.Fprint(env.Stdout, usage)
			return 0
		}
		var usageErr usageError
		if errors.As(err, &usageErr) {
			fmt.Fprintf(env.Stderr, "strata: %v\n\n%s", err, usage)
			return 2
		}
		var e *analytics.Error
		if errors.As(err, &e) {
			fmt.Fprintf(env.Stderr, "strata: %s\n", e.Message)
		} else {
			fmt.Fprintf(env.Stderr, "strata: %v\n", err)
		}
		return 1
	}
	return 0
}

type usageError struct{ msg string }

func (u usageError) Error() string { return u.msg }

// goMemoryLimit is the Go heap's soft limit unless GOMEMLIMIT says otherwise.
const goMemoryLimit = 256 << 20

// goGCPercent is the collector's target unless GOGC says otherwise: the heap
// may grow by half its live size between collections instead of doubling.
// The live heap under ingest is small (about 40 MB, most of it the
// deduplication window) and the garbage is request bodies, so collecting
// twice as often costs little CPU (the collector measured 3% of the
// server's CPU at the default of 100) and keeps about 40 MB less resident
// (docs/benchmarks.md).
const goGCPercent = 50

// serveUsage heads the flags `strata serve --help` prints.
const serveUsage = `usage: strata serve [flags]

Runs the server. Most flags default from the STRATA_… environment variable
named in their description; a flag on the command line wins over it.

flags:
`

func serve(ctx context.Context, args []string, env Env) error {
	cfg, err := config.Load(args, env.Lookup)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(env.Stdout, serveUsage)
		config.PrintFlags(env.Stdout, env.Lookup)
		return nil
	}
	if err != nil {
		return usageError{err.Error()}
	}
	log := cfg.Logger()
	if _, set := env.Lookup("GOMEMLIMIT"); !set {
		// A soft limit on the Go heap: past it the collector runs more often
		// instead of letting the heap double. Most of the heap is garbage
		// from request bodies, so this keeps the server's RSS near its live
		// data under heavy ingest (docs/benchmarks.md).
		debug.SetMemoryLimit(goMemoryLimit)
	}
	if _, set := env.Lookup("GOGC"); !set {
		debug.SetGCPercent(goGCPercent)
	}
	a, err := app.Open(ctx, cfg, log)
	if err != nil {
		return err
	}
	return a.Run(ctx)
}

// version prints the build on one line: `strata version` and
// `strata --version`.
func version(args []string, env Env) error {
	if len(args) > 0 {
		return usageError{"version takes no arguments, not " + strconv.Quote(strings.Join(args, " "))}
	}
	fmt.Fprintln(env.Stdout, "strata", buildinfo.Read())
	return nil
}

// listBots prints the AI-bot allowlist the binary embeds: its version and
// review date, then one bot a line (or all of it as JSON with --json).
// It reads no data directory.
func listBots(args []string, env Env) error {
	if len(args) == 0 || args[0] != "list" {
		return usageError{"bots needs the subcommand list"}
	}
	fs := flag.NewFlagSet("bots list", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	asJSON := fs.Bool("json", false, "")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{"bots list takes no arguments, not " + strconv.Quote(strings.Join(fs.Args(), " "))}
	}
	c := bots.Default()
	if *asJSON {
		return json.NewEncoder(env.Stdout).Encode(map[string]any{"version": c.Version(), "reviewed": c.Reviewed(), "bots": c.Bots()})
	}
	fmt.Fprintf(env.Stdout, "AI-bot allowlist version %d, reviewed %s: %d bots\n\n", c.Version(), c.Reviewed(), len(c.Bots()))
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOKEN\tNAME\tOPERATOR\tCATEGORY")
	for _, b := range c.Bots() {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", b.Token, b.Name, b.Operator, bots.CategoryLabel(b.Category))
	}
	return tw.Flush()
}

// manageCommands are the products, keys, tokens, flags and experiments
// commands, known before the data directory is opened, so that a mistyped
// one touches nothing.
var manageCommands = map[string]bool{
	"products create": true, "products list": true,
	"keys create": true, "keys list": true, "keys disable": true, "keys enable": true, "keys revoke": true,
	"tokens create": true, "tokens list": true,
	"flags list":       true,
	"experiments list": true, "experiments start": true, "experiments pause": true, "experiments resume": true,
	"experiments apply-winner": true,
	"users list":               true, "users add": true, "users reset-password": true, "users remove": true,
}

// manage runs a products, keys, tokens, flags or experiments command.
func manage(ctx context.Context, args []string, env Env) error {
	if len(args) < 2 {
		return usageError{args[0] + " needs a subcommand"}
	}
	switch args[1] {
	case "-h", "-help", "--help", "help":
		return flag.ErrHelp
	}
	cmd := args[0] + " " + args[1]
	if !manageCommands[cmd] {
		return usageError{"unknown command " + strconv.Quote(cmd)}
	}
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dataDir := fs.String("data", lookupOr(env.Lookup, "STRATA_DATA", "./data"), "data directory")
	metaURL := fs.String("meta", lookupOr(env.Lookup, "STRATA_META_URL", ""), "PostgreSQL metadata store shared by the nodes")
	name := fs.String("name", "", "product name")
	product := fs.Int64("product", 0, "product id")
	test := fs.Bool("test", false, "create a test key")
	rateLimit := fs.Int("rate-limit", 0, "requests per minute for this key (0: server default)")
	asJSON := fs.Bool("json", false, "print JSON")
	variant := fs.String("variant", "", "the winning arm's key")
	role := fs.String("role", string(analytics.RoleMember), "the new user's role: admin, member or viewer")
	passwordStdin := fs.Bool("password-stdin", false, "read the password from standard input instead of generating one")
	positional, err := parseInterspersed(fs, args[2:])
	if errors.Is(err, flag.ErrHelp) {
		return err
	}
	if err != nil {
		return usageError{err.Error()}
	}
	needProduct := func() error {
		if *product <= 0 {
			return usageError{cmd + " needs --product ID"}
		}
		return nil
	}
	// The flag and experiment commands' product and experiment are
	// checked before anything is opened.
	var experimentID int64
	switch cmd {
	case "flags list", "experiments list":
		if err := needProduct(); err != nil {
			return err
		}
	case "experiments start", "experiments pause", "experiments resume", "experiments apply-winner":
		if len(positional) != 1 {
			return usageError{cmd + " needs exactly one experiment ID"}
		}
		if experimentID, err = strconv.ParseInt(positional[0], 10, 64); err != nil {
			return usageError{cmd + " needs an experiment ID, a number, not " + strconv.Quote(positional[0])}
		}
		if err := needProduct(); err != nil {
			return err
		}
		if cmd == "experiments apply-winner" && *variant == "" {
			return usageError{cmd + " needs --variant KEY, the winning arm"}
		}
	}

	// The user commands' email, role and password are checked before
	// anything is opened, and the password is read first, so that a
	// mistake touches nothing.
	var email, password string
	switch cmd {
	case "users add", "users reset-password", "users remove":
		if len(positional) != 1 {
			return usageError{cmd + " needs exactly one EMAIL"}
		}
		email = positional[0]
	}
	switch cmd {
	case "users add", "users reset-password":
		if password, err = newPassword(env, *passwordStdin); err != nil {
			return err
		}
	}
	if cmd == "users add" {
		if _, err := analytics.ParseRole(*role); err != nil {
			return usageError{"--role must be admin, member or viewer"}
		}
	}

	adm, closeAdm, err := openAdmin(ctx, *dataDir, *metaURL, env)
	if err != nil {
		return err
	}
	defer closeAdm()

	switch cmd {
	case "products create":
		if *name == "" {
			return usageError{"products create needs --name NAME"}
		}
		p, err := adm.CreateProduct(ctx, *name)
		if err != nil {
			return err
		}
		return json.NewEncoder(env.Stdout).Encode(map[string]any{"id": p.ID, "name": p.Name})
	case "products list":
		products, err := adm.ListProducts(ctx)
		if err != nil {
			return err
		}
		return printProducts(env.Stdout, products, *asJSON)
	case "keys create":
		if err := needProduct(); err != nil {
			return err
		}
		kind := analytics.EnvLive
		if *test {
			kind = analytics.EnvTest
		}
		key, _, err := adm.CreateKey(ctx, *product, kind, *rateLimit)
		if err != nil {
			return err
		}
		fmt.Fprintln(env.Stdout, key)
		return nil
	case "keys list":
		if err := needProduct(); err != nil {
			return err
		}
		keys, err := adm.ListKeys(ctx, *product)
		if err != nil {
			return err
		}
		return printKeys(env.Stdout, keys, *asJSON)
	case "keys disable", "keys enable", "keys revoke":
		if len(positional) != 1 {
			return usageError{cmd + " needs exactly one KEY (the key itself or its id)"}
		}
		status := map[string]analytics.KeyStatus{"disable": analytics.KeyDisabled,
			"enable": analytics.KeyActive, "revoke": analytics.KeyRevoked}[args[1]]
		k, err := adm.SetKeyStatus(ctx, positional[0], status)
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "key %d (%s…) is now %s\n", k.ID, k.Prefix, k.Status)
		return nil
	case "tokens create":
		if err := needProduct(); err != nil {
			return err
		}
		tok, _, err := adm.CreateToken(ctx, *product)
		if err != nil {
			return err
		}
		fmt.Fprintln(env.Stdout, tok)
		return nil
	case "tokens list":
		if err := needProduct(); err != nil {
			return err
		}
		tokens, err := adm.ListTokens(ctx, *product)
		if err != nil {
			return err
		}
		return printTokens(env.Stdout, tokens, *asJSON)
	case "flags list":
		list, err := adm.ListFlags(ctx, *product)
		if err != nil {
			return err
		}
		return printFlags(env.Stdout, list, *asJSON)
	case "experiments list":
		list, err := adm.ListExperiments(ctx, *product)
		if err != nil {
			return err
		}
		return printExperiments(env.Stdout, list, *asJSON)
	case "experiments start", "experiments pause", "experiments resume":
		e, err := adm.ActExperiment(ctx, *product, experimentID, args[1])
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "experiment %d (%s) is now %s\n", e.ID, e.Name, e.Status)
		return nil
	case "users list":
		users, err := adm.ListUsers(ctx)
		if err != nil {
			return err
		}
		return printUsers(env.Stdout, users, *asJSON)
	case "users add":
		u, err := adm.AddUser(ctx, email, password, analytics.Role(*role))
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Stderr, "strata: added %s as %s of %d workspace(s)\n", u.Email, *role, len(u.Memberships))
		if !*passwordStdin {
			fmt.Fprintln(env.Stdout, password)
		}
		return nil
	case "users reset-password":
		if err := adm.ResetPassword(ctx, email, password); err != nil {
			return err
		}
		fmt.Fprintf(env.Stderr, "strata: set a new password for %s and ended their sessions\n", email)
		if !*passwordStdin {
			fmt.Fprintln(env.Stdout, password)
		}
		return nil
	case "users remove":
		if err := adm.RemoveUser(ctx, email); err != nil {
			return err
		}
		fmt.Fprintf(env.Stderr, "strata: removed %s and ended their sessions\n", email)
		return nil
	case "experiments apply-winner":
		e, err := adm.ApplyWinner(ctx, *product, experimentID, *variant)
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "experiment %d (%s) is now %s; its flag gives every user %s\n", e.ID, e.Name, e.Status, e.Winner)
		return nil
	}
	return usageError{"unknown command " + strconv.Quote(cmd)}
}

// openAdmin reaches the metadata: in PostgreSQL when metaURL is set (every
// node sees a change within its key cache TTL), otherwise through a running
// server's socket in the data directory, or by opening the embedded store
// itself when no server answers.
func openAdmin(ctx context.Context, dataDir, metaURL string, env Env) (admin.Admin, func(), error) {
	var store interface {
		analytics.MetaStore
		analytics.UserStore
		experiment.Meta
		Close() error
	}
	if metaURL != "" {
		pg, err := postgres.Open(ctx, metaURL)
		if err != nil {
			return nil, nil, err
		}
		store = pg
	} else {
		c, db, err := dialOrOpen(ctx, dataDir)
		if err != nil {
			return nil, nil, err
		}
		if c != nil {
			return c, func() {}, nil
		}
		store = db
	}
	svc := &admin.Service{Meta: store, Users: store, Flags: &experiment.Flags{Store: store}, Experiments: &experiment.Service{Store: store}}
	key, p, err := svc.Bootstrap(ctx)
	if err != nil {
		store.Close()
		return nil, nil, err
	}
	if key != "" {
		fmt.Fprintf(env.Stderr, "strata: created workspace \"Default\" with product %d \"Default\"; its live API key (shown once): %s\n", p.ID, key)
	}
	return svc, func() { store.Close() }, nil
}

// adminWait is how long a command waits for a server that holds the data
// directory but has not opened its admin socket yet: a starting server
// first replays its spool and restores its deduplication window, which
// takes seconds after heavy ingest or a crash.
const adminWait = 30 * time.Second

// dialOrOpen returns a client of the server running on dataDir or, when
// none is, the embedded store opened directly. While another process holds
// the database's lock without answering on the socket, it keeps trying both
// for up to adminWait.
func dialOrOpen(ctx context.Context, dataDir string) (*admin.Client, *duckdb.Store, error) {
	deadline := time.Now().Add(adminWait)
	for {
		if c, err := admin.Dial(ctx, dataDir); err == nil {
			return c, nil, nil
		}
		db, err := duckdb.Open(ctx, dataDir, duckdb.Options{})
		if err == nil {
			return nil, db, nil
		}
		if !strings.Contains(err.Error(), "Could not set lock on file") {
			return nil, nil, fmt.Errorf("opening %s: %w", dataDir, err)
		}
		if time.Now().After(deadline) {
			return nil, nil, fmt.Errorf("opening %s: another process holds it, and no server answered on its admin socket within %s: %w", dataDir, adminWait, err)
		}
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// parseInterspersed parses flags that may come before or after positional
// arguments, as in `strata keys revoke KEY --data DIR`.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return positional, nil
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
}

// printList prints a list: as JSON with asJSON ([] when it is empty),
// otherwise as a table, header then one row a line.
func printList[T any](w io.Writer, list []T, asJSON bool, header string, row func(T) string) error {
	if asJSON {
		if list == nil {
			list = []T{}
		}
		return json.NewEncoder(w).Encode(list)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, header)
	for _, x := range list {
		fmt.Fprintln(tw, row(x))
	}
	return tw.Flush()
}

// stamp prints a time, or when for a time that never was.
func stamp(t *time.Time, when string) string {
	if t == nil {
		return when
	}
	return t.UTC().Format(time.RFC3339)
}

// printUsers lists users with their roles as WORKSPACE:ROLE.
func printUsers(w io.Writer, users []analytics.UserAccount, asJSON bool) error {
	return printList(w, users, asJSON, "ID\tEMAIL\tROLES\tCREATED", func(u analytics.UserAccount) string {
		roles := make([]string, 0, len(u.Memberships))
		for _, m := range u.Memberships {
			roles = append(roles, fmt.Sprintf("%d:%s", m.WorkspaceID, m.Role))
		}
		return fmt.Sprintf("%d\t%s\t%s\t%s", u.ID, u.Email, strings.Join(roles, ","), stamp(&u.CreatedAt, ""))
	})
}

// newPassword is the password of users add and reset-password: the first
// line of standard input with --password-stdin, else a generated one,
// which the command prints.
func newPassword(env Env, fromStdin bool) (string, error) {
	if !fromStdin {
		return auth.GeneratePassword(), nil
	}
	if env.Stdin == nil {
		return "", usageError{"--password-stdin: there is no standard input"}
	}
	line, err := bufio.NewReader(io.LimitReader(env.Stdin, 4096)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("reading the password: %w", err)
	}
	p := strings.TrimRight(line, "\r\n")
	if err := auth.CheckNewPassword(p); err != nil {
		return "", err
	}
	return p, nil
}

func printProducts(w io.Writer, products []analytics.Product, asJSON bool) error {
	return printList(w, products, asJSON, "ID\tNAME\tWORKSPACE\tTIME ZONE\tCREATED", func(p analytics.Product) string {
		return fmt.Sprintf("%d\t%s\t%d\t%s\t%s", p.ID, p.Name, p.WorkspaceID, p.TimeZone, stamp(&p.CreatedAt, ""))
	})
}

func printKeys(w io.Writer, keys []analytics.APIKey, asJSON bool) error {
	return printList(w, keys, asJSON, "ID\tPREFIX\tENV\tSTATUS\tRATE LIMIT\tCREATED\tLAST USED", func(k analytics.APIKey) string {
		limit := "default"
		if k.RateLimit > 0 {
			limit = strconv.Itoa(k.RateLimit) + "/min"
		}
		return fmt.Sprintf("%d\t%s…\t%s\t%s\t%s\t%s\t%s", k.ID, k.Prefix, k.Env, k.Status, limit,
			stamp(&k.CreatedAt, ""), stamp(k.LastUsedAt, "never"))
	})
}

// printTokens lists query tokens by id and prefix: only their hashes are
// stored, so there is no secret to print.
func printTokens(w io.Writer, tokens []analytics.QueryToken, asJSON bool) error {
	return printList(w, tokens, asJSON, "ID\tPREFIX\tSTATUS\tCREATED\tLAST USED", func(t analytics.QueryToken) string {
		return fmt.Sprintf("%d\t%s…\t%s\t%s\t%s", t.ID, t.Prefix, t.Status, stamp(&t.CreatedAt, ""), stamp(t.LastUsedAt, "never"))
	})
}

// printFlags lists flags with their arms as key=weight.
func printFlags(w io.Writer, list []analytics.Flag, asJSON bool) error {
	return printList(w, list, asJSON, "ID\tKEY\tENABLED\tROLLOUT\tVARIANTS\tNAME", func(f analytics.Flag) string {
		arms := make([]string, len(f.Variants))
		for i, v := range f.Variants {
			arms[i] = v.Key + "=" + strconv.FormatFloat(v.Weight, 'f', -1, 64)
		}
		variants := strings.Join(arms, " ")
		if variants == "" {
			variants = "-"
		}
		return fmt.Sprintf("%d\t%s\t%t\t%s%%\t%s\t%s", f.ID, f.Key, f.Enabled, strconv.FormatFloat(f.Rollout, 'f', -1, 64), variants, f.Name)
	})
}

func printExperiments(w io.Writer, list []analytics.Experiment, asJSON bool) error {
	return printList(w, list, asJSON, "ID\tFLAG\tSTATUS\tWINNER\tSTARTED\tNAME", func(e analytics.Experiment) string {
		winner := e.Winner
		if winner == "" {
			winner = "-"
		}
		return fmt.Sprintf("%d\t%d\t%s\t%s\t%s\t%s", e.ID, e.FlagID, e.Status, winner, stamp(e.StartedAt, "never"), e.Name)
	})
}

func lookupOr(lookup func(string) (string, bool), name, def string) string {
	if v, ok := lookup(name); ok && strings.TrimSpace(v) != "" {
		return v
	}
	return def
}
