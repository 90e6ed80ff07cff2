// Package zip checks the WordPress plugin's installable archive, as `make
// wordpress-zip` builds it, against what WordPress and the WordPress.org
// plugin directory read and check: every PHP file parses (`php -l`) and
// refuses to run outside WordPress, the main file's plugin headers,
// readme.txt's header fields and short description, the version of both
// against the repository's VERSION file, and that the archive holds the
// plugin's own files and nothing of its development (tests, tools, docs).
//
// The archive is PLUGIN_ZIP (`make test-wordpress` builds it and sets it);
// without it the test builds it with `make wordpress-zip`. It needs the php
// command. Without it the test skips, unless STRATA_REQUIRE_PHP is set.
package zip

import (
	"archive/zip"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"strata"
)

// slug is the plugin's folder, its text domain and its main file's name.
const slug = "strata-analytics"

// root is the repository, from this package's directory.
const root = "../../../.."

func TestPluginZip(t *testing.T) {
	if _, err := exec.LookPath("php"); err != nil {
		if os.Getenv("STRATA_REQUIRE_PHP") != "" {
			t.Fatal("php is not installed (make wordpress-deps installs it)")
		}
		t.Skip("php is not installed; make wordpress-deps installs it")
	}
	archive := os.Getenv("PLUGIN_ZIP")
	if archive == "" {
		build := exec.Command("make", "-s", "wordpress-zip")
		build.Dir = root
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("make wordpress-zip: %v\n%s", err, out)
		}
		archive = filepath.Join(root, "dist", slug+"-"+strata.Version()+".zip")
	}
	files := unzip(t, archive)

	// Only the plugin's own files, in one folder named as the slug, as
	// WordPress's uploader expects: no tests, tools, docs or dotfiles.
	var php []string
	for name := range files {
		rel, ok := strings.CutPrefix(name, slug+"/")
		switch {
		case !ok:
			t.Errorf("%s is outside the %s/ folder", name, slug)
		case rel == slug+".php" || rel == "uninstall.php" || rel == "readme.txt":
		case path.Dir(rel) == "includes" && path.Ext(rel) == ".php" && !strings.HasPrefix(path.Base(rel), "."):
		default:
			t.Errorf("%s is in the zip; only the plugin's runtime files belong there", name)
		}
		if path.Ext(name) == ".php" {
			php = append(php, name)
		}
	}
	for _, f := range []string{slug + ".php", "uninstall.php", "readme.txt"} {
		if _, ok := files[slug+"/"+f]; !ok {
			t.Errorf("the zip has no %s/%s", slug, f)
		}
	}

	// Every PHP file parses, and stops when loaded outside WordPress
	// (the directory's "direct file access" check).
	dir := t.TempDir()
	for _, name := range php {
		file := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, files[name], 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("php", "-l", file).CombinedOutput(); err != nil {
			t.Errorf("php -l %s: %v\n%s", name, err, out)
		}
		guard := "defined( 'ABSPATH' ) || exit;"
		if path.Base(name) == "uninstall.php" {
			guard = "defined( 'WP_UNINSTALL_PLUGIN' ) || exit;"
		}
		if !strings.Contains(string(files[name]), guard) {
			t.Errorf("%s lacks %q, so it runs when requested directly", name, guard)
		}
	}

	// The main file's headers, read as WordPress's get_file_data reads them.
	main := string(files[slug+"/"+slug+".php"])
	version := strata.Version()
	header := map[string]string{}
	for _, h := range []string{"Plugin Name", "Description", "Version", "Requires at least", "Requires PHP", "Author", "License", "License URI", "Text Domain"} {
		header[h] = field(t, slug+".php", main, h)
	}
	minor := regexp.MustCompile(`^[0-9]+\.[0-9]+$`)
	for h, want := range map[string]*regexp.Regexp{
		"Version":           regexp.MustCompile(`^` + regexp.QuoteMeta(version) + `$`),
		"Requires at least": minor,
		"Requires PHP":      minor,
		"License":           regexp.MustCompile(`^GPL-2\.0-or-later$`),
		"License URI":       regexp.MustCompile(`^https://www\.gnu\.org/licenses/gpl-2\.0\.html$`),
		"Text Domain":       regexp.MustCompile(`^` + slug + `$`),
	} {
		if !want.MatchString(header[h]) {
			t.Errorf("%s.php header %s is %q; want %s", slug, h, header[h], want)
		}
	}

	// readme.txt, as the plugin directory parses it: the name line, the
	// header fields, and the short description (the first paragraph after
	// them, at most 150 characters).
	readme := strings.ReplaceAll(string(files[slug+"/readme.txt"]), "\r\n", "\n")
	if want := "=== " + header["Plugin Name"] + " ===\n"; !strings.HasPrefix(readme, want) {
		t.Errorf("readme.txt does not start with %q", want)
	}
	for h, want := range map[string]string{
		"Requires at least": header["Requires at least"],
		"Requires PHP":      header["Requires PHP"],
		"Stable tag":        version,
		"License":           header["License"],
		"License URI":       header["License URI"],
	} {
		if got := field(t, "readme.txt", readme, h); got != want {
			t.Errorf("readme.txt %s is %q; the plugin says %q", h, got, want)
		}
	}
	if c := field(t, "readme.txt", readme, "Contributors"); !regexp.MustCompile(`^[a-z0-9_-]+(, ?[a-z0-9_-]+)*$`).MatchString(c) {
		t.Errorf("readme.txt Contributors %q is not a list of WordPress.org user names", c)
	}
	if tags := strings.Split(field(t, "readme.txt", readme, "Tags"), ","); len(tags) > 5 {
		t.Errorf("readme.txt has %d tags; the directory shows 5 and asks for no more", len(tags))
	}
	tested := field(t, "readme.txt", readme, "Tested up to")
	if !minor.MatchString(tested) {
		t.Errorf("readme.txt Tested up to %q; want MAJOR.MINOR", tested)
	}
	// The WordPress the plugin's e2e test runs on is the one it is tested up to.
	if b, err := os.ReadFile("/usr/share/wordpress/wp-includes/version.php"); err == nil {
		if m := regexp.MustCompile(`\$wp_version = '([0-9]+\.[0-9]+)`).FindSubmatch(b); m != nil && string(m[1]) != tested {
			t.Errorf("readme.txt Tested up to %s; the tests run WordPress %s", tested, m[1])
		}
	}
	_, rest, _ := strings.Cut(readme, "\n\n")
	short, _, _ := strings.Cut(strings.TrimSpace(rest), "\n")
	if short == "" || strings.HasPrefix(short, "==") {
		t.Errorf("readme.txt has no short description after its header")
	} else if n := utf8.RuneCountInString(short); n > 150 {
		t.Errorf("readme.txt's short description is %d characters; the directory cuts it at 150: %q", n, short)
	}
	for _, section := range []string{"== Description ==", "== Installation ==", "== Changelog ==", "= " + version + " ="} {
		if !strings.Contains(readme, "\n"+section+"\n") {
			t.Errorf("readme.txt has no %q", section)
		}
	}
}

// unzip reads every file of the archive by name.
func unzip(t *testing.T, archive string) map[string][]byte {
	t.Helper()
	r, err := zip.OpenReader(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	files := map[string][]byte{}
	for _, f := range r.File {
		if f.FileInfo().IsDir() {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		files[f.Name] = b
	}
	if len(files) == 0 {
		t.Fatalf("%s holds no files", archive)
	}
	return files
}

// field returns the value of the one "Name: value" line, as get_file_data
// finds it (after any comment characters), failing when there is none.
func field(t *testing.T, file, text, name string) string {
	t.Helper()
	m := regexp.MustCompile(`(?mi)^[ \t/*#@]*` + regexp.QuoteMeta(name) + `:(.*)$`).FindStringSubmatch(text)
	if m == nil || strings.TrimSpace(m[1]) == "" {
		t.Errorf("%s has no %s", file, name)
		return ""
	}
	return strings.TrimSpace(m[1])
}
