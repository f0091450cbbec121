#!/usr/bin/env bash
# The docs link check: in README.md and docs/*.md, every relative Markdown link must resolve
# to a file or folder inside the repository (and its #anchor to a heading of that file), and
# every repository path quoted in backticks (`src/...`, `scripts/...`, ...) must exist.
# Usage: check_links.sh REPO_ROOT     (exit 1 listing every dangling reference)
set -euo pipefail
ROOT=$(cd "$1" && pwd)
cd "$ROOT"
bad=0
report() { echo "$1: $2"; bad=1; }

# GitHub's heading anchors: lower case, punctuation dropped, spaces to '-'.
anchors() {
  grep -E '^#{1,6} ' "$1" | sed -E 's/^#+ +//' | tr '[:upper:]' '[:lower:]' |
    sed -E 's/[^a-z0-9 _-]//g; s/ /-/g'
}

files=(README.md docs/*.md)
[ -d examples ] && files+=($(find examples -name '*.md'))
for f in "${files[@]}"; do
  dir=$(dirname "$f")
  # Markdown links and images: [text](target) outside code spans.
  while IFS= read -r target; do
    case $target in http://* | https://* | mailto:*) continue ;; esac
    path=${target%%#*}
    anchor=${target#"$path"}
    anchor=${anchor#\#}
    if [ -z "$path" ]; then
      resolved=$f
    else
      resolved=$(realpath -m "$dir/$path")
      case $resolved in "$ROOT" | "$ROOT"/*) ;; *) report "$f" "link '$target' points outside the repository"; continue ;; esac
      [ -e "$resolved" ] || { report "$f" "link '$target' does not resolve"; continue; }
    fi
    if [ -n "$anchor" ] && [ -f "$resolved" ] && ! anchors "$resolved" | grep -qxF "$anchor"; then
      report "$f" "link '$target': no heading '#$anchor' in ${resolved#"$ROOT"/}"
    fi
  done < <(sed -E 's/`[^`]*`//g' "$f" | grep -oE '\]\([^) ]+\)' | sed -E 's/^\]\(//; s/\)$//')
  # Repository paths in backticks: top-level folder + path, no wildcards or placeholders.
  while IFS= read -r p; do
    case $p in *'*'* | *'{'* | *'<'* | *'…'* | *'...'*) continue ;; esac
    [ -e "$ROOT/$p" ] || [ -e "$dir/$p" ] || report "$f" "path '$p' does not exist"
  done < <(grep -oE '`(\.\./)*(src|include|tools|tests|scripts|docs|cmake|examples|bench|\.ci)/[^` ]*`' "$f" | tr -d '`' |
           sed -E 's/[:,]$//' | sort -u)
  # Nothing outside the repository (e.g. a sibling checkout) may be referenced.
  if grep -nE '\.\./shared|\.\./\.\./' "$f" >/dev/null; then
    report "$f" "refers outside the repository: $(grep -nE '\.\./shared|\.\./\.\./' "$f" | head -1)"
  fi
done
[ $bad = 0 ] && echo "ok: links and paths of ${#files[@]} documents resolve"
exit $bad
