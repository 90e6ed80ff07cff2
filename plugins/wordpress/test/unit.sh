#!/usr/bin/env bash
# The WordPress plugin's fast tests, no WordPress needed: `php -l` on every
# PHP file, the generated AI-bot table against ai_bots.json, then PHPUnit.
set -euo pipefail
cd "$(dirname "$0")/.."

failed=0
while IFS= read -r -d '' f; do
	php -l "$f" >/dev/null || failed=1
done < <(find . -name '*.php' -print0)
[ "$failed" -eq 0 ] || { echo "php -l: syntax errors above"; exit 1; }
echo "php -l: $(find . -name '*.php' | wc -l) files"

php bin/generate-bots.php --check
phpunit
